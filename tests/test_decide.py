"""The answer stage (issue 59): the reader's answer bound to the lines it quotes, a pure decision
over it, and the checks each reader earns on the calibration set."""
import json
import re

import pytest

from models import Message
from submit import SubmitModelWithMemory
from submit.config import Config, replaced
from submit.memory import decide, gate
from submit.memory.answer import NO_INFO
from submit.memory.decide import Calibrated, Reply, Switches
from submit.memory.embed import HashEmbedder
from submit.memory.llm import ANSWER, CALIBRATE, ScriptedLLM

from test_gate import CAL_ANSWERABLE, list_router, sports_model

NO = NO_INFO["ru"]
LINES = [("работа", "Пользователь работает бухгалтером."),
         ("работа", "Муж пользователя получает около 180 000 ₽ в месяц."),
         ("семья", "Сестру пользователя зовут Лена."),
         ("Выдержки из диалогов", "Пользователь: у меня рост 155 см, вес 50 кг")]
ALL = Switches()  # every check on, no gate


def reply(answer, *quotes):
    return Reply(answer, tuple(quotes))


def test_a_quote_points_at_its_line_with_a_word_changed_and_a_made_up_one_at_none():
    assert decide.quoted(reply("x", "пользователь работает бухгалтером"), LINES) == [LINES[0]]
    assert decide.quoted(reply("x", "[сессия 12] Пользователь работает бухгалтером."), LINES) == [LINES[0]]
    assert decide.quoted(reply("x", "Пользователь работает сварщиком на заводе"), LINES) == []


def test_an_answer_on_its_quote_stands_and_one_on_no_line_is_declined():
    right = decide.decide("Кем я работаю?", reply("Вы работаете бухгалтером.", "работает бухгалтером"), LINES, ALL)
    assert right.text == "Вы работаете бухгалтером." and not right.declined and right.held == (LINES[0],)
    made_up = decide.decide("Кем я работаю?", reply("Вы сварщик.", "Я сварщик"), LINES, ALL)
    assert (made_up.text, made_up.declined_by) == (NO, "unquoted")
    assert decide.decide("Кем я работаю?", reply("Вы сварщик."), LINES, ALL).declined_by == "unquoted"


def test_a_value_standing_nowhere_in_the_material_is_declined_whatever_the_quotes():
    checks = Switches(frozenset({"ungrounded"}))
    party = reply('Я избирался в депутаты от партии "Справедливые".', "Пользователь работает бухгалтером.")
    assert decide.decide("От какой партии я избирался?", party, LINES, checks).declined_by == "ungrounded"
    # the value in another form of a word that stands, or a number worked out, is not ungrounded
    assert not decide.decide("Кем я работаю?", reply("Бухгалтер."), LINES, checks).declined
    assert not decide.decide("Какой у меня вес?", reply("Ваш вес — 50 килограммов."), LINES, checks).declined
    # a yes or no, and an English answer (put in the reader's own words more often), are not read
    assert not decide.decide("Правда, что я сварщик?", reply("Нет, вы бухгалтер."), LINES, checks).declined
    assert not decide.decide("What is my job?", reply("A welder."), LINES, checks).declined


def test_a_number_standing_in_no_line_the_answer_rests_on_is_declined():
    lines = LINES + [("семья", "Дочь пользователя Полина ходит в художественную школу.")]
    checks = Switches(frozenset({"unquoted_number"}))
    made_up = reply("Полине 14 лет.", "Дочь пользователя Полина ходит в художественную школу.")
    assert decide.decide("Сколько лет моей дочери Полине?", made_up, lines, checks).declined_by == "unquoted_number"
    read = reply("Ваш рост — 155 сантиметров, а вес около 50 килограммов.", "у меня рост 155 см, вес 50 кг")
    assert not decide.decide("Какой у меня рост?", read, lines, checks).declined
    # a session marker the reader copied from the material is where a fact was said, not a value
    cat = [("питомцы", "Кошка пользователя породы шотландская вислоухая.")]
    marked = reply("[сессия 8] Кошка породы шотландская вислоухая.", "Кошка пользователя породы шотландская вислоухая.")
    assert not decide.decide("Какой породы моя кошка?", marked, cat, checks).declined
    # a sum written another way is the same number; the question's own numbers are not the answer's
    other_way = reply("Муж получает около 180 тысяч рублей.", "Муж пользователя получает около 180 000 ₽ в месяц.")
    assert not decide.decide("Сколько получает мой муж?", other_way, lines, checks).declined
    assert decide.numbers("около 180 000 ₽") == decide.numbers("180000") == decide.numbers("180 тысяч") == {"18"}
    assert decide.numbers("1,5 млн") == decide.numbers("1 500 000") == decide.numbers("1500") == {"15"}


def test_an_earlier_version_given_is_answered_with_the_fact_as_it_stands_now():
    none = Switches(frozenset())
    lines = [("машина", "Пользователь продал «Ниву» и купил Haval Jolion. (раньше: «Лада Нива», сессия 11)"),
             ("Выдержки из диалогов", "Пользователь: машина у меня лада нива")]
    stale = decide.decide("Какая у меня сейчас машина?", reply("У вас Лада Нива."), lines, none)
    assert (stale.text, stale.superseded, stale.held) == ("Пользователь продал «Ниву» и купил Haval Jolion.", True,
                                                          (("машина", stale.text),))
    # the current value stands, and so does one naming what the fact now adds to its earlier version;
    # the past asked is answered with the earlier version
    assert decide.decide("Какая у меня сейчас машина?", reply("Haval Jolion."), lines, none).text == "Haval Jolion."
    job = [("работа", "Пользователь стал старшим механиком. (раньше: «механик», сессия 3)")]
    assert decide.decide("Кем я работаю?", reply("Вы старший механик."), job, none).text == "Вы старший механик."
    assert decide.decide("Кем я работаю?", reply("Механик."), job, none).text == "Пользователь стал старшим механиком."
    assert decide.decide("Какая машина у меня была?", reply("Лада Нива."), lines, none).text == "Лада Нива."
    # a value a fact holds as it stands now is no earlier version alone, whatever another fact held
    both = lines + [("машина", "Пользователь держит в гараже старую Ладу.")]
    assert decide.decide("Какая у меня машина?", reply("Лада."), both, none).text == "Лада."


def test_a_date_read_off_the_session_heading_of_the_quoted_line_stands_and_its_session_number_is_no_value():
    checks = Switches(frozenset({"unquoted_number"}))
    lines = [("Conversation excerpts", "### Session 17 (2:34 pm on 10 July, 2022)"),
             ("Conversation excerpts", "Nate: I won my fourth video game tournament on Friday!"),
             ("Выдержки из диалогов", "### Сессия 14"), ("Выдержки из диалогов", "Пользователь: у сына день рождения")]
    friday = reply("The Friday before 10 July 2022.", "Nate: I won my fourth video game tournament on Friday!")
    assert not decide.decide("When did Nate win his fourth tournament?", friday, lines, checks).declined
    made_up = reply("Сыну 14 лет.", "Пользователь: у сына день рождения")
    assert decide.decide("Сколько лет моему сыну?", made_up, lines, checks).declined_by == "unquoted_number"
    # a date's day stands in the line that writes the date in digits
    dated = [("Выдержки из диалогов", "Пользователь: родилась 12.03.1990")]
    assert not decide.unquoted_number("Когда у меня день рождения?", reply("12 марта.", "родилась 12.03.1990"),
                                      dated, dated)
    assert not decide.unquoted_number("Мне 40 лет?", reply("Вам 40 лет.", "Пользователь работает бухгалтером"),
                                      [LINES[0]], lines)
    # a session a line names (a fact's earlier version, «сессия 12») is no value of anything
    noted = [("планы", "Пользователь копит на отпуск в Сочи. (раньше: «ремонт кухни», сессия 12)")]
    assert decide.unquoted_number("Сколько стоит мой отпуск?", reply("Ваш отпуск стоит 12 тысяч.", "копит на отпуск"),
                                  noted, noted)
    spoken = [("Выдержки из диалогов", "Пользователь: у меня зимняя сессия 25 января")]  # the user's own
    assert not decide.unquoted_number("Когда у меня сессия?", reply("Ваша сессия начинается 25 января.", "сессия"),
                                      spoken, spoken)
    # a yes or no is not read; an answer without digits has no number to hold against its lines
    assert not decide.decide("Правда, что мне 30 лет?", reply("Да, вам 31 год.", "x"), lines, checks).declined
    assert not decide.decide("Сколько лет Полине?", reply("Полина уже школьница.", "Дочь пользователя Полина ходит"),
                             lines, checks).declined


def test_the_users_own_thing_given_another_persons_value_is_declined():
    said = reply("Ваша зарплата около 180 000 ₽.", "Муж пользователя получает около 180 000 ₽")
    assert decide.decide("Какая у меня зарплата?", said, LINES, ALL).declined_by == "elsewhere"
    # asked about the husband, the husband's line answers
    assert not decide.decide("Сколько получает мой муж?", said, LINES, ALL).declined
    assert not decide.others_only("Кем я работаю?", "Вы бухгалтер.", [LINES[0]])
    # the lines read are those that hold the value: another quoted line about the user saves nothing
    shoes = [("дети", "У пользователя две дочери, Вера и Ася."), ("дети", "Дочерям пользователя нужны кеды 35 размера.")]
    sized = reply("Ваш размер обуви — 35.", "У пользователя две дочери", "Дочерям пользователя нужны кеды 35 размера")
    assert decide.decide("Какой размер обуви я ношу?", sized, shoes, ALL).declined_by == "elsewhere"
    assert decide.holding("Ваш размер обуви — 35.", "Какой размер обуви я ношу?", shoes) == [shoes[1]]
    assert decide.holding("Вы носите валенки.", "Какую обувь я ношу?", shoes) == shoes  # none holds it: all


def test_a_value_its_quoted_lines_do_not_hold_is_judged_where_it_stands_in_the_material():
    lines = [("отношения", "Пользователю нравится мужчина с её работы."),
             ("лошади", "Любимая лошадь пользователя — Ежевика."), ("кино", "Пользователь смотрел «Ежевику».")]
    # the reader quoted the line about the man, but the name it gives stands only beside the horse
    said = reply("Его зовут Ежевика.", "Пользователю нравится мужчина с её работы")
    assert decide.decide("Как зовут мужчину с работы, который мне нравится?", said, lines[:2], ALL).declined_by == (
        "elsewhere")
    # where the value also stands beside the person asked about, it may be his
    named = lines + [("отношения", "Мужчина с работы по прозвищу Ежевика пригласил пользователя в кино.")]
    assert not decide.elsewhere("Как зовут мужчину с работы, который мне нравится?", said, [lines[0]], named)
    # a quoted line that holds the value is where it is judged, as before
    quoted = reply("Его зовут Ежевика.", "Любимая лошадь пользователя — Ежевика")
    assert decide.elsewhere("Как зовут мужчину с работы, который мне нравится?", quoted, [lines[1]], lines)


def test_the_users_own_person_given_another_owners_value_is_declined():
    lines = [("семья", "Маму Сергея зовут Тамара Николаевна."), ("семья", "Сына пользователя зовут Тима.")]
    said = reply("Вашу маму зовут Тамара Николаевна.", "Маму Сергея зовут Тамара Николаевна")
    assert decide.decide("Как зовут мою маму?", said, lines, ALL).declined_by == "elsewhere"
    assert not decide.decide("Как зовут маму Сергея?", said, lines, ALL).declined  # asked as his
    son = reply("Вашего сына зовут Тима.", "Сына пользователя зовут Тима")
    assert not decide.decide("Как зовут моего сына?", son, lines, ALL).declined
    assert decide.another_owner("Сколько лет моему сыну?", [("", "Сыну Лены 14 лет.")])
    assert not decide.another_owner("Сколько лет моему сыну?", [("", "Сыну 14 лет.")])


def test_a_measure_asked_and_no_number_given_is_an_empty_answer():
    lines = [("собака", "Собака пользователя — кобель лайки."), ("собака", "Собаке пользователя 4 года.")]
    assert decide.decide("Сколько лет моей собаке?", reply("Ваша собака — кобель.", "Собака пользователя — кобель"),
                         lines, ALL).declined_by == "empty"
    assert not decide.decide("Сколько лет моей собаке?", reply("Вашей собаке четыре года.", "Собаке пользователя 4 года"),
                             lines, ALL).declined


def test_a_fluent_readers_whole_sentences_pass_the_checks():
    yes = reply("Да, вы работаете бухгалтером.", "Пользователь работает бухгалтером")
    assert not decide.decide("Правда, что я работаю бухгалтером?", yes, LINES, ALL).declined
    pet = [("питомцы", "Пользователь взял из приюта щенка по кличке Бублик.")]
    dog = reply("Да, у вас есть собака — щенок Бублик из приюта.", "взял из приюта щенка по кличке Бублик")
    assert not decide.decide("Есть ли у меня собака?", dog, pet, ALL).declined
    both = reply("Ваш рост — 155 сантиметров, а вес около 50 килограммов.", "у меня рост 155 см, вес 50 кг")
    assert not decide.decide("Какой у меня рост?", both, LINES, ALL).declined
    named = reply("Вашу сестру зовут Лена.", "Сестру пользователя зовут Лена")
    assert not decide.decide("Как зовут мою сестру?", named, LINES, ALL).declined


def test_the_readers_own_decline_and_the_gate_come_first():
    assert decide.decide("Кем я работаю?", reply(NO), LINES, ALL).declined_by == decide.OWN
    assert decide.decide("Кем я работаю?", None, LINES, ALL).declined_by == decide.OWN  # nothing asked
    gated = Switches(frozenset({decide.GATE}), threshold=0.5)
    right = reply("Вы работаете бухгалтером.", "работает бухгалтером")
    assert decide.decide("Кем я работаю?", right, LINES, gated, p_yes=0.4).declined_by == decide.GATE
    assert not decide.decide("Кем я работаю?", right, LINES, gated, p_yes=0.6).declined
    # the gate does not speak for a Russian yes/no question (the contest class does not ask it there):
    # a recorded P(yes) of one replays as the class answers
    yes = reply("Да, вы работаете бухгалтером.", "работает бухгалтером")
    assert not decide.decide("Работаю ли я бухгалтером?", yes, LINES, gated, p_yes=0.4).declined
    assert not decide.decide("Кем я работаю?", reply("Вы сварщик."), LINES, Switches(frozenset())).declined


def cal(question, answerable, said, lines=LINES, p_yes=None):
    return Calibrated(question, answerable, said, tuple(lines), p_yes)


def test_a_check_is_on_only_where_the_readers_calibration_answers_earn_it():
    right = reply("Вы работаете бухгалтером.", "работает бухгалтером")
    made_up = reply("Вы сварщик.")
    rows = [cal("Кем я работаю?", True, right)] * 6 + [cal("Какая у меня машина?", False, made_up)] * 2
    switches = decide.switch(rows)
    assert "unquoted" in switches.on and "2/2 unanswerable, 0/6 answerable" in switches.why["unquoted"]
    # a reader whose right answers quote nothing: the check would cost more answers than it saves
    careless = [cal("Кем я работаю?", True, made_up)] * 6 + [cal("Какая у меня машина?", False, made_up)] * 2
    off = decide.switch(careless)
    assert "unquoted" not in off.on and off.why["unquoted"].startswith("off: would decline 2/2 unanswerable, 6/6")
    # a reader that declines every unanswerable question itself earns no check at all
    fluent = [cal("Кем я работаю?", True, right)] * 6 + [cal("Какая у меня машина?", False, reply(NO))] * 2
    assert decide.switch(fluent).on == frozenset()
    assert decide.switch(fluent, threshold=0.5).on == {decide.GATE}


def answering_model(llm, **memory):
    config = replaced(Config(llm="scripted", embedder="hash", time_budget=False),
                      {"memory.facts": False, **{f"memory.{k}": v for k, v in memory.items()}})
    m = SubmitModelWithMemory("", config=config, llm=llm, embedder=HashEmbedder())
    m.write_to_memory([Message("user", "Я работаю бухгалтером в строительной фирме.", 1),
                       Message("assistant", "Понятно.", 1)], "d")
    return m


SAID = "Вы работаете бухгалтером."
CITE = json.dumps({"quotes": ["Я работаю бухгалтером"]}, ensure_ascii=False)


def test_a_failed_check_calibration_leaves_every_check_off_and_the_answer_stands():
    m = answering_model(ScriptedLLM([RuntimeError("engine died"), SAID, '{"quotes": []}']))
    assert m.answer_to_question("d", "Кем я работаю?") == SAID  # unquoted, but no check is on
    assert m.switches["ru"].on == frozenset() and "calibration failed" in m.switches["ru"].why["checks"]


@pytest.mark.parametrize("raw", ["", "   "])
def test_an_empty_reply_is_counted_as_the_fallback_it_is(raw):
    calibration = len(gate.load_set(gate.calibration_file("ru", 8000)))
    m = answering_model(ScriptedLLM([NO] * calibration + [raw]))  # the reader's own declines: no cite asked
    assert m.answer_to_question("d", "Кем я работаю?") == NO
    assert m.traces["d"].fallback is not None


def test_a_kept_calibration_is_taken_by_the_next_run_of_the_same_model_and_not_asked_again(tmp_path):
    calibration = len(gate.load_set(gate.calibration_file("ru", 8000)))

    def run(llm, folder=tmp_path):
        m = answering_model(llm, calibration_cache=str(folder))
        assert m.answer_to_question("d", "Кем я работаю?") == SAID
        return m

    first = run(ScriptedLLM([cites_where_it_can] * (2 * calibration) + [SAID, CITE], scores=[0.9] * 200))
    assert list(first.llm.purposes).count(CALIBRATE) == 2 and len(list(tmp_path.glob("ru.*.json"))) == 1
    again = run(ScriptedLLM([SAID, CITE], scores=[0.9] * 200))
    assert CALIBRATE not in again.llm.purposes and [p for _, p in again.llm.scored].count(CALIBRATE) == 0
    assert again.switches["ru"] == first.switches["ru"] and again.calibrations["ru"] == first.calibrations["ru"]
    # another set's or another folder's calibration is another file: asked anew
    fresh = run(ScriptedLLM([cites_where_it_can] * (2 * calibration) + [SAID, CITE], scores=[0.9] * 200),
                tmp_path / "other")
    assert list(fresh.llm.purposes).count(CALIBRATE) == 2
    # what is kept is the model's replies, not the switches: a check added to the code is decided on
    # them by the next run, and a file of the older form (switches kept) is calibrated anew
    kept = next(tmp_path.glob("ru.*.json"))
    data = json.loads(kept.read_text(encoding="utf-8"))
    assert len(data["replies"]) == calibration and "switches" not in data
    kept.write_text(json.dumps({"gate": data["gate"], "switches": {"on": [], "threshold": None, "why": {}}}))
    older = run(ScriptedLLM([cites_where_it_can] * (2 * calibration) + [SAID, CITE], scores=[0.9] * 200))
    assert list(older.llm.purposes).count(CALIBRATE) == 2 and older.switches["ru"] == first.switches["ru"]
    assert "replies" in json.loads(kept.read_text(encoding="utf-8"))


class Named(ScriptedLLM):
    """The scripted reader under another model's name: a kept calibration is the model's own."""
    model_file = "another.gguf"


def test_a_kept_calibration_is_the_models_own_and_not_taken_for_another_model(tmp_path):
    calibration = len(gate.load_set(gate.calibration_file("ru", 8000)))
    answering_model(ScriptedLLM([cites_where_it_can] * (2 * calibration) + [SAID, CITE]),
                    calibration_cache=str(tmp_path)).answer_to_question("d", "Кем я работаю?")
    other = Named([SAID, CITE])
    m = answering_model(other, calibration_cache=str(tmp_path), gate="kept")
    assert m.answer_to_question("d", "Кем я работаю?") == SAID and CALIBRATE not in other.purposes
    assert "no calibration of scripted:another.gguf kept" in m.switches["ru"].why["checks"]
    assert other.identity == "scripted:another.gguf" and ScriptedLLM().identity == "scripted"


def test_the_kept_mode_takes_a_kept_calibration_and_runs_every_check_where_none_is_kept(tmp_path):
    calibration = len(gate.load_set(gate.calibration_file("ru", 8000)))

    def run(llm, mode):
        m = answering_model(llm, gate=mode, calibration_cache=str(tmp_path))
        assert m.answer_to_question("d", "Кем я работаю?") == SAID
        return m

    # nothing kept yet: no calibration pass, every check on, and the summary says where none was found
    none = run(ScriptedLLM([SAID, CITE]), "kept")
    assert CALIBRATE not in none.llm.purposes and none.switches["ru"].on == frozenset(decide.CHECKS)
    assert "no calibration of" in none.switches["ru"].why["checks"] and not list(tmp_path.glob("ru.*.json"))
    first = run(ScriptedLLM([cites_where_it_can] * (2 * calibration) + [SAID, CITE], scores=[0.9] * 200),
                "calibrated")
    taken = run(ScriptedLLM([SAID, CITE], scores=[0.9] * 200), "kept")  # the calibrated run's, not asked again
    assert CALIBRATE not in taken.llm.purposes and taken.switches["ru"] == first.switches["ru"]
    assert taken.calibrations["ru"] == first.calibrations["ru"]
    # a file that reads as JSON but not as a calibration is not taken, and nothing raises
    kept = next(tmp_path.glob("ru.*.json"))
    kept.write_text(json.dumps({"gate": {**first.calibrations["ru"].as_dict(), "scores": [[1]]}, "replies": [{}]}))
    broken = run(ScriptedLLM([SAID, CITE]), "kept")
    assert "not one this code reads" in broken.switches["ru"].why["checks"]
    assert broken.switches["ru"].on == frozenset(decide.CHECKS) and CALIBRATE not in broken.llm.purposes


def test_the_gate_off_in_the_config_asks_no_calibration_and_runs_every_check():
    llm = ScriptedLLM(["Вы работаете сварщиком.", '{"quotes": []}'])
    m = answering_model(llm, gate="off")
    assert m.answer_to_question("d", "Кем я работаю?") == NO  # unquoted: every check is on
    assert list(llm.purposes) == [ANSWER, ANSWER] and m.switches["ru"].on == frozenset(decide.CHECKS)
    assert "not calibrated" in m.switches["ru"].why["checks"]


# ---------------------------------------------------------------- the cited stage: the plain answer, then its lines

CITE_ASK = decide.prompts.text("answer", "ru", "cite")


def test_a_cited_reply_is_the_plain_answer_with_the_cite_calls_quotes():
    cite = json.dumps({"quotes": ["Пользователь работает бухгалтером."]}, ensure_ascii=False)
    read = decide.cited("Вы работаете бухгалтером.", cite)
    assert read == reply("Вы работаете бухгалтером.", "Пользователь работает бухгалтером.")
    assert decide.decide("Кем я работаю?", read, LINES, ALL).text == "Вы работаете бухгалтером."
    # no cite is asked of an empty answer or the reader's own decline, a lead-in before it too
    assert decide.asks_cite("Вы работаете бухгалтером.")
    assert not any(decide.asks_cite(d) for d in ("", "  ", NO, "Ответ: У меня нет такой информации."))
    # no cite call (the reader declined itself) or an unreadable one: the draft without quotes
    assert decide.cited(NO, "") == reply(NO)
    assert decide.decide("Кем я работаю?", decide.cited(NO, ""), LINES, ALL).declined_by == decide.OWN
    assert decide.cited("Вы работаете сварщиком.", "{").quotes == ()
    # a cite reply cut by the token cap keeps its quotes, the last as far as it came
    cut = '{"quotes": ["Сестру пользователя зовут Лена.", "Муж польз'
    assert decide.cited("Лена.", cut) == reply("Лена.", "Сестру пользователя зовут Лена.", "Муж")
    # a reply that went on past its quotes (no schema held it): its answer is no quote
    assert decide.quotes_of('{"quotes": ["Сестру пользователя зовут Лена."], "answer": "Лена, сестра') == (
        "Сестру пользователя зовут Лена.",)
    # a quote's own session marker closes no list, and a cut one points at its line by its words
    cut = '{"quotes": ["[сессия 16] Сестру пользователя зовут Лена.", "[сессия 12] Пользователь работает бухгалтер'
    read = decide.cited("Лена.", cut)
    assert read.quotes == ("[сессия 16] Сестру пользователя зовут Лена.", "[сессия 12] Пользователь работает")
    assert LINES[0] in decide.quoted(read, LINES)


def test_the_cite_call_continues_the_answer_prompt_so_its_prefix_is_the_answers():
    chat = [{"role": "system", "content": "…"}, {"role": "user", "content": "материал\nВопрос: Кем я работаю?"}]
    asked = decide.cite_chat(chat, "Вы работаете бухгалтером.", "ru")
    assert asked[:2] == chat and asked[2] == {"role": "assistant", "content": "Вы работаете бухгалтером."}
    assert asked[3] == {"role": "user", "content": CITE_ASK}


def cites_where_it_can(chat):
    """A calibration reader of the cited stage: it answers every prompt, and cites the line the
    prompt's dialogue answers with where there is one, nothing where there is none."""
    if chat[-1]["content"] == CITE_ASK:
        content = chat[-3]["content"]
        if content.rsplit("\n", 1)[0] not in CAL_ANSWERABLE:
            return json.dumps({"quotes": []})
        line = next(line for line in content.splitlines() if line.startswith("- "))
        return json.dumps({"quotes": [re.sub(r"\[[^\]]*\]", "", line[2:]).strip()]}, ensure_ascii=False)
    return "Вы работаете сварщиком."


def test_the_cited_stage_calibrates_on_the_same_two_calls_and_asks_no_cite_of_the_readers_own_decline():
    calibration = len(gate.load_set(gate.calibration_file("ru", 8000)))
    config = replaced(Config(llm="scripted", embedder="hash", time_budget=False), {"memory.facts": False})
    cite = json.dumps({"quotes": ["Я работаю бухгалтером"]}, ensure_ascii=False)
    llm = ScriptedLLM([cites_where_it_can] * (2 * calibration)
                      + ["Вы работаете бухгалтером.", cite, "Вы ездите на шкоде.", '{"quotes": []}', NO])
    m = SubmitModelWithMemory("", config=config, llm=llm, embedder=HashEmbedder())
    m.write_to_memory([Message("user", "Я работаю бухгалтером в строительной фирме.", 1),
                       Message("assistant", "Понятно.", 1)], "d")
    assert m.answer_to_question("d", "Кем я работаю?") == "Вы работаете бухгалтером."
    assert "unquoted" in m.switches["ru"].on
    assert list(llm.purposes) == [CALIBRATE, CALIBRATE, ANSWER, ANSWER]  # drafts, then cites, batched
    assert list(llm.batches)[:2] == [calibration, calibration]
    chat, _, schema = llm.history[-1]
    assert schema == decide.CITE_SCHEMA and chat[-2]["content"] == "Вы работаете бухгалтером."
    assert m.answer_to_question("d", "Какая у меня машина?") == NO
    assert m.traces["d"].declined_by == "unquoted"
    calls = len(llm.purposes)
    assert m.answer_to_question("d", "Где я отдыхал летом?") == NO and len(llm.purposes) == calls + 1  # no cite call
    assert m.traces["d"].declined_by is None


def test_the_cited_stage_joins_the_list_asks_items_to_an_answer_that_stands_and_to_no_decline():
    listing = json.dumps({"items": ["футбол", "пинг-понг"]}, ensure_ascii=False)
    cite = json.dumps({"quotes": ["Пользователь играет в футбол."]}, ensure_ascii=False)

    def reply(chat):
        if chat[-1]["content"] == CITE_ASK:
            return cite if "футбол" in chat[-2]["content"] else json.dumps({"quotes": []})
        made_up = "Какие игры" in chat[-1]["content"]
        return list_router("Вы играете в шахматы." if made_up else "Вы играете в футбол.", listing)[0](chat)
    llm = ScriptedLLM([reply] * 40)
    m = sports_model(llm, lists="list")
    assert m.answer_to_question("d", "Какими видами спорта я занимаюсь?") == "Вы играете в футбол (также: пинг-понг)."
    assert m.memories["d"].ledger.calls["items"] == 2
    # a declined answer gets no list asks: «шахматы» rest on no line
    calls = m.memories["d"].ledger.calls["items"]
    assert m.answer_to_question("d", "Какие игры я люблю?") == NO
    assert m.traces["d"].declined_by == "unquoted" and m.memories["d"].ledger.calls["items"] == calls
