"""The one crash-tolerant JSON-lines reader and writer of local_eval.

Run folders and reply stores are appended to as work finishes, so a kill can cut the last
line, even inside a multi-byte character. Reading skips such a line (and any valid JSON of
the wrong shape) and counts it; appending after a cut line starts on a fresh one, so both
stay readable. Used by `results` (OUT/results.jsonl) and `llms.store` (the reply stores).
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable


def read_rows(path: Path, valid: Callable[[dict], bool]) -> tuple[list[dict], list[int]]:
    """The JSON objects of a JSONL file that pass `valid`, in file order, and the numbers
    (from 1) of the non-empty lines skipped. A missing file reads as no rows."""
    if not path.is_file():
        return [], []
    rows, damaged = [], []
    with path.open("rb") as f:  # binary: a line cut inside a multi-byte character is one bad line
        for number, raw in enumerate(f, 1):
            if not raw.strip():
                continue
            try:
                row = json.loads(raw.decode("utf-8"))
            except ValueError:  # not UTF-8 (a cut character) or not JSON (a cut line)
                row = None
            if isinstance(row, dict) and valid(row):
                rows.append(row)
            else:
                damaged.append(number)
    return rows, damaged


def append_rows(path: Path, rows: list) -> None:
    """Append JSON lines; after a cut last line, start on a fresh one so both stay readable."""
    if not rows:
        return
    # Lone surrogates (hostile input) become \\uXXXX escapes: still valid JSON, still the same string.
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8", "backslashreplace")
    with path.open("ab") as f:
        if f.tell() and _last_byte(path) != b"\n":
            f.write(b"\n")
        f.write(data)


def write_rows(path: Path, rows: list) -> None:
    """A whole JSONL file at once (official outputs, merged runs)."""
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def damaged_note(damaged: list, path: Path, shown: int = 10) -> str:
    """`skipped 2 damaged lines (3, 7) in runs/x/results.jsonl`: how many, and which."""
    numbers = ", ".join(map(str, damaged[:shown])) + (", …" if len(damaged) > shown else "")
    return f"skipped {len(damaged)} damaged line{'s' * (len(damaged) > 1)} ({numbers}) in {path}"


def _last_byte(path: Path) -> bytes:
    with path.open("rb") as f:
        f.seek(-1, os.SEEK_END)
        return f.read(1)
