"""Russian relative time phrases: the rule table `RU_RULES` and the helpers its meanings use."""
from __future__ import annotations

import re
from typing import Optional

from .dates import Ref
from .rules import CLAUSE_END, FEW, amount_of, make_rule, season_of, shift

RU_NUMBERS = {"один": 1, "одну": 1, "одна": 1, "одного": 1, "два": 2, "две": 2, "двух": 2, "три": 3, "трёх": 3,
              "трех": 3, "четыре": 4, "четырёх": 4, "четырех": 4, "пять": 5, "шесть": 6, "семь": 7,
              "восемь": 8, "девять": 9, "десять": 10}
RU_NUM = r"(?P<n>\d{1,4}|" + "|".join(sorted(RU_NUMBERS, key=len, reverse=True)) + r"|пару|пара|несколько)"
RU_UNIT = r"(?P<unit>дн(?:я|ей)|день|недел[юиь]|месяц(?:а|ев)?|год(?:а)?|лет)"
# Only the accusative singular stands alone for "one": "неделю назад", never "лет назад".
RU_COUNT = rf"(?:{RU_NUM}\s+{RU_UNIT}|(?P<one>день|неделю|месяц|год)|(?P<half>полгода|полтора\s+года))"
RU_PART = r"(?:\s+(?:утром|днём|днем|вечером|ночью))?"
# "через месяц выдали паспорт": a past tense around "через" counts from a past event, not the session.
RU_PAST = r"\b\w+(?:[аяеиыоуёю]|ш)л(?:а|о|и|ся|ась|ось|ись)?\b"
RU_WEEKDAY = r"(?P<wd>понедельник|вторник|среду|четверг|пятницу|субботу|воскресенье)"
RU_WHICH = {"позапрошл": -2, "прошл": -1, "эт": 0, "следующ": 1, "будущ": 1}
RU_UNITS = {"д": "day", "н": "week", "м": "month", "г": "year", "л": "year"}


def _ru_count(sign: int):
    def meaning(m: re.Match) -> Optional[Ref]:
        if m.group("half"):  # "полгода" = 6 months, "полтора года" = 18
            months = 6 if m.group("half").lower() == "полгода" else 18
            return Ref("month", sign * months, sign * months, True)
        word = m.group("one") or m.group("unit")
        amount = 1 if m.group("one") else amount_of(m.group("n"), RU_NUMBERS)
        return shift(RU_UNITS[word[0].lower()], amount, sign)
    return meaning


def _ru_which(m: re.Match) -> Optional[Ref]:
    """"на прошлой неделе", "в этом месяце", "в следующем году", "в эти выходные"."""
    offset = next(v for k, v in RU_WHICH.items() if m.group("which").lower().startswith(k))
    unit = m.group("unit").lower()
    if unit.startswith("вых"):  # "следующие выходные": the coming ones, or the ones after?
        return Ref("weekend", offset, offset) if offset < 1 else Ref("either_weekend", 0, 0)
    if unit.startswith("нед"):
        return Ref("week", offset, offset, offset < 0)
    return Ref("month" if unit.startswith("м") else "year", offset, offset)


def _ru_weekday(m: re.Match) -> Optional[Ref]:
    offset = next(v for k, v in RU_WHICH.items() if m.group("which").lower().startswith(k))
    weekdays = ("понедельник", "вторник", "среду", "четверг", "пятницу", "субботу", "воскресенье")
    weekday = weekdays.index(m.group("wd").lower())
    return Ref("either_weekday", 0, 0, False, weekday) if offset > 0 else Ref("weekday", offset, offset, False, weekday)


def _ru_these_days(m: re.Match) -> Ref:
    """"на днях" looks back in a past-tense sentence ("на днях купил") and ahead otherwise
    ("на днях позвоню"): before the session, or its next few days."""
    text = m.string
    start = max(text.rfind(mark, 0, m.start()) for mark in ".!?;:\n") + 1
    end = CLAUSE_END.search(text, m.end())
    sentence = text[start:end.start() if end else len(text)]
    return Ref("before", 0, 0) if re.search(RU_PAST, sentence, re.I) else Ref("day", 1, FEW["day"][1], True)


RU_RULES = (
    make_rule("позавчера", r"\bпозавчера\b", Ref("day", -2, -2), needs="позавчера"),
    make_rule("послезавтра", r"\bпослезавтра\b", Ref("day", 2, 2), needs="послезавтра"),
    make_rule("вчера", rf"\bвчера{RU_PART}\b", Ref("day", -1, -1), needs="вчера"),
    make_rule("прошлой ночью", r"\bпрошлой\s+ночью\b", Ref("day", -1, -1), needs="ночью"),
    make_rule("сегодня", rf"\bсегодня{RU_PART}\b", Ref("day", 0, 0), needs="сегодня"),
    make_rule("завтра", rf"\bзавтра{RU_PART}\b", Ref("day", 1, 1), needs="завтра"),
    make_rule("назад", rf"\b{RU_COUNT}(?:\s+тому)?\s+назад\b", _ru_count(-1), needs="назад"),
    make_rule("через", rf"\bчерез\s+{RU_COUNT}\b", _ru_count(1), not_in_clause=RU_PAST, needs="через",
          not_before=rf"\s+(?:после|с\s+тех\b|(?:[^\W\d]+\s+){{0,3}}?{RU_PAST})"),
    make_rule("прошлый/этот/следующий", r"\b(?:(?:в|на)\s+)?(?P<which>(?:позапрошл|прошл|следующ|будущ)\w*|"
          r"эт(?:от|ом|ого|ой|у|а|и|их))\s+"  # not "это": "Это год перемен" names no date
          r"(?P<unit>году|года|год|месяце|месяца|месяц|неделе|недели|неделю|неделя|выходные|выходных)\b", _ru_which),
    make_rule("день недели", rf"\bв\s+(?P<which>прошл|следующ|эт)\w*\s+{RU_WEEKDAY}\b", _ru_weekday),
    make_rule("сезон", r"\b(?P<which>прошл(?:ым|ой)|следующ(?:им|ей)|эт(?:им|ой))\s+"
          r"(?P<season>зимой|весной|летом|осенью)\b",
          season_of({"прошл": -1, "эт": 0, "следующ": 1})),
    make_rule("сезон года",
              r"\b(?P<season>зимой|весной|летом|осенью)\s+(?P<which>позапрошл|прошл|следующ|эт)\w*\s+года\b",
          season_of({"позапрошл": -2, "прошл": -1, "эт": 0, "следующ": 1}, unit="season_year")),
    make_rule("недавно", r"\bнедавно\b", Ref("before", 0, 0), needs="недавно"),
    make_rule("в последнее время", r"\bв\s+последнее\s+время\b", Ref("up_to", 0, 0), needs="последнее"),
    make_rule("на днях", r"\bна\s+днях\b", _ru_these_days, needs="днях"),
)
