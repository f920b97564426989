"""Run a memory model over a benchmark through the contest harness, score it, report it.

    python local_eval/run.py                      # the shipped Russian demo, CPU defaults
    python local_eval/run.py --dataset gigamemory --data ../shared/data/gigamemory/format_example.jsonl
    python local_eval/run.py --dataset longmemeval --shard 1/12 \
        --data ../shared/data/longmemeval/longmemeval_s_dev.json.gz
    python local_eval/run.py --mode retrieval --dataset locomo --data ../shared/data/locomo/locomo10_dev.json

This file is the loop over records; each step lives in a module named by what it holds: the
options and the settings tree they build (`options.py`), the backend specs (`specs.py`), the
benchmarks (`benchmarks.py`), the data file (`datafile.py`), the run
folder and merges (`folder.py`), its manifest (`manifest.py`), the submission and judge
(`backends.py`), another submission in its own process (`submission.py`), one scored row
per record (`scoring.py`), the rows (`results.py`), the summary and its table (`summary.py`),
the report (`report.py`), retrieval mode (`retrieval_eval.py`), the commands printed to go on
(`commands.py`). Every option, the exit codes and the files of a run folder:
docs/evaluating.md; summary.json: docs/summary.md. User mistakes are one line on stderr and
exit 2 (local_eval/errors.py); our own bugs keep their traceback.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from local_eval import (backends, commands, datafile, folder, manifest, report, results, retrieval_eval, scoring,
                        specs, summary, tasks)
from local_eval.errors import BackendFailing, UsageError
from local_eval.llms import llama
from local_eval.options import Options, parse_args
from local_eval.submission import LLM_FAILED, SubmissionStopped


def select(records: list, options: Options) -> list:
    """--types, then the shard's records (round-robin, so every shard mixes all types), then --limit."""
    if options.types:
        wanted = {t.strip() for t in options.types.split(",") if t.strip()}
        have = sorted({r.question_type for r in records})
        unknown = sorted(wanted - set(have))
        if unknown:
            raise UsageError(f"--types {','.join(unknown)}: no record has that type; the data has: "
                             f"{', '.join(have)}")
        records = [r for r in records if r.question_type in wanted]
    chosen = tasks.shard(records, options.shard_k, options.shard_n)[: options.limit]
    if not chosen:
        raise UsageError(f"--shard {options.shard} leaves none of the {len(records)} records")
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
    except (StopRun, BackendFailing, SubmissionStopped) as e:
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
    if not (out / results.RESULTS).is_file():  # name only files that are there
        return f"interrupted before a record finished; the same command starts again: {commands.again(argv)}"
    kept = sum(1 for row in results.read(out, say=False) if row["complete"])
    return (f"interrupted: {kept} finished record(s) kept in {out / results.RESULTS}; the same command "
            f"resumes: {commands.again(argv)}")


def run(options: Options, argv: list) -> int:
    out, start = folder.output_folder(options), time.perf_counter()
    if options.merge:
        sources = folder.sources(options, out)
        with folder.lock(out):
            rows, options = folder.merge(options, out, sources)
            return finish(rows, options, out, start)
    data = datafile.check(options.dataset, options.data)
    base = manifest.of_run(options, data)
    old = None if options.fresh else manifest.check(out, base, folder.PRODUCTS)
    if old is not None and base.code[0] not in old.code:
        print(f"note: {out} also holds rows of other code versions; {manifest.MANIFEST} lists each one",
              file=sys.stderr)
    loaded = datafile.load(options.dataset, options.data, options.refined)
    if options.refined:
        print(datafile.refined_note(options.refined, options.data, loaded))
    records = select(loaded, options)
    if options.llm_fallback and options.mode == "answer":
        print(f"run.py: answering with the scripted LLM (\"no information\" to every question): "
              f"{options.llm_fallback}", file=sys.stderr)
    reads = specs.structured(specs.parse(options.llm))  # the backend the extraction prompts go to
    extracts = options.mode == "answer" and options.facts and specs.uses_local_model(reads)
    note = llama.extraction_note(records) if extracts else ""
    if note:
        print(f"run.py: {note}", file=sys.stderr)
    base = (old or base).with_code(base.code[0])
    if options.mode == "retrieval":
        return retrieval(records, options, out, base, start)
    return answer(records, options, argv, out, base, start)


def answer(records: list, options: Options, argv: list, out: Path, base: manifest.Manifest, start: float) -> int:
    """Answer mode: run what is not done yet, then report every row of the folder."""
    todo = pending(records, options, out)
    model = judge_llm = None
    if todo:  # a bad spec stops here, before anything is written
        model, judge_llm = backends.build_model(options), backends.build_judge(options)
    with folder.lock(out), folder.log(out) as log:
        refuse_past_stop(options, out)
        if todo:
            with backends.running(model, out):
                evaluate(todo, model, judge_llm, options, out, base, log)
        rows = results.read(out, say=False)
        if len(rows) > len(records):
            print(f"the summary, report and official files cover all {len(rows)} records in {out} "
                  f"({len(records)} chosen by this command)")
        code = finish(rows, options, out, start, log.last_cause)
    if log.problems:
        print(f"the submission logged {log.problems} warning(s) or error(s): {out / folder.LOG}")
    for llm in (model.llm if model else None, judge_llm):
        commands.batch_report(llm, argv)
    if getattr(model, "unclean", False):  # said by backends.running; the contest's run would end the same way
        return code or STOPPED
    return code


STOPPED = 3


def refuse_past_stop(options: Options, out: Path) -> None:
    """Without --keep-going, a folder whose rows ran past a submission's exception goes no further:
    the contest would have stopped at that record."""
    if not options.submission or options.keep_going or options.fresh:
        return
    stop = summary.contest_stop(results.read(out, say=False))
    if stop:
        raise SubmissionStopped(f"{out} holds rows made with --keep-going past the submission's exception at "
                                f"record {stop['index']} ({stop['where']}: {stop['error']}), where the contest "
                                "stops; pass --keep-going to go on there, or --fresh")


FAILING_START = 3  # records failed in a row at the start of a pass: the backend is down, stop


def evaluate(todo: list, model, judge_llm, options: Options, out: Path, base: manifest.Manifest, log=None) -> None:
    """Run each record, appending its row to OUT/results.jsonl as it finishes; stop when the
    backend failed on every record of the pass so far (FAILING_START of them)."""
    from tqdm import tqdm
    if options.fresh:
        folder.set_aside(out)
    manifest.write(out, base)
    streak = 0  # records failed in a row since this pass began; None once one did not fail
    for record in tqdm(todo, desc="records", unit="rec", dynamic_ncols=True):
        row = scoring.run_one(record, model, judge_llm, options)
        results.append(out, row)
        if streak is not None:
            streak = streak + 1 if set(row["incomplete"]) & {*scoring.FAILED, LLM_FAILED, "judge_failed"} else None
        if streak == FAILING_START:
            raise BackendFailing(failing(row, options, out, log.last_cause if log else ""))


def failing(row: dict, options: Options, out: Path, cause: str = "") -> str:
    """Why the run stops: which backend failed from the start, the error that made it fail, and
    where every error is."""
    if "judge_failed" in row["incomplete"]:
        backend, option, details = "judge", f"--judge {options.judge}", f"judge_error in {out / results.RESULTS}"
        cause = row["judge_error"] or cause
    else:
        backend, option, details = "LLM", f"--llm {options.llm}", f"the submission's log, {out / folder.LOG}"
    return (f"the {backend} failed on the first {FAILING_START} records of {options.dataset} "
            f"({', '.join(row['incomplete'])}{': ' + cause if cause else ''}); check {option} (every error: "
            f"{details}). They are stored incomplete and run again next time")


def pending(records: list, options: Options, out: Path) -> list:
    """The records without a complete row in OUT (all of them with --fresh), saying what is done."""
    rows = [] if options.fresh else results.read(out)
    done = {r["id"] for r in rows if r["complete"]}
    todo = [r for r in records if r.id not in done]
    retried = len({r["id"] for r in rows} & {r.id for r in todo})
    if rows:
        again = f"; {retried} incomplete one(s) run again" if retried else ""
        print(f"resuming: {len(records) - len(todo)} of {len(records)} records already in {out}{again}")
    return todo


def finish(rows: list, options: Options, out: Path, start: float, cause: str = "") -> int:
    """The official files, summary, report and table of the rows; 4 when some are incomplete, said
    with `cause`, the last error the submission logged in this pass (a dead server's refusal)."""
    written = results.write_official([r for r in rows if r["complete"]], options.dataset, out)
    found = summary.summarize(rows, options)
    summary.write(found, out, start)
    written += ["summary.json", *report.write(found, out), results.RESULTS, manifest.MANIFEST]
    summary.print_table(found)
    print(f"wrote {out}/: {', '.join(name for name in written if (out / name).is_file())}")
    missing = found["incomplete"]
    if missing["records"]:
        reasons = ", ".join(f"{k} {v}" for k, v in missing["reasons"].items())
        reasons += f"; the last error: {cause}" if cause else ""
        print(f"{missing['records']} of {len(rows)} records are incomplete ({reasons}): kept in "
              f"{results.RESULTS} as \"complete\": false, left out of the scores, run again next time")
        return 4
    return 0


def retrieval(records, options: Options, out: Path, base: manifest.Manifest, start: float) -> int:
    with backends.startup_errors(options):
        embedder = retrieval_eval.build_embedder(options.embedder, options.cache_dir)
    if options.explain:  # one question, before the long loop: a wrong id is said at once
        why = retrieval_eval.explain(records, options.explain, embedder, options.config().memory)
    found, measured = retrieval_eval.run(records, options, embedder)
    with folder.lock(out):
        manifest.write(out, base)
        summary.write(found, out, start)
        written = report.write_retrieval(found, measured, out)
        if options.explain:
            (out / "explain.md").write_text("\n".join(why) + "\n", encoding="utf-8")
            written.append("explain.md")
    retrieval_eval.print_table(found)
    if options.explain:
        print("\n" + "\n".join(why))
    print(f"wrote {out}/: {', '.join(['summary.json', *written, manifest.MANIFEST])}")
    return 0


if __name__ == "__main__":
    code = main()
    if code == INTERRUPTED:  # an answer's worker may wait minutes on a server: leave without it
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)
