"""A replica of the organizers' harness: drives a model exactly as the contest does.

Per record: sessions flattened (a session's leading assistant message dropped, a trailing
user message followed by "<нет ответа>"), cut into consecutive pairs, one
`write_to_memory` per pair, one `answer_to_question`, then `clear_memory`. `answer_time`
runs from before the first write to after the answer. Called by `run.py`.
"""
from __future__ import annotations

import csv
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from models import Message

from .tasks import Evidence, Record

NO_REPLY = "<нет ответа>"


@dataclass(frozen=True)
class Origin:
    """Where a flat message came from: its session and index there (None for placeholders)."""
    session_id: str
    index: Optional[int]


@dataclass
class Result:
    id: str
    question: str
    answer: str
    answer_time: float
    trace: object = None  # the model's answer record, when it offers one (provenance)
    stats: Optional[dict] = None


def flatten(record: Record) -> tuple[list[Message], list[Origin]]:
    """The contest's flat message list, and each message's origin."""
    messages, origins = [], []
    for session in record.sessions:
        items = list(enumerate(session.messages))
        if items and items[0][1]["role"] == "assistant":
            items = items[1:]
        for index, m in items:
            messages.append(Message(role=m["role"], content=m["content"], session_id=session.id))
            origins.append(Origin(session.id, index))
        if items and items[-1][1]["role"] == "user":
            messages.append(Message(role="assistant", content=NO_REPLY, session_id=session.id))
            origins.append(Origin(session.id, None))
    return messages, origins


def pairs(messages: list) -> list[list]:
    return [messages[i:i + 2] for i in range(0, len(messages), 2)]


def evidence_positions(record: Record, origins: list[Origin]) -> list[set]:
    """For each evidence unit, the flat positions that satisfy it (one, or a whole session)."""
    found = []
    for unit in record.evidence:
        found.append({k for k, o in enumerate(origins) if _matches(unit, o)})
    return found


def _matches(unit: Evidence, origin: Origin) -> bool:
    if origin.session_id != unit.session_id or origin.index is None:
        return False
    return unit.index is None or unit.index == origin.index


def run_record(model, record: Record, use_dates: bool = True) -> Result:
    """One record through the model, the contest's way; dates only via the side channel."""
    messages, _ = flatten(record)
    dialogue_id = record.id
    if use_dates and hasattr(model, "set_dates"):
        dates = {s.id: s.date for s in record.sessions if s.date}
        if dates or record.question_date:
            model.set_dates(dialogue_id, dates, record.question_date)
    start = time.perf_counter()
    for pair in pairs(messages):
        model.write_to_memory(pair, dialogue_id)
    answer = model.answer_to_question(dialogue_id, record.question)
    elapsed = time.perf_counter() - start
    trace = model.trace(dialogue_id) if hasattr(model, "trace") else None
    stats = model.memory_stats(dialogue_id) if hasattr(model, "memory_stats") else None
    model.clear_memory(dialogue_id)
    return Result(id=record.id, question=record.question, answer=answer,
                  answer_time=elapsed, trace=trace, stats=stats)


def write_outputs(results: list[Result], out_dir: Path) -> None:
    """`output.json` and `submit.csv` (`id,answer,answer_time`), as the organizers write them."""
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = [{"id": r.id, "question": r.question, "answer": r.answer,
             "answer_time": round(r.answer_time, 4)} for r in results]
    (out_dir / "output.json").write_text(json.dumps(rows, ensure_ascii=False, indent=1),
                                         encoding="utf-8")
    with (out_dir / "submit.csv").open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["id", "answer", "answer_time"])
        for r in rows:
            writer.writerow([r["id"], r["answer"], r["answer_time"]])
