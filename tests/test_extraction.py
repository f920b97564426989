"""Fact extraction, versioned slots and the answer with facts, on the scripted LLM."""
import json
from collections import Counter

from submit import prompts
from submit.memory import facts as F
from submit.memory.embed import HashEmbedder
from submit.memory.slots import Slots, render
from submit.memory.turns import Turn
from models import Message

from conftest import make_model


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
        variables = {"extract": {"message": "M", "before": "B"},
                     "answer": {"question": "Q", "context": "C", "facts": ["F"], "question_date": "D"}}[task]
        chat = prompts.render(task, lang, **variables)
        text = "\n".join(m["content"] for m in chat)
        assert [m["role"] for m in chat] == ["system", "user"]
        assert all(v in text for v in ("M", "B") if task == "extract")
        assert "{{" not in text and "{%" not in text


def test_one_batched_extraction_call_per_dialogue_not_one_per_pair():
    model, llm = make_model()
    dialogue(model, [("Я живу в Казани", "Ок"), ("Мой кот — Барсик", "Ок"), ("Спасибо!", "Ясно")],
             [("Я работаю сварщиком", "Ок")])
    model.answer_to_question("d", "Где я живу?")
    assert list(llm.batches) == [3, 1]  # one extraction batch (small talk skipped), then the answer
    assert model.memory_stats("d")["llm"]["by_purpose"]["extract"]["calls"] == 3


def test_an_updated_fact_forms_a_version_chain_newest_current():
    model, llm = make_model([facts_reply(("работа", "учитель", "Пользователь работает учителем")),
                             facts_reply(("Работа", "репетитор", "Пользователь работает репетитором")),
                             "Вы работаете репетитором."])
    dialogue(model, [("Я работаю учителем", "Ок")], [("Теперь я работаю репетитором", "Ок")])
    assert model.answer_to_question("d", "Кем я работаю?") == "Вы работаете репетитором."
    memory = model.memories["d"]
    (chain,) = memory.slots.chains.values()
    assert [v.fact.value for v in chain] == ["учитель", "репетитор"]
    prompt = llm.history[-1][0][-1]["content"]
    assert "[сессия 2] Пользователь работает репетитором (раньше: учитель (сессия 1))" in prompt


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


def test_malformed_replies_are_parsed_where_possible_else_counted():
    stats = Counter()
    c = F.Candidate(turn(4, "Я живу в Томске"), "Я живу в Томске", "")
    ok = F.parse_facts('Вот: {"facts": [{"slot": "город", "value": "Томск", "statement": ""}, 5]} конец', c, stats)
    assert [(f.slot, f.value, f.statement, f.turn_idx) for f in ok] == [("город", "Томск", "город: Томск", 4)]
    assert F.parse_facts('{"facts": [{"slot": "город"', c, stats) == []
    assert F.parse_facts('[{"slot": "x" , "value": "' + "y" * 999 + '"}]', c, stats)[0].value == "y" * 200
    assert stats == Counter(unparsable=1, bad_items=1, facts=2)


def test_slots_match_reordered_and_inflected_keys():
    slots = Slots(HashEmbedder())
    make = lambda slot, value, s: F.Fact(slot, value, f"{slot}={value}", s, s, s)
    slots.add([make("собака.кличка", "Бобик", 0), make("Кличка собаки", "Шарик", 2), make("город", "Томск", 1)])
    assert sorted(slots.chains) == ["город", "собака.кличка"]
    chain = slots.chains["собака.кличка"]
    assert [v.fact.value for v in chain] == ["Бобик", "Шарик"]
    assert render(chain, "en") == "[session 3] Кличка собаки=Шарик (earlier: Бобик (session 1))"


def test_every_added_fact_knows_its_chain_a_repeat_too():
    slots = Slots(HashEmbedder())
    make = lambda slot, value, s: F.Fact(slot, value, f"{slot}={value}", s, s, s)
    first, repeat, other = make("город", "Томск", 0), make("город", "томск", 3), make("работа", "сварщик", 1)
    slots.add([first, repeat, other])
    assert [v.fact for v in slots.chains["город"]] == [first]  # a repeat is not a new version
    assert (slots.chain_of(first), slots.chain_of(repeat), slots.chain_of(other)) == ("город", "город", "работа")
    assert slots.chain_of(make("город", "Омск", 5)) is None


def test_an_empty_memory_abstains_without_asking_the_model():
    model, llm = make_model(["this reply must not be used"])
    assert model.answer_to_question("nothing-written", "Как меня зовут?") == "У меня нет такой информации."
    model.write_to_memory([Message("user", "", 1), Message("assistant", "", 1)], "blank")
    assert model.answer_to_question("blank", "What is my name?") == "I don't have that information."
    assert list(llm.batches) == [] and len(llm.queue) == 1
