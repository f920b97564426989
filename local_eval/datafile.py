"""A user's data file, checked and loaded: its mistakes become one-line `DataError`s.

`load(dataset, data)` is `benchmarks.load` plus what can go wrong with a file someone brings:
missing, a folder, empty, gzip where the reader wants plain text, not JSON (with the
file's own line number), JSON of another benchmark's schema, no records. The happy path
reads the file once; the slower diagnosis runs only after a loader failed. The format and
the fields of each benchmark come from its declaration (`benchmarks.py`). Called by run.py.
"""
from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Optional

from . import benchmarks
from .errors import DataError


def path_of(dataset: str, data: Optional[str]) -> Path:
    return Path(data) if data else benchmarks.get(dataset).data


def check(dataset: str, data: Optional[str]) -> Path:
    """The data file's path, or a DataError saying why it cannot be read (checked before any work)."""
    path = path_of(dataset, data)
    if not path.exists():
        raise DataError(f"--data {path}: no such file")
    if not path.is_file():
        raise DataError(f"--data {path}: not a file")
    if benchmarks.get(dataset).json_lines and path.suffix == ".gz":
        raise DataError(f"--data {path}: --dataset {dataset} reads plain JSON Lines; unpack it first "
                        f"(gunzip -k {path})")
    if path.stat().st_size == 0:
        raise DataError(f"--data {path}: the file is empty")
    return path


def load(dataset: str, data: Optional[str], refined: Optional[str] = None) -> list:
    """`benchmarks.load(dataset, data, refined)`, with a user's file mistakes as DataError."""
    path = check(dataset, data)
    if refined is not None and not Path(refined).is_file():
        raise DataError(f"--refined {refined}: no such file")
    try:
        records = benchmarks.load(dataset, data, refined)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise DataError(_unreadable(dataset, path, e)) from None
    except (EOFError, gzip.BadGzipFile) as e:
        raise DataError(f"{path}: not a readable gzip file ({e})") from None
    except (KeyError, TypeError, AttributeError, IndexError):
        problem = shape_problem(dataset, path)
        if problem is None:
            raise  # the file has the expected shape: the loader has a bug, keep its traceback
        raise DataError(problem) from None
    except ValueError as e:  # the loaders' own word for a data mistake (a missing dialogue, quote)
        raise DataError(f"{path}: {e}") from None
    if not records:
        raise DataError(f"{path}: no records in it")
    return records


def refined_note(refined: str, data: str, records: list) -> str:
    """How many of LoCoMo-Refined's questions the run asks, and which conversations' it leaves out
    (those the --data file lacks), e.g. on the dev file about half of them."""
    from .tasks.locomo_refined import read_questions
    rows = read_questions(refined)
    asked = {row["qa_id"] for row in rows} & {r.id for r in records}
    left = sorted({row["sample_id"] for row in rows if row["qa_id"] not in asked})
    if not left:
        return f"--refined: all {len(rows)} questions of {refined}"
    return (f"--refined: {len(asked)} of the {len(rows)} questions of {refined}; {len(rows) - len(asked)} left out, "
            f"about conversations {data} does not hold ({', '.join(left)})")


def _unreadable(dataset: str, path: Path, error: ValueError) -> str:
    """Where the file stops being JSON: the file's own line number, whatever the format."""
    if benchmarks.get(dataset).json_lines:
        for candidate in [path, *sorted(path.parent.glob("*.jsonl"))]:
            bad = first_bad_line(candidate)
            if bad:
                beside = "" if candidate == path else f" (a dialogue file read beside {path.name})"
                return f"{candidate} line {bad[0]}: {bad[1]}{beside}"
        return f"{path}: {error}"
    if isinstance(error, UnicodeDecodeError):
        with path.open("rb") as f:
            packed = f.read(2) == b"\x1f\x8b"
        if packed:
            return f"{path}: a gzip file, and --dataset {dataset} reads it unpacked (gunzip -k {path})"
        return f"{path}: not UTF-8 text ({error.reason} at byte {error.start})"
    hint = f" — JSON Lines? --dataset {dataset} reads one JSON document" if error.msg == "Extra data" else ""
    return f"{path} line {error.lineno} column {error.colno}: not valid JSON ({error.msg}){hint}"


def first_bad_line(path: Path) -> Optional[tuple]:
    """(1-based line number, what is wrong) of the first line that is not UTF-8 JSON, or None."""
    with path.open("rb") as f:
        for number, raw in enumerate(f, 1):
            try:
                text = raw.decode("utf-8")
                if text.strip():
                    json.loads(text)
            except UnicodeDecodeError as e:
                return number, f"not UTF-8 text ({e.reason} at byte {e.start} of the line)"
            except json.JSONDecodeError as e:
                return number, f"not valid JSON ({e.msg}, column {e.colno})"
    return None


def shape_problem(dataset: str, path: Path) -> Optional[str]:
    """Why the file is not of the dataset's schema (its top-level items), or None if it looks right."""
    benchmark = benchmarks.get(dataset)
    if benchmark.json_lines:
        with path.open(encoding="utf-8") as f:
            items = [(f"line {n}", json.loads(line)) for n, line in enumerate(f, 1) if line.strip()]
    else:
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", encoding="utf-8") as f:
            data = json.load(f)
        if not isinstance(data, list):
            return f"{path}: a JSON {type(data).__name__}, not a list of {dataset} items"
        items = [(f"item {i}", item) for i, item in enumerate(data)]
    for where, item in items:
        problem = _item_problem(benchmark.fields, item)
        if problem:
            return f"{path} {where}: {problem} — not a {dataset} file{_looks_like(item, benchmark.fields)}"
    return None


def _item_problem(fields: tuple, item) -> Optional[str]:
    if not isinstance(item, dict):
        return f"a JSON {type(item).__name__}, not an object"
    missing = [_name(f) for f in fields if not _has(item, f)]
    return f"no {', '.join(missing)}" if missing else None


def _has(item: dict, field) -> bool:
    """`field` is a key, or a tuple of keys any one of which will do."""
    return any(k in item for k in field) if isinstance(field, tuple) else field in item


def _name(field) -> str:
    return " or ".join(field) if isinstance(field, tuple) else field


def _looks_like(item, fields: tuple) -> str:
    """The benchmark whose files have items like this one (among those a user brings files for)."""
    for other in benchmarks.BENCHMARKS.values():
        if other.data is None and other.fields != fields and isinstance(item, dict) \
                and all(_has(item, f) for f in other.fields):
            return f" (it looks like a {other.name} file)"
    return ""
