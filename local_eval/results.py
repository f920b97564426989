"""Result rows of a run: one JSON line per finished record in OUT/results.jsonl.

Appended as each record finishes, so an interrupted run loses nothing and a rerun skips
what is done; shard folders merge by concatenation. Also writes the official formats:
LongMemEval hypotheses (`question_id`, `hypothesis`), LoCoMo-Refined predictions (`qa_id`,
`predicted_answer`), and the contest's submit.csv / output.json. Called by run.py.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from . import harness

RESULTS = "results.jsonl"
# LoCoMo-Refined's qa_id (tasks/locomo_refined.py): only runs on its questions file have one.
REFINED_QA_ID = re.compile(r".+#q\d{4,}")


def read(out: Path) -> list[dict]:
    path = out / RESULTS
    if not path.is_file():
        return []
    rows = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            try:
                rows.append(json.loads(line))
            except ValueError:  # a line cut by an interruption: that record reruns
                continue
    return rows


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


def merge(sources: list, out: Path) -> list[dict]:
    """Rows of several shard folders, first occurrence of each id kept, into `out`."""
    seen, rows = set(), []
    for source in sources:
        for row in read(Path(source)):
            if row["id"] not in seen:
                seen.add(row["id"])
                rows.append(row)
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
