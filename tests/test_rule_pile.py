"""The rule pile's pieces that bench/readers.py replays its recordings through (bench/rule_pile.py):
the abstention check's ask and verdict, the second look's lines and its answer's test, and the two
call-free rules the cited stage dropped (`other_measure`, `ungrounded`)."""
import pytest

from bench import rule_pile
from test_word_rules import MATERIAL  # the same prompt lines
from submit.memory import answer
from submit.memory.context import Context

NO_INFO = answer.NO_INFO["ru"]


def test_the_check_shares_the_answer_prompt_up_to_its_last_line():
    """So a prefix cache (vLLM's, llama.cpp's) reads the material once for both calls."""
    context = Context(text="Пользователь: Я живу в Омске.", turn_ids=(0,), budget=100)
    for lang, people in (("ru", ()), ("en", ()), ("ru", ("Анна", "Олег")), ("en", ("Ann", "Bob"))):
        task = "answer_peer" if people else "answer"
        plain = answer.build_prompt("Q?", context, lang, people=people, task=task)
        for mode in ("before", "after"):
            check = answer.build_prompt("Q?", context, lang, people=people, task=task,
                                        ask=rule_pile.abstain_ask(lang, mode, "D", named=bool(people)))
            assert check[0] == plain[0]
            head = plain[1]["content"].rsplit("\n", 1)[0]
            assert check[1]["content"].startswith(head + "\n") and '{"found": false}' in check[1]["content"]
            assert "{{" not in check[1]["content"] and ("«D»" in check[1]["content"] or '"D"' in check[1]["content"]
                                                        or mode == "before")


def test_the_verdict_parser():
    assert rule_pile.material_holds('{"found": false}') is False
    assert rule_pile.material_holds('Ответ: {"found": true}') is True
    assert rule_pile.material_holds("нет") is None


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
    assert rule_pile.focus(question, answer.material(MATERIAL, question)) == lines


def test_the_second_look_shows_at_most_its_limit_of_lines():
    lines = [("жена", f"Жена пользователя любит цвет номер {k}.") for k in range(40)]
    assert rule_pile.focus("Как зовут мою жену?", lines) == lines[:rule_pile.FOCUS_MAX_LINES]


def test_the_focused_prompt_keeps_the_system_message_and_the_question_and_shows_only_its_lines():
    chat = [{"role": "system", "content": "Правила."}, *MATERIAL]
    lines = rule_pile.focus("Как зовут мою жену?", answer.material(chat, "Как зовут мою жену?"))
    focused = rule_pile.focused_prompt(chat, "Как зовут мою жену?", lines)
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
    lines = rule_pile.focus(question, answer.material(MATERIAL, question))
    assert rule_pile.holds_up(text, question, lines) is holds


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
    lines = rule_pile.focus(question, answer.material(RELATIONS, question))
    assert lines and rule_pile.holds_up(text, question, lines) is holds


DRINKS = [{"role": "user", "content": "Факты о пользователе по темам:\nнапиток:\n- [сессия 1] У пользователя закончился кофе.\n"
           "- [сессия 2] Пользователь ненавидит цикорий.\n\nВыдержки из диалогов:\n—"}]


@pytest.mark.parametrize("text, overrules, kept", [
    ("Кофе.", False, "Кофе."),  # after a rule's decline: the line names the drink asked of
    ("Кофе.", True, None),  # over the reader's own decline: the line must say it is hated too
    ("Цикорий.", True, "Цикорий."),
])
def test_a_second_look_over_the_readers_own_decline_needs_a_line_that_says_what_is_asked(text, overrules, kept):
    question = "Какой напиток я ненавижу?"
    lines = rule_pile.focus(question, answer.material(DRINKS, question))
    assert len(lines) == 2 and rule_pile.second_answer(text, question, lines, overrules=overrules) == kept


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
    lines = rule_pile.focus(question, answer.material(SISTER, question))
    assert lines and rule_pile.second_answer(text, question, lines) == kept


SPORT = [{"role": "user", "content": "Факты о пользователе по темам:\nспорт:\n- [сессия 1] Пользователь давно занимается йогой.\n"
          "работа:\n- [сессия 2] На работе у пользователя есть бесплатный спорт.\n\nВыдержки из диалогов:\n"
          "Пользователь: Как спорт укрепляет характер?"}]


def test_a_kind_of_thing_asked_for_is_the_thing_its_noun_names():
    """«Какими видами спорта …»: the line with the value names «спорт», not «вид», and is enough."""
    question = "Какими видами спорта я занимаюсь?"
    lines = rule_pile.focus(question, answer.material(SPORT, question))
    assert rule_pile.holds_up("Вы занимаетесь йогой.", question, lines)
    assert not rule_pile.holds_up("Вы занимаетесь бегом.", question, lines)  # stands nowhere


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
    assert rule_pile.other_measure(draft, question, HEIGHT) is other
    assert rule_pile.unrelated(draft, question, HEIGHT) is other


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
    assert rule_pile.ungrounded(draft, question, answer.material(MATERIAL, question)) is ungrounded
