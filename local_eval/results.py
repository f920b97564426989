"""Result rows of a run: one JSON line per record run, in OUT/results.jsonl.

Appended as each record finishes, so an interrupted run loses nothing and a rerun skips
what is done. A row whose answer did not come from the LLM (a failed backend, a pending
batch reply) says `"complete": false`; the next run runs that record again and appends
its new row, and readers keep the latest row per id. Damaged lines (cut by an
interruption, or not a row) are skipped and counted. Shard folders merge by id. Also
writes the official formats: LongMemEval hypotheses (`question_id`, `hypothesis`),
LoCoMo-Refined predictions (`qa_id`, `predicted_answer`), and the contest's submit.csv /
output.json. Called by run.py.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Optional

from . import harness, jsonl

RESULTS = "results.jsonl"
# LoCoMo-Refined's qa_id (tasks/locomo_refined.py): only runs on its questions file have one.
REFINED_QA_ID = re.compile(r".+#q\d{4,}")
# Every row has these; a line without them is damaged (cut, or written by something else).
FIELDS = ("id", "question_type", "question", "answer", "answer_time", "correct", "f1", "em", "complete")


def read(out: Path, say: bool = True) -> list[dict]:
    """The latest row of each record id, in first-seen order; damaged lines skipped and counted.

    A record run again (it was incomplete) appends a new row, which replaces the old one here.
    `say` prints the count of damaged lines once, on stderr."""
    path = out / RESULTS
    rows, damaged = jsonl.read_rows(path, lambda row: all(k in row for k in FIELDS))
    if damaged and say:
        print(jsonl.damaged_note(damaged, path), file=sys.stderr)
    latest = {}
    for row in rows:
        latest[str(row["id"])] = row
    return list(latest.values())


def append(out: Path, row: dict) -> None:
    out.mkdir(parents=True, exist_ok=True)
    jsonl.append_rows(out / RESULTS, [row])


def set_aside(out: Path) -> Optional[Path]:
    """--fresh: the old rows move to results.jsonl.bak (replacing an older one), never deleted."""
    path = out / RESULTS
    if not path.is_file():
        return None
    backup = path.with_name(RESULTS + ".bak")
    path.replace(backup)
    return backup


def merge(sources: list, out: Path) -> list[dict]:
    """Rows of several shard folders into `out`: per id the first complete row, else the latest."""
    chosen: dict = {}
    for source in sources:
        for row in read(Path(source)):
            kept = chosen.get(row["id"])
            if kept is None or not kept["complete"]:
                chosen[row["id"]] = row
    rows = list(chosen.values())
    out.mkdir(parents=True, exist_ok=True)
    jsonl.write_rows(out / RESULTS, rows)
    return rows


def write_official(rows: list, dataset: str, out: Path) -> list[str]:
    """The contest files always; the benchmark's own prediction file where it has one."""
    harness.write_outputs([harness.Result(r["id"], r["question"], r["answer"], r["answer_time"]) for r in rows], out)
    written = ["submit.csv", "output.json"]
    if dataset == "longmemeval":
        jsonl.write_rows(out / "hypotheses.jsonl", [{"question_id": r["id"], "hypothesis": r["answer"]} for r in rows])
        written.append("hypotheses.jsonl")
    refined = [r for r in rows if REFINED_QA_ID.fullmatch(r["id"])] if dataset == "locomo" else []
    if refined:  # ids of the original file ("conv-26_q0") are not qa_ids: its evaluator would refuse them
        jsonl.write_rows(out / "predictions.jsonl", [{"qa_id": r["id"], "predicted_answer": r["answer"]} for r in refined])
        written.append("predictions.jsonl")
    return written

