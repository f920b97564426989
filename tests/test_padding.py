"""The users padded to the contest's length: seeded, their own sessions in order, evidence kept."""
import json

import pytest

from conftest import SHARED_DATA
from local_eval.tasks import gigamemory
from local_eval.tasks.padding import load_pool, pad, padded_records, session_chars, users_records

USERS = SHARED_DATA / "gigamemory" / "users"


def session(sid, text, n=2):
    return {"id": sid, "messages": [{"role": "user" if i % 2 == 0 else "assistant", "content": text}
                                    for i in range(n)]}


DIALOGUE = {"id": 7, "sessions": [session(1, "а" * 50), session(2, "б" * 50), session(5, "в" * 50)]}
POOL = [{"id": f"f{i}", "messages": session(0, str(i) * 100)["messages"]} for i in range(4)]


def test_pads_to_the_length_keeping_the_users_order():
    padded, mapping = pad(DIALOGUE, POOL, seed=0, chars=1000)
    sessions = padded["sessions"]
    assert sum(session_chars(s) for s in sessions) >= 1000
    assert [s["id"] for s in sessions] == list(range(1, len(sessions) + 1))
    own = [s for s in sessions if s["messages"][0]["content"][0] in "абв"]
    assert [s["messages"][0]["content"][0] for s in own] == ["а", "б", "в"]
    assert [mapping[k] for k in ("1", "2", "5")] == [s["id"] for s in own]
    # 300 own characters + 200 a filler session: four fillers reach 1100, the pool whole, none twice
    assert len(sessions) - len(own) == 4
    assert sorted(s["messages"][0]["content"][0] for s in sessions if s not in own) == ["0", "1", "2", "3"]


def test_the_same_seed_gives_the_same_dialogue():
    assert pad(DIALOGUE, POOL, seed=3, chars=3000) == pad(DIALOGUE, POOL, seed=3, chars=3000)
    draws = {json.dumps(pad(DIALOGUE, POOL, seed=s, chars=3000)[0]) for s in range(6)}
    assert len(draws) > 1  # the seed moves the fillers


def test_a_pool_used_up_is_drawn_again():
    padded, _ = pad(DIALOGUE, POOL, seed=1, chars=2000)
    assert len(padded["sessions"]) == 3 + 9  # 300 + 9 x 200 >= 2000


def test_an_empty_pool_is_an_error():
    with pytest.raises(ValueError, match="empty"):
        pad(DIALOGUE, [], seed=0)


def test_question_session_ids_follow_the_users_sessions():
    question = {"id": "7-u-01", "dialogue_id": 7, "question": "?", "question_type": "fact_equal_session",
                "ans": "x", "ans_session_ids": [5], "evidence": [{"session_id": 5, "quote": "ввв"}]}
    [record] = padded_records([question], {"7": DIALOGUE}, seed=0, chars=1000, pool=POOL)
    [evidence] = gigamemory.from_rows([record])[0].evidence
    assert record["ans_session_ids"] == [int(evidence.session_id)]
    assert record["sessions"][int(evidence.session_id) - 1]["messages"][0]["content"].startswith("в")


@pytest.mark.skipif(not USERS.is_dir(), reason="needs ../shared/data/gigamemory/users")
def test_the_users_at_contest_length():
    records = users_records("all", USERS)
    by_dialogue = {r["dialogue_id"]: r for r in records}
    assert len(records) == 144 and len(by_dialogue) == 12
    assert min(sum(session_chars(s) for s in r["sessions"]) for r in by_dialogue.values()) >= 300_000
    # every evidence quote still stands in the session it names (from_rows raises where it does not)
    assert sum(len(r.evidence) for r in gigamemory.from_rows(records)) > 60
    assert users_records("dev", USERS) == [r for r in records if int(r["dialogue_id"]) >= 27]


def test_the_pool_is_read_by_its_verdicts(tmp_path):
    (tmp_path / "pool.jsonl").write_text("".join(json.dumps(p) + "\n" for p in POOL), encoding="utf-8")
    verdicts = [{"id": "f0", "about_user": False}, {"id": "f1", "about_user": True}, {"id": "f2", "about_user": False}]
    (tmp_path / "v.jsonl").write_text("".join(json.dumps(v) + "\n" for v in verdicts), encoding="utf-8")
    assert [p["id"] for p in load_pool(tmp_path / "pool.jsonl", tmp_path / "v.jsonl")] == ["f0", "f2"]


def test_every_pool_session_is_cleared_and_says_nothing_of_a_user():
    pool = load_pool()
    assert len(pool) >= 40
    assert all(session_chars(s) >= 6000 for s in pool)
