"""The decline gate, fitted and measured: how many no-answer questions it declines, and at what cost.

    .venv/bin/python bench/gate.py --prompts runs/prompts/*.jsonl --reading runs/reading/*.jsonl

Reads the prompt rows `bench/prompts.py` wrote (each with `answerable` and the memory's `signals`)
and, where given, a reader's rows from `bench/reading.py` (its `p_yes` for "does the material
answer this?"). For each signal alone (`bench/signals.py`, and the reader's `p_yes`), it prints
the coverage–accuracy curve per set: the share of no-answer questions declined against the share
of answerable ones declined, threshold by threshold, and the operating point the rule takes.
"""
from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

from local_eval import jsonl


def read(paths) -> list[dict]:
    return [row for path in paths for row in jsonl.read_rows(Path(path), lambda r: "id" in r)[0]]


def with_readers(prompts: list[dict], readings: list[dict]) -> list[dict]:
    """Each prompt row with `p_yes.<model>` signals from the reading rows (the `gate` way)."""
    found = defaultdict(dict)
    for row in readings:
        if row.get("way") == "gate":
            found[(row.get("set"), row["id"])][f"p_yes.{short(row['model'])}"] = row["p_yes"]
    return [{**row, "signals": {**row["signals"], **found.get((row.get("set"), row["id"]), {})}} for row in prompts]


def short(model: str) -> str:
    return model.replace("qwen2.5-coder-", "q").replace(".", "").replace("b", "")


def curve(rows: list[dict], signal: str) -> list[tuple]:
    """(threshold, no-answer declined, answerable declined) for declining below each distinct value."""
    values = sorted({r["signals"][signal] for r in rows if signal in r["signals"]})
    points = []
    no = [r for r in rows if not r["answerable"] and signal in r["signals"]]
    yes = [r for r in rows if r["answerable"] and signal in r["signals"]]
    for threshold in values + [float("inf")]:
        points.append((threshold, share(no, signal, threshold), share(yes, signal, threshold)))
    return points


def share(rows: list[dict], signal: str, threshold: float) -> float:
    return sum(r["signals"][signal] < threshold for r in rows) / len(rows) if rows else 0.0


def best_at(points: list[tuple], false_rate: float) -> tuple:
    """The point declining the most no-answer questions while declining at most `false_rate` of the rest."""
    allowed = [p for p in points if p[2] <= false_rate]
    return max(allowed, key=lambda p: (p[1], -p[2])) if allowed else (None, 0.0, 0.0)


def table(rows: list[dict], false_rate: float) -> list[str]:
    sets = sorted({r.get("set") or "?" for r in rows})
    signals = sorted({s for r in rows for s in r["signals"]})
    lines = ["| set | n (no answer) | signal | declined (no answer) | declined (answerable) | threshold |",
             "|---|---|---|---|---|---|"]
    for name in sets:
        part = [r for r in rows if (r.get("set") or "?") == name]
        for signal in signals:
            if not any(signal in r["signals"] for r in part):
                continue
            threshold, no, yes = best_at(curve(part, signal), false_rate)
            n_no = sum(not r["answerable"] for r in part)
            lines.append(f"| {name} | {len(part)} ({n_no}) | {signal} | {no:.2f} | {yes:.2f} | "
                         f"{'–' if threshold is None else f'{threshold:.4g}'} |")
    return lines


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--prompts", nargs="+", required=True)
    p.add_argument("--reading", nargs="*", default=[])
    p.add_argument("--false-rate", type=float, default=0.05, help="answerable questions the gate may decline")
    args = p.parse_args(argv)
    rows = with_readers(read(args.prompts), read(args.reading))
    print("\n".join(table(rows, args.false_rate)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
