"""The period a question names: "on 25 May, 2022", "between August 11 and August 15 2023",
"in the first half of September 2022", "в сентябре 2022 года", "last Saturday".

`named_period(question, today)` returns the calendar span (first day, last day) the question
points at, or None. Retrieval (`retrieve`) gives a small bonus to turns of sessions held in
that span or shortly after it (people report an event in the next chat), so a question
about a date finds that date's session even when its words say little ("What did Nate do
for Joanna on 25 May, 2022?" — the turn reads "Looky here, I got this new pup for you!").

What counts: full dates (as `timeref.parse_session_date` reads them), a day and month
whose year the question gives elsewhere or `today` implies, a month with its year (or its
first/second half, its beginning/end), and relative phrases (`timeref.find_relative`)
resolved against `today`, the question's date where the benchmark gives one. Several
dates make one span, from the earliest to the latest ("between …  and …"). Spans without
a bound ("recently", "before May") are not periods; a year alone ("in 2023") is one, and
the caller decides which lengths are worth a bonus.
"""
from __future__ import annotations

import calendar
import re
from datetime import date, timedelta
from typing import Optional

from .dates import MONTH_NUMBERS, When, dates_in, resolve
from .phrases import find_relative, text_lang

MONTHS_RU_LOC = ("январе", "феврале", "марте", "апреле", "мае", "июне", "июле", "августе",
                 "сентябре", "октябре", "ноябре", "декабре")  # "в сентябре 2022"
_MONTH = {**MONTH_NUMBERS, **{name: i + 1 for i, name in enumerate(MONTHS_RU_LOC)}}
_MONTH_WORD = "|".join(sorted(map(re.escape, _MONTH), key=len, reverse=True))
_ORD = r"(?:st|nd|rd|th)?"
# One day: "25 May, 2022", "25th of May", "May 25, 2022", "25 мая 2022 года"; the year optional.
_DAY = re.compile(rf"\b(?P<d>\d{{1,2}}){_ORD}\s+(?:of\s+)?(?P<m>{_MONTH_WORD})\.?(?:,?\s+(?P<y>\d{{4}}))?(?!\w)"
                  rf"|\b(?P<m2>{_MONTH_WORD})\.?\s+(?P<d2>\d{{1,2}}){_ORD}(?:,?\s+(?P<y2>\d{{4}}))?(?!\w)", re.I)
# A month of a year: "September 2022", "the first half of September 2022", "в сентябре 2022".
_PART = r"(?P<part>(?:the\s+)?(?:first|second)\s+half\s+of|(?:the\s+)?(?:beginning|start|end)\s+of|early|mid-?|late|" \
        r"(?:в\s+)?(?:первой|второй)\s+половине|(?:в\s+)?(?:начале|конце|середине))?\s*"
_MONTH_YEAR = re.compile(rf"{_PART}\b(?:in\s+|в\s+)?(?P<m>{_MONTH_WORD})\.?,?\s+(?P<y>\d{{4}})\b", re.I)
_YEAR = re.compile(r"(?<![\d/.-])\b(?:19|20)\d\d\b(?![\d/.-])")


def named_period(question: str, today: Optional[date] = None) -> Optional[tuple]:
    """(first day, last day) of the period the question names, or None.

    named_period("What did Nate do on 25 May, 2022?") == (date(2022, 5, 25), date(2022, 5, 25))"""
    lang = text_lang(question)
    day_matches = list(_DAY.finditer(question))
    spans = (_days(question, day_matches, today) + _months(question, [m.span() for m in day_matches])
             + _relative(question, today, lang))
    if not spans:
        spans = [(date(y, 1, 1), date(y, 12, 31)) for y in map(int, _YEAR.findall(question))]
    if not spans:
        return None
    return min(s for s, _ in spans), max(e for _, e in spans)


def _days(text: str, matches: list, today: Optional[date]) -> list:
    """Single days: `_DAY`'s matches (a missing year from elsewhere in the text, else `today`)
    and the numeric dates `timeref` reads ("2023/05/02", "02.05.2023")."""
    years = [int(y) for y in _YEAR.findall(text)]
    out = [(found, found) for found in dates_in(text)]
    for m in matches:
        day, month, year = (m["d"], m["m"], m["y"]) if m["d"] else (m["d2"], m["m2"], m["y2"])
        if month == "may":
            continue  # the verb ("you may 2x it"); the month is written "May"
        year = int(year) if year else (years[-1] if years else None)
        number = _MONTH[month.lower()]
        found = _date(year, number, int(day)) if year else _latest(today, number, int(day))
        if found:
            out.append((found, found))
    return out


def _months(text: str, taken: list) -> list:
    """Months of a year, except where the month word belongs to a day ("25 May, 2022")."""
    out = []
    for m in _MONTH_YEAR.finditer(text):
        if any(a <= m.start("m") < b for a, b in taken):
            continue
        year, month = int(m["y"]), _MONTH[m["m"].lower()]
        if not 1 <= year <= 9999:
            continue
        first, last = date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1])
        out.append(_part(first, last, (m["part"] or "").lower()))
    return out


def _part(first: date, last: date, part: str) -> tuple:
    """The share of a month a qualifier names: halves exactly, "early"/"late" as ten days."""
    if re.search(r"first|перв", part):
        return first, first + timedelta(days=14)
    if re.search(r"second|втор", part):
        return first + timedelta(days=15), last
    if re.search(r"begin|start|early|начал", part):
        return first, first + timedelta(days=9)
    if re.search(r"end|late|конц", part):
        return last - timedelta(days=9), last
    if re.search(r"mid|серед", part):
        return first + timedelta(days=9), first + timedelta(days=20)
    return first, last


def _relative(text: str, today: Optional[date], lang: str) -> list:
    """Relative phrases with both ends: "last Saturday", "two weeks ago" — not "recently"."""
    if today is None:
        return []
    out = []
    for mention in find_relative(text, lang):
        when = resolve(mention.ref, today) if mention.ref else None
        if when is None or when.unit in ("before", "up_to") or when.since:
            continue
        try:
            out.append(_span(when))
        except OverflowError:  # "last week" said on 1 January of year 1
            continue
    return out


def _span(when: When) -> tuple:
    """The days a resolved phrase covers: "last week" is the seven days before, "≈ week of
    <day>" the three days either side, "next Friday" both readings."""
    if when.unit == "week_before":
        return when.start - timedelta(days=7), when.start - timedelta(days=1)
    if when.unit == "week_of":
        return when.start - timedelta(days=3), when.start + timedelta(days=3)
    return when.start, (when.other or when).end


def _date(year: int, month: int, day: int) -> Optional[date]:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _latest(today: Optional[date], month: int, day: int) -> Optional[date]:
    """A day and month with no year: its latest occurrence on or before today."""
    if today is None:
        return None
    found = _date(today.year, month, day)
    if found and found > today:
        found = _date(today.year - 1, month, day)
    return found
