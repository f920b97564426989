"""Result rows of a run: one JSON line per record run, in OUT/results.jsonl.

Appended as each record finishes, so an interrupted run loses nothing and a rerun skips
what is done. A row whose answer did not come from the LLM (a failed backend, a pending
batch reply) says `"complete": false`; the next run runs that record again and appends
its new row, and readers keep the latest row per id. Damaged lines (cut by an
interruption, or not a row) are skipped and counted. Shard folders merge by id. Also
writes the official formats: the contest's submit.csv / output.json, and the benchmark's
own file its declaration names (LongMemEval `hypotheses.jsonl`, LoCoMo-Refined
`predictions.jsonl`). Called by run.py.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

from . import benchmarks, harness, jsonl

RESULTS = "results.jsonl"
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
    rows = sorted(chosen.values(), key=lambda row: by_id(row["id"]))  # shards interleave: back in id order
    out.mkdir(parents=True, exist_ok=True)
    jsonl.write_rows(out / RESULTS, rows)
    return rows


def by_id(record_id) -> tuple:
    """A sort key: numeric ids by number (`2` before `10`), then the others by text."""
    text = str(record_id)
    return (0, int(text), "") if text.isdigit() else (1, 0, text)


def write_official(rows: list, dataset: str, out: Path) -> list[str]:
    """The contest files always; the benchmark's own prediction file where it has one and rows
    belong in it (its declaration's `official`, benchmarks.py)."""
    harness.write_outputs([harness.Result(r["id"], r["question"], r["answer"], r["answer_time"]) for r in rows], out)
    written = ["submit.csv", "output.json"]
    official = benchmarks.get(dataset).official
    lines = [line for line in map(official.line, rows) if line is not None] if official else []
    if lines:
        jsonl.write_rows(out / official.name, lines)
        written.append(official.name)
    return written
