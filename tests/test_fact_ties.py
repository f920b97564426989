"""Fact lines when fact keys score the same: a repeated statement must not crash the answer."""
import json

from models import Message

from conftest import make_model


def test_a_fact_extracted_twice_still_reaches_the_answer_without_a_fallback():
    reply = json.dumps({"facts": [{"slot": "город", "value": "Томск", "statement": "Пользователь живёт в Томске"}]},
                       ensure_ascii=False)
    model, llm = make_model([reply, reply, "Вы живёте в Томске."])
    for session, text in ((1, "Я живу в Томске"), (2, "Я всё так же живу в Томске")):
        model.write_to_memory([Message("user", text, session), Message("assistant", "Ок", session)], "d")
    # Both keys hold the same text, so the same embedding and the same score: a tie.
    assert model.answer_to_question("d", "Где я живу?") == "Вы живёте в Томске."
    assert dict(model.fallbacks) == {}
    assert "Пользователь живёт в Томске" in llm.history[-2][0][-1]["content"]  # the answer prompt, before its cite ask
