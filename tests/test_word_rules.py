"""The answer's word rules (answer.py) that decide.py's checks read, each on its own, and the
contest class declining a draft through them."""
import pytest

from conftest import make_model
from submit import prompts
from submit.memory import answer

NO_INFO = answer.NO_INFO["ru"]


def test_the_cited_answers_calls_are_the_answers_not_extraction_in_the_time_budget():
    import time

    from submit import guard
    from submit.memory import decide
    from submit.memory.facts import FACTS_SCHEMA
    from submit.memory.llm import ScriptedLLM
    chat = [{"role": "user", "content": "Где я живу?"}]
    ticket, llm = guard.Ticket(time.monotonic), guard.GuardedLLM(ScriptedLLM(), guard.Gate(False, 1.0))
    guard.bind(ticket)
    try:
        llm.generate([chat], max_tokens=decide.CITE_MAX_TOKENS, schema=decide.CITE_SCHEMA, purpose="answer")
        assert (ticket.calls_done, ticket.extract_prompts) == (1, 0)  # a schema, but the answer's call
        llm.generate([chat, chat], max_tokens=9, schema=FACTS_SCHEMA, purpose="extract")
        llm.generate([chat], max_tokens=9, schema={"type": "object"}, purpose="versions_check")
        assert (ticket.calls_done, ticket.extract_prompts) == (3, 3)  # the extraction stage: both
    finally:
        guard.bind(None)
    assert prompts.text("answer", "ru", "ask") == "Ответ одним предложением:"


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


@pytest.mark.parametrize("draft, question, elses", [
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
def test_an_answer_given_from_someone_elses_line_is_someone_elses(draft, question, elses):
    assert answer.someone_elses(draft, question, answer.material(MATERIAL, question)) is elses


def test_a_person_or_pet_is_named_by_its_diminutive_and_kin_word_but_not_by_a_longer_word():
    # the user's own words name the dog «собачка» (к to ч before the suffix), the sister «сестрёнка»
    assert answer.mentions_any({"собачка"}, {"собака"}) and answer.mentions_any({"сестрёнка"}, {"сестра"})
    assert answer.mentions_any({"лошадка"}, {"лошадь"}) and answer.mentions_any({"отец"}, {"папа"})
    assert not answer.mentions_any({"другой"}, {"друг"}) and not answer.mentions_any({"сосна"}, {"сосед"})
    # a Latin name and its Russian spelling are one word
    assert answer.mentions_any({"шкода"}, {"škoda"}) and answer.mentions_any({"lada"}, {"лада"})
    line = [("Выдержки из диалогов", "Пользователь: я купила собачку, мальтийскую болонку")]
    assert not answer.someone_elses("Моя собака — мальтийская болонка.", "Какая порода у моей собаки?", line)


def test_another_form_of_the_questions_word_is_no_value_of_anyone_elses():
    lines = [("Выдержки из диалогов", "Пользователь: дочка меня совсем не слушает")]
    # a yes/no question restated: «слушают» is «слушаются» in another form, though the line that
    # holds «слушать» is about the daughter
    assert not answer.someone_elses("Мальчишки слушают меня.", "Слушаются ли меня мальчишки?", lines)
    assert answer.someone_elses("Мальчишки слушают дочку.", "Слушаются ли меня мальчишки?", lines)


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


@pytest.mark.parametrize("check, said, question, draft", [
    ("elsewhere", "С другом Сергеем ездили на рыбалку.", "Как зовут мою жену?", "Вашу жену зовут Сергей."),
    ("unquoted_number", "Мы с женой завели собаку, гуляем с ней по утрам.", "Сколько лет нашей собаке?",
     "Вашей собаке 3 года."),  # no 3 anywhere
    ("empty", "Я живу в Омске.", "Где я живу?", "Вы живёте там, где живёте."),
    (None, "Жену мою зовут Людмила.", "Как зовут мою жену?", "Вашу жену зовут Людмила."),  # it stands
])
def test_the_contest_class_declines_a_draft_by_the_check_it_fails(check, said, question, draft):
    """Every check on (the gate off: no calibration): the reader cites the user's line
    (conftest.citing_llm), and the first check the draft fails declines it."""
    def reply(chat):
        return draft if "Вопрос пользователя" in chat[-1]["content"] else '{"facts": []}'
    from models import Message
    model, _ = make_model([reply] * 20)
    model.write_to_memory([Message("user", said, 1), Message("assistant", "Здорово!", 1)], "d")
    assert model.answer_to_question("d", question) == (NO_INFO if check else draft)
    stats = model.memory_stats("d")
    assert stats["declined"] == check and stats["quotes"] == [f"Пользователь: {said}"]
    assert stats["draft"] == draft  # the reader's own answer, declined or not


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
    assert not answer.someone_elses("Вашу маму зовут Наира.", "Как зовут мою маму?", answer.material(chat, "Как зовут мою маму?"))


def test_an_assistants_lines_ending_in_a_colon_are_no_topic_in_the_excerpts():
    chat = [{"role": "user", "content": "Выдержки из диалогов:\n### Сессия 24\nАссистент: Вот породы для квартиры:\n"
             "### 10. Кокер-спаниель:\nЭлегантная собака.\n### Сессия 28\nПользователь: купила собаку, мальтийскую "
             "болонку\n\nВопрос пользователя: Какая порода у моей собаки?"}]
    lines = answer.material(chat, "Какая порода у моей собаки?")
    assert {topic for topic, _ in lines} == {"Выдержки из диалогов"}
    assert ("Выдержки из диалогов", "Пользователь: купила собаку, мальтийскую болонку") in lines


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
