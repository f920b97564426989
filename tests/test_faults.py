"""A hung LLM call costs one dialogue, not the run: abandoned work stops before its next
call, later dialogues never wait behind it, an exclusive engine held by it is not entered
twice, repeated failures open a breaker that answers from memory, and a stuck worker
cannot keep the process alive."""
import json
import subprocess
import sys
import threading

from submit import SubmitModelWithMemory
from submit.config import Config
from submit.memory.budget import BudgetSettings
from submit.memory.llm import ScriptedLLM
from models import Message

from conftest import CEILING, HANG_GUARD, ROOT, make_model

NO_INFO = "У меня нет такой информации."


def hung_until(release: threading.Event):
    def reply(chat):
        release.wait(HANG_GUARD)  # hung until the test releases it: well past any ceiling
        return '{"facts": []}'
    return reply


def write(model, dialogue_id, text="Я живу в Омске. Работаю врачом."):
    model.write_to_memory([Message("user", text, 1), Message("assistant", "Ок", 1)], dialogue_id)


def join_workers():
    for thread in threading.enumerate():
        if thread.name == "gigamemory-answer":
            thread.join(10)


def test_abandoned_work_makes_no_further_llm_call_and_counts_nothing():
    release = threading.Event()
    model, llm = make_model([hung_until(release)], budget=BudgetSettings(answer_ceiling_s=CEILING))
    write(model, "d")
    assert model.answer_to_question("d", "Где я живу?") == NO_INFO
    release.set()  # the extraction call returns after the ceiling ...
    join_workers()
    assert len(llm.history) == 1  # ... and the answer call it would have made never comes
    assert model.fallbacks == {"ceiling": 1, "no_information": 1}
    assert model.budget.stats()["measured_dialogues"] == 0  # a hung call is not the backend's speed


def test_an_exclusive_engine_held_by_abandoned_work_is_not_entered_again():
    release = threading.Event()
    llm = ScriptedLLM([hung_until(release)])
    llm.concurrent_calls = False  # like vLLM: one generate at a time
    model = SubmitModelWithMemory("", config=Config(llm="scripted", embedder="hash", budget=BudgetSettings(answer_ceiling_s=CEILING)), llm=llm)
    for d in "def":
        write(model, d)
    assert model.answer_to_question("d", "Где я живу?") == NO_INFO
    assert model.answer_to_question("e", "Где я живу?") == "Я живу в Омске."  # from memory, at once
    assert len(llm.history) == 1
    assert model.fallbacks == {"ceiling": 1, "no_information": 1, "engine_busy": 1, "memory_answer": 1}
    release.set()
    join_workers()
    llm.enqueue('{"facts": []}', "Вы живёте в Омске.")
    assert model.answer_to_question("f", "Где я живу?") == "Вы живёте в Омске."


def test_the_breaker_opens_after_three_ceilings_answers_from_memory_and_a_probe_closes_it():
    release = threading.Event()
    model, llm = make_model([hung_until(release)] * 3, budget=BudgetSettings(answer_ceiling_s=CEILING))
    answers = []
    for d in range(13):
        write(model, str(d))
        if d == 12:  # the 10th answer after the breaker opened probes the LLM, which works again
            release.set()
            llm.enqueue('{"facts": []}', "Вы живёте в Омске.")
        answers.append(model.answer_to_question(str(d), "Где я живу?"))
    assert answers == [NO_INFO] * 3 + ["Я живу в Омске."] * 9 + ["Вы живёте в Омске."]
    assert len(llm.history) == 3 + 2  # three hung extractions, then only the probe's two calls
    assert model.fallbacks == {"ceiling": 3, "no_information": 3, "breaker_open": 9, "memory_answer": 9}
    assert not model.breaker.open
    write(model, "after")
    llm.enqueue('{"facts": []}', "Вы живёте в Омске.")
    assert model.answer_to_question("after", "Где я живу?") == "Вы живёте в Омске."


def test_a_question_about_something_never_said_gets_the_safe_reply_from_memory():
    release = threading.Event()
    model, llm = make_model([hung_until(release)] * 3, budget=BudgetSettings(answer_ceiling_s=CEILING))
    for d in range(4):
        write(model, str(d))
        answer = model.answer_to_question(str(d), "Сколько мне лет?")
    release.set()
    assert answer == NO_INFO and model.fallbacks["breaker_open"] == 1 and "memory_answer" not in model.fallbacks


def test_the_fault_drill_one_hang_and_a_hang_for_good_in_subprocesses():
    cmd = [sys.executable, str(ROOT / "bench/faults.py"), "--dialogues", "6", "--hang-at", "2", "--ceiling", str(CEILING),
           "--hang", str(HANG_GUARD), "--cases", "one_hang,hang_for_good", "--json"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=HANG_GUARD)
    assert proc.returncode == 0, proc.stderr
    one, for_good = json.loads(proc.stdout)
    assert (one["llm"], one["memory"], one["safe"]) == (5, 0, 1)
    # 1 normal answer, then 3 ceilings open the breaker, then memory answers
    assert (for_good["llm"], for_good["memory"], for_good["safe"]) == (1, 2, 3)
    for case in (one, for_good):
        # back at the ceiling, and out of the process, long before the hung call would return
        assert case["returncode"] == 0 and case["max_answer_s"] < HANG_GUARD / 10
        assert case["exit_after_s"] is not None and case["exit_after_s"] < HANG_GUARD / 10
