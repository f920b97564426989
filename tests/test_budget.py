"""The time budget degrades extraction step by step; the hard ceiling always gets an answer back."""
import time

from submit.memory.budget import (FULL, NO_EXTRACTION, STRICT, TOP_TURNS, BudgetSettings, TimeBudget)
from models import Message

from conftest import make_model


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_levels_follow_the_dialogue_share_and_the_run_lag():
    clock = Clock()
    budget = TimeBudget(BudgetSettings(total_seconds=1000, expected_dialogues=100), clock)  # share 10 s
    assert [budget.level(-t) for t in (0, 4.9, 5, 10, 19.9, 20)] == \
        [FULL, FULL, STRICT, TOP_TURNS, TOP_TURNS, NO_EXTRACTION]
    clock.now = 100.0  # 100 s spent, 0 dialogues answered: the run is 100 s behind
    assert budget.level(clock.now) == NO_EXTRACTION
    budget.answered = 10  # on schedule again
    assert budget.level(clock.now) == FULL


def test_a_slow_llm_hits_the_ceiling_and_an_answer_still_comes_back():
    def slow(chat):
        time.sleep(1.5)
        return "поздний ответ"
    model, llm = make_model(answer_ceiling_s=0.5)
    llm.enqueue(slow)
    model.write_to_memory([Message("user", "Я живу в Томске", 1), Message("assistant", "Ок", 1)], "d")
    start = time.monotonic()
    answer = model.answer_to_question("d", "Где я живу?")
    took = time.monotonic() - start
    assert answer == "У меня нет такой информации."
    assert model.fallbacks["ceiling"] == 1 and took < 1.4
    time.sleep(1.5)  # let the late call finish before the next test shares nothing with it


def test_a_late_dialogue_skips_extraction_but_still_answers():
    model, llm = make_model(budget_hours=1 / 3600, expected_dialogues=1000)  # share: 3.6 ms
    model.write_to_memory([Message("user", "Я живу в Томске", 1), Message("assistant", "Ок", 1)], "d")
    time.sleep(0.05)
    assert model.answer_to_question("d", "Где я живу?") == "У меня нет такой информации."
    assert model.fallbacks["budget_level_3"] == 1
    assert list(llm.batches) == [1]  # only the answer call: no extraction
