"""Fact extraction, versioned slots and the answer with facts, on the scripted LLM."""
import json
from collections import Counter

from submit import prompts
from submit.memory import facts as F
from submit.memory import versions
from submit.memory.dialogue import Settings
from submit.memory.slots import FactLine, Link, Slots, render
from submit.memory.turns import Turn
from models import Message

from conftest import answer_chat, make_model


def facts_reply(*items):
    return json.dumps({"facts": [{"slot": s, "value": v, "statement": st} for s, v, st in items]},
                      ensure_ascii=False)


def turn(idx, text, session=0, role="user"):
    return Turn(idx=idx, session_id=str(session), session_order=session, pair_index=idx // 2, role=role, text=text)


def dialogue(model, *sessions):
    for sid, pairs in enumerate(sessions, start=1):
        for user, assistant in pairs:
            model.write_to_memory([Message("user", user, sid), Message("assistant", assistant, sid)], "d")


def test_every_prompt_renders_with_every_variable_filled():
    for task, lang in prompts.available():
        if task in ("abstain", "gate"):  # no chat of their own: they end the answer prompt (test_abstain.py, test_gate.py)
            continue
        variables = {"extract": {"message": "M", "before": "B"}, "extract_peer": {"message": "M", "before": "B"},
                     "answer": {"question": "Q", "context": "C", "question_date": "D", "ask": "A?",
                                "facts": [{"topic": "T", "lines": ["F"]}]},
                     "answer_peer": {"question": "Q", "context": "C", "question_date": "D", "people": ["A", "B"], "ask": "A?",
                                     "facts": [{"topic": "T", "lines": ["F"]}]},
                     "versions": {"topic": "T", "records": ["1. R"]},
                     "versions_check": {"earlier": "E", "later": "L"},
                     "shorten": {"question": "Q", "answer": "A"},
                     "items": {}}[task]
        chat = prompts.render(task, lang, **variables)
        text = "\n".join(m["content"] for m in chat)
        # items.*.yaml holds only its named asks (`list_ask`), no chat of its own
        assert [m["role"] for m in chat] == ([] if task == "items" else ["system", "user"])
        assert all(v in text for v in ("M", "B") if task.startswith("extract"))
        assert "{{" not in text and "{%" not in text


def test_one_batched_extraction_call_per_dialogue_not_one_per_pair():
    model, llm = make_model()
    dialogue(model, [("Я живу в Казани", "Ок"), ("Мой кот — Барсик", "Ок"), ("Спасибо!", "Ясно")],
             [("Я работаю сварщиком", "Ок")])
    model.answer_to_question("d", "Где я живу?")
    assert list(llm.batches) == [3, 1]  # one extraction batch (small talk skipped), then the answer
    assert model.memory_stats("d")["llm"]["by_purpose"]["extract"]["calls"] == 3


def test_an_updated_fact_is_linked_when_the_pass_says_so_and_shown_as_replaced():
    model, llm = make_model([facts_reply(("работа", "учитель", "Пользователь работает учителем")),
                             facts_reply(("Работа", "репетитор", "Пользователь работает репетитором")),
                             json.dumps({"keys": ["работа.должность", "работа.должность"]}),
                             '{"replaces": true}', "Вы работаете репетитором."])
    dialogue(model, [("Я работаю учителем", "Ок")], [("Теперь я работаю репетитором", "Ок")])
    assert model.answer_to_question("d", "Кем я работаю?") == "Вы работаете репетитором."
    memory = model.memories["d"]
    teacher, tutor = memory.facts
    assert memory.slots.links() == [Link(teacher, tutor)] and memory.slots.current(teacher) == tutor
    assert list(llm.batches) == [2, 1, 1, 1, 1]  # extraction, the versions pass, its check, the answer, its cite
    pass_prompt = llm.history[2][0][-1]["content"]
    assert ("1. [сессия 1] работа — Пользователь работает учителем\n"
            "2. [сессия 2] Работа — Пользователь работает репетитором") in pass_prompt
    check_prompt = llm.history[3][0][-1]["content"]
    assert check_prompt == ("Ранняя заметка: [сессия 1] Пользователь работает учителем\n"
                            "Поздняя заметка: [сессия 2] Пользователь работает репетитором")
    prompt = answer_chat(llm)[-1]["content"]
    assert "Работа:\n- [сессия 2] Пользователь работает репетитором (раньше: «учитель», сессия 1)" in prompt
    assert "учителем" not in prompt.split("Выдержки")[0]  # the replaced statement is not a current fact
    assert model.memory_stats("d")["llm"]["by_purpose"]["versions"]["calls"] == 1
    assert model.memory_stats("d")["llm"]["by_purpose"]["versions_check"]["calls"] == 1


def test_a_link_the_check_turns_down_leaves_both_facts_current():
    # The pass gives both the same key, but the later note only adds to the earlier, which stays
    # true: the reader must see both as current, with no "earlier" marker.
    model, llm = make_model([facts_reply(("еда.любимое", "жареная картошка", "Пользователь любит жареную картошку")),
                             facts_reply(("еда.любимое", "с лисичками", "Пользователь любит картошку с лисичками")),
                             json.dumps({"keys": ["еда.любимое", "еда.любимое"]}), '{"replaces": false}',
                             "Жареную картошку, особенно с лисичками."])
    dialogue(model, [("Обожаю жареную картошку", "Ок")], [("Особенно с лисичками", "Ок")])
    model.answer_to_question("d", "Что я люблю есть?")
    memory = model.memories["d"]
    assert memory.slots.links() == [] and all(memory.slots.is_current(f) for f in memory.facts)
    assert memory.extraction["versions_check_rejected"] == 1
    prompt = answer_chat(llm)[-1]["content"]
    assert "(раньше" not in prompt and "жареную картошку" in prompt and "с лисичками" in prompt


def test_an_unusable_check_reply_keeps_the_link_and_a_pair_is_asked_once():
    replies = [facts_reply(("город", "Казань", "Пользователь живёт в Казани")),
               facts_reply(("город", "Пермь", "Пользователь живёт в Перми")),
               json.dumps({"keys": ["город", "город"]})]
    for check_reply in ("", "не знаю", '{"replaces": "да"}', '{"keys": []}'):
        model, llm = make_model([*replies, check_reply, "В Перми.", "В Перми."])
        dialogue(model, [("Живу в Казани", "Ок")], [("Переехал в Пермь", "Ок")])
        model.answer_to_question("d", "Где я живу?")
        memory = model.memories["d"]
        assert [(link.old.value, link.new.value) for link in memory.slots.links()] == [("Казань", "Пермь")], check_reply
        assert memory.extraction["versions_check_unparsable"] == 1
        model.answer_to_question("d", "Где я живу сейчас?")  # nothing new: no pass, no check again
        assert list(llm.batches) == [2, 1, 1, 1, 1, 1, 1]  # … and each answer, then its cite


def test_the_check_can_be_turned_off_in_the_config():
    model, llm = make_model([facts_reply(("город", "Казань", "Пользователь живёт в Казани")),
                             facts_reply(("город", "Пермь", "Пользователь живёт в Перми")),
                             json.dumps({"keys": ["город", "город"]}), "В Перми."], memory=Settings(versions_check=False))
    dialogue(model, [("Живу в Казани", "Ок")], [("Переехал в Пермь", "Ок")])
    assert model.answer_to_question("d", "Где я живу?") == "В Перми."
    assert list(llm.batches) == [2, 1, 1, 1]  # extraction, the versions pass, the answer and its cite: no check
    assert len(model.memories["d"].slots.links()) == 1


def test_the_check_reply_is_read_from_json_or_a_bare_word():
    assert versions.parse_check('{"replaces": true}') is True
    assert versions.parse_check('Ответ: {"replaces": false}.') is False
    assert versions.parse_check("Нет.") is False and versions.parse_check("yes") is True
    for raw in ("", "да, но", '{"replaces": 1}', "null", "[true]"):
        assert versions.parse_check(raw) is None, raw


def test_two_friends_stay_two_current_facts():
    model, llm = make_model([facts_reply(("друг", "Колька", "У пользователя есть друг Колька")),
                             facts_reply(("друг", "Виктор", "У пользователя есть друг Виктор")),
                             json.dumps({"keys": ["друг.Колька", "друг.Виктор"]}), "Колька и Виктор."])
    dialogue(model, [("Мой друг Колька", "Ок")], [("А ещё мой друг Виктор", "Ок")])
    model.answer_to_question("d", "Как зовут моих друзей?")
    memory = model.memories["d"]
    assert memory.slots.links() == [] and all(memory.slots.is_current(f) for f in memory.facts)
    ask = "\n" + prompts.text("answer", "ru", "ask")
    prompt = [chat for chat, _, _ in llm.history if chat[-1]["content"].endswith(ask)][-1][-1]["content"]
    assert "друг:\n- [сессия 1] У пользователя есть друг Колька\n- [сессия 2] У пользователя есть друг Виктор" in prompt
    assert "(раньше" not in prompt


def test_equal_fact_scores_do_not_break_the_facts_path():
    # Two facts with the same statement under different keys score exactly the same for any
    # question: ranking them once crashed on comparing index keys (every answer lost its facts).
    same = "Пользователь любит рыбалку"
    model, llm = make_model([facts_reply(("хобби", "рыбалка", same)), facts_reply(("рыбалка", "любит", same)),
                             "Рыбалку."])  # two topics: no versions group, no pass call
    dialogue(model, [("Люблю рыбалку", "Ок")], [("Рыбалка — моё всё", "Ок")])
    assert model.answer_to_question("d", "Что я люблю?") == "Рыбалку."
    assert not model.fallbacks
    lines = model.trace("d").facts
    assert [(line.fact.slot, line.turn_ids) for line in lines] == [("хобби", (0,)), ("рыбалка", (2,))]


def test_a_malformed_pass_reply_leaves_the_rule_in_charge():
    replies = [facts_reply(("собака.кличка", "Бобик", "Собаку пользователя зовут Бобик")),
               facts_reply(("собака.кличка", "Шарик", "Собаку пользователя зовут Шарик"))]
    for pass_reply, linked in (("", True), ('{"keys": ["собака.', True), ('{"keys": ["собака.кличка"]}', True),
                               ('{"keys": ["собака.кличка", "собака.порода"]}', False),
                               ('{"keys": ["Собаки кличка", "собака.кличка"]}', True)):
        model, llm = make_model([*replies, pass_reply, "Шарик."])
        dialogue(model, [("Мою собаку зовут Бобик", "Ок")], [("Собаку теперь зовут Шарик", "Ок")])
        model.answer_to_question("d", "Как зовут собаку?")
        memory = model.memories["d"]
        assert bool(memory.slots.links()) is linked, pass_reply
        assert not model.fallbacks


def test_abstains_when_nothing_matches_and_the_model_says_so():
    model, llm = make_model()  # scripted: empty fact lists, then its fixed no-information answer
    dialogue(model, [("Я люблю джаз", "Здорово")])
    assert model.answer_to_question("d", "Как зовут мою собаку?") == "У меня нет такой информации."
    assert model.memories["d"].facts == []


def test_prefilter_skips_small_talk_and_trims_pasted_texts():
    stats = Counter()
    turns = [turn(0, "Переведи на английский: " + "Солнце светит. " * 200), turn(1, "ok", role="assistant"),
             turn(2, "Спасибо большое!"), turn(3, "Пожалуйста", role="assistant"),
             turn(4, "Купили наконец Шкоду"), turn(5, "<нет ответа>", role="assistant"), turn(6, "ок :)")]
    candidates = F.prefilter(turns, stats)
    assert [c.turn.idx for c in candidates] == [0, 4]
    assert len(candidates[0].text) == 400  # a pasted text keeps the user's own head
    assert stats == Counter(user_turns=4, skipped=2, candidates=2)
    assert candidates[1].before.startswith("Спасибо большое!\n→ Пожалуйста")
    assert len(F.user_text("Переведи: " + "я " * 2000)) == 400


def test_the_disclosure_rule_asks_only_about_messages_that_point_at_their_writer():
    from submit.memory import disclosure
    tells = ["Купили наконец Шкоду", "Я работаю врачом", "Тёща снова приезжает завтра", "Мою собаку зовут Бублик",
             "Вернулся с концерта", "I moved to Berlin"]  # past verb, first person, kin, pronoun; English not judged
    asks = ["Посоветуй, куда поехать летом", "Расскажи побольше о шаманских церемониях",
            "Какие книги стоит прочитать по истории Рима?"]
    assert [disclosure.tells_about_user(t) for t in tells] == [True] * len(tells)
    assert [disclosure.tells_about_user(t) for t in asks] == [False] * len(asks)
    turns = [turn(2 * i, text) for i, text in enumerate(tells[:2] + asks[:2])]
    stats = Counter()
    kept = F.prefilter(turns, stats, rule="disclosure")
    assert [c.text for c in kept] == tells[:2] and stats["skipped_by_rule"] == 2
    assert len(F.prefilter(turns, Counter())) == 4  # "all", the contest's: every message asked


def test_malformed_replies_are_parsed_where_possible_else_counted():
    stats = Counter()
    c = F.Candidate(turn(4, "Я живу в Томске"), "Я живу в Томске", "")
    ok = F.parse_facts('Вот: {"facts": [{"slot": "город", "value": "Томск", "statement": ""}, 5]} конец', c, stats)
    assert [(f.slot, f.value, f.statement, f.turn_idx) for f in ok] == [("город", "Томск", "город: Томск", 4)]
    assert F.parse_facts('{"facts": [{"slot": "город"', c, stats) == []
    assert F.parse_facts('[{"slot": "x" , "value": "' + "y" * 999 + '"}]', c, stats)[0].value == "y" * 200
    assert F.parse_facts("Фактов нет.", c, stats) == []
    assert stats == Counter(cut=1, unparsable=1, bad_items=1, facts=2)


def test_a_reply_cut_at_max_tokens_keeps_its_complete_items_and_counts_as_cut():
    stats = Counter()
    c = F.Candidate(turn(4, "Я живу в Томске с котом"), "Я живу в Томске с котом", "")
    cut = '{"facts": [{"slot": "город", "value": "Томск", "statement": "Живёт в Томске"}, {"slot": "кот", "val'
    assert [(f.slot, f.value) for f in F.parse_facts(cut, c, stats)] == [("город", "Томск")]
    assert stats == Counter(cut=1, facts=1)
    assert F.complete_items('{"facts": [{"a": [1, 2]} , {"b": "x') == [{"a": [1, 2]}]
    assert F.complete_items("no array here") is None


def fact(slot, value, session, statement=None):
    return F.Fact(slot, value, statement or f"{slot}={value}", session, session, session)


def test_the_rule_links_a_specific_key_reordered_and_inflected_but_not_a_bare_topic():
    slots = Slots()
    bobik, sharik, tomsk = fact("собака.кличка", "Бобик", 0), fact("Кличка собаки", "Шарик", 2), fact("город", "Томск", 1)
    rome, roma = fact("сын", "Рома", 3, "Сына зовут Рома"), fact("сын", "компьютер", 4, "Сын сидит за компьютером")
    slots.add([bobik, sharik, tomsk, rome, roma])
    assert slots.links() == [Link(bobik, sharik)]
    assert (slots.current(bobik), slots.history(sharik)) == (sharik, [bobik])
    line = FactLine("собака", sharik, tuple(slots.history(sharik)))
    assert render(line, "en") == "[session 3] Кличка собаки=Шарик (earlier: «Бобик», session 1)"
    assert line.turn_ids == (2, 0)


def test_a_repeat_confirms_the_fact_it_restates_and_adds_no_version():
    slots = Slots()
    first, repeat, other = fact("город", "Томск", 0), fact("город", "томск", 3), fact("работа", "сварщик", 1)
    slots.add([first, repeat, other])
    assert slots.facts == [first, other] and slots.repeats == {repeat: first}
    assert slots.current(repeat) == first and slots.links() == []


def test_pass_verdicts_override_the_rule_and_a_fact_is_replaced_once():
    slots = Slots()
    a, b, c = fact("телефон.модель", "A", 0), fact("телефон.модель", "B", 1), fact("телефон.модель", "C", 2)
    slots.add([a, b, c])
    assert slots.links() == [Link(a, b), Link(b, c)]  # the rule
    slots.decide({(a, b): False, (b, c): False, (a, c): True})
    assert slots.links() == [Link(a, c)] and slots.history(c) == [a] and slots.is_current(b)


def test_versions_groups_are_topics_with_a_new_fact_and_windows_overlap():
    slots = Slots()
    many = [fact("сын", str(i), i, f"Сын {i}") for i in range(20)]
    lone = fact("город", "Томск", 30)
    slots.add([*many, lone])
    found = versions.groups(slots, many[-1:])
    assert [(g.topic, len(g.facts)) for g in found] == [("сын", 8)]  # the window holding the new fact
    found = versions.groups(slots, many)
    assert [len(g.facts) for g in found] == [16, 8] and found[1].facts[0] == many[12]
    assert versions.groups(slots, [lone]) == []


def test_an_empty_memory_abstains_without_asking_the_model():
    model, llm = make_model(["this reply must not be used"])
    assert model.answer_to_question("nothing-written", "Как меня зовут?") == "У меня нет такой информации."
    model.write_to_memory([Message("user", "", 1), Message("assistant", "", 1)], "blank")
    assert model.answer_to_question("blank", "What is my name?") == "I don't have that information."
    assert list(llm.batches) == [] and len(llm.queue) == 1


def peer_chat(model):
    """Two friends, short turns on both sides, each opening with the speaker's name (as LoCoMo)."""
    sessions = {1: [("Caroline: I went to a support group yesterday.", "Melanie: That's brave! I painted a lake."),
                    ("Caroline: What else did you paint?", "Melanie: A sunrise, last week.")],
                2: [("Melanie: My kids love the beach.", "Caroline: Mine too, we went on Sunday.")]}
    model.set_dates("d", {"1": "1:56 pm on 8 May, 2023", "2": "2:00 pm on 25 May, 2023"}, None)
    for sid, pairs in sessions.items():
        for a, b in pairs:
            model.write_to_memory([Message("user", a, sid), Message("assistant", b, sid)], "d")


def test_a_peer_chat_extracts_both_speakers_with_dates_and_answers_about_them_by_name():
    group = facts_reply(("support group", "went", "Caroline went to a support group on 7 May 2023."))
    model, llm = make_model([group] + ['{"facts": []}'] * 5 + ["On 7 May 2023."])
    peer_chat(model)
    model.answer_to_question("d", "When did Caroline go to the support group?")
    assert list(llm.batches) == [6, 1, 1]  # both speakers' six turns, the answer and its cite (one fact: no versions)
    first, third = llm.history[0][0], llm.history[2][0]
    assert "the name of the person who wrote it" in first[0]["content"]
    assert "Caroline: I went to a support group yesterday [7 May 2023]." in first[-1]["content"]
    assert "The message it answers:\nCaroline: What else did you paint?" not in third[-1]["content"]
    assert "The message it answers:\nMelanie: That's brave! I painted a lake." in third[-1]["content"]
    (fact,) = model.memories["d"].facts
    assert fact.slot == "support group.Caroline"
    answer = llm.history[-2][0]  # the answer prompt, before its cite ask
    assert "about Caroline and Melanie" in answer[0]["content"]
    assert "\nCaroline: I went to a support group yesterday [7 May 2023]." in answer[-1]["content"]
    assert "User:" not in answer[-1]["content"] and "Assistant:" not in answer[-1]["content"]


def test_a_terse_assistant_is_not_a_peer_chat_two_named_people_are():
    model, _ = make_model()
    dialogue(model, [("Я живу в Казани", "Ок"), ("Мой кот — Барсик", "Ясно")])
    peers, _ = make_model()
    peer_chat(peers)
    assert (model._memory("d").profile.kind, peers._memory("d").profile.kind) == ("assistant", "peer")
