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

import json
import re
import sys
from pathlib import Path
from typing import Optional

from . import harness

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
    if not path.is_file():
        return []
    latest, damaged = {}, 0
    with path.open("rb") as f:  # binary: a line cut inside a multi-byte character is one bad line
        for raw in f:
            row = _row(raw)
            if row is None:
                damaged += raw.strip() != b""
                continue
            latest[str(row["id"])] = row
    if damaged and say:
        print(f"skipped {damaged} damaged line{'s' * (damaged > 1)} in {path}", file=sys.stderr)
    return list(latest.values())


def _row(raw: bytes):
    try:
        row = json.loads(raw.decode("utf-8"))
    except ValueError:  # not UTF-8 (a cut character) or not JSON (a cut line)
        return None
    return row if isinstance(row, dict) and all(k in row for k in FIELDS) else None


def append(out: Path, row: dict) -> None:
    out.mkdir(parents=True, exist_ok=True)
    path = out / RESULTS
    with path.open("a", encoding="utf-8") as f:
        if path.stat().st_size and _last_byte(path) != b"\n":
            f.write("\n")  # an interruption cut the last line: start clean
        f.write(json.dumps(row, ensure_ascii=False) + "\n")
        f.flush()


def _last_byte(path: Path) -> bytes:
    with path.open("rb") as f:
        f.seek(-1, 2)
        return f.read(1)


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
    (out / RESULTS).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return rows


def write_official(rows: list, dataset: str, out: Path) -> list[str]:
    """The contest files always; the benchmark's own prediction file where it has one."""
    harness.write_outputs([harness.Result(r["id"], r["question"], r["answer"], r["answer_time"]) for r in rows], out)
    written = ["submit.csv", "output.json"]
    if dataset == "longmemeval":
        _jsonl(out / "hypotheses.jsonl", [{"question_id": r["id"], "hypothesis": r["answer"]} for r in rows])
        written.append("hypotheses.jsonl")
    refined = [r for r in rows if REFINED_QA_ID.fullmatch(r["id"])] if dataset == "locomo" else []
    if refined:  # ids of the original file ("conv-26_q0") are not qa_ids: its evaluator would refuse them
        _jsonl(out / "predictions.jsonl", [{"qa_id": r["id"], "predicted_answer": r["answer"]} for r in refined])
        written.append("predictions.jsonl")
    return written


def _jsonl(path: Path, rows: list) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
