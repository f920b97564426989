"""LoCoMo: one record per QA item over a conversation between two people.

Both speakers are people and questions ask about either, so each message carries its
speaker's name ("Caroline: …"), and in each session the speaker who opens it plays the
user: the contest harness drops a session's leading assistant message, which would lose
the first message of the 50 of 128 dev sessions that speaker_b opens.

Category 5 (adversarial) is an abstention question: the right reply says it is not
mentioned; its tempting wrong answer is kept in `extra["adversarial_answer"]`.

Record ids are `<sample_id>_q<i>`, i the position in the conversation's `qa` list. They are
not LoCoMo-Refined's `qa_id`s (those number the refined list): with that release's
questions file, `locomo_refined.load` reads the questions instead.
"""
from __future__ import annotations

import re

from . import Evidence, Record, Session, read_json

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
NOT_MENTIONED = "Not mentioned in the conversation"


def load(path: str) -> list[Record]:
    return [r for conv in conversations(path) for r in _records(conv)]


def conversations(path: str) -> list[dict]:
    """The conversations of a LoCoMo file (`locomo10.json` or a part of it, `.gz` or not), as stored."""
    return read_json(path)


def sessions_of(conv: dict) -> tuple[tuple, dict]:
    """Sessions in order, and dia_id -> Evidence (labeled with the dia_id) for every message."""
    c = conv["conversation"]
    numbers = sorted(int(m.group(1)) for k in c if (m := re.fullmatch(r"session_(\d+)", k)))
    sessions, where = [], {}
    for n in numbers:
        turns = c[f"session_{n}"]
        opener = turns[0]["speaker"] if turns else None
        messages = tuple({"role": "user" if t["speaker"] == opener else "assistant",
                          "content": f"{t['speaker']}: {_text(t)}"} for t in turns)
        sessions.append(Session(id=str(n), messages=messages, date=c.get(f"session_{n}_date_time")))
        where.update({t["dia_id"]: Evidence(str(n), i, t["dia_id"]) for i, t in enumerate(turns)})
    return tuple(sessions), where


def _text(turn: dict) -> str:
    # Shared images survive only as captions; keep them, questions ask about them.
    caption = turn.get("blip_caption")
    return f"{turn['text']} [shares a photo: {caption}]" if caption else turn["text"]


def evidence_of(qa: dict, where: dict) -> tuple:
    """Evidence units of a QA item; its ids may come joined ("D8:6; D9:17") or unknown."""
    ids = re.findall(r"D\d+:\d+", " ".join(map(str, qa.get("evidence", []))))
    return tuple(where[d] for d in ids if d in where)


def _records(conv: dict) -> list[Record]:
    sessions, where = sessions_of(conv)
    records = []
    for i, qa in enumerate(conv["qa"]):
        category = int(qa["category"])
        abstention = category == 5
        evidence = evidence_of(qa, where)
        records.append(Record(
            id=f"{conv['sample_id']}_q{i}",
            dialogue_id=conv["sample_id"],
            question=qa["question"],
            question_type=CATEGORIES.get(category, str(category)),
            gold=NOT_MENTIONED if abstention else str(qa.get("answer", "")),
            sessions=sessions,
            evidence=() if abstention else evidence,
            evidence_sessions=() if abstention else tuple(sorted({e.session_id for e in evidence})),
            abstention=abstention,
            extra={"adversarial_answer": qa.get("adversarial_answer"), "category": category,
                   "observation": conv.get("observation", {}), "dia_ids": where},
        ))
    return records
