"""Relative time phrases resolved against the session date (submit/memory/timeref.py, bench/timeref.py)."""
import gzip
import json
from datetime import date, datetime

import pytest

from submit.memory.timeref import Ref, When, annotate, find_relative, parse_session_date, render, resolve

from bench import timeref as bench

MONDAY = date(2023, 5, 8)  # LoCoMo's first session: "1:56 pm on 8 May, 2023"

ENGLISH = [
    ("I went to a support group yesterday.", "I went to a support group yesterday [7 May 2023]."),
    ("It was last week", "It was last week [the week before 8 May 2023]"),
    ("last month", "last month [April 2023]"),
    ("last year", "last year [2022]"),
    ("two days ago", "two days ago [6 May 2023]"),
    ("3 weeks ago", "3 weeks ago [≈ week of 17 April 2023]"),
    ("next month", "next month [June 2023]"),
    ("this weekend", "this weekend [13–14 May 2023]"),
    ("last Friday", "last Friday [5 May 2023]"),
    ("Last Fri I went", "Last Fri [5 May 2023] I went"),
    ("tomorrow", "tomorrow [9 May 2023]"),
    ("tonight", "tonight [8 May 2023]"),
    ("this morning", "this morning [8 May 2023]"),
    ("today", "today [8 May 2023]"),
    ("a few days ago", "a few days ago [≈ 3–6 May 2023]"),
    ("in 2 weeks", "in 2 weeks [≈ week of 22 May 2023]"),
    ("last summer", "last summer [summer 2022]"),
    ("the day before yesterday", "the day before yesterday [6 May 2023]"),
    ("last weekend", "last weekend [6–7 May 2023]"),
    ("this past weekend", "this past weekend [6–7 May 2023]"),
    ("this week", "this week [8–14 May 2023]"),
    ("next week", "next week [15–21 May 2023]"),
    ("the week before last", "the week before last [≈ 24–30 April 2023]"),
    ("last night", "last night [7 May 2023]"),
    ("a couple of weeks ago", "a couple of weeks ago [≈ week of 24 April 2023]"),
    ("a few weeks ago", "a few weeks ago [≈ 10–24 April 2023]"),
    ("two Sundays ago", "two Sundays ago [30 April 2023]"),
    ("two weekends ago", "two weekends ago [29–30 April 2023]"),
    ("a month ago", "a month ago [≈ April 2023]"),
    ("a year ago", "a year ago [≈ May 2022]"),
    ("10 years ago", "10 years ago [≈ 2013]"),
    ("a year and a half ago", "a year and a half ago [≈ November 2021]"),
    ("a day or two ago", "a day or two ago [≈ 6–7 May 2023]"),
    ("in a week or two", "in a week or two [≈ 15–22 May 2023]"),
    ("5 months from now", "5 months from now [≈ October 2023]"),
    ("in the past week", "in the past week [≈ 1–7 May 2023]"),
    ("over the last 3 months", "over the last 3 months [≈ February–May 2023]"),
    ("for 3 years now", "for 3 years now [since ≈ 2020]"),
    ("It's been a month now", "It's been a month now [since ≈ April 2023]"),
    ("this Friday", "this Friday [12 May 2023]"),
    ("this coming Friday", "this coming Friday [12 May 2023]"),
    ("this summer", "this summer [summer 2023]"),
    ("last winter", "last winter [winter 2022–2023]"),
    ("last May", "last May [May 2022]"),
    ("next March", "next March [March 2024]"),
    ("Tomorrow's show", "Tomorrow's [9 May 2023] show"),
]

VAGUE_AND_AMBIGUOUS = [  # a bracket no more precise than the words: where they sit relative to the session
    ("en", "I have been busy recently, lately and the other day too.",
     "I have been busy recently [before 8 May 2023], lately [up to 8 May 2023] and the other day [before 8 May 2023] too."),
    ("en", "A while back, not too long ago.", "A while back [before 8 May 2023], not too long ago [before 8 May 2023]."),
    ("en", "Let's meet next Friday or next weekend.",
     "Let's meet next Friday [12 May 2023 or 19 May 2023] or next weekend [13–14 May 2023 or 20–21 May 2023]."),
    ("en", "over the past few months", "over the past few months [≈ January–May 2023]"),
    ("en", "in the coming weeks", "in the coming weeks [≈ 9 May–5 June 2023]"),
    ("en", "the past few days", "the past few days [≈ 3–7 May 2023]"),
    ("en", "over the past couple of weeks", "over the past couple of weeks [≈ 24 April–7 May 2023]"),
    ("en", "a few weekends ago", "a few weekends ago [≈ 10–24 April 2023]"),
    ("ru", "Недавно я был на днях в кино.", "Недавно [до 8 мая 2023] я был на днях [до 8 мая 2023] в кино."),
    ("ru", "На днях позвоню тебе.", "На днях [≈ 9–13 мая 2023] позвоню тебе."),  # no past tense: ahead
    ("ru", "В последнее время много работаю.", "В последнее время [вплоть до 8 мая 2023] много работаю."),
    ("ru", "Встретимся в следующую пятницу.", "Встретимся в следующую пятницу [12 мая 2023 или 19 мая 2023]."),
    ("ru", "в следующие выходные", "в следующие выходные [13–14 мая 2023 или 20–21 мая 2023]"),
]

RUSSIAN = [
    ("Вчера ходила в группу поддержки.", "Вчера [7 мая 2023] ходила в группу поддержки."),
    ("позавчера", "позавчера [6 мая 2023]"),
    ("на прошлой неделе", "на прошлой неделе [за неделю до 8 мая 2023]"),
    ("в прошлом месяце", "в прошлом месяце [апрель 2023]"),
    ("в прошлом году", "в прошлом году [2022]"),
    ("два дня назад", "два дня назад [6 мая 2023]"),
    ("3 недели назад", "3 недели назад [≈ неделя 17 апреля 2023]"),
    ("в эти выходные", "в эти выходные [13–14 мая 2023]"),
    ("в прошлую пятницу", "в прошлую пятницу [5 мая 2023]"),
    ("в прошлое воскресенье", "в прошлое воскресенье [7 мая 2023]"),
    ("завтра", "завтра [9 мая 2023]"),
    ("вчера вечером", "вчера вечером [7 мая 2023]"),
    ("на следующей неделе", "на следующей неделе [15–21 мая 2023]"),
    ("в следующем месяце", "в следующем месяце [июнь 2023]"),
    ("на этой неделе", "на этой неделе [8–14 мая 2023]"),
    ("в прошлые выходные", "в прошлые выходные [6–7 мая 2023]"),
    ("неделю назад", "неделю назад [≈ неделя 1 мая 2023]"),
    ("год назад", "год назад [≈ май 2022]"),
    ("пару дней назад", "пару дней назад [≈ 6 мая 2023]"),
    ("несколько месяцев назад", "несколько месяцев назад [≈ январь–март 2023]"),
    ("полгода назад", "полгода назад [≈ ноябрь 2022]"),
    ("через две недели", "через две недели [≈ неделя 22 мая 2023]"),
    ("через месяц", "через месяц [≈ июнь 2023]"),
    ("Через неделю у нас свадьба.", "Через неделю [≈ неделя 15 мая 2023] у нас свадьба."),
    ("два года тому назад", "два года тому назад [≈ 2021]"),
    ("прошлым летом", "прошлым летом [лето 2022]"),
    ("летом прошлого года", "летом прошлого года [лето 2022]"),
    ("на позапрошлой неделе", "на позапрошлой неделе [≈ 24–30 апреля 2023]"),
    ("этой зимой", "этой зимой [зима 2022–2023]"),  # said in May: the winter just past
    ("в это воскресенье", "в это воскресенье [14 мая 2023]"),
    ("в этом году", "в этом году [2023]"),
    ("в будущем году", "в будущем году [2024]"),
]

UNCHANGED = [  # false friends, durations, historical spans: no bracket is better than a wrong one
    ("en", "The last week of the trip was rainy."),
    ("en", "That's yesterday's news."),
    ("en", "In today's world everything is online."),
    ("en", "My last summer in Paris was the best."),
    ("en", "I lost 5 pounds in two weeks."),
    ("en", "Rome wasn't built in a day."),
    ("en", "Many years ago people lived in caves."),
    ("en", "In the last year of college I moved."),
    ("en", "Tomorrowland and yesterdays"),
    ("en", 'I had no idea that "Yesterday" was written by Paul McCartney.'),
    ("ru", "Много лет назад здесь был лес."),
    ("ru", "Через год после свадьбы мы переехали."),
    ("ru", "Вчерашний завтрак был вкусным."),
    ("ru", "Исполнилось 45, пошёл менять паспорт, через месяц выдали новый."),  # counted from a past event
    ("ru", "Через неделю мы поженились."),
    ("ru", "Это год перемен, а это летом было."),
    ("en", "We met in 2019 and in two years we married."),
]


@pytest.mark.parametrize("text, expected", ENGLISH)
def test_english_phrases_get_their_dates_in_brackets(text, expected):
    assert annotate(text, MONDAY, "en") == expected


@pytest.mark.parametrize("text, expected", RUSSIAN)
def test_russian_phrases_get_their_dates_in_russian(text, expected):
    assert annotate(text, MONDAY, "ru") == expected


@pytest.mark.parametrize("lang, text, expected", VAGUE_AND_AMBIGUOUS)
def test_vague_and_ambiguous_phrases_get_a_bracket_no_more_precise_than_their_words(lang, text, expected):
    assert annotate(text, MONDAY, lang) == expected


def test_next_weekend_said_on_a_weekend_skips_the_weekend_under_way():
    assert annotate("next weekend", date(2023, 5, 13), "en") == "next weekend [20–21 May 2023 or 27–28 May 2023]"


@pytest.mark.parametrize("lang, text", UNCHANGED)
def test_false_friends_and_vague_phrases_stay_as_they_are(lang, text):
    assert annotate(text, MONDAY, lang) == text


def test_number_words_one_to_ten_in_both_languages():
    english = "one two three four five six seven eight nine ten".split()
    russian = ["один день", "два дня", "три дня", "четыре дня", "пять дней", "шесть дней", "семь дней",
               "восемь дней", "девять дней", "десять дней"]
    for n, (en, ru) in enumerate(zip(english, russian), start=1):
        day = 8 - n if n < 8 else 30 + 8 - n
        month_en, month_ru = ("May", "мая") if n < 8 else ("April", "апреля")
        assert annotate(f"{en} days ago", MONDAY, "en") == f"{en} days ago [{day} {month_en} 2023]"
        assert annotate(f"{ru} назад", MONDAY, "ru") == f"{ru} назад [{day} {month_ru} 2023]"


@pytest.mark.parametrize("session, text, expected", [
    (date(2023, 1, 3), "last month", "December 2022"),
    (date(2024, 3, 1), "yesterday", "29 February 2024"),
    (date(2024, 2, 29), "a year ago", "≈ February 2023"),
    (date(2023, 12, 31), "next year", "2024"),
    (date(2023, 12, 15), "next month", "January 2024"),
    (date(2023, 5, 14), "last week", "the week before 14 May 2023"),
    (date(2023, 1, 1), "last week", "the week before 1 January 2023"),
    (date(2023, 6, 6), "last week", "the week before 6 June 2023"),
    (date(2023, 1, 4), "last week", "the week before 4 January 2023"),
    (date(2023, 5, 14), "this weekend", "13–14 May 2023"),
    (date(2023, 5, 12), "last Friday", "5 May 2023"),  # said on a Friday: a week back
    (date(2023, 5, 13), "last Friday", "12 May 2023"),  # said on a Saturday: yesterday
    (date(2023, 5, 13), "this Friday", "12 May 2023"),  # the Friday of the session's week
    (date(2023, 1, 15), "last winter", "winter 2021–2022"),
    (date(2023, 1, 15), "this winter", "winter 2022–2023"),
    (date(2023, 10, 13), "last summer", "summer 2023"),
    (date(2023, 8, 11), "last summer", "summer 2022"),
    (date(2023, 10, 13), "next summer", "summer 2024"),
    (date(2023, 10, 13), "last May", "May 2023"),
    (date(2023, 10, 13), "this winter", "winter 2023–2024"),
    (date(2023, 5, 8), "this winter", "winter 2022–2023"),
    (date(2023, 10, 13), "this summer", "summer 2023"),
    (date(2023, 9, 13), "this autumn", "autumn 2023"),
])
def test_month_year_and_week_boundaries(session, text, expected):
    assert annotate(text, session, "en") == f"{text} [{expected}]"


def test_seasons_too_close_to_call_are_left_alone():
    assert annotate("next summer", date(2023, 5, 8), "en") == "next summer"  # the coming one, or 2024?
    assert annotate("this spring", date(2023, 10, 13), "en") == "this spring"  # ended 4.5 months ago, starts in 4.5


def test_text_without_a_phrase_and_an_unparseable_date_come_back_as_the_same_object():
    text = "I like painting sunsets, and 8 May 2023 was a Monday."
    assert annotate(text, MONDAY, "en") is text
    with_phrase = "I went there yesterday."
    for bad in ("sometime soon", "", None, "05/08/2023", 42):
        assert annotate(with_phrase, bad, "en") is with_phrase


def test_annotate_takes_date_strings_and_datetimes_and_is_idempotent():
    once = annotate("I went there yesterday and last week.", "1:56 pm on 8 May, 2023", "en")
    assert once == "I went there yesterday [7 May 2023] and last week [the week before 8 May 2023]."
    assert annotate(once, MONDAY, "en") == once
    assert annotate("yesterday", datetime(2023, 5, 8, 13, 56), "en") == "yesterday [7 May 2023]"


def test_an_unknown_language_is_a_programming_error():
    with pytest.raises(ValueError, match="lang must be one of"):
        annotate("yesterday", MONDAY, "de")


@pytest.mark.parametrize("text, expected", [
    ("1:56 pm on 8 May, 2023", date(2023, 5, 8)),  # LoCoMo
    ("2023/05/20 (Sat) 01:45", date(2023, 5, 20)),  # LongMemEval
    ("2023-05-08", date(2023, 5, 8)),
    ("2023-05-08T13:56:00", date(2023, 5, 8)),
    ("8 May 2023", date(2023, 5, 8)),
    ("May 8, 2023", date(2023, 5, 8)),
    ("Sept 3, 2022", date(2022, 9, 3)),
    ("08.05.2023", date(2023, 5, 8)),
    ("8 мая 2023 г.", date(2023, 5, 8)),
    (datetime(2023, 5, 8, 13, 56), date(2023, 5, 8)),
    (date(2023, 5, 8), date(2023, 5, 8)),
    ("31 February 2023", None),
    ("05/08/2023", None),  # month-first or day-first: cannot tell
    ("garbage", None),
    ("", None),
    (None, None),
    (20230508, None),
])
def test_parse_session_date_reads_the_benchmark_formats_and_never_raises(text, expected):
    assert parse_session_date(text) == expected


def test_find_relative_reports_spans_and_their_meanings():
    text = "Recently I moved; two days ago I unpacked, and next Friday I rest."
    mentions = find_relative(text, "en")
    assert [(m.phrase, m.start, m.end) for m in mentions] == [
        ("Recently", 0, 8), ("two days ago", 18, 30), ("next Friday", 47, 58)]
    assert [m.ref for m in mentions] == [Ref("before", 0, 0), Ref("day", -2, -2), Ref("either_weekday", 0, 0, False, 4)]
    assert [m.rule for m in mentions] == ["vague", "ago", "next weekday"]
    assert [m.ref for m in find_relative("7000 years ago", "en")] == [Ref("year", -7000, -7000, True)]


def test_resolve_and_render_are_separate_steps():
    when = resolve(Ref("week", -2, -2, True), MONDAY)
    assert when == When("day", date(2023, 4, 24), date(2023, 4, 30), True)
    assert render(when, "en") == "≈ 24–30 April 2023"
    assert render(when, "ru") == "≈ 24–30 апреля 2023"
    last_week = resolve(Ref("week", -1, -1, True), MONDAY)
    assert (render(last_week, "en"), render(last_week, "ru")) == ("the week before 8 May 2023", "за неделю до 8 мая 2023")
    assert resolve(Ref("year", -7000, -7000, True), MONDAY) is None  # "7000 years ago": no calendar date
    assert render(resolve(Ref("month", -3, -1, True, since=True), MONDAY), "ru") == "с ≈ февраля–апреля 2023"


def test_a_long_text_is_annotated_in_one_linear_pass():
    chunk = "We went hiking yesterday and it rained. " + "Nothing else happened that day at all. " * 20
    text = chunk * 500  # ~400k characters
    out = annotate(text, MONDAY, "en")
    assert out.count("yesterday [7 May 2023]") == 500
    assert len(out) == len(text) + 500 * len(" [7 May 2023]")


# ---------------------------------------------------------------- bench/timeref.py

def test_anchored_golds_are_read_with_the_same_conventions():
    assert bench.anchored_ref("The Friday before 15 July 2023") == (Ref("weekday", -1, -1, False, 4), date(2023, 7, 15))
    assert bench.anchored_ref("The week before 15April, 2022.") == (Ref("week", -1, -1, True), date(2022, 4, 15))
    assert bench.anchored_ref("two weekends before 17 July 2023") == (Ref("weekend", -2, -2), date(2023, 7, 17))
    assert bench.anchored_ref("The week of 23 August 2023") == (Ref("week", 0, 0), date(2023, 8, 23))
    assert bench.anchored_ref("7 May 2023") is None
    assert bench._norm("February 24, 2023") == bench._norm("24 February 2023") == "24 february 2023"


def test_the_bench_counts_phrases_and_gold_answers_on_small_files(tmp_path):
    locomo = [{"conversation": {
        "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "I went to a support group yesterday."},
                      {"speaker": "B", "dia_id": "D1:2", "text": "Cool! I have been busy lately."}],
        "session_1_date_time": "1:56 pm on 8 May, 2023"},
        "qa": [{"question": "When did A go?", "answer": "7 May 2023", "evidence": ["D1:1"], "category": 2},
               {"question": "Who?", "answer": "A", "evidence": ["D1:1"], "category": 1}]}]
    lme = [{"haystack_session_ids": ["s1"], "haystack_dates": ["2023/05/20 (Sat) 01:45"],
            "haystack_sessions": [[{"role": "user", "content": "I bought it two weeks ago, in the coming weeks more"},
                                   {"role": "assistant", "content": "Yesterday was nice."}]]}]
    (tmp_path / "locomo.json").write_text(json.dumps(locomo))
    with gzip.open(tmp_path / "lme.json.gz", "wt") as f:
        json.dump(lme, f)
    out = tmp_path / "timeref.md"
    assert bench.main(["--locomo", str(tmp_path / "locomo.json"), "--longmemeval", str(tmp_path / "lme.json.gz"),
                       "--out", str(out)]) == 0
    data = json.loads(out.with_suffix(".json").read_text())
    assert data["sets"]["LoCoMo dev"]["counts"] == {"turns": 2, "undated turns": 0, "found": 2, "resolved": 2,
                                                    "candidates": 2}
    assert data["sets"]["LongMemEval_S dev"]["counts"]["resolved"] == 2  # the assistant turn is not read
    assert data["sets"]["LongMemEval_S dev"]["unresolved"] == []
    assert data["locomo_category2"]["raw verbatim"] == 0 and data["locomo_category2"]["annotated verbatim"] == 1
    assert "2" in next(line for line in out.read_text().splitlines() if "| LoCoMo dev |" in line)


def test_the_bench_refuses_a_missing_file_with_exit_code_2(tmp_path, capsys):
    assert bench.main(["--locomo", str(tmp_path / "nope.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert str(tmp_path / "nope.json") in err and "\n" not in err  # one line, naming the file
