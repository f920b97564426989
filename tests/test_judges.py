"""Judges render each type's rule and read verdicts; lexical metrics on hand-computed values."""
from local_eval import judges, metrics
from local_eval.judges import Item
from submit.memory.llm import ScriptedLLM


def prompt_text(benchmark, item):
    return judges.judge_prompt(benchmark, item)[0]["content"]


def test_each_longmemeval_type_gets_its_rule():
    base = dict(question="Q?", gold="G", answer="A")
    assert "off by one" in prompt_text("longmemeval", Item(**base, question_type="temporal-reasoning"))
    assert "even if it also mentions earlier" in prompt_text("longmemeval", Item(**base, question_type="knowledge-update"))
    assert "Rubric: G" in prompt_text("longmemeval", Item(**base, question_type="single-session-preference"))
    assert "not available" in prompt_text("longmemeval", Item(**base, question_type="multi-session", abstention=True))
    assert judges.rule_for("longmemeval", Item(**base, question_type="multi-session")) == "default"


def test_locomo_strict_rule_and_adversarial_abstention():
    strict = prompt_text("locomo", Item("When?", "7 May 2023", "May 2023", "temporal"))
    assert "same granularity" in strict and "adds nothing" in strict
    assert judges.rule_for("locomo", Item("Q", "G", "A", "adversarial", abstention=True)) == "adversarial"


def test_gigamemory_judge_is_russian_and_binary():
    text = prompt_text("gigamemory", Item("Кем я работаю?", "Сварщиком", "Вы сварщик", "info_updating"))
    assert "Эталонный ответ: Сварщиком" in text and "да или нет" in text


def test_verdicts_parse_and_unparsable_replies_are_retried_then_none():
    llm = ScriptedLLM(["Yes.", "нет", "maybe", "hmm", "??"])
    items = [Item("Q", "G", "A", "t")] * 3
    assert judges.judge(llm, "longmemeval", items, retries=2) == [True, False, None]
    assert list(llm.batches) == [3, 1, 1]
    assert all(h[1] == 5 for h in llm.history)  # short verdicts


def test_lexical_metrics_on_hand_computed_values():
    assert metrics.token_f1("The cat Luna", "Luna") == 2 * (1 / 2) * 1 / (1 / 2 + 1)  # "the" dropped: p=1/2, r=1
    assert metrics.token_f1("Вы ездили в Тверь и Кострому", "Тверь и Кострома") == 2 * (2 / 6) * (2 / 3) / (2 / 6 + 2 / 3)
    assert metrics.exact_match("Luna!", "luna") == 1.0
    assert metrics.lexical_score("У меня нет такой информации.", "", abstention=True)["correct"] == 1.0
    assert metrics.lexical_score("Луна", "Луна", abstention=True)["correct"] == 0.0


def test_locomo_judge_shows_every_acceptable_answer():
    many = prompt_text("locomo", Item("When did Melanie paint a sunrise?", "2022", "Last year.", "temporal",
                                      golds=("2022", "last year")))
    assert "Acceptable gold answers" in many and "- 2022\n- last year\nResponse: Last year." in many
    one = prompt_text("locomo", Item("When?", "7 May 2023", "May 2023", "temporal", golds=("7 May 2023",)))
    assert "Gold answer: 7 May 2023\nResponse: May 2023" in one and "Acceptable" not in one


def test_a_judge_on_the_local_model_is_called_a_small_model_judge():
    assert judges.small_model("llama:qwen2.5-coder-1.5b") and judges.small_model("cache:runs/j+llama:m.gguf")
    assert not judges.small_model("openai:http://host:8000/v1#Qwen/Qwen3-14B") and not judges.small_model(None)
