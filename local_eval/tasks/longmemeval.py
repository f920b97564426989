"""LongMemEval (S, M, oracle): `.json` or `.json.gz`, one record per question."""
from __future__ import annotations

from . import Evidence, Record, Session, read_json

def load(path: str) -> list[Record]:
    return [_record(item) for item in read_json(path)]


def _record(item: dict) -> Record:
    dates = item.get("haystack_dates") or [None] * len(item["haystack_sessions"])
    sessions, evidence = [], []
    for sid, date, turns in zip(item["haystack_session_ids"], dates, item["haystack_sessions"]):
        messages = tuple({"role": t["role"], "content": t["content"]} for t in turns)
        sessions.append(Session(id=str(sid), messages=messages, date=date))
        evidence += [Evidence(str(sid), i) for i, t in enumerate(turns) if t.get("has_answer")]
    qid = str(item["question_id"])
    abstention = qid.endswith("_abs")
    return Record(
        id=qid,
        dialogue_id=qid,
        question=item["question"],
        question_type=item["question_type"],
        gold=str(item["answer"]),
        sessions=tuple(sessions),
        evidence=() if abstention else tuple(evidence),
        evidence_sessions=() if abstention else tuple(str(s) for s in item["answer_session_ids"]),
        abstention=abstention,
        question_date=item.get("question_date"),
    )
