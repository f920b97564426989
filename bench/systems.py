"""Our memory beside the organizers' baseline and a plain RAG: one harness, one reader, one judge.

    .venv/bin/python bench/systems.py                  # the recorded table, replayed (seconds)
    .venv/bin/python bench/systems.py --record         # record the reader's replies (hours on 2 cores)
    .venv/bin/python bench/systems.py --systems rag --record   # one system

Each system answers the same questions (`SHARD` of the Russian dev set: every fourth question,
all four dialogues) through `local_eval/run.py` with the same reader, the
local Qwen2.5-Coder-1.5B (`READER`, a context of 8192 tokens on two CPU cores), and the same
judge: ours as the contest class, its facts the recorded extraction of the capable stand-in (the
reader's own extraction of a dialogue takes an hour here: `bench/extraction.py facts` measures it
apart); the organizers' baseline (`local_eval/systems/baseline`, the whole history in the prompt,
its latest 8192 tokens kept as vLLM's truncation keeps them) and a plain RAG
(`local_eval/systems/rag`: the best turns by the same embedder into the same 8000 characters)
as contest-format folders, unchanged, through local_eval's vLLM stand-in (`--submission`).
`--record` asks the model and stores every reply with its token counts and seconds
(`bench/stores/systems/`); without it every reply, the judge's included, is replayed from there,
so the table prints in seconds on any machine. The judge's verdicts come from a fresh stand-in
judge (a capable model given the benchmark's judge prompt, `collect:` batch mode), an upper bound
on a judge, the same for every system.

The table: per system, right answers per question type and overall, prompt tokens per question
(every LLM call of the question's dialogue; ours counts its extraction and versions pass at the
recorded fixture's estimate) and the reader's seconds per question as recorded.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from bench.prompts import FIXTURES, RU
from local_eval import jsonl

ROOT = Path(__file__).resolve().parent.parent
STORE = ROOT / "bench/stores/systems"
RUNS = ROOT / "runs/systems"
RESULTS = ROOT / "bench/results/systems"
SHARD = "1/4"  # every fourth Russian dev question, every dialogue: what two shared cores recorded in an hour
CONTEXT = 8192  # the reader's context in tokens: every system's prompts are held to it
READER = f"llama:qwen2.5-coder-1.5b,ctx={CONTEXT}"
BENCHMARKS = {  # name -> the run.py arguments that choose its questions
    "ru_dev": ["--dataset", "gigamemory", "--data", str(RU / "ru_dev_questions.jsonl")],
}
SYSTEMS = {  # name -> the run.py arguments that make it
    # recorded before the decline gate: its 64 calibration prompts (an hour or more for the 1.5B
    # here) are not in the store yet, so ours runs without it (a llama: reader's default too)
    "ours": ["--gate", "off"],
    "baseline": ["--submission", "local_eval/systems/baseline", "--submission-ctx", str(CONTEXT)],
    "rag": ["--submission", "local_eval/systems/rag", "--submission-ctx", str(CONTEXT)],
}


def reader(record: bool) -> str:
    return f"cache:{STORE / 'qwen1.5b'}+{READER}" if record else f"replay:{STORE / 'qwen1.5b'}"


def command(system: str, benchmark: str, record: bool, shard: str = "1/1") -> list:
    """The run.py command of one system on one benchmark (`shard`: run.py's --shard)."""
    llm = reader(record)
    if system == "ours":  # the recorded facts answer the schema prompts, the reader the rest
        llm = f"split:{FIXTURES};{llm}"
    return [sys.executable, "local_eval/run.py", *BENCHMARKS[benchmark], "--shard", shard, *SYSTEMS[system],
            "--llm", llm,
            "--judge", f"collect:{STORE / 'judge'}",  # the verdicts it lacks are queued for a judge
            "--out", str(folder(system, benchmark, record))]


def folder(system: str, benchmark: str, record: bool) -> Path:
    return RUNS / benchmark / (system + ("-record" if record else ""))


def run(system: str, benchmark: str, record: bool, shard: str) -> int:
    """Run one system; its exit code returned (4: judge replies pending), else its last line said."""
    done = subprocess.run(command(system, benchmark, record, shard), cwd=ROOT, capture_output=True, text=True)
    if done.returncode not in (0, 4):
        tail = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:] or ["(no output)"]
        raise SystemExit(f"{system} on {benchmark}: run.py exited {done.returncode}: {tail[0]}")
    return done.returncode


def keep_seconds(benchmark: str, systems: list) -> None:
    """The recording runs' mean seconds per question (the model answering, on this machine), kept
    in RESULTS for the replayed table."""
    path = RESULTS / f"{benchmark}.json"
    kept = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    for system in systems:
        asked = {r["id"] for r in jsonl.read_rows(folder(system, benchmark, False) / "results.jsonl",
                                                   lambda r: "id" in r)[0]}
        first: dict = {}  # a question's first row is the model's; a resumed one replays from the store
        for r in jsonl.read_rows(folder(system, benchmark, True) / "results.jsonl", lambda r: "id" in r)[0]:
            if r["id"] in asked:
                first.setdefault(r["id"], r)
        rows = list(first.values())
        if rows:
            kept[system] = {"seconds_per_question": round(sum(r["answer_time"] for r in rows) / len(rows), 1),
                            "questions": len(rows)}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(kept, indent=1) + "\n", encoding="utf-8")


def table(benchmark: str, systems: list) -> str:
    """The markdown table of the systems' rows as their run folders hold them."""
    per_type: dict = defaultdict(dict)
    path = RESULTS / f"{benchmark}.json"
    recorded = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    lines = ["| system | " + " | ".join(["{types}", "all", "prompt tokens / question", "reader s / question"]) + " |"]
    types: list = []
    body = []
    for system in systems:
        latest = {r["id"]: r for r in jsonl.read_rows(folder(system, benchmark, False) / "results.jsonl",
                                                      lambda r: "id" in r)[0]}  # a resumed row replaces its first
        rows = list(latest.values())
        if not rows:
            continue
        for row in rows:
            per_type[system].setdefault(row["question_type"], []).append(row["correct"])
            if row["question_type"] not in types:
                types.append(row["question_type"])
        tokens = sum(((r.get("stats") or {}).get("llm") or {}).get("prompt_tokens", 0) for r in rows) / len(rows)
        spent = recorded.get(system, {}).get("seconds_per_question")
        body.append((system, rows, tokens, spent))
    types.sort()
    lines[0] = lines[0].replace("{types}", " | ".join(types))
    lines.append("|" + "---|" * (len(types) + 4))
    for system, rows, tokens, spent in body:
        cells = [f"{sum(per_type[system].get(t, [])):.0f}/{len(per_type[system].get(t, []))}" for t in types]
        right = sum(r["correct"] for r in rows)
        lines.append(f"| {system} | " + " | ".join(cells) + f" | **{right:.0f}/{len(rows)}** | {tokens:,.0f} | "
                     + (f"{spent:.0f}" if spent is not None else "–") + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("--benchmark", choices=tuple(BENCHMARKS), default="ru_dev")
    p.add_argument("--systems", default=",".join(SYSTEMS), help="comma-separated, of: " + ", ".join(SYSTEMS))
    p.add_argument("--shard", default=SHARD, help=f"run.py's --shard K/N: the questions (default: {SHARD}, "
                   "what is recorded)")
    p.add_argument("--record", action="store_true", help="ask the reader (and queue the judge's prompts) "
                   "for every prompt the store lacks; a model job of hours on two cores")
    args = p.parse_args(argv)
    systems = [s for s in args.systems.split(",") if s]
    unknown = [s for s in systems if s not in SYSTEMS]
    if unknown:
        p.error(f"unknown system {unknown[0]!r}; choose from {', '.join(SYSTEMS)}")
    codes = {system: run(system, args.benchmark, args.record, args.shard) for system in systems}
    if args.record:
        codes = {system: run(system, args.benchmark, False, args.shard) for system in systems}
        keep_seconds(args.benchmark, systems)
    print(f"{args.benchmark}: reader {READER} (replies in {STORE.relative_to(ROOT)}), "
          f"judge: a fresh stand-in judge's verdicts\n")
    print(table(args.benchmark, systems))
    pending = [s for s, code in codes.items() if code == 4]
    if pending:
        print(f"\nincomplete (judge replies pending in {STORE / 'judge' / 'pending.jsonl'}): {', '.join(pending)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
