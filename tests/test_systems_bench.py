"""bench/systems.py: the reader's seconds a question, kept across recordings."""
import json

from bench import systems


def test_seconds_a_question_add_up_over_passes_that_ask_more_of_the_same_questions(tmp_path, monkeypatch):
    monkeypatch.setattr(systems, "RESULTS", tmp_path)
    reader = systems.READERS["qwen1.5b"]

    def kept():
        return json.loads(systems.seconds_file("ru_dev", reader).read_text(encoding="utf-8"))["ours"]

    systems.keep_seconds("ru_dev", reader, {"ours": [30.0, 3]})  # three questions answered
    assert kept() == {"seconds_per_question": 10.0, "questions": 3}
    systems.keep_seconds("ru_dev", reader, {"ours": [15.0, 3]})  # a later stage's asks of the same three
    assert kept() == {"seconds_per_question": 15.0, "questions": 3}
    systems.keep_seconds("ru_dev", reader, {"ours": [20.0, 5]})  # two more questions, resumed
    assert kept() == {"seconds_per_question": 13.0, "questions": 5}
    systems.keep_seconds("ru_dev", reader, {"ours": [0.0, 0], "rag": [8.0, 2]})  # nothing recorded for ours
    assert kept() == {"seconds_per_question": 13.0, "questions": 5}
