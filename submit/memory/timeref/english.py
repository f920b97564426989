"""English relative time phrases: the rule table `EN_RULES` and the helpers its meanings use."""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Optional

from .dates import MONTHS_EN, WEEKDAY_KEYS, Ref
from .rules import FEW, amount_of, make_rule, pick, season_of, shift

EN_NUMBERS = {w: i + 1 for i, w in enumerate("one two three four five six seven eight nine ten".split())}
EN_NUMBERS.update(a=1, an=1)
EN_NUM = (r"(?P<n>\d{1,4}|one|two|three|four|five|six|seven|eight|nine|ten|an?|(?:a\s+)?couple(?:\s+of)?|"
          r"(?:a\s+)?few|several)")
EN_UNIT = r"(?P<unit>day|weekend|week|month|year)s?(?P<extra>\s+and\s+a\s+half|\s+or\s+(?:two|so))?"
EN_WEEKDAY = r"(?P<wd>monday|tuesday|wednesday|thursday|friday|saturday|sunday|tues?|wed|thurs?|thu|fri)"
EN_WEEKDAYS = r"(?P<wd>(?:mon|tues|wednes|thurs|fri|satur|sun)days)"
_DET = r"\b(?:the|my|his|her|our|their|your|its|this|that|a|an|every|each|whose)"
_GENERIC = (r"['’]s\s+(?:world|society|age|youth|generation|culture|standards|market|economy|technology|"
            r"digital|modern|fast|times|environment|climate|landscape|leaders|kids|children|businesses)\b")
# "in two weeks" is a duration, not a date, after a count or a past tense: "5 flights in 2 months",
# "lost 5 pounds in two weeks", "finished it in a week".
_DURATION = (r"\b(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|first|second|third|fourth|fifth|"
             r"sixth|seventh|eighth|ninth|tenth|once|twice|times|only|per|every|lost|ran|read|did|"
             r"made|got|went|took|built|wrote|grew|had|was|were|saw|"
             r"(?!(?:need|speed|indeed|seed|feed|proceed|exceed|succeed)\b)\w{2,}ed)\b")
_TODAY_GENERIC = (r"\b(?:world|society|youth|people|adults|kids|children|generation|culture|industry|market|"
                  r"heritage|relevant|irrelevant|applicable|still|even|live\s+in|exist|exists|used)")


def _weekday_of(m: re.Match) -> int:
    return WEEKDAY_KEYS.index(m.group("wd")[:2].lower())


def _en_count(sign: int):
    def meaning(m: re.Match) -> Optional[Ref]:
        amount = amount_of(m.group("n"), EN_NUMBERS)
        unit, extra = m.group("unit").lower(), (m.group("extra") or "").split()
        if extra and extra[-1] == "half":  # "a year and a half ago"
            months = 12 * amount + 6 if unit == "year" and isinstance(amount, int) else None
            return Ref("month", sign * months, sign * months, True) if months else None
        if extra[-1:] == ["two"]:  # "a day or two ago", "in a week or two"
            days = {"day": 1, "week": 7}.get(unit) if amount == 1 else None
            return Ref("day", *sorted((sign * days, sign * 2 * days)), True) if days else None
        ref = shift(unit, amount, sign)
        return Ref(ref.unit, ref.lo, ref.hi, True, ref.anchor) if ref and extra else ref  # "or so"
    return meaning


def _window(m: re.Match) -> Optional[Ref]:
    """"in the past week", "over the last 3 months", "the next two weeks": up to or from the session date."""
    amount = amount_of(m.group("n"), EN_NUMBERS) if m.groupdict().get("n") else 1
    sign = 1 if m.group("which").lower() in ("next", "coming") else -1
    unit = m.group("unit").lower()
    if amount == "few":
        return _few_window(unit, sign)
    amount = 2 if amount == "couple" else amount  # "the past couple of weeks"
    if unit in ("day", "week"):
        days = amount * (7 if unit == "week" else 1)
        return Ref("day", *sorted((sign, sign * days)), True)
    span = amount * (12 if unit == "year" and amount == 1 else 1)
    return Ref("month" if unit == "month" or amount == 1 else "year", *sorted((0, sign * span)), True)


def _few_window(unit: str, sign: int) -> Ref:
    """"the past few months" (-1), "the next few weeks" (+1): up to `FEW` units from the session."""
    if unit in ("day", "week"):
        days = FEW[unit][1]
        return Ref("day", *sorted((sign, sign * days)), True)
    return Ref(unit, *sorted((0, sign * FEW[unit][1])), True)


def _coming(m: re.Match) -> Ref:
    """"in the coming weeks", "over the past few months"."""
    sign = -1 if m.group("which").lower().startswith(("past", "last")) else 1
    return _few_window(m.group("unit").lower(), sign)


def _since(m: re.Match) -> Optional[Ref]:
    """"for 3 years now", "been a month now": a start point, "since ≈ 2020"."""
    ref = _en_count(-1)(m)
    if ref is None or ref.unit not in ("day", "week_of", "month", "year"):
        return None
    if ref.unit == "week_of":
        ref = Ref("day", 7 * ref.lo, 7 * ref.hi)
    return replace(ref, approx=True, since=True)


def _weekdays_ago(m: re.Match) -> Optional[Ref]:
    """"two Sundays ago": the Sunday before last Sunday."""
    amount = amount_of(m.group("n"), EN_NUMBERS)
    if amount == "few":
        return Ref("day", -FEW["week"][1], -FEW["week"][0], True)  # "a few Sundays ago": as "a few weeks ago"
    n = 2 if amount == "couple" else amount
    return Ref("weekday", -n, -n, amount == "couple", _weekday_of(m))


def _en_this(m: re.Match) -> Optional[Ref]:
    mod, unit = (m.group("mod") or "").strip().lower(), m.group("unit").lower()
    table = {"": {"week": Ref("week", 0, 0), "weekend": Ref("weekend", 0, 0),
                  "month": Ref("month", 0, 0), "year": Ref("year", 0, 0)},
             "past": {"week": Ref("day", -7, -1, True), "weekend": Ref("weekend", -1, -1)},
             "coming": {"weekend": Ref("weekend", 0, 0)}}
    return table[mod].get(unit)


EN_MONTH = r"(?P<month>January|February|March|April|May|June|July|August|September|October|November|December)"

EN_RULES = (
    make_rule("day before yesterday", r"\bthe\s+day\s+before\s+yesterday\b", Ref("day", -2, -2), needs="yesterday"),
    make_rule("day after tomorrow", r"\bthe\s+day\s+after\s+tomorrow\b", Ref("day", 2, 2), needs="tomorrow"),
    make_rule("yesterday", r"\byesterday(?:\s+(?:morning|afternoon|evening|night))?\b", Ref("day", -1, -1),
          not_before=r"['’]s\s+news", needs="yesterday"),
    make_rule("last night", r"\blast\s+night\b", Ref("day", -1, -1), not_after=_DET, needs="last"),
    make_rule("today", r"\btoday\b", Ref("day", 0, 0), not_after=_TODAY_GENERIC, not_before=_GENERIC, needs="today"),
    make_rule("tonight", r"\b(?:tonight|this\s+(?:morning|afternoon|evening))\b", Ref("day", 0, 0)),
    make_rule("tomorrow", r"\btomorrow(?:\s+(?:morning|afternoon|evening|night))?\b", Ref("day", 1, 1),
          not_before=_GENERIC, needs="tomorrow"),
    make_rule("ago", rf"\b{EN_NUM}\s+{EN_UNIT}\s+ago\b", _en_count(-1), needs="ago"),
    make_rule("for now", r"(?:\b(?:for|been)\s+(?:about\s+|around\s+|almost\s+|nearly\s+|over\s+|more\s+than\s+|"
          rf"just\s+(?:over|under)\s+)?|^|(?<=[.!?]\s))\b{EN_NUM}\s+{EN_UNIT}\s+now\b", _since, needs="now"),
    make_rule("from now", rf"\b{EN_NUM}\s+{EN_UNIT}\s+from\s+(?:now|today)\b", _en_count(1), needs="from"),
    make_rule("in", rf"\bin\s+(?!an?\s+day\b(?!\s+or\s+two)){EN_NUM}\s+{EN_UNIT}(?:['’]?\s+time)?\b", _en_count(1),
          not_before=r"['’]?\s+(?:of|before|after|since|old)\b", not_in_clause=_DURATION),
    make_rule("last", r"\blast\s+(?P<unit>weekend|week|month|year)\b",
          pick("unit", {"weekend": Ref("weekend", -1, -1), "week": Ref("week", -1, -1, True),
                         "month": Ref("month", -1, -1), "year": Ref("year", -1, -1)}),
          not_after=_DET, not_before=r"\s+of\b", needs="last"),
    make_rule("this", r"\bthis\s+(?P<mod>past\s+|coming\s+)?(?P<unit>weekend|week|month|year)\b", _en_this,
              needs="this"),
    make_rule("next", r"\bnext\s+(?P<unit>weekend|week|month|year)\b",
          pick("unit", {"weekend": Ref("either_weekend", 0, 0), "week": Ref("week", 1, 1),
                         "month": Ref("month", 1, 1), "year": Ref("year", 1, 1)}),
          not_after=_DET, not_before=r"\s+of\b", needs="next"),
    make_rule("the past", r"\b(?:in|over|during|for|within|from)\s+the\s+(?P<which>past|last|next|coming)\s+"
          r"(?P<unit>week|month|year)(?:\s+or\s+so)?\b",
          _window, not_before=r"\s+(?:of|before|after)\b", needs="the"),
    make_rule("past N", rf"\b(?:the\s+)?(?P<which>past|last|next|coming)\s+{EN_NUM}\s+(?P<unit>day|week|month|year)s\b",
          _window, not_after=r"\b(?:my|his|her|our|their|your|its|first)", not_before=r"\s+(?:of|before|after)\b"),
    make_rule("coming", r"\b(?:in|over)\s+the\s+(?P<which>coming|next\s+few|past\s+few|last\s+few)\s+"
          r"(?P<unit>day|week|month|year)s\b", _coming, needs="the"),
    make_rule("before last", r"\bthe\s+(?P<unit>weekend|week|month|year)\s+before\s+last\b",
          pick("unit", {"weekend": Ref("weekend", -2, -2), "week": Ref("week", -2, -2, True),
                         "month": Ref("month", -2, -2), "year": Ref("year", -2, -2)}), needs="last"),
    make_rule("last weekday", rf"\b(?:last|this\s+past)\s+{EN_WEEKDAY}\b",
          lambda m: Ref("weekday", -1, -1, False, _weekday_of(m)), not_after=_DET),
    make_rule("this weekday", rf"\bthis\s+(?P<coming>coming\s+)?{EN_WEEKDAY}\b",
          lambda m: Ref("weekday", int(bool(m.group("coming"))), int(bool(m.group("coming"))), False,
                        _weekday_of(m)), needs="this"),
    make_rule("next weekday", rf"\bnext\s+{EN_WEEKDAY}\b", lambda m: Ref("either_weekday", 0, 0, False, _weekday_of(m)),
          not_after=_DET, needs="next"),
    make_rule("weekdays ago", rf"\b{EN_NUM}\s+{EN_WEEKDAYS}\s+ago\b", _weekdays_ago, needs="ago"),
    make_rule("season", r"\b(?P<which>last|this\s+past|this|next)\s+(?P<season>summer|winter|spring|fall|autumn)\b",
          season_of({"last": -1, "this past": -1, "this": 0, "next": 1}),
          not_after=_DET, not_before=r"\s*,?\s*(?:of\s+)?\d{4}"),
    make_rule("month name", rf"\b(?P<which>(?i:last|next))\s+{EN_MONTH}\b",
          lambda m: Ref("month_name", *(2 * (-1 if m.group("which").lower() == "last" else 1,)), False,
                        MONTHS_EN.index(m.group("month")) + 1),
          not_after=_DET, not_before=r"\s*,?\s*\d", flags=0),
    make_rule("vague", r"\b(?:recently|the\s+other\s+day|a\s+while\s+(?:ago|back)|"
          r"not\s+(?:so\s+|too\s+)?long\s+ago)\b", Ref("before", 0, 0)),
    make_rule("lately", r"\blately\b", Ref("up_to", 0, 0), needs="lately"),
)
