"""The harness replica follows the organizers' rules, pinned on hand-made records."""
import csv
import json

from local_eval import harness
from local_eval.tasks import Evidence, Record, Session

from conftest import make_model


def record(*sessions, **kw):
    return Record(id=kw.get("id", "r1"), dialogue_id="d1", question=kw.get("question", "Как меня зовут?"),
                  question_type="fact_equal_session", gold="Ольга",
                  sessions=tuple(Session(str(i + 1), tuple({"role": r, "content": c} for r, c in s))
                                 for i, s in enumerate(sessions)),
                  evidence=kw.get("evidence", ()))


def test_leading_assistant_dropped_and_trailing_user_gets_placeholder():
    r = record([("assistant", "hi"), ("user", "u1"), ("assistant", "a1"), ("user", "u2")],
               [("user", "v1"), ("assistant", "b1")])
    messages, origins = harness.flatten(r)
    assert [(m.role, m.content, m.session_id) for m in messages] == [
        ("user", "u1", "1"), ("assistant", "a1", "1"), ("user", "u2", "1"),
        ("assistant", "<нет ответа>", "1"), ("user", "v1", "2"), ("assistant", "b1", "2")]
    assert [o.index for o in origins] == [1, 2, 3, None, 0, 1]


def test_only_one_leading_assistant_message_is_dropped():
    r = record([("assistant", "a0"), ("assistant", "a1"), ("user", "u1"), ("assistant", "a2")])
    messages, _ = harness.flatten(r)
    assert [m.content for m in messages] == ["a1", "u1", "a2"]


def test_pairs_are_consecutive_and_a_tail_of_one_is_kept():
    assert harness.pairs([1, 2, 3, 4, 5]) == [[1, 2], [3, 4], [5]]


def test_evidence_positions_map_session_indices_to_flat_positions():
    r = record([("assistant", "hi"), ("user", "u1"), ("assistant", "a1")], [("user", "v1"), ("assistant", "b1")],
               evidence=(Evidence("1", 1), Evidence("2")))
    _, origins = harness.flatten(r)
    assert harness.evidence_positions(r, origins) == [{0}, {2, 3}]


class Recorder:
    """A model that records the harness's calls, to pin the call order."""

    def __init__(self):
        self.calls = []

    def write_to_memory(self, messages, dialogue_id):
        self.calls.append(("write", [m.content for m in messages], dialogue_id))

    def answer_to_question(self, dialogue_id, question):
        self.calls.append(("answer", question, dialogue_id))
        return "Ольга"

    def clear_memory(self, dialogue_id):
        self.calls.append(("clear", dialogue_id))


def test_run_record_writes_each_pair_answers_once_then_clears():
    model = Recorder()
    result = harness.run_record(model, record([("user", "u1"), ("assistant", "a1"), ("user", "u2")]))
    assert model.calls == [("write", ["u1", "a1"], "r1"), ("write", ["u2", "<нет ответа>"], "r1"),
                           ("answer", "Как меня зовут?", "r1"), ("clear", "r1")]
    assert result.answer == "Ольга" and result.answer_time >= 0


def test_outputs_in_the_organizers_format(tmp_path):
    results = [harness.Result(id="1", question="q", answer="a, b", answer_time=1.23456)]
    harness.write_outputs(results, tmp_path)
    with (tmp_path / "submit.csv").open() as f:
        rows = list(csv.reader(f))
    assert rows == [["id", "answer", "answer_time"], ["1", "a, b", "1.2346"]]
    assert json.loads((tmp_path / "output.json").read_text())[0]["answer"] == "a, b"


def test_real_submission_through_the_harness_returns_text_and_provenance():
    model, llm = make_model(['{"facts": [{"slot": "имя", "value": "Ольга", "statement": "Пользователя зовут Ольга"}]}',
                             "Вас зовут Ольга."])
    r = record([("user", "Меня зовут Ольга"), ("assistant", "Приятно!")], [("user", "Спасибо!"), ("assistant", "Ясно")])
    result = harness.run_record(model, r)
    assert result.answer == "Вас зовут Ольга."
    assert 0 in result.trace.context.turn_ids
    assert model.memories == {}  # cleared
    assert "Меня зовут Ольга" in llm.history[0][0][-1]["content"]  # the extraction prompt
    assert "Пользователя зовут Ольга" in llm.history[1][0][-1]["content"]  # the fact reached the answer
    assert list(llm.batches) == [1, 1, 1]  # "Спасибо!" is small talk: pre-filtered; the answer, its cite
