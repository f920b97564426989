"""Calendar conventions, the meaning of a phrase (`Ref`) and its dates (`When`), session-date
parsing, resolution and rendering ("7 May 2023" / "7 мая 2023"). The conventions: the
package docstring."""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from typing import Optional

MONTHS_EN = ("January", "February", "March", "April", "May", "June", "July", "August",
             "September", "October", "November", "December")
MONTHS_RU_GEN = ("января", "февраля", "марта", "апреля", "мая", "июня", "июля", "августа",
                 "сентября", "октября", "ноября", "декабря")
MONTHS_RU_NOM = ("январь", "февраль", "март", "апрель", "май", "июнь", "июль", "август",
                 "сентябрь", "октябрь", "ноябрь", "декабрь")
SEASON_NAMES = {"en": ("winter", "spring", "summer", "autumn"), "ru": ("зима", "весна", "лето", "осень")}
SEASON_START = (12, 3, 6, 9)  # winter, spring, summer, autumn: first month
WEEK_OF = {"en": "week of", "ru": "неделя"}
WEEK_BEFORE = {"en": "the week before", "ru": "за неделю до"}
SINCE = {"en": "since", "ru": "с"}
BEFORE = {"en": "before", "ru": "до"}
UP_TO = {"en": "up to", "ru": "вплоть до"}
OR = {"en": "or", "ru": "или"}
LANGS = ("en", "ru")
WEEKDAY_KEYS = ("mo", "tu", "we", "th", "fr", "sa", "su")  # Monday first, as ISO weeks


@dataclass(frozen=True)
class Ref:
    """What a phrase means relative to its session date, before any date is known.

    unit: day | week | weekend | weekday | week_of | month | year | season | season_year |
    before | up_to | either_weekday | either_weekend; lo..hi: offsets in units (inclusive);
    anchor: the weekday (0 = Monday) or season (0 = winter) the unit needs; since: the phrase
    names a start ("for 3 years now")."""
    unit: str
    lo: int
    hi: int
    approx: bool = False
    anchor: int = 0
    since: bool = False


@dataclass(frozen=True)
class When:
    """A resolved time: unit day | month | year | season | week_of | week_before | before |
    up_to, from start to end; `other`, when set, is the second reading of an ambiguous phrase."""
    unit: str
    start: date
    end: date
    approx: bool = False
    since: bool = False
    other: Optional["When"] = None  # "next Friday": the coming one, or the one after it


@dataclass(frozen=True)
class Mention:
    """A relative time phrase in a text; ref is None where it is deliberately left unresolved."""
    start: int
    end: int
    phrase: str
    rule: str
    ref: Optional[Ref]


# ---------------------------------------------------------------- session dates

MONTH_NUMBERS = {name.lower(): i + 1 for i, name in enumerate(MONTHS_EN)}  # "may", "sept", "мая" -> 5, 9, 5
MONTH_NUMBERS.update({name.lower()[:3]: i + 1 for i, name in enumerate(MONTHS_EN)})
MONTH_NUMBERS.update({"sept": 9, **{n: i + 1 for i, n in enumerate(MONTHS_RU_GEN)},
                     **{n: i + 1 for i, n in enumerate(MONTHS_RU_NOM)}})
_YMD = re.compile(r"\b(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)")  # ISO; LongMemEval "2023/05/20 (Sat)"
_DMY = re.compile(r"\b(\d{1,2})\.(\d{1,2})\.(\d{4})\b")  # "08.05.2023"
_D_MONTH_Y = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+([^\W\d_]+)\.?,?\s+(\d{4})\b")  # LoCoMo "8 May, 2023"
_MONTH_D_Y = re.compile(r"\b([^\W\d_]+)\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b")  # "May 8, 2023"


def parse_session_date(text) -> Optional[date]:
    """The calendar date in a session's date string, or None; never raises.

    parse_session_date("1:56 pm on 8 May, 2023") == date(2023, 5, 8). Slash forms like
    "05/08/2023" are None: month-first and day-first cannot be told apart."""
    if isinstance(text, datetime):
        return text.date()
    if isinstance(text, date):
        return text
    if not isinstance(text, str):
        return None
    return next(dates_in(text), None)


def dates_in(text: str):
    """Every full calendar date in the text, as `parse_session_date` reads them (form by form)."""
    for pattern, order in ((_YMD, "ymd"), (_DMY, "dmy"), (_D_MONTH_Y, "dmy"), (_MONTH_D_Y, "mdy")):
        for match in pattern.finditer(text):
            found = _valid_date(match.groups(), order)
            if found:
                yield found


def _valid_date(parts, order: str) -> Optional[date]:
    fields = dict(zip(order, parts))
    month = fields["m"]
    month = int(month) if month.isdigit() else MONTH_NUMBERS.get(month.lower(), 0)
    try:
        return date(int(fields["y"]), month, int(fields["d"]))
    except ValueError:
        return None


# ---------------------------------------------------------------- resolution

def resolve(ref: Ref, session_date: date) -> Optional[When]:
    """The dates a phrase's meaning stands for on that session date; None if it has none."""
    day = session_date.date() if isinstance(session_date, datetime) else session_date
    try:
        when = _RESOLVERS[ref.unit](ref, day)
    except (ValueError, OverflowError):  # "7000 years ago" has no calendar date
        return None
    return replace(when, since=True) if when and ref.since else when


def _month_start(day: date, shift: int) -> date:
    k = day.year * 12 + day.month - 1 + shift
    return date(k // 12, k % 12 + 1, 1)


def _month_end(day: date) -> date:
    return _month_start(day, 1) - timedelta(days=1)


def _days(ref: Ref, day: date) -> When:
    return When("day", day + timedelta(ref.lo), day + timedelta(ref.hi), ref.approx)


def _weeks(ref: Ref, day: date) -> When:
    if (ref.lo, ref.hi, ref.approx) == (-1, -1, True):  # "last week": counted back from the day it was said
        return When("week_before", day, day)
    monday = day - timedelta(day.weekday())
    return When("day", monday + timedelta(7 * ref.lo), monday + timedelta(7 * ref.hi + 6), ref.approx)


def _weekend(ref: Ref, day: date) -> When:
    saturday = day - timedelta(day.weekday()) + timedelta(5 + 7 * ref.lo)
    return When("day", saturday, saturday + timedelta(1), ref.approx)


def _weekday(ref: Ref, day: date) -> When:
    """lo < 0: the |lo|-th such weekday strictly before; 0: in the session's week; > 0: after."""
    if ref.lo < 0:
        found = day - timedelta((day.weekday() - ref.anchor - 1) % 7 + 1 - 7 * (ref.lo + 1))
    elif ref.lo == 0:
        found = day + timedelta(ref.anchor - day.weekday())
    else:
        found = day + timedelta((ref.anchor - day.weekday() - 1) % 7 + 1 + 7 * (ref.lo - 1))
    return When("day", found, found, ref.approx)


def _week_of(ref: Ref, day: date) -> When:
    return When("week_of", day + timedelta(7 * ref.lo), day + timedelta(7 * ref.lo), ref.approx)


def _months(ref: Ref, day: date) -> When:
    return When("month", _month_start(day, ref.lo), _month_end(_month_start(day, ref.hi)), ref.approx)


def _month_name(ref: Ref, day: date) -> When:
    """"last May": the latest May before the session's month; "next May": the first after."""
    if ref.lo < 0:
        year = day.year if ref.anchor < day.month else day.year - 1
    else:
        year = day.year if ref.anchor > day.month else day.year + 1
    start = date(year, ref.anchor, 1)
    return When("month", start, _month_end(start), ref.approx)


def _years(ref: Ref, day: date) -> When:
    return When("year", date(day.year + ref.lo, 1, 1), date(day.year + ref.hi, 12, 31), ref.approx)


def _season_span(season: int, year: int) -> tuple:
    start = date(year, SEASON_START[season], 1)
    return start, _month_end(_month_start(start, 2))


def _season(ref: Ref, day: date) -> Optional[When]:
    """last: the latest one that has ended; this: the one under way, else the nearer of the
    last and the coming one; next: the one after "this", once "this" has begun."""
    last = day.year
    while _season_span(ref.anchor, last)[1] >= day:
        last -= 1
    if ref.lo < 0:
        return When("season", *_season_span(ref.anchor, last), ref.approx)
    this = _this_season(ref.anchor, last, day)
    if this is None or (ref.lo > 0 and _season_span(ref.anchor, this)[0] > day):
        return None  # "this spring" said in October, "next summer" said in May: which one?
    return When("season", *_season_span(ref.anchor, this + max(ref.lo, 0)), ref.approx)


def _this_season(season: int, last: int, day: date) -> Optional[int]:
    coming_start, coming_end = _season_span(season, last + 1)
    if coming_start <= day <= coming_end:
        return last + 1
    since_last, until_coming = (day - _season_span(season, last)[1]).days, (coming_start - day).days
    if abs(since_last - until_coming) < 30:
        return None
    return last if since_last < until_coming else last + 1


def _season_year(ref: Ref, day: date) -> Optional[When]:
    """"летом прошлого года": the season of a calendar year; winter spans two, so none."""
    if ref.anchor == 0:
        return None
    return When("season", *_season_span(ref.anchor, day.year + ref.lo), ref.approx)


def _before(ref: Ref, day: date) -> When:
    """"recently", "недавно": some time before the session, no closer than that."""
    return When("before", day, day)


def _up_to(ref: Ref, day: date) -> When:
    """"lately", "в последнее время": a span that ends on the session's day."""
    return When("up_to", day, day)


def _either_weekday(ref: Ref, day: date) -> When:
    """"next Friday": the coming Friday, or the Friday of the week after it."""
    coming = _weekday(Ref("weekday", 1, 1, False, ref.anchor), day)
    return replace(coming, other=_weekday(Ref("weekday", 2, 2, False, ref.anchor), day))


def _either_weekend(ref: Ref, day: date) -> When:
    """"next weekend" said on a weekday: the coming weekend or the one after; said on a weekend,
    the one after or the one after that."""
    first = 0 if day.weekday() < 5 else 1
    return replace(_weekend(Ref("weekend", first, first), day),
                   other=_weekend(Ref("weekend", first + 1, first + 1), day))


_RESOLVERS: dict = {"day": _days, "week": _weeks, "weekend": _weekend, "weekday": _weekday,
                    "week_of": _week_of, "month": _months, "month_name": _month_name,
                    "year": _years, "season": _season, "season_year": _season_year,
                    "before": _before, "up_to": _up_to, "either_weekday": _either_weekday,
                    "either_weekend": _either_weekend}


# ---------------------------------------------------------------- rendering

def render(when: When, lang: str) -> str:
    """render(When("day", date(2023, 5, 1), date(2023, 5, 7), True), "en") == "≈ 1–7 May 2023"."""
    text = _RENDERERS[when.unit](when, lang)
    text = f"≈ {text}" if when.approx else text
    text = f"{SINCE[lang]} {text}" if when.since else text
    return f"{text} {OR[lang]} {render(when.other, lang)}" if when.other else text


def _date_text(day: date, lang: str, year: bool = True) -> str:
    month = (MONTHS_EN if lang == "en" else MONTHS_RU_GEN)[day.month - 1]
    return f"{day.day} {month} {day.year}" if year else f"{day.day} {month}"


def _render_days(when: When, lang: str) -> str:
    a, b = when.start, when.end
    if a == b:
        return _date_text(a, lang)
    if (a.year, a.month) == (b.year, b.month):
        return f"{a.day}–{_date_text(b, lang)}"
    return f"{_date_text(a, lang, year=a.year != b.year)}–{_date_text(b, lang)}"


def _render_months(when: When, lang: str) -> str:
    names = MONTHS_EN if lang == "en" else MONTHS_RU_GEN if when.since else MONTHS_RU_NOM  # "с апреля"
    a, b = when.start, when.end
    if (a.year, a.month) == (b.year, b.month):
        return f"{names[a.month - 1]} {a.year}"
    head = names[a.month - 1] if a.year == b.year else f"{names[a.month - 1]} {a.year}"
    return f"{head}–{names[b.month - 1]} {b.year}"


def _render_years(when: When, lang: str) -> str:
    a, b = when.start.year, when.end.year
    return str(a) if a == b else f"{a}–{b}"


def _render_season(when: When, lang: str) -> str:
    name = SEASON_NAMES[lang][SEASON_START.index(when.start.month)]
    return f"{name} {_render_years(when, lang)}"


def _render_week_of(when: When, lang: str) -> str:
    return f"{WEEK_OF[lang]} {_date_text(when.start, lang)}"


def _render_week_before(when: When, lang: str) -> str:
    return f"{WEEK_BEFORE[lang]} {_date_text(when.start, lang)}"


def _render_before(when: When, lang: str) -> str:
    return f"{BEFORE[lang]} {_date_text(when.start, lang)}"


def _render_up_to(when: When, lang: str) -> str:
    return f"{UP_TO[lang]} {_date_text(when.start, lang)}"


_RENDERERS: dict = {"day": _render_days, "month": _render_months, "year": _render_years,
                    "season": _render_season, "week_of": _render_week_of, "week_before": _render_week_before,
                    "before": _render_before, "up_to": _render_up_to}
