"""The rule machinery both languages' phrase tables are written in: a `Rule` is a pattern, its
meaning (a `Ref`, or a function of the match) and the guards that reject a match."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Optional

from .dates import Ref

@dataclass(frozen=True)
class Rule:
    name: str
    pattern: re.Pattern
    meaning: Callable[[re.Match], Optional[Ref]]
    not_after: Optional[re.Pattern] = None  # searched in the few characters before the phrase
    not_before: Optional[re.Pattern] = None  # matched right after the phrase
    not_in_clause: Optional[re.Pattern] = None  # searched in the clause before the phrase
    needs: str = ""  # a word every match holds: a text without it is not scanned (speed)


def make_rule(name, regex, meaning, not_after=None, not_before=None, not_in_clause=None, needs="", flags=re.I) -> Rule:
    """meaning: a fixed Ref, None (found, left unresolved) or a function of the match."""
    fn = meaning if callable(meaning) else (lambda m, ref=meaning: ref)
    return Rule(name, re.compile(regex, flags), fn,
                 re.compile(not_after + r"\s+$", re.I) if not_after else None,
                 re.compile(not_before, re.I) if not_before else None,
                 re.compile(not_in_clause, re.I) if not_in_clause else None, needs)


FEW = {"day": (2, 5), "week": (14, 28), "month": (2, 4), "year": (2, 4)}  # "week" in days


def shift(unit: str, amount, sign: int) -> Optional[Ref]:
    """"N units ago" (sign -1) or "in N units" (+1); amount is an int, "couple" or "few"."""
    if amount == "few":
        unit = "week" if unit == "weekend" else unit  # "a few weekends ago": as "a few weeks ago"
        if unit not in FEW:
            return None
        lo, hi = sorted(sign * n for n in FEW[unit])
        return Ref("day" if unit == "week" else unit, lo, hi, True)
    n, approx = (2, True) if amount == "couple" else (amount, False)
    if unit == "day":
        return Ref("day", sign * n, sign * n, approx)
    if unit == "weekend":
        return Ref("weekend", -n, -n, approx) if sign < 0 else None
    if unit == "week":
        return Ref("week_of", sign * n, sign * n, True)
    if unit == "year" and n > 1:
        return Ref("year", sign * n, sign * n, True)
    months = 12 * n if unit == "year" else n
    return Ref("month", sign * months, sign * months, True)


def amount_of(word: str, numbers: dict):
    word = word.lower()
    if word.isdigit():
        return int(word)
    if "couple" in word or word in ("пару", "пара"):
        return "couple"
    if "few" in word or word in ("several", "несколько"):
        return "few"
    return numbers[word]


def pick(group: str, table: dict):
    """A meaning looked up by the first letters of a captured word."""
    def meaning(m: re.Match):
        word = m.group(group).lower()
        return next(ref for key, ref in table.items() if word.startswith(key))
    return meaning


def season_of(which_offsets: dict, unit: str = "season"):
    def meaning(m: re.Match) -> Optional[Ref]:
        which = re.sub(r"\s+", " ", m.group("which").lower())
        offset = next(v for k, v in which_offsets.items() if which.startswith(k))
        season = next(i for i, names in enumerate(SEASON_WORDS) if m.group("season").lower() in names)
        return Ref(unit, offset, offset, False, season)
    return meaning


SEASON_WORDS = (("winter", "зимой"), ("spring", "весной"), ("summer", "летом"), ("autumn", "fall", "осенью"))

QUOTES = "\"'“”«»‘’"
CLAUSE_END = re.compile(r"[.!?;:\n]")
