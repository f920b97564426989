"""Our memory beside the organizers' baseline and a plain RAG: one harness, one reader, one judge.

    .venv/bin/python bench/systems.py                  # the recorded table, replayed (seconds)
    .venv/bin/python bench/systems.py --reader literal --benchmark locomo   # the stand-in's LoCoMo rows
    .venv/bin/python bench/systems.py --record         # record the reader's replies (hours on 2 cores)
    .venv/bin/python bench/systems.py --systems rag --record   # one system

Each system answers the same questions through `local_eval/run.py` with the same reader and the
same judge: ours as the contest class, its facts the benchmark's recorded extraction (the
capable stand-in's: `bench/prompts.py`'s `SETS`; the reader's own extraction of a dialogue takes
an hour here: `bench/extraction.py facts` measures it apart); the organizers' baseline
(`local_eval/systems/baseline`, the whole history in the prompt, cut to the reader's context as
the submission's own `truncate_prompt_tokens` cuts it) and a plain RAG (`local_eval/systems/rag`:
the best turns by the same embedder into the same 8000 characters) as contest-format folders,
unchanged, through local_eval's vLLM stand-in (`--submission`); and `ours-own`, ours with the
reader as its only model (its own extraction of every dialogue: `--systems ours-own --record`,
hours). Two readers (`READERS`):
- `qwen1.5b`: the local Qwen2.5-Coder-1.5B with an 8192-token context on two CPU cores; every
  system's prompt is held to that context, so the baseline keeps its history's latest 8192 tokens;
  `--record` asks the model and stores every reply with its token counts and seconds;
- `literal`: a literal stand-in reader (a capable model told to read like a small literal one:
  the prompt only, facts first, every marker and rule as written), with the contest's 131,072-token
  context, so the baseline's prompt is its whole history, as GigaChat reads it in the contest;
  `--record` queues the prompts the store lacks in its `pending.jsonl` (`collect:` batch mode) for
  stand-ins to answer (one per dialogue, reading its history once), and replays the rest.
Without `--record` every reply, the judge's included, is replayed from `bench/stores/systems/`, so
the table prints in seconds on any machine. The judge's verdicts come from a fresh stand-in judge
(a capable model given the benchmark's judge prompt, `collect:` batch mode), an upper bound on a
judge, the same for every system and reader.

The table: per system, right answers per question type and overall, prompt tokens per question
(every LLM call of the question's dialogue; ours counts its extraction and versions pass at the
recorded fixture's estimate) and the reader's seconds per question as recorded (a stand-in's: –).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from bench.prompts import DATA, RU, SETS
from local_eval import jsonl
from local_eval.llms.store import Store

ROOT = Path(__file__).resolve().parent.parent
STORE = ROOT / "bench/stores/systems"
RUNS = ROOT / "runs/systems"
RESULTS = ROOT / "bench/results/systems"


@dataclass(frozen=True)
class Reader:
    store: str  # its replies: STORE / store
    live: Optional[str]  # the model that answers with --record; None: stand-ins answer the queued prompts
    context: int  # tokens: the baseline's history is cut to it
    shards: dict  # benchmark -> the run.py --shard that is recorded
    parts: Optional[tuple] = None  # the benchmark parts it read (None: all)


READERS = {
    "qwen1.5b": Reader("qwen1.5b", "llama:qwen2.5-coder-1.5b,ctx=8192", 8192, {"ru_dev": "1/1", "locomo": "1/33"}),
    "literal": Reader("literal", None, 131072, {"ru_dev": "1/1", "locomo": "1/33"}),
}
# benchmark -> its parts (name -> the run.py arguments that choose their questions), and the
# recorded source of ours' facts
BENCHMARKS = {
    "ru_dev": ({"sample": ["--dataset", "gigamemory", "--data", str(RU / "format_example.jsonl")],
                "dev": ["--dataset", "gigamemory", "--data", str(RU / "ru_dev_questions.jsonl")]},
               SETS["ru_dev"][2]),
    "locomo": ({"dev": ["--dataset", "locomo", "--data", str(DATA / "locomo/locomo10_dev.json")]},
               SETS["locomo"][2]),
}
SYSTEMS = {  # name -> the run.py arguments that make it (the reader's context joins the submissions')
    # recorded before the decline gate: its 64 calibration prompts (an hour or more for the 1.5B
    # here) are not in the store yet, so ours runs without it (a stand-in gives no logprobs either)
    "ours": ["--gate", "off"],
    "baseline": ["--submission", "local_eval/systems/baseline"],
    "rag": ["--submission", "local_eval/systems/rag"],
    # ours with the reader as its only model: its own extraction, versions pass and check of each
    # whole dialogue (the first question of a dialogue extracts it: about an hour for the 1.5B
    # here, past any answer ceiling; the other questions of the dialogue read the same replies)
    "ours-own": ["--gate", "off", "--answer-ceiling", "86400"],
}
RECORDED_FACTS = ("ours",)  # systems whose facts are the benchmark's recorded extraction (`split:`)
# (reader, benchmark) -> the systems its store holds whole, the default table's rows
RECORDED = {("qwen1.5b", "ru_dev"): ("ours", "baseline", "rag", "ours-own")}


def spec(reader: Reader, record: bool) -> str:
    folder = STORE / reader.store
    if not record:
        return f"replay:{folder}"
    return f"cache:{folder}+{reader.live}" if reader.live else f"collect:{folder}"


def parts(reader: Reader, benchmark: str) -> list:
    return [name for name in BENCHMARKS[benchmark][0] if reader.parts is None or name in reader.parts]


def command(system: str, benchmark: str, reader: Reader, part: str, record: bool, shard: str) -> list:
    """The run.py command of one system on one part of a benchmark (`shard`: run.py's --shard)."""
    choose, facts = BENCHMARKS[benchmark]
    llm = spec(reader, record)
    if system in RECORDED_FACTS:  # the recorded facts answer the schema prompts, the reader the rest
        llm = f"split:{facts};{llm}"
    own = ["--submission-ctx", str(reader.context)] if "--submission" in SYSTEMS[system] else []
    return [sys.executable, "local_eval/run.py", *choose[part], "--shard", shard, *SYSTEMS[system], *own,
            "--llm", llm,
            "--judge", f"collect:{STORE / 'judge'}",  # the verdicts it lacks are queued for a judge
            "--out", str(folder(system, benchmark, reader, part, record))]


def folder(system: str, benchmark: str, reader: Reader, part: str, record: bool) -> Path:
    return RUNS / benchmark / reader.store / part / (system + ("-record" if record else ""))


def run(system: str, benchmark: str, reader: Reader, part: str, record: bool, shard: str) -> int:
    """Run one system; its exit code returned (4: replies pending), else its last line said."""
    done = subprocess.run(command(system, benchmark, reader, part, record, shard), cwd=ROOT,
                          capture_output=True, text=True)
    if done.returncode not in (0, 4):
        tail = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:] or ["(no output)"]
        raise SystemExit(f"{system} on {benchmark} ({part}): run.py exited {done.returncode}: {tail[0]}")
    return done.returncode


def rows_of(system: str, benchmark: str, reader: Reader, record: bool) -> list:
    """The system's result rows over the reader's parts, a resumed row replacing its first."""
    rows = []
    for part in parts(reader, benchmark):
        latest = {r["id"]: r for r in jsonl.read_rows(folder(system, benchmark, reader, part, record) / "results.jsonl",
                                                      lambda r: "id" in r)[0]}
        rows += latest.values()
    return rows


def seconds_file(benchmark: str, reader: Reader) -> Path:
    return RESULTS / f"{benchmark}.{reader.store}.json"


def fresh_seconds(reader: Reader, before: set) -> list:
    """The recorded seconds of the replies the model made since `before` (the store's keys then):
    replies a run replayed from the store cost it nothing and are not counted."""
    store = Store(str(STORE / reader.store), create=False)
    return [store.usage[k][2] for k in store.replies if k not in before and k in store.usage]


def keep_seconds(benchmark: str, reader: Reader, made: dict) -> None:
    """Fold the model's seconds of this recording (`made`: system -> [seconds, questions]: the
    recorded seconds of the replies the model made for it, and the questions its recording folder
    holds, each once) into the mean kept in RESULTS for the replayed table: the model's seconds
    over every pass, per question recorded. A pass over new questions adds questions and seconds;
    one that asks more of the questions already recorded (the cite asks of a later stage) adds
    seconds only."""
    path = seconds_file(benchmark, reader)
    kept = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    for system, (seconds, questions) in made.items():
        if not questions:
            continue
        old = kept.get(system, {"seconds_per_question": 0.0, "questions": 0})
        n = max(old["questions"], questions)
        kept[system] = {"seconds_per_question": round((old["seconds_per_question"] * old["questions"]
                                                        + seconds) / n, 1), "questions": n}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(kept, indent=1) + "\n", encoding="utf-8")


def recorded_rows(system: str, benchmark: str, reader: Reader, part: str) -> int:
    """The question rows of a system's recording folder for one part (each question once)."""
    path = folder(system, benchmark, reader, part, True) / "results.jsonl"
    return len({r["id"] for r in jsonl.read_rows(path, lambda r: "id" in r)[0]})


def table(benchmark: str, reader: Reader, systems: list) -> str:
    """The markdown table of the systems' rows as their run folders hold them."""
    per_type: dict = defaultdict(dict)
    path = seconds_file(benchmark, reader)
    recorded = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    lines = ["| system | " + " | ".join(["{types}", "all", "prompt tokens / question", "reader s / question"]) + " |"]
    types: list = []
    body = []
    for system in systems:
        rows = rows_of(system, benchmark, reader, False)
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
    p.add_argument("--reader", choices=tuple(READERS), default="qwen1.5b",
                   help="whose replies: the local 1.5B's or the literal stand-in's (default: qwen1.5b)")
    p.add_argument("--systems", help="comma-separated, of: " + ", ".join(SYSTEMS) + " (default: the "
                   "recorded ones: " + "; ".join(f"{r} on {b}: {','.join(s)}" for (r, b), s in RECORDED.items())
                   + "; elsewhere ours,baseline,rag)")
    p.add_argument("--shard", help="run.py's --shard K/N: the questions (default: the reader's recorded one: "
                   + "; ".join(f"{n} {r.shards}" for n, r in READERS.items()) + ")")
    p.add_argument("--record", action="store_true", help="ask the reader (and queue the judge's prompts) "
                   "for every prompt the store lacks: a model job of hours on two cores, or prompts queued "
                   "for stand-ins")
    args = p.parse_args(argv)
    reader = READERS[args.reader]
    shard = args.shard or reader.shards[args.benchmark]
    systems = [s for s in args.systems.split(",") if s] if args.systems else \
        list(RECORDED.get((args.reader, args.benchmark), ("ours", "baseline", "rag")))
    unknown = [s for s in systems if s not in SYSTEMS]
    if unknown:
        p.error(f"unknown system {unknown[0]!r}; choose from {', '.join(SYSTEMS)}")
    todo = [(system, part) for system in systems for part in parts(reader, args.benchmark)]
    codes, made = {}, defaultdict(lambda: [0.0, 0])
    for system, part in todo:
        live = args.record and reader.live
        before = set(Store(str(STORE / reader.store)).replies) if live else set()
        codes[(system, part)] = run(system, args.benchmark, reader, part, args.record, shard)
        if live:
            made[system][0] += sum(fresh_seconds(reader, before))
            # the questions the recording holds so far, each once: a pass that asks more of questions
            # already recorded (a new ask of the stage) adds its seconds to theirs, not questions
            made[system][1] += recorded_rows(system, args.benchmark, reader, part)
    if args.record and not reader.live and any(code == 4 for code in codes.values()):
        print(f"{sum(c == 4 for c in codes.values())} of {len(codes)} runs wait for replies: the stand-ins' "
              f"in {STORE / reader.store / 'pending.jsonl'} (answers into replies.jsonl as {{\"key\", \"reply\"}} "
              f"lines), the judge's in {STORE / 'judge' / 'pending.jsonl'}; then run this again")
        return 4
    if args.record:
        codes = {(system, part): run(system, args.benchmark, reader, part, False, shard) for system, part in todo}
        if reader.live:
            keep_seconds(args.benchmark, reader, made)
    who = reader.live or "a literal stand-in reader"
    print(f"{args.benchmark} (--shard {shard}): reader {who} (replies in "
          f"{(STORE / reader.store).relative_to(ROOT)}), judge: a fresh stand-in judge's verdicts\n")
    print(table(args.benchmark, reader, systems))
    pending = sorted({system for (system, _), code in codes.items() if code == 4})
    if pending:
        print(f"\nincomplete (replies pending in {STORE / reader.store / 'pending.jsonl'} or "
              f"{STORE / 'judge' / 'pending.jsonl'}): {', '.join(pending)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
