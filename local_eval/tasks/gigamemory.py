"""GigaMemory (the contest's format): records with sessions, or question files over them.

A question file (like `ru_dev_questions.jsonl`) names its dialogue by `dialogue_id`; its
dialogues are read from the other `.jsonl` files in the same folder, or in `dialogues_from`.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Optional

from . import Evidence, Record, Session

NO_INFO = "no_info"


def load(path: str, dialogues_from: Optional[str] = None) -> list[Record]:
    rows = _read_jsonl(Path(path))
    if all("sessions" in row for row in rows):
        return from_rows(rows)
    folder = Path(dialogues_from) if dialogues_from else Path(path).parent
    dialogues = _dialogues_in(folder, skip=Path(path))
    missing = sorted({str(r["dialogue_id"]) for r in rows} - set(dialogues))
    if missing:
        raise ValueError(f"{path}: no dialogue file in {folder} holds dialogues {missing}")
    return [_record(row, dialogues[str(row["dialogue_id"])]) for row in rows]


def from_rows(rows: list[dict]) -> list[Record]:
    """Records of contest rows (sessions copied in); a row's `dialogue_id`, where it has one, names
    its dialogue (records padded from one user share it), else its `id` does (the contest's files)."""
    return [_record(row, {**row, "id": row.get("dialogue_id", row["id"])}) for row in rows]


def first_per_dialogue(records: list[Record]) -> list[Record]:
    """Each dialogue's first record, in order: what a measurement of the dialogue alone reads."""
    found: dict[str, Record] = {}
    for record in records:
        found.setdefault(record.dialogue_id, record)
    return list(found.values())


def _read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _dialogues_in(folder: Path, skip: Path) -> dict[str, dict]:
    """Dialogue id -> the row with its sessions, from every `.jsonl` file of `folder` but `skip`."""
    found = {}
    for other in sorted(folder.glob("*.jsonl")):
        if other.resolve() == skip.resolve():
            continue
        for row in _read_jsonl(other):
            if "sessions" in row:
                found[str(row["id"])] = row
    return found


def _record(row: dict, dialogue: dict) -> Record:
    sessions = tuple(
        Session(id=str(s["id"]), messages=tuple(s["messages"])) for s in dialogue["sessions"]
    )
    ans_sessions = tuple(str(s) for s in row.get("ans_session_ids", []))
    is_no_info = row["question_type"] == NO_INFO
    return Record(
        id=str(row["id"]),
        dialogue_id=str(dialogue["id"]),
        question=row["question"],
        question_type=row["question_type"],
        gold=row["ans"],
        sessions=sessions,
        evidence=() if is_no_info else _evidence(row, sessions, ans_sessions),
        evidence_sessions=() if is_no_info else ans_sessions,
        abstention=is_no_info,
    )


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def _evidence(row: dict, sessions: tuple, ans_sessions: tuple) -> tuple:
    """The message holding each evidence quote; else any message of each answer session."""
    quotes = row.get("evidence") or []
    if not quotes:
        return tuple(Evidence(session_id=s) for s in ans_sessions)
    by_id = {s.id: s for s in sessions}
    units = []
    for q in quotes:
        session = by_id.get(str(q["session_id"]))
        if session is None:
            raise ValueError(f"{row['id']}: evidence names unknown session {q['session_id']}")
        quote = _norm(q["quote"])
        hits = [i for i, m in enumerate(session.messages) if quote in _norm(m["content"])]
        if not hits:
            raise ValueError(f"{row['id']}: quote not found in session {session.id}: {q['quote']!r}")
        units.append(Evidence(session_id=session.id, index=hits[0]))
    return tuple(units)
