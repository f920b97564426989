"""bench/stand_in_reading.py: the chats a stand-in reader is asked, and its replies read back as
`readers.py read` rows (the cited stage's chats follow the same reader's plain answers)."""
import json

import pytest

from bench import stand_in_reading
from submit.memory import decide


def write(path, rows):
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")


def test_the_cite_chats_follow_the_readers_own_plain_answers_and_its_replies_come_back_as_cite_rows(tmp_path):
    material = "Факты:\n- [сессия 2] Пользователь работает сварщиком.\n\nВопрос пользователя: "
    prompts = [{"id": i, "question": q, "question_type": t, "answerable": t != "no_info", "gold": "",
                "messages": [{"role": "user", "content": f"{material}{q}\nОтвет одним предложением:"}]}
               for i, q, t in (("1", "Кем я работаю?", "fact_equal_session"), ("2", "Как зовут кота?", "no_info"))]
    write(tmp_path / "p.jsonl", prompts)
    write(tmp_path / "read.jsonl", [{"id": "1", "way": "plain", "answer": "Вы сварщик.", "raw": "Вы сварщик."},
                                    {"id": "2", "way": "plain", "answer": "У меня нет такой информации.",
                                     "raw": "У меня нет такой информации."}])
    both = ["--prompts", str(tmp_path / "p.jsonl"), "--stage", "cite", "--drafts", str(tmp_path / "read.jsonl")]
    assert stand_in_reading.main(["export", *both, "--out", str(tmp_path / "chats.jsonl")]) == 0
    chats = [json.loads(line) for line in (tmp_path / "chats.jsonl").read_text(encoding="utf-8").splitlines()]
    # the reader's own "no information" gets no cite call, as in the contest
    assert [c["key"] for c in chats] == ["1|cite"]
    assert chats[0]["messages"] == decide.cite_chat(prompts[0]["messages"], "Вы сварщик.", "ru")
    write(tmp_path / "replies.jsonl", [{"key": "1|cite", "reply": '{"quotes": ["Пользователь работает сварщиком."]}'}])
    assert stand_in_reading.main(["take", *both, "--model", "stand-in", str(tmp_path / "replies.jsonl"),
                                  "--out", str(tmp_path / "read.jsonl")]) == 0
    rows = [json.loads(line) for line in (tmp_path / "read.jsonl").read_text(encoding="utf-8").splitlines()]
    cites = {r["id"]: r for r in rows if r["way"] == "cite"}
    assert len(rows) == 4  # the plain rows stay beside the cite rows
    assert cites["1"]["quotes"] == ["Пользователь работает сварщиком."] and cites["1"]["draft"] == "Вы сварщик."
    assert cites["2"]["raw"] == "" and cites["2"]["answer"] == "У меня нет такой информации."


def test_the_cite_stage_needs_the_plain_answers_it_follows(tmp_path):
    write(tmp_path / "p.jsonl", [{"id": "1", "question": "Кем я работаю?", "question_type": "x",
                                  "messages": [{"role": "user", "content": "Вопрос"}]}])
    with pytest.raises(SystemExit, match="--drafts"):
        stand_in_reading.main(["export", "--prompts", str(tmp_path / "p.jsonl"), "--stage", "cite",
                               "--out", str(tmp_path / "c.jsonl")])
