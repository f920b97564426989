"""A hung LLM call costs one dialogue, not the run: abandoned work stops before its next
call, later dialogues never wait behind it, an exclusive engine held by it is not entered
twice, repeated failures open a breaker that answers from memory, and a stuck worker
cannot keep the process alive.

Time is the test's (guard.ManualClock): a hung call hangs until the test releases it, and the
ceiling passes when the test moves the clock to the deadline the code waits for, so the answer's
time is measured on that clock, not on a machine that may be loaded."""
import os
import subprocess
import sys
import threading

from submit import SubmitModelWithMemory
from submit.config import Config
from submit.guard import ManualClock
from submit.memory.budget import BudgetSettings
from submit.memory.dialogue import Settings
from models import Message

from conftest import CEILING, HANG_GUARD, ROOT, Hang, answer_in_time, citing_llm, make_model

NO_INFO = "У меня нет такой информации."
GRACE = 0.1 * CEILING  # model_inference: an exclusive engine held by abandoned work is waited for this long


def write(model, dialogue_id, text="Я живу в Омске. Работаю врачом."):
    model.write_to_memory([Message("user", text, 1), Message("assistant", "Ок", 1)], dialogue_id)


def join_workers():
    for thread in threading.enumerate():
        if thread.name == "gigamemory-answer":
            thread.join(HANG_GUARD)


def hung_model(hangs: int, hang: Hang, clock: ManualClock):
    return make_model([hang.reply()] * hangs, budget=BudgetSettings(answer_ceiling_s=CEILING), clock=clock)


def test_abandoned_work_makes_no_further_llm_call_and_counts_nothing():
    hang, clock = Hang(), ManualClock()
    model, llm = hung_model(1, hang, clock)
    write(model, "d")
    # the answer waits for the ceiling counted from the question, and comes back at it, not a moment later
    assert answer_in_time(model, clock, "d", "Где я живу?", hang) == (NO_INFO, CEILING, [CEILING])
    hang.release.set()  # the extraction call returns after the ceiling ...
    join_workers()
    assert len(llm.history) == 1  # ... and the answer call it would have made never comes
    assert model.fallbacks == {"ceiling": 1, "no_information": 1}
    assert model.budget.stats()["measured_dialogues"] == 0  # a hung call is not the backend's speed


def test_an_exclusive_engine_held_by_abandoned_work_is_not_entered_again():
    hang, clock = Hang(), ManualClock()
    llm = citing_llm([hang.reply()])
    llm.concurrent_calls = False  # like vLLM: one generate at a time
    model = SubmitModelWithMemory("", config=Config(llm="scripted", embedder="hash", memory=Settings(gate="off"),
                                                    budget=BudgetSettings(answer_ceiling_s=CEILING)),
                                  llm=llm, clock=clock)
    for d in "def":
        write(model, d)
    assert answer_in_time(model, clock, "d", "Где я живу?", hang) == (NO_INFO, CEILING, [CEILING])
    # e's extraction waits the engine's grace, inside its ceiling, then answers from memory
    assert answer_in_time(model, clock, "e", "Где я живу?", waits=2) == ("Я живу в Омске.", GRACE, [GRACE, CEILING])
    assert len(llm.history) == 1
    assert model.fallbacks == {"ceiling": 1, "no_information": 1, "engine_busy": 1, "memory_answer": 1}
    hang.release.set()
    join_workers()
    llm.enqueue('{"facts": []}', "Вы живёте в Омске.")
    assert model.answer_to_question("f", "Где я живу?") == "Вы живёте в Омске."


def test_the_breaker_opens_after_three_ceilings_answers_from_memory_and_a_probe_closes_it():
    hang, clock = Hang(), ManualClock()
    model, llm = hung_model(3, hang, clock)
    answers = []
    for d in range(13):
        write(model, str(d))
        if d < 3:
            answers.append(answer_in_time(model, clock, str(d), "Где я живу?", hang)[:2])
            continue
        if d == 12:  # the 10th answer after the breaker opened probes the LLM, which works again
            hang.release.set()
            llm.enqueue('{"facts": []}', "Вы живёте в Омске.")
        answers.append((model.answer_to_question(str(d), "Где я живу?"), 0.0))  # the clock stood still
    assert clock() == 3 * CEILING
    assert answers == [(NO_INFO, CEILING)] * 3 + [("Я живу в Омске.", 0.0)] * 9 + [("Вы живёте в Омске.", 0.0)]
    assert len(llm.history) == 3 + 3  # three hung extractions, then only the probe's: extraction, answer, cite
    assert model.fallbacks == {"ceiling": 3, "no_information": 3, "breaker_open": 9, "memory_answer": 9}
    assert not model.breaker.open
    write(model, "after")
    llm.enqueue('{"facts": []}', "Вы живёте в Омске.")
    assert model.answer_to_question("after", "Где я живу?") == "Вы живёте в Омске."


def test_a_question_about_something_never_said_gets_the_safe_reply_from_memory():
    hang, clock = Hang(), ManualClock()
    model, llm = hung_model(3, hang, clock)
    for d in range(3):
        write(model, str(d))
        assert answer_in_time(model, clock, str(d), "Сколько мне лет?", hang)[0] == NO_INFO
    write(model, "3")
    answer = model.answer_to_question("3", "Сколько мне лет?")
    hang.release.set()
    assert answer == NO_INFO and model.fallbacks["breaker_open"] == 1 and "memory_answer" not in model.fallbacks


# A contest run in a process of its own: an answer whose LLM call never returns is abandoned at
# the ceiling, and the process still exits once the harness is done (the worker is a daemon).
STUCK_FOR_GOOD = f"""
import threading
from models import Message
from submit import SubmitModelWithMemory
from submit.config import Config
from submit.guard import ManualClock
from submit.memory.budget import BudgetSettings
from submit.memory.dialogue import Settings
from submit.memory.llm import ScriptedLLM
from conftest import Hang, answer_in_time, make_model

hang, clock = Hang(), ManualClock()
model, llm = make_model([hang.reply()], budget=BudgetSettings(answer_ceiling_s={CEILING}), clock=clock)
model.write_to_memory([Message("user", "Я живу в Омске.", 1), Message("assistant", "Ок", 1)], "d")
print(answer_in_time(model, clock, "d", "Где я живу?", hang)[:2])
print(sorted(t.name for t in threading.enumerate() if not t.daemon))
"""


def test_a_worker_stuck_for_good_does_not_keep_the_process_alive():
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'tests'}"}  # this checkout's code, and conftest
    proc = subprocess.run([sys.executable, "-c", STUCK_FOR_GOOD], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=HANG_GUARD)  # the hung call waits an hour: only an exit ends this sooner
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines() == [repr((NO_INFO, CEILING)), "['MainThread']"]
