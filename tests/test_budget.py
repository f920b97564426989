"""The time budget plans extraction from the backend's measured speed; the hard ceiling,
counted from each answer's own start, always gets an answer back."""
from submit.guard import ManualClock
from submit.memory.budget import (FULL, NO_EXTRACTION, STRICT, TOP_TURNS, BudgetSettings, Plan, TimeBudget)
from submit.memory.llm import ScriptedLLM
from models import Message

from conftest import CEILING, Hang, answer_in_time, make_model


def test_plan_follows_the_learned_rate_and_the_time_left():
    clock = ManualClock()
    budget = TimeBudget(BudgetSettings(hours=1000 / 3600, expected_dialogues=100), clock)  # share 10 s
    prompts = {FULL: 50, STRICT: 40, TOP_TURNS: 40}
    assert budget.plan(prompts) == Plan(TOP_TURNS, 16, 10.0, 0.0, calibration=True)  # unknown backend
    budget.observe(extract_seconds=3.2, extract_prompts=16, other_seconds=1.0)  # 0.2 s per prompt
    budget.done()
    clock.now = 10.0
    assert budget.rate() == 0.2 and budget.overhead() == 1.0
    assert budget.plan(prompts).level == STRICT  # FULL needs 1 + 10 s > 10 s; STRICT 1 + 8 s fits
    budget.observe(50.0, 50, 1.0)  # the backend slowed down: 53.2 s / 66 prompts now
    budget.done()
    clock.now = 20.0
    assert budget.plan(prompts) == Plan(TOP_TURNS, 11, 10.0, 1.0 + 11 * 53.2 / 66)
    clock.now = 990.0  # 10 s left for 98 dialogues: nothing affordable
    assert budget.plan(prompts) == Plan(NO_EXTRACTION, 0, 10 / 98, 1.0)
    clock.now = 1000.0
    assert budget.plan(prompts).level == NO_EXTRACTION


def test_a_known_backend_starts_from_its_prior_and_the_allowance_stays_inside_the_ceiling():
    clock = ManualClock()
    settings = BudgetSettings(hours=1000 / 3600, expected_dialogues=2, answer_ceiling_s=100)
    budget = TimeBudget(settings, clock, prior_rate=0.5)
    assert budget.allowance() == 70.0  # 500 s per dialogue, capped at 0.7 of the 100 s ceiling
    assert budget.plan({FULL: 100, STRICT: 80, TOP_TURNS: 80}) == Plan(FULL, 100, 70.0, 50.0)
    assert budget.plan({FULL: 160, STRICT: 130, TOP_TURNS: 130}) == Plan(STRICT, 130, 70.0, 65.0)
    assert budget.plan({FULL: 160, STRICT: 150, TOP_TURNS: 150}) == Plan(TOP_TURNS, 140, 70.0, 70.0)


def test_a_rate_too_slow_to_extract_is_measured_again_after_ten_dialogues():
    clock = ManualClock()
    budget = TimeBudget(BudgetSettings(hours=1000 / 3600, expected_dialogues=100), clock)  # share 10 s
    budget.observe(100.0, 10, 1.0)  # 10 s per prompt: nothing fits in 10 s
    prompts = {FULL: 50, STRICT: 40, TOP_TURNS: 40}
    levels = []
    for _ in range(11):
        levels.append(budget.plan(prompts).level)
        budget.done()
    assert levels == [NO_EXTRACTION] * 10 + [TOP_TURNS]
    assert budget.plan(prompts) == Plan(TOP_TURNS, 4, budget.allowance(), 41.0, calibration=True)
    budget.observe(0.4, 4, 1.0)  # it has recovered: the fresh measurement replaces the window
    assert budget.rate() == 0.1 and budget.plan(prompts).level == FULL  # 1 + 50 * 0.1 s fits again


class TimedLLM(ScriptedLLM):
    """A scripted LLM that "takes" `per_prompt` seconds of a fake clock for every prompt, and answers
    every question with `answer` (by default an answer, which the cited stage follows with its cite
    ask, a second call; a reader's "no information" is one call)."""

    name = "timed"
    prior_seconds_per_prompt = None  # no prior: the budget has to measure it

    def __init__(self, clock, per_prompt, answer="Важной была заметка номер 7."):
        super().__init__()
        self.clock, self.per_prompt, self.answer = clock, per_prompt, answer

    def default_answer(self, chat):
        return self.answer

    def _generate(self, chats, *, max_tokens, schema, purpose):
        self.clock.advance(self.per_prompt * len(chats))
        return super()._generate(chats, max_tokens=max_tokens, schema=schema, purpose=purpose)


def run_contest(per_prompt, dialogues=12, share=30.0, **answer):
    """`dialogues` dialogues of 40 long and 10 short user turns on a fake clock; the plans and the time used."""
    from submit import SubmitModelWithMemory
    from submit.config import Config
    clock = ManualClock()
    llm = TimedLLM(clock, per_prompt, **answer)
    from submit.memory.dialogue import Settings
    config = Config(llm="scripted", embedder="hash", memory=Settings(gate="off"), budget=BudgetSettings(
        hours=dialogues * share / 3600, expected_dialogues=dialogues, answer_ceiling_s=300))
    model = SubmitModelWithMemory("", config=config, llm=llm, clock=clock)
    plans = []
    for d in range(dialogues):
        for i in range(50):
            text = f"Я записал важную заметку номер {i} про дело {d}" if i < 40 else f"Заметка {i}"
            model.write_to_memory([Message("user", text, i // 5), Message("assistant", "Ок", i // 5)], str(d))
        model.answer_to_question(str(d), "Какая заметка была важной?")
        plans.append((model.plans[str(d)].level, model.plans[str(d)].prompts))
        stats = model.memory_stats(str(d))["budget"]
        model.clear_memory(str(d))
    return plans, clock.now, stats, model


def test_a_fast_backend_stays_at_full_extraction():
    plans, used, stats, model = run_contest(per_prompt=0.01)
    assert plans == [(TOP_TURNS, 16)] + [(FULL, 50)] * 11  # one calibration batch, then everything
    assert list(model.llm.batches)[:4] == [6, 1, 1, 50]  # 6 of the top 16 turns pass the strict filter
    assert round(used, 2) == 5.8 and stats["seconds_per_prompt"] == 0.01
    assert dict(model.fallbacks) == {}


def test_a_slow_backend_degrades_from_the_second_dialogue_and_the_run_fits():
    plans, used, stats, model = run_contest(per_prompt=1.0)  # FULL would take 52 s of a 30 s share
    assert plans == [(TOP_TURNS, n) for n in (16, 30, 31, 32, 33, 34, 36, 38)] + [(STRICT, 40)] * 4
    assert used == 354.0  # inside the 12 × 30 s: the last dialogue's 50 prompts would not have fitted
    assert stats["seconds_per_prompt"] == 1.0 and stats["overhead_s"] == 2.0  # the answer and its cite
    assert dict(model.fallbacks) == {"budget_level_2": 7, "budget_level_1": 4}


def test_the_cite_call_is_counted_in_the_answers_time_and_none_follows_the_readers_decline():
    from submit.memory.lang import NO_INFO
    _, used, stats, model = run_contest(per_prompt=1.0)
    assert stats["overhead_s"] == 2.0 and list(model.llm.purposes)[:4] == ["extract", "answer", "answer", "extract"]
    plans, used, stats, model = run_contest(per_prompt=1.0, answer=NO_INFO["ru"])
    assert stats["overhead_s"] == 1.0 and list(model.llm.purposes)[:3] == ["extract", "answer", "extract"]
    # one second less a dialogue: the budget affords one prompt more at each level, the last one whole
    assert plans == [(TOP_TURNS, n) for n in (16, 31, 32, 33, 34, 36, 37, 39)] + [(STRICT, 40)] * 3 + [(FULL, 50)]
    assert used == 12 * 30.0


def test_a_hopeless_backend_answers_without_extraction_until_it_has_time_again():
    plans, used, _, model = run_contest(per_prompt=10.0)  # even 4 prompts, the answer and its cite take 60 s of 30
    assert plans == [(TOP_TURNS, 16)] + [(NO_EXTRACTION, 0)] * 9 + [(TOP_TURNS, n) for n in (4, 6)]
    assert used == 300.0 and list(model.llm.batches)[:6] == [6, 1, 1, 1, 1, 1]


def test_a_slow_llm_hits_the_ceiling_and_the_next_dialogue_does_not_wait_for_it():
    hang, clock = Hang(), ManualClock()
    model, llm = make_model([hang.reply("поздний ответ")], budget=BudgetSettings(answer_ceiling_s=CEILING),
                            clock=clock)  # the extraction call of dialogue d hangs
    for d in ("d", "e"):
        model.write_to_memory([Message("user", "Я живу в Омске", 1), Message("assistant", "Ок", 1)], d)
    # back at the ceiling on the clock, not a moment later: not the hung call's time
    assert answer_in_time(model, clock, "d", "Где я живу?", hang) == ("У меня нет такой информации.", CEILING,
                                                                      [CEILING])
    assert model.fallbacks["ceiling"] == 1
    llm.enqueue('{"facts": []}', "Вы живёте в Омске.")
    assert model.answer_to_question("e", "Где я живу?") == "Вы живёте в Омске."
    hang.release.set()


def test_the_ceiling_counts_from_the_answer_not_from_the_first_write():
    clock = ManualClock()
    model, llm = make_model(['{"facts": []}', "Вы живёте в Томске."], budget=BudgetSettings(answer_ceiling_s=CEILING),
                            clock=clock)
    model.write_to_memory([Message("user", "Я живу в Томске", 1), Message("assistant", "Ок", 1)], "d")
    clock.advance(10 * CEILING)  # far longer than the ceiling passes between the writes and the question
    assert model.answer_to_question("d", "Где я живу?") == "Вы живёте в Томске."
    assert model.fallbacks["ceiling"] == 0


def test_a_late_run_skips_extraction_but_still_answers():
    clock = ManualClock()
    model, llm = make_model(budget=BudgetSettings(hours=0.01 / 3600, expected_dialogues=1000),  # 10 ms for the run
                            clock=clock)
    model.write_to_memory([Message("user", "Я живу в Томске", 1), Message("assistant", "Ок", 1)], "d")
    clock.advance(0.05)
    assert model.answer_to_question("d", "Где я живу?") == "У меня нет такой информации."
    assert model.fallbacks["budget_level_3"] == 1
    assert list(llm.batches) == [1]  # only the answer call: no extraction


def test_without_the_time_budget_a_late_run_still_extracts_everything():
    # local_eval's default: a slow CPU model must not make an eval silently skip extraction.
    clock = ManualClock()
    model, llm = make_model(budget=BudgetSettings(hours=0.01 / 3600, expected_dialogues=1000), time_budget=False,
                            clock=clock)
    model.write_to_memory([Message("user", "Я живу в Томске", 1), Message("assistant", "Ок", 1)], "d")
    clock.advance(0.05)
    model.answer_to_question("d", "Где я живу?")
    assert not any(key.startswith("budget_level") for key in model.fallbacks)
    assert list(llm.batches) == [1, 1]  # the extraction call, then the answer


def test_a_degraded_record_is_counted_in_the_summary():
    from local_eval import summary
    rows = [{"fallbacks": {"budget_level_3": 1}}, {"fallbacks": {}}, {"fallbacks": {"budget_level_2": 1}}]
    assert summary.degraded(rows) == {"records": 2, "levels": {"budget_level_3": 1, "budget_level_2": 1}}


def spend_every_allowance(settings: BudgetSettings, dialogues: int, rate: float = 0.1) -> list:
    """`dialogues` dialogues of 240 candidate prompts on a backend as slow as the budget allows:
    each takes every second it is allowed (its extraction at `rate` s a prompt, the rest besides).
    The plans, in order."""
    clock = ManualClock()
    budget = TimeBudget(settings, clock, prior_rate=rate)
    plans = []
    for _ in range(dialogues):
        plans.append(budget.plan({FULL: 240, STRICT: 200, TOP_TURNS: 200}))
        extract = plans[-1].prompts * rate if plans[-1].level != NO_EXTRACTION else 0.0
        budget.observe(extract, plans[-1].prompts, plans[-1].allowance_s - extract)
        clock.advance(plans[-1].allowance_s)
        budget.done()
    assert clock() <= settings.total_seconds + 1e-6  # never past the hours it was given
    return plans


def test_the_budget_lasts_to_the_1200th_dialogue_it_plans_for():
    # a participant's published code counts 1,167 dialogues in the hidden set (unverified)
    assert BudgetSettings().expected_dialogues == 1200 and BudgetSettings().hours == 6.5
    plans = spend_every_allowance(BudgetSettings(), 1200)
    assert {p.level for p in plans} == {TOP_TURNS}  # every dialogue extracts, the 1,200th too
    assert round(plans[0].allowance_s, 6) == round(plans[-1].allowance_s, 6) == 19.5  # 6.5 h / 1,200 each
    # planned for 1,000, the same run has spent the budget by the 1,000th and answers the rest without extraction
    old = spend_every_allowance(BudgetSettings(expected_dialogues=1000), 1200)
    assert NO_EXTRACTION not in {p.level for p in old[:1000]} and {p.level for p in old[1000:]} == {NO_EXTRACTION}
