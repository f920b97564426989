"""LoCoMo-Refined: the recalibrated LoCoMo question list, over LoCoMo's own conversations.

The release is github.com/mem-eval-suite/LoCoMo_refined (CC BY-NC 4.0; read, not copied).
Its `data/public/questions.jsonl`, written by its `src/export.py` from
`data/raw/locomo_refined.json`, has one JSON object per line:

    qa_id              "conv-26#q0000": sample_id, "#q", the zero-based position in that
                       conversation's `qa` list of the *refined* file, four digits
    sample_id, conversation_idx, qa_index, speaker_a, speaker_b, question
    answer             list of acceptable complete answers; any one of them is right
    category           "1".."4", a string (the adversarial category 5 is gone)
    is_multi_modality  bool
    evidence           dia ids ("D1:3"); evidence_messages: those turns, resolved

The refined list has 1,382 questions where LoCoMo has 1,540 non-adversarial ones and
revises 337 of them, so a position in LoCoMo's `qa` list is not a `qa_id`: the ids come
from this file, never from locomo10.json. Its evaluator (`src/evaluate.py`) joins
predictions `{"qa_id", "predicted_answer"}` on `qa_id` and refuses unknown ones.

Conversations still come from the LoCoMo file (`--data`); questions of conversations that
file lacks are left out (the dev file holds 5 of the 10). Called through `benchmarks.load`.
"""
from __future__ import annotations

import json
from pathlib import Path

from . import Record
from .locomo import CATEGORIES, conversations, evidence_of, sessions_of


def load(locomo_path: str, questions_path: str) -> list[Record]:
    """Records of the refined questions whose conversation is in the LoCoMo file."""
    by_id = {conv["sample_id"]: conv for conv in conversations(locomo_path)}
    rows = read_questions(questions_path)
    built = {sid: sessions_of(conv) for sid, conv in by_id.items()}
    records = [_record(row, by_id[row["sample_id"]], *built[row["sample_id"]])
               for row in rows if row["sample_id"] in by_id]
    if rows and not records:
        raise ValueError(f"no question of {questions_path} is about a conversation of {locomo_path}")
    return records


def read_questions(path: str) -> list[dict]:
    """The rows of a refined `questions.jsonl`; ValueError naming the line if one is broken."""
    rows = []
    with Path(path).open(encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                _ = row["qa_id"], row["sample_id"], row["question"], row["answer"]
            except (ValueError, KeyError, TypeError) as e:
                raise ValueError(f"{path}:{number} is not a LoCoMo-Refined question row ({e})") from None
            rows.append(row)
    return rows


def _record(row: dict, conv: dict, sessions: tuple, where: dict) -> Record:
    answers = row["answer"] if isinstance(row["answer"], list) else [row["answer"]]
    answers = tuple(str(a) for a in answers if str(a).strip())
    evidence = evidence_of(row, where)
    category = int(row["category"]) if str(row.get("category", "")).isdigit() else row.get("category")
    return Record(
        id=row["qa_id"],
        dialogue_id=row["sample_id"],
        question=row["question"],
        question_type=CATEGORIES.get(category, str(category)),
        gold=answers[0] if answers else "",
        answers=answers,
        sessions=sessions,
        evidence=evidence,
        evidence_sessions=tuple(sorted({e.session_id for e in evidence})),
        extra={"category": category, "qa_id": row["qa_id"], "is_multi_modality": bool(row.get("is_multi_modality")),
               "observation": conv.get("observation", {}), "dia_ids": where},
    )
