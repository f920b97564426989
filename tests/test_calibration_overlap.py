"""The shipped calibration set shares nothing with what it is read against.

The decline gate's threshold is set at run start on `submit/calibration/` (tools/calibration.py).
Every Russian figure of the gate is read on the contest sample's dialogues (Russian dev, both
probes) and on the dev users 27-32: a calibration prompt drawn from one of those dialogues would
make those figures in-sample. So each prompt names a calibration user's dialogue (21-26), and
no user message of a dialogue a dev set asks about stands in any prompt's text.
"""
import json
import re

import pytest

from conftest import ROOT, SHARED_DATA

CALIBRATION = sorted((ROOT / "submit/calibration").glob("ru.*.jsonl"))
CALIBRATION_USERS = {str(n) for n in range(21, 27)}
DEV_USERS = {str(n) for n in range(27, 33)}
PROBES = [ROOT / "bench/fixtures/probe_lists_ru.jsonl", ROOT / "bench/fixtures/probe_versions_ru.jsonl"]
GIGAMEMORY = SHARED_DATA / "gigamemory"
MIN_CHARS = 60  # a user message this long does not stand in another dialogue by chance


def rows(path):
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def calibration_rows():
    assert CALIBRATION, "no Russian calibration set in submit/calibration/"
    return [(path.name, row) for path in CALIBRATION for row in rows(path)]


def dev_dialogue_ids() -> set:
    """Every dialogue a dev set or a probe asks about: the sample's four and the dev users."""
    asked = {str(r["dialogue_id"]) for path in PROBES for r in rows(path)}
    if GIGAMEMORY.is_dir():
        asked |= {str(r["dialogue_id"]) for r in rows(GIGAMEMORY / "ru_dev_questions.jsonl")}
        asked |= {str(r["id"]) for r in rows(GIGAMEMORY / "format_example.jsonl")}
    return asked | DEV_USERS


def test_every_prompt_names_a_calibration_user():
    for name, row in calibration_rows():
        assert str(row.get("dialogue_id")) in CALIBRATION_USERS, (name, row["id"], row.get("dialogue_id"))
        assert str(row["dialogue_id"]) not in dev_dialogue_ids(), (name, row["id"])


def dev_user_messages() -> set:
    """The long user messages of every dialogue a dev set asks about."""
    sessions = [s for r in rows(GIGAMEMORY / "format_example.jsonl") for s in r["sessions"]]
    sessions += [s for d in rows(GIGAMEMORY / "users/dialogues.jsonl") if str(d["id"]) in DEV_USERS
                 for s in d["sessions"]]
    return {norm(m["content"]) for s in sessions for m in s["messages"]
            if m["role"] == "user" and len(m["content"]) >= MIN_CHARS}


@pytest.mark.skipif(not GIGAMEMORY.is_dir(), reason="needs ../shared/data/gigamemory")
def test_no_dev_dialogue_stands_in_a_prompt():
    messages = dev_user_messages()
    assert len(messages) > 100  # the sample's and the dev users' messages were read
    for name, row in calibration_rows():
        text = norm(" ".join(m["content"] for m in row["messages"]))
        found = [m for m in messages if m in text]
        assert not found, f"{name} {row['id']}: a dev dialogue's message stands in the prompt: {found[0][:80]!r}"


@pytest.mark.skipif(not GIGAMEMORY.is_dir(), reason="needs ../shared/data/gigamemory")
def test_no_calibration_question_is_a_dev_question():
    asked = {norm(r["question"]) for path in PROBES for r in rows(path)}
    asked |= {norm(r["question"]) for r in rows(GIGAMEMORY / "ru_dev_questions.jsonl")}
    asked |= {norm(r["question"]) for r in rows(GIGAMEMORY / "users/questions.jsonl")
              if str(r["dialogue_id"]) in DEV_USERS}
    for name, row in calibration_rows():
        if norm(row["question"]) in asked:  # the same words may be asked of another person: not of the same one
            assert str(row["dialogue_id"]) in CALIBRATION_USERS, (name, row["id"])
