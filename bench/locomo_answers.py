"""Answer accuracy of finished LoCoMo runs under the strict judge, as one table.

    .venv/bin/python bench/locomo_answers.py runs/locomo-16k [runs/locomo-16k-judge-b ...] \
        [--label NAME ...] [--out bench/results/locomo_answers/table.md]

Each RUN is a `local_eval/run.py --dataset locomo --judge ...` folder whose rows are complete.
Per run: accuracy over all questions, over the answerable ones (LoCoMo's adversarial
category aside: there the right answer is to decline), by category, and the share of the
questions with evidence turns whose context held them all (`summary.evidence`, the
definition run.py's summary uses; their number after "of"). Runs that answer the same
questions with the same replies but another judge show how far two judges agree
(`--agree A B`, labels or folder names). The judged rows (question, gold, answer, evidence in
context, verdict) go beside the table as `<out stem>/<label>.jsonl`.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from local_eval import results, summary

ADVERSARIAL = "adversarial"


def load(folder: Path) -> list:
    """The run's complete rows (the latest row per record, damaged lines skipped)."""
    if not (folder / results.RESULTS).is_file():
        raise SystemExit(f"{folder}: no {results.RESULTS} (not a run folder)")
    rows = [row for row in results.read(folder) if row["complete"]]
    if not rows:
        raise SystemExit(f"{folder}: no complete row")
    if any(row.get("judge") is None for row in rows):
        raise SystemExit(f"{folder}: rows without a judge verdict (run it with --judge)")
    return rows


def verdict(row: dict) -> bool:
    return row["judge"] is True


def share(rows: list, test) -> str:
    return f"{sum(map(test, rows)) / len(rows):.3f}" if rows else "–"


def table(runs: dict) -> list:
    types = sorted({row["question_type"] for rows in runs.values() for row in rows})
    head = ["run", "n", "all", "answerable", *types, "evidence in context"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for label, rows in runs.items():
        answerable = [r for r in rows if r["question_type"] != ADVERSARIAL]
        cells = [label, str(len(rows)), share(rows, verdict), share(answerable, verdict)]
        cells += [share([r for r in rows if r["question_type"] == t], verdict) for t in types]
        found = summary.evidence(rows)
        cells.append(f"{found['evidence_in_context']:.3f} of {found['evidence_n']}" if found["evidence_n"] else "–")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def agreement(a: list, b: list) -> str:
    by_id = {r["id"]: r for r in b}
    pairs = [(r, by_id[r["id"]]) for r in a if r["id"] in by_id]
    if any(x["answer"] != y["answer"] for x, y in pairs):
        raise SystemExit("--agree: the two runs' answers differ; agreement needs the same replies")
    same = sum(verdict(x) == verdict(y) for x, y in pairs)
    return f"{same} of {len(pairs)}"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("runs", nargs="+", type=Path, help="finished LoCoMo run folders")
    p.add_argument("--label", action="append", default=[], help="a name per run, in order")
    p.add_argument("--agree", nargs=2, action="append", default=[], metavar=("A", "B"),
                   help="report how often the verdicts of runs A and B agree")
    p.add_argument("--out", type=Path, help="write the table here (.md) and the judged rows beside it")
    args = p.parse_args(argv)
    if args.label and len(args.label) != len(args.runs):
        p.error("give one --label per run, or none")
    labels = args.label or [folder.name for folder in args.runs]
    runs = {label: load(folder) for label, folder in zip(labels, args.runs)}
    lines = table(runs)
    for a, b in args.agree:
        if a not in runs or b not in runs:
            p.error(f"--agree {a} {b}: not among the runs ({', '.join(runs)})")
        lines.append(f"\nVerdicts of {a} and {b} agree on {agreement(runs[a], runs[b])} questions.")
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n", encoding="utf-8")
        folder = args.out.with_suffix("")
        folder.mkdir(exist_ok=True)
        keep = ("id", "question_type", "question", "gold", "answer", "evidence_in_context", "judge")
        for label, rows in runs.items():
            with (folder / f"{label}.jsonl").open("w", encoding="utf-8") as f:
                for row in rows:
                    f.write(json.dumps({k: row.get(k) for k in keep}, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
