"""The public steps over both languages' rules: `find_relative` finds phrases, `annotate` puts
the dates of each in brackets after it; `text_lang` picks the rules a text is read by."""
from __future__ import annotations

import re

from ..lang import has_cyrillic
from .dates import LANGS, Mention, parse_session_date, render, resolve
from .rules import CLAUSE_END, QUOTES, Rule
from .english import EN_RULES
from .russian import RU_RULES

RULES = {"en": EN_RULES, "ru": RU_RULES}


def text_lang(text: str) -> str:
    """The rules to read a text's relative time by: "ru" if it has any Cyrillic letter, else "en"."""
    return "ru" if has_cyrillic(text) else "en"


def find_relative(text: str, lang: str) -> list:
    """Mentions of relative time in text, left to right, never overlapping (the longest wins).

    [m.phrase for m in find_relative("I left two days ago, recently", "en")] == ["two days ago", "recently"]"""
    if lang not in RULES:
        raise ValueError(f"lang must be one of {LANGS}, not {lang!r}")
    found, low = [], text.lower()
    for rule in RULES[lang]:
        if rule.needs and rule.needs not in low:
            continue
        for m in rule.pattern.finditer(text):
            if not _rejected(rule, text, m):
                found.append(Mention(m.start(), m.end(), m.group(0), rule.name, rule.meaning(m)))
    found.sort(key=lambda mention: (mention.start, mention.start - mention.end))
    kept, end = [], -1
    for mention in found:
        if mention.start >= end:
            kept.append(mention)
            end = mention.end
    return kept


def _rejected(rule: Rule, text: str, m: re.Match) -> bool:
    if 0 < m.start() and m.end() < len(text) and text[m.start() - 1] in QUOTES and text[m.end()] in QUOTES:
        return True  # a title: the song "Yesterday"
    if rule.not_after and rule.not_after.search(text, max(0, m.start() - 24), m.start()):
        return True
    if rule.not_in_clause:
        before = text[max(0, m.start() - 60):m.start()]
        clause = CLAUSE_END.split(before)[-1]
        if rule.not_in_clause.search(clause):
            return True
    return bool(rule.not_before and rule.not_before.match(text, m.end()))


def annotate(text: str, session_date, lang: str) -> str:
    """The text with each resolvable phrase followed by its dates in square brackets.

    annotate("I went there yesterday.", date(2023, 5, 8), "en") == "I went there yesterday [7 May 2023]."
    session_date: a date or a date string (`parse_session_date`); the text comes back
    unchanged when it is missing or unparseable, or when nothing resolves. Idempotent."""
    day = parse_session_date(session_date)
    if day is None or not text:
        return text
    parts, pos = [], 0
    for mention in find_relative(text, lang):
        when = resolve(mention.ref, day) if mention.ref else None
        bracket = f" [{render(when, lang)}]" if when else ""
        end = mention.end + 2 if text[mention.end:mention.end + 2] in ("'s", "’s") else mention.end
        if not bracket or text.startswith(bracket, end):
            continue
        parts += [text[pos:end], bracket]  # "tomorrow's [9 May 2023] show", not "tomorrow [9 May 2023]'s"
        pos = end
    return "".join(parts) + text[pos:] if parts else text
