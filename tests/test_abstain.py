"""The abstention check: one yes/no call on the answer prompt's material, before the answer or of its draft."""
import pytest

from conftest import make_model
from submit import prompts
from submit.config import Config, ConfigError
from submit.memory.dialogue import Settings
from submit.memory import answer
from submit.memory.context import Context

NO_INFO = answer.NO_INFO["ru"]


def router(found: str, draft: str = "Вы живёте в Омске."):
    """A scripted reply for any prompt: extraction gets no facts, the check `found`, the answer `draft`."""
    def reply(chat):
        text = chat[-1]["content"]
        if '{"found": true}' in text:
            return found
        if "Вопрос пользователя" in text:
            return draft
        return '{"facts": []}'
    return reply


def ask(mode: str, found: str, draft: str = "Вы живёте в Омске."):
    model, llm = make_model([router(found, draft)] * 20, memory=Settings(abstain=mode))
    from models import Message
    model.write_to_memory([Message("user", "Я живу в Омске.", 1), Message("assistant", "Понятно.", 1)], "d")
    text = model.answer_to_question("d", "Где я живу?")
    purposes = model.memory_stats("d")["llm"]["by_purpose"]
    return text, purposes, model.trace("d"), llm


def test_before_a_no_declines_without_asking_for_an_answer():
    text, purposes, trace, _ = ask("before", '{"found": false}')
    assert (text, trace.declined) == (NO_INFO, True)
    assert purposes["abstain"]["calls"] == 1 and "answer" not in purposes


def test_before_a_yes_lets_the_answer_come():
    text, purposes, trace, _ = ask("before", '{"found": true}')
    assert (text, trace.declined) == ("Вы живёте в Омске.", False)
    assert purposes["abstain"]["calls"] == purposes["answer"]["calls"] == 1


def test_after_a_no_turns_the_draft_into_no_information():
    text, purposes, trace, llm = ask("after", '{"found": false}')
    assert (text, trace.declined) == (NO_INFO, True)
    check = llm.history[-1][0][-1]["content"]
    assert "«Вы живёте в Омске.»" in check  # the draft is what is checked


def test_after_a_draft_that_already_declines_is_not_checked():
    text, purposes, _, _ = ask("after", '{"found": true}', draft=NO_INFO)
    assert text == NO_INFO and "abstain" not in purposes


@pytest.mark.parametrize("reply", ["да", "", '{"found": "no"}', "{"])
def test_an_unreadable_check_lets_the_answer_stand(reply):
    text, _, trace, _ = ask("before", reply)
    assert (text, trace.declined) == ("Вы живёте в Омске.", False)


def test_off_makes_no_check():
    text, purposes, _, _ = ask("off", '{"found": false}')
    assert text == "Вы живёте в Омске." and "abstain" not in purposes


def test_the_check_shares_the_answer_prompt_up_to_its_last_line():
    """So a prefix cache (vLLM's, llama.cpp's) reads the material once for both calls."""
    context = Context(text="Пользователь: Я живу в Омске.", turn_ids=(0,), budget=100)
    for lang, people in (("ru", ()), ("en", ()), ("ru", ("Анна", "Олег")), ("en", ("Ann", "Bob"))):
        task = "answer_peer" if people else "answer"
        plain = answer.build_prompt("Q?", context, lang, people=people, task=task)
        for mode in ("before", "after"):
            check = answer.build_prompt("Q?", context, lang, people=people, task=task,
                                        ask=answer.abstain_ask(lang, mode, "D", named=bool(people)))
            assert check[0] == plain[0]
            head = plain[1]["content"].rsplit("\n", 1)[0]
            assert check[1]["content"].startswith(head + "\n") and '{"found": false}' in check[1]["content"]
            assert "{{" not in check[1]["content"] and ("«D»" in check[1]["content"] or '"D"' in check[1]["content"]
                                                        or mode == "before")


def test_the_verdict_parser():
    assert answer.material_holds('{"found": false}') is False
    assert answer.material_holds('Ответ: {"found": true}') is True
    assert answer.material_holds("нет") is None


def test_the_mode_is_checked_at_construction():
    with pytest.raises(ConfigError, match="abstain must be one of off, before, after"):
        Settings(abstain="sometimes")
    assert Config.from_env({"GIGAMEMORY_ABSTAIN": "after"}).memory.abstain == "after"
    assert prompts.text("answer", "ru", "ask") == "Ответ одним предложением:"


def test_the_check_is_the_answers_call_not_extraction_in_the_time_budget():
    import time

    from submit import guard
    from submit.memory.facts import FACTS_SCHEMA
    from submit.memory.llm import ScriptedLLM
    chat = [{"role": "user", "content": "Где я живу?"}]
    ticket, llm = guard.Ticket(time.monotonic), guard.GuardedLLM(ScriptedLLM(), guard.Gate(False, 1.0))
    guard.bind(ticket)
    try:
        llm.generate([chat], max_tokens=12, schema=answer.ABSTAIN_SCHEMA, purpose="abstain")
        assert (ticket.calls_done, ticket.extract_prompts) == (1, 0)  # a schema, but the answer's call
        llm.generate([chat, chat], max_tokens=9, schema=FACTS_SCHEMA, purpose="extract")
        llm.generate([chat], max_tokens=9, schema={"type": "object"}, purpose="versions_check")
        assert (ticket.calls_done, ticket.extract_prompts) == (3, 3)  # the extraction stage: both
    finally:
        guard.bind(None)


@pytest.mark.parametrize("draft, question, empty", [
    ("Мопс моей бабушки — мопс.", "Как зовут мопса моей бабушки?", True),
    ("Я избирался в депутаты из партии [сессия 14].", "От какой партии я избирался в депутаты?", True),
    ("Вы живёте в Омске.", "Где я живу?", False),
    ("В трёх странах.", "В каких странах я побывала?", False),  # a numeral the stop list holds names a count
    ("Ваша фамилия — Росляков.", "Какая у меня фамилия?", False),
    ("Мать.", "Как зовут мою маму?", True),  # kin by another word is the same one (answer._KIN)
    ("Вашу маму зовут Нина.", "Как зовут мою мать?", False),
    ("Your dog is your dog.", "What is my dog's name?", True),
    ('"That".', "What is one of Tim's favorite fantasy TV shows?", False),  # a quoted title names it
    ("Вы играете в футбол.", "Играю ли я в футбол?", False),  # a yes/no question, answered yes
    # «ли» asks yes or no though a question word stands in it: restating it is a yes
    ("Помогли мне советы, как быстро заснуть.", "Помогли ли мне советы, как быстро заснуть?", False),
    # picking one of the things the question offers is an answer; verbs joined by «или» offer nothing
    ("Ваше хобби — живопись.", "Какое у меня хобби — фотография или живопись?", False),
    ("Родственники приезжали в гости.", "Кто из родственников приезжал или собирался приехать ко мне в гости?", True),
    # asked what someone is called, an answer with no name says nothing of it
    ("Шедевр! Ладно, пора тёщу встречать", "Как зовут мою тёщу?", True),
    ("У пользователя есть младшая сестра, которая учится в школе.", "Как зовут мою старшую сестру?", True),
    ("Собаку зовут Шарик.", "Как зовут мою собаку?", False),
])
def test_an_answer_that_names_nothing_the_question_does_not_is_empty(draft, question, empty):
    assert answer.adds_nothing(draft, question) is empty


@pytest.mark.parametrize("question, asks", [
    ("Как зовут мою тёщу?", True),
    ("Как мы назвали дочку?", True),
    ("Какая у меня фамилия?", True),
    ("Какое имя я выбрала для кота?", True),
    ("Кто зовёт меня на рыбалку?", False),  # asks who, not what someone is called
    ("Как называется мой любимый фильм?", False),  # a title, not a name
    ("What is my dog's name?", False),  # Russian only
])
def test_a_question_that_asks_what_someone_is_called(question, asks):
    assert answer.asks_name(question) is asks


@pytest.mark.parametrize("text, gives", [
    ("Людмила", True),
    ("Шарик.", True),  # a name alone, though the dictionary knows it as a ball
    ("Собаку зовут Шарик.", True),  # capitalised inside a sentence
    ("Её зовут лиза, она милая.", True),  # the dictionary knows the name
    ("Ваша фамилия — Фомина.", True),
    ("Кота зовут «уголёк», и он чёрный.", True),  # quoted
    ("Кличка собаки: Шарик", True),  # after a colon or a dash a sentence goes on
    ("Шедевр! Ладно, пора тёщу встречать", False),  # capitals only where sentences start
    ("У пользователя есть младшая сестра, которая учится в школе.", False),  # «У» is no initial here
    ("Мою бабушку зовут бабушка.", False),
])
def test_an_answer_that_holds_a_name(text, gives):
    assert answer.gives_name(text) is gives


def test_an_empty_draft_is_declined_unless_turned_off():
    model, _ = make_model([router('{"found": true}', "Вы живёте там, где живёте.")] * 20, memory=Settings())
    from models import Message
    model.write_to_memory([Message("user", "Я живу в Омске.", 1), Message("assistant", "Понятно.", 1)], "d")
    assert model.answer_to_question("d", "Где я живу?") == NO_INFO and model.trace("d").declined
    kept, _ = make_model([router('{"found": true}', "Вы живёте там, где живёте.")] * 20,
                         memory=Settings(decline_empty=False))
    kept.write_to_memory([Message("user", "Я живу в Омске.", 1), Message("assistant", "Понятно.", 1)], "d")
    assert kept.answer_to_question("d", "Где я живу?") == "Вы живёте там, где живёте."


@pytest.mark.parametrize("question, about", [
    ("Сколько лет моей жене?", {"жена"}),  # «сколько» asks the years, not the wife
    ("Как зовут мопса моей бабушки?", {"мопс", "бабушка"}),
    ("Как зовут парня с работы, который мне нравится?", {"парень"}),
    ("Где работает мой брат?", {"брат"}),
    ("Кто живёт с моей бабушкой?", {"бабушка"}),
    ("Каким спортом я занимаюсь?", set()),  # about the user: nobody else
    ("Кто мой любимый писатель?", set()),  # «кто» asks for the writer
    ("Кто из родственников приезжал ко мне в гости?", set()),
    ("Сколько у меня детей?", set()),
    ("What is my wife's name?", set()),  # Russian only
])
def test_whom_a_question_asks_about(question, about):
    assert answer.asked_about(question) == about


MATERIAL = [{"role": "user", "content": "Факты о пользователе по темам (в квадратных скобках — сессия, где это сказано):\n"
             "друзья:\n- [сессия 2] Друга пользователя зовут Сергей.\n- [сессия 3] Пользователю 33 года.\n"
             "жена:\n- [сессия 1] Жену пользователя зовут Людмила.\n\nВыдержки из диалогов:\n"
             "Пользователь: с другом Сергеем ездили на рыбалку\n"
             "Пользователь: моей маме в мае исполнилось 60\n"
             "Пользователь: сестрёнке в июне будет 12\n\n"
             "Вопрос пользователя: Как зовут мою жену?\nОтвет одним предложением:"}]


def test_the_material_is_the_prompts_lines_under_their_topics_up_to_the_question():
    assert answer.material(MATERIAL, "Как зовут мою жену?") == [
        ("друзья", "Друга пользователя зовут Сергей."), ("друзья", "Пользователю 33 года."),
        ("жена", "Жену пользователя зовут Людмила."),
        ("Выдержки из диалогов", "Пользователь: с другом Сергеем ездили на рыбалку"),
        ("Выдержки из диалогов", "Пользователь: моей маме в мае исполнилось 60"),
        ("Выдержки из диалогов", "Пользователь: сестрёнке в июне будет 12")]


@pytest.mark.parametrize("draft, question, unrelated", [
    ("Вашу жену зовут Сергей.", "Как зовут мою жену?", True),  # the friend's name
    ("Вашу жену зовут Людмила.", "Как зовут мою жену?", False),  # stands under «жена»
    ("Вашему брату 33 года.", "Сколько лет моему брату?", True),  # the user's own age
    ("Вашей сестре 12 лет.", "Сколько лет моей сестре?", False),  # «сестрёнка» is the sister
    ("Вашей маме 60 лет.", "Сколько лет моей маме?", False),  # in an excerpt that names her
    ("Вашей матери 60 лет.", "Сколько лет моей матери?", False),  # «мать» is «мама» (answer._KIN)
    ("Вашу жену зовут Ольга.", "Как зовут мою жену?", False),  # stands nowhere: not judged here
    ("Вы ездили на рыбалку с Сергеем.", "С кем я ездил на рыбалку?", False),  # about the user
    # «пользователя» echoes the facts' word for the user: it names nobody, so every line holding it
    # does not make the friend's name the wife's
    ("Жену пользователя зовут Сергей.", "Как зовут мою жену?", True),
])
def test_an_answer_given_from_someone_elses_line_is_unrelated(draft, question, unrelated):
    assert answer.unrelated(draft, question, answer.material(MATERIAL, question)) is unrelated


def test_another_form_of_the_questions_word_is_no_value_of_anyone_elses():
    lines = [("Выдержки из диалогов", "Пользователь: дочка меня совсем не слушает")]
    # a yes/no question restated: «слушают» is «слушаются» in another form, though the line that
    # holds «слушать» is about the daughter
    assert not answer.unrelated("Мальчишки слушают меня.", "Слушаются ли меня мальчишки?", lines)
    assert answer.unrelated("Мальчишки слушают дочку.", "Слушаются ли меня мальчишки?", lines)


@pytest.mark.parametrize("question, measures", [
    ("Какая у меня зарплата?", {"money"}),  # the asked phrase's noun
    ("Какой у меня рост?", {"length"}),
    ("Сколько мне лет?", {"time"}),  # the noun «сколько» counts
    ("Сколько километров я пробегаю?", {"length"}),  # a unit asks its own measure
    ("Сколько я вешу?", {"mass"}),  # no counted noun: the verb
    ("Сколько стоит мой телефон?", {"money"}),
    ("Сколько я зарабатываю в месяц?", {"money"}),  # «в месяц» is no counted noun
    ("Сколько раз в неделю я бегаю?", set()),  # times are no measure
    ("Что я купил на зарплату?", set()),  # salary named, not asked
    ("Что я делал на прошлой неделе?", set()),
    ("How old am I?", set()),  # Russian only
])
def test_the_measure_a_question_asks(question, measures):
    assert answer.asked_measures(question) == measures


HEIGHT = [("рост", "Рост пользователя — 155 см."), ("Выдержки из диалогов", "Пользователь: на заводе платят 80 тысяч рублей")]


@pytest.mark.parametrize("draft, question, other", [
    ("155 сантиметров", "Какая у меня зарплата?", True),  # a height for a salary
    ("155", "Сколько я вешу?", True),  # the number stands only as a height
    ("Ваш рост — 155 сантиметров.", "Какой у меня рост?", False),
    ("155", "Какой у меня рост?", False),
    ("80 тысяч рублей", "Какая у меня зарплата?", False),  # past the multiplier, roubles
    ("80", "Сколько я зарабатываю в месяц?", False),  # stands beside roubles
    ("100 тысяч в месяц", "Сколько я зарабатываю?", False),  # «в месяц» is a rate, not the unit
    ("60 кг", "Сколько я вешу?", False),  # stands nowhere: not judged here
    ("42", "Сколько мне лет?", False),  # a bare number the material has nowhere beside a unit
    ("2 кг яблок", "Что я купил на прошлой неделе?", False),  # the question asks no measure
    ("155 cm", "How tall am I?", False),  # Russian only
])
def test_an_answer_of_another_measure_than_asked_is_unrelated(draft, question, other):
    assert answer.other_measure(draft, question, HEIGHT) is other
    assert answer.unrelated(draft, question, HEIGHT) is other


@pytest.mark.parametrize("draft, question, ungrounded", [
    ("Вашу жену зовут Ольга.", "Как зовут мою жену?", True),  # stands nowhere
    ("Вашу жену зовут Людмилой.", "Как зовут мою жену?", False),  # another form of a word that stands
    ("Вашу жену зовут Сергей.", "Как зовут мою жену?", False),  # stands, about someone else: `unrelated`'s
    ("Вашему брату 45 лет.", "Сколько лет моему брату?", False),  # a number may be worked out
    ("У вас двое друзей.", "Сколько у меня друзей?", False),
    ("Вашу жену зовут Людмила Ивановна.", "Как зовут мою жену?", False),  # one word that stands is enough
    ("Your wife is Olga.", "What is my wife's name?", False),  # Russian only
])
def test_an_answer_whose_value_stands_nowhere_in_the_material_is_ungrounded(draft, question, ungrounded):
    assert answer.ungrounded(draft, question, answer.material(MATERIAL, question)) is ungrounded


@pytest.mark.parametrize("rule, said, question, draft", [
    ("unrelated", "С другом Сергеем ездили на рыбалку.", "Как зовут мою жену?", "Вашу жену зовут Сергей."),
    ("unrelated", "Рост у меня 155 см, вешу немного.", "Какая у меня зарплата?", "155 см"),  # a height
    ("ungrounded", "Мы с женой завели собаку, гуляем с ней по утрам.", "Как зовут нашу собаку?",
     "Вашу собаку зовут Сережа."),  # no Сережа anywhere
])
def test_a_call_free_rule_declines_its_draft_unless_turned_off(rule, said, question, draft):
    def reply(chat):
        return draft if "Вопрос пользователя" in chat[-1]["content"] else '{"facts": []}'
    from models import Message
    turns = [Message("user", said, 1), Message("assistant", "Здорово!", 1)]
    for settings, expected in ((Settings(), NO_INFO), (Settings(**{f"decline_{rule}": False}), draft)):
        model, _ = make_model([reply] * 20, memory=settings)
        model.write_to_memory(turns, "d")
        assert model.answer_to_question("d", question) == expected
        assert model.memory_stats("d")["declined"] == (rule if expected == NO_INFO else None)


def test_the_readers_own_decline_is_not_judged_as_an_answer_with_or_without_its_period():
    assert answer.says_no_info("У меня нет такой информации") and answer.says_no_info(" I don't have that information. ")
    assert not answer.says_no_info("У меня нет собаки.")


def test_a_turns_later_lines_belong_to_its_line_in_the_material():
    chat = [{"role": "user", "content": "Выдержки из диалогов:\n### Сессия 3\nПользователь: у меня есть мама.\n"
             "Её зовут Наира.\nШаг 1: позвонить\nАссистент: Понял.\n\nВопрос пользователя: Как зовут мою маму?"}]
    assert answer.material(chat, "Как зовут мою маму?") == [
        ("Выдержки из диалогов", "### Сессия 3"),
        ("Выдержки из диалогов", "Пользователь: у меня есть мама. Её зовут Наира. Шаг 1: позвонить"),
        ("Выдержки из диалогов", "Ассистент: Понял.")]
    assert not answer.unrelated("Вашу маму зовут Наира.", "Как зовут мою маму?", answer.material(chat, "Как зовут мою маму?"))


@pytest.mark.parametrize("question, lines", [
    # every noun outside the asked phrase: the wife's lines, the excerpt that names her too
    ("Как зовут мою жену?", [("жена", "Жену пользователя зовут Людмила.")]),
    ("Сколько лет моей маме?", [("Выдержки из диалогов", "Пользователь: моей маме в мае исполнилось 60")]),
    # «сестрёнка» is the sister (`mentions_any`' five letters)
    ("Сколько лет моей сестре?", [("Выдержки из диалогов", "Пользователь: сестрёнке в июне будет 12")]),
    # both nouns or none: no line is about the friend's dog
    ("Как зовут собаку моего друга?", []),
    # only the asked phrase's noun: a line that names it
    ("Какой у меня друг?", [("друзья", "Друга пользователя зовут Сергей."), ("друзья", "Пользователю 33 года."),
                            ("Выдержки из диалогов", "Пользователь: с другом Сергеем ездили на рыбалку")]),
    ("What is my wife's name?", []),  # Russian only
])
def test_the_second_look_reads_the_lines_about_what_the_question_names(question, lines):
    assert answer.focus(question, answer.material(MATERIAL, question)) == lines


def test_the_second_look_shows_at_most_its_limit_of_lines():
    lines = [("жена", f"Жена пользователя любит цвет номер {k}.") for k in range(40)]
    assert answer.focus("Как зовут мою жену?", lines) == lines[:answer.FOCUS_MAX_LINES]


def test_the_focused_prompt_keeps_the_system_message_and_the_question_and_shows_only_its_lines():
    chat = [{"role": "system", "content": "Правила."}, *MATERIAL]
    lines = answer.focus("Как зовут мою жену?", answer.material(chat, "Как зовут мою жену?"))
    focused = answer.focused_prompt(chat, "Как зовут мою жену?", lines)
    assert focused[0] == chat[0]
    assert focused[1]["content"] == ("жена:\n- Жену пользователя зовут Людмила.\n\n"
                                     "Вопрос пользователя: Как зовут мою жену?\nОтвет одним предложением:")


@pytest.mark.parametrize("text, question, holds", [
    ("Вашу жену зовут Людмила.", "Как зовут мою жену?", True),
    ("Людмилой.", "Как зовут мою жену?", True),  # another form of a word that stands
    ("Вашу жену зовут Ольга.", "Как зовут мою жену?", False),  # stands nowhere in the lines
    ("Вашу жену зовут Сергей.", "Как зовут мою жену?", False),  # not in the wife's lines
    ("Вашу жену зовут жена.", "Как зовут мою жену?", False),  # names nothing
    (NO_INFO, "Как зовут мою жену?", False),
    ("Вашей маме 60 лет.", "Сколько лет моей маме?", True),
    # a number must stand in the lines too: the second look keeps only what it can point at
    ("Вашей маме 61 год.", "Сколько лет моей маме?", False),
])
def test_a_second_looks_answer_holds_up_only_on_its_lines(text, question, holds):
    lines = answer.focus(question, answer.material(MATERIAL, question))
    assert answer.holds_up(text, question, lines) is holds


RELATIONS = [{"role": "user", "content": "Факты о пользователе по темам:\nжена:\n- [сессия 1] Жене пользователя нравится Чехов.\n"
              "сестра:\n- [сессия 2] Старшую сестру пользователя зовут Эля.\n"
              "мама:\n- [сессия 3] Маме пользователя понравилась монограмма. (раньше: «подарок», сессия 18)\n\n"
              "Выдержки из диалогов:\nПользователь: пора тёщу встречать\nАссистент: Встречайте тёщу с цветами!"}]


@pytest.mark.parametrize("text, question, holds", [
    ("Любимый фильм вашей жены — Чехов.", "Какой любимый фильм у моей жены?", False),  # no line names a film
    ("Вашей жене нравится Чехов.", "Что нравится моей жене?", True),
    ("Вашу старшую сестру зовут Эля.", "Как зовут мою старшую сестру?", True),
    ("Вашу младшую сестру зовут Эля.", "Как зовут мою младшую сестру?", False),  # the older one's name
    ("Вашей маме 18 лет.", "Сколько лет моей маме?", False),  # «сессия 18» is no age
    ("Пользователь: пора тёщу встречать", "Как зовут мою тёщу?", False),  # a line copied, no answer
    ("Вашу тёщу зовут Ассистент.", "Как зовут мою тёщу?", False),  # a speaker's label names no one
    ("Имя вашей жены не указано, ей нравится Чехов.", "Как зовут мою жену?", False),  # a decline in other words
])
def test_a_second_looks_answer_must_name_what_and_whom_the_question_asks_of(text, question, holds):
    lines = answer.focus(question, answer.material(RELATIONS, question))
    assert lines and answer.holds_up(text, question, lines) is holds


DRINKS = [{"role": "user", "content": "Факты о пользователе по темам:\nнапиток:\n- [сессия 1] У пользователя закончился кофе.\n"
           "- [сессия 2] Пользователь ненавидит цикорий.\n\nВыдержки из диалогов:\n—"}]


@pytest.mark.parametrize("text, overrules, kept", [
    ("Кофе.", False, "Кофе."),  # after a rule's decline: the line names the drink asked of
    ("Кофе.", True, None),  # over the reader's own decline: the line must say it is hated too
    ("Цикорий.", True, "Цикорий."),
])
def test_a_second_look_over_the_readers_own_decline_needs_a_line_that_says_what_is_asked(text, overrules, kept):
    question = "Какой напиток я ненавижу?"
    lines = answer.focus(question, answer.material(DRINKS, question))
    assert len(lines) == 2 and answer.second_answer(text, question, lines, overrules=overrules) == kept


SISTER = [{"role": "user", "content": "Факты о пользователе по темам:\nсестра:\n- [сессия 1] У пользователя есть младшая сестра.\n\n"
           "Выдержки из диалогов:\nПользователь: Младшей сестрёнке нужен в школе пересказ Гранатового браслета\n"
           "Ассистент: Младшей сестрёнке можно помочь с пересказом."}]


@pytest.mark.parametrize("text, kept", [
    # the user's line copied with its label: the user's own words
    ("Пользователь: Младшей сестрёнке нужен в школе пересказ Гранатового браслета",
     "Младшей сестрёнке нужен в школе пересказ Гранатового браслета"),
    ("Ассистент: Младшей сестрёнке можно помочь с пересказом.", None),  # another speaker's line
    ("Пользователь: С чем нужно было помочь моей младшей сестре в школе?", None),  # the question echoed
    (None, None),
])
def test_a_second_look_keeps_the_users_copied_line_as_the_users_words(text, kept):
    question = "С чем нужно было помочь моей младшей сестре в школе?"
    lines = answer.focus(question, answer.material(SISTER, question))
    assert lines and answer.second_answer(text, question, lines) == kept


@pytest.mark.parametrize("question, offered", [
    ("Какое у меня сейчас творческое хобби — фотография или живопись?", {"фотография", "живопись"}),
    ("Кошка или собака живёт у меня дома?", {"кошка", "собака"}),
    ("Кто из родственников приезжал или собирался приехать ко мне в гости?", set()),  # verbs
    ("Do I prefer tea or coffee?", set()),  # Russian only
])
def test_the_things_a_question_offers_to_choose_from(question, offered):
    assert answer.offered(question) == offered


SPORT = [{"role": "user", "content": "Факты о пользователе по темам:\nспорт:\n- [сессия 1] Пользователь давно занимается йогой.\n"
          "работа:\n- [сессия 2] На работе у пользователя есть бесплатный спорт.\n\nВыдержки из диалогов:\n"
          "Пользователь: Как спорт укрепляет характер?"}]


def test_a_kind_of_thing_asked_for_is_the_thing_its_noun_names():
    """«Какими видами спорта …»: the line with the value names «спорт», not «вид», and is enough."""
    question = "Какими видами спорта я занимаюсь?"
    lines = answer.focus(question, answer.material(SPORT, question))
    assert answer.holds_up("Вы занимаетесь йогой.", question, lines)
    assert not answer.holds_up("Вы занимаетесь бегом.", question, lines)  # stands nowhere


def second_look(first: str, again: str, said=("С другом Сергеем ездили на рыбалку.", "Жену мою зовут Людмила.")):
    """The contest class answering «Как зовут мою жену?» with the second look on: the answer prompt
    gets `first`, the focused prompt (no «Выдержки» heading of the full prompt's layout) `again`."""
    def reply(chat):
        text = chat[-1]["content"]
        if "Вопрос пользователя" not in text:
            return '{"facts": []}'
        return first if "Выдержки из диалогов:\n###" in text else again
    from models import Message
    model, llm = make_model([reply] * 20, memory=Settings(second_look=True))
    for k, line in enumerate(said, 1):
        model.write_to_memory([Message("user", line, k), Message("assistant", "Здорово!", k)], "d")
    return model.answer_to_question("d", "Как зовут мою жену?"), model, llm


def test_a_declined_answer_that_holds_up_on_a_second_look_is_given():
    text, model, llm = second_look("Вашу жену зовут Сергей.", "Вашу жену зовут Людмила.")
    stats = model.memory_stats("d")
    assert text == "Вашу жену зовут Людмила." and stats["declined"] is None and stats["second_look"] == "unrelated"
    assert stats["llm"]["by_purpose"]["second_look"]["calls"] == 1
    focused = llm.history[-1][0][-1]["content"]
    assert "Людмила" in focused and "рыбалку" not in focused  # the lines about the wife only


def test_a_second_look_that_does_not_hold_up_leaves_the_question_declined():
    text, model, _ = second_look("Вашу жену зовут Сергей.", "Вашу жену зовут Сергей.")
    assert text == NO_INFO and model.memory_stats("d")["declined"] == "unrelated"


def test_the_readers_own_decline_gets_a_second_look_too():
    text, model, llm = second_look(NO_INFO, "Вашу жену зовут Людмила.")
    stats = model.memory_stats("d")
    assert text == "Вашу жену зовут Людмила." and stats["declined"] is None and stats["second_look"] == "own"
    assert stats["llm"]["by_purpose"]["second_look"]["calls"] == 1


def test_the_readers_own_decline_stands_where_its_second_look_does_not_hold_up():
    text, model, _ = second_look(NO_INFO, "Вашу жену зовут Сергей.")
    stats = model.memory_stats("d")
    assert text == NO_INFO and stats["declined"] is None and stats["second_look"] == "own"


def test_no_line_about_the_question_no_second_look():
    text, model, _ = second_look("Вашу жену зовут Сергей.", "Вашу жену зовут Людмила.",
                                 said=("С другом Сергеем ездили на рыбалку.",))
    assert text == NO_INFO and "second_look" not in model.memory_stats("d")["llm"]["by_purpose"]
