"""The rule pile: the answer stage the contest ran before the cited stage, kept here only to replay
its recorded readings (`bench/readers.py table|declines`: the rows of docs/results.md that compare
the cited stage with it). Nothing in `submit/` calls it.

- The abstention check: the answer prompt with its last line replaced by a yes/no question, asked
  "before" any answer (whether the material holds it) or "after" a draft (whether it supports
  it), held to `{"found": bool}`; a "false" declined.
- A call-free rule the cited stage dropped (2026-11-30: through each recorded reader's own
  calibration it declined nothing on the dev users 27–32 or Russian dev that the other checks leave
  standing; `bench/ablate.py`): `other_measure` (half of `unrelated`); it lives here for the rule
  pile's rows and `bench/readers.py unrelated`. (`ungrounded` left with it and came back to the
  stage, `decide.ungrounded`, when the 1.5B's Russian dev was read at 8k.)
- The second look: an answer a call-free rule (`answer.adds_nothing`, `unrelated`, `ungrounded`) or
  the reader itself declined was asked once more, of the material lines about what the question
  names (`focus`, at most 16), in one call of at most 40 tokens, and kept only where it held up on
  those lines (`second_answer`).

Its measurements: docs/log.md ("The answer stage's rules", "A second look").
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Optional

import jinja2
import yaml

from submit.memory.answer import (_THE_USER, _UNITS, _lemma, _measures_of, _nouns, _parses, adds_nothing,
                                  asked_measures, beyond, is_count, lemmas_of, mentions_any,
                                  named_in, says_no_info, someone_elses)
from submit.memory.context import ROLE_LABELS
from submit.memory.facts import json_candidates
from submit.memory.lang import detect_lang

ABSTAIN_MODES = ("before", "after")
ABSTAIN_SCHEMA = {"type": "object", "properties": {"found": {"type": "boolean"}}, "required": ["found"]}
ABSTAIN_MAX_TOKENS = 12  # '{"found": false}' is 6 tokens; room for a space or two
ASKS = Path(__file__).resolve().parent / "asks"  # abstain.<lang>.yaml: the wording the readings were asked in


# ---------------------------------------------------------------- the call-free rules the cited stage dropped


def unrelated(answer: str, question: str, lines: list[tuple[str, str]]) -> bool:
    """The answer gives a value that belongs elsewhere: someone else's (`someone_elses`), or one of
    another measure than the question asks (`other_measure`)."""
    return someone_elses(answer, question, lines) or other_measure(answer, question, lines)


# A number and the word after it, past a multiplier («50 тысяч рублей»: «рублей»); «$500» too.
_QUANTITY = re.compile(r"(?<![\d.,])(\d+(?:[.,]\d+)?)(?![\d.,]\d)\s*(?:(?:тыс|тысяч[а-я]*|млн|миллион[а-я]*|"
                       r"миллиард[а-я]*)\.?\s+)?([^\W\d_]+|[₽$€])?", re.IGNORECASE)
_SIGN_FIRST = re.compile(r"([$€₽])\s*(\d+(?:[.,]\d+)?)")


def _quantities(text: str) -> list[tuple[str, set]]:
    """Each number of `text` with the measure of the unit right after it («42 километра»:
    ("42", {"length"})), empty where no unit follows («42», «20 тысяч в неделю»: «в» is none)."""
    signed = [(number, _measures_of(sign, _UNITS)) for sign, number in _SIGN_FIRST.findall(text)]
    taken = {number for number, _ in signed}  # «$500 в месяц»: the sign's
    return signed + [(number, _measures_of(unit, _UNITS) if unit else set()) for number, unit in _QUANTITY.findall(text)
                     if number not in taken]


def other_measure(answer: str, question: str, lines: list[tuple[str, str]]) -> bool:
    """The answer gives a value of another measure than the question asks: a number whose unit is
    another measure's («42 километра» to «Какой у меня оклад?») and none of the asked one's (a
    fluent reader gives the weight beside the asked height), or a bare number that stands
    in the material beside another measure's unit and never beside the asked one's («70» to
    «Сколько весит мой чемодан?» where the material has «проехал 70 км»). A small reader given no
    value of the asked measure gives a number of another that it read. Russian only; a question
    that asks no measure is not judged here."""
    asked = asked_measures(question)
    if not asked:
        return False
    quantities = _quantities(answer)
    if any(measures & asked for _, measures in quantities):  # the asked one is given, others beside it
        return False
    if any(measures and not measures & asked for _, measures in quantities):
        return True
    bare = {number for number, measures in quantities if not measures}
    if not bare:
        return False
    beside: dict = {}  # each bare number -> the measures of the units it stands beside in the material
    for _, line in lines:
        for number, measures in _quantities(line):
            if number in bare and measures:
                beside.setdefault(number, []).append(measures)
    return any(not any(found & asked for found in measures) for measures in beside.values())


def ungrounded(answer: str, question: str, lines: list[tuple[str, str]]) -> bool:
    """The answer's value stands nowhere in the material: it names something the question does not,
    numbers aside (`is_count`), and not one of those words stands in a material line or topic
    (`mentions_any`). «Хорька зовут Марсель.» where no line has «Марсель». The other half of
    `unrelated`, which leaves a value standing nowhere alone. Russian only. The rule pile's own: the
    cited stage's check (`decide.ungrounded`) spares a yes or no and a measure's units too."""
    if detect_lang(question) != "ru":
        return False
    named = {w for w in beyond(answer, question) if not is_count(w)}
    return bool(named) and not mentions_any({w for topic, line in lines for w in lemmas_of(f"{topic} {line}")}, named)


def abstain_ask(lang: str, mode: str, draft: Optional[str] = None, named: bool = False) -> str:
    """The check's question, which takes the place of the answer prompt's last line; `named`: the
    material is what two people said, not what the user said."""
    templates = yaml.safe_load((ASKS / f"abstain.{lang}.yaml").read_text(encoding="utf-8"))
    template = jinja2.Environment(undefined=jinja2.StrictUndefined).from_string(templates[mode])
    return template.render(draft=draft or "", people=named).strip()


def material_holds(reply: str) -> Optional[bool]:
    """The check's verdict from its reply: `material_holds('{"found": false}') is False`;
    None for a reply it cannot read (then the answer stands: the check can only decline)."""
    for candidate in json_candidates(reply):
        if isinstance(candidate, dict) and isinstance(candidate.get("found"), bool):
            return candidate["found"]
    return None


FOCUS_MAX_LINES = 16  # a small reader reads a few clean lines; the most a second look shows
SECOND_LOOK_MAX_TOKENS = 40


def focus(question: str, lines: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The material lines (with their topic) about what a Russian question names: those that mention
    every noun outside the asked phrase («Как зовут попугая моего дяди?»: «попугай» and «дядя»), or
    where it has none, one of the asked phrase's («Какой мой любимый цветок?»: «цветок»), by lemma
    or first five letters (`mentions_any`); at most `FOCUS_MAX_LINES`, in the material's order. Empty
    for English, or a question without nouns."""
    if detect_lang(question) != "ru":
        return []
    parses, nouns, asked = _nouns(question)
    subject = {_lemma(parses[i]) for i in nouns if i not in asked} - _THE_USER
    wanted = [{n} for n in subject] or [{_lemma(parses[i]) for i in asked}]
    if not any(wanted):
        return []
    found = [(topic, line) for topic, line in lines
             if all(mentions_any(lemmas_of(f"{topic} {line}"), need) for need in wanted)]
    return found[:FOCUS_MAX_LINES]


def focused_prompt(chat: list, question: str, lines: list[tuple[str, str]]) -> list[dict]:
    """The answer chat with its material cut to `lines`, each under its topic as the answer prompt
    shows facts; the system message and the lines from the question on stay as they were."""
    content = chat[-1]["content"].splitlines()
    asks = next((k for k, line in enumerate(content) if question in line), len(content))
    shown, topic = [], None
    for where, line in lines:
        if where != topic:
            shown.append(f"{where}:")
            topic = where
        shown.append(f"- {line}")
    return [*chat[:-1], {"role": "user", "content": "\n".join([*shown, "", *content[asks:]])}]


def second_answer(text: Optional[str], question: str, lines: list[tuple[str, str]],
                  overrules: bool = False) -> Optional[str]:
    """The second look's answer as the contest keeps it, or None: where it holds up on the focused
    `lines` (`holds_up`). A line of the user's it copied with its label is read as the user's own
    words («Пользователь: Внуку задали в школе доклад о вулканах»); any other
    speaker's line stays refused. Where it `overrules` the reader's own "no information", the line
    holding its value must also name what the question says of it (`holds_up`'s `verbs`): the
    reader read that line and declined, and «Пользователь слушал джаз в машине.» is no answer to
    «Какую музыку я недолюбливаю?»."""
    text = _USER_LABEL.sub("", text or "", count=1)
    return text if text and holds_up(text, question, lines, verbs=overrules) else None


_USER_LABEL = re.compile("^(?:%s): " % "|".join(labels["user"] for labels in ROLE_LABELS.values()))


def holds_up(answer: str, question: str, lines: list[tuple[str, str]], verbs: bool = False) -> bool:
    """Whether a second look's answer stands on the focused lines.

    - It answers: it names something the question does not, says no «не»/«нет» (a decline in
      other words: «…партии, которая не указана»), and is no line copied with its speaker's label
      («Пользователь: …»).
    - It gives nobody else's value (`unrelated`).
    - What it names stands in those lines, speakers' labels and session numbers aside («Ассистент:»
      names no one; «сессия 18» is no age): every number, and at least one other word if it names
      any (by lemma or first five letters). A number is not excused here as `ungrounded` excuses
      it: the second look keeps only what it can point at.
    - A line that holds the value names, itself or by its topic, what the question asks of and
      whom: the noun asked «какой»/«который»/«чей» of («Какая любимая песня у моего брата?»:
      «Брату нравится Шопен» is no song), and the word that qualifies the one asked about («Как
      зовут моего младшего брата?»: «Старшего брата зовут Глеб» is not him); with `verbs`, each of
      the question's verbs too (`_verbs`: «недолюбливаю»)."""
    if (says_no_info(answer) or adds_nothing(answer, question) or unrelated(answer, question, lines)
            or lemmas_of(answer) & _DENIES or _LABEL.match(answer)):
        return False
    named = named_in(answer) - named_in(question)
    said = [lemmas_of(_SESSION.sub(" ", f"{topic} {_LABEL.sub('', line)}")) for topic, line in lines]
    numbers = {w for w in named if is_count(w)}
    others = named - numbers
    if not (all(any(mentions_any(words, {n}) for words in said) for n in numbers)
            and (any(mentions_any(words, others) for words in said) if others else numbers)):
        return False
    holding = [words for words in said if mentions_any(words, others or numbers)]
    needs = [*_asked_of(question), *({verb} for verb in (_verbs(question) if verbs else ()))]
    return all(any(mentions_any(words, need) for words in holding) for need in needs if need)


def _verbs(question: str) -> set:
    """The lemmas of a question's verbs, less those that only ask a name or join (`_BARE_VERBS`):
    what the question says of the one it asks about («Какую музыку я **недолюбливаю**?»)."""
    return {_lemma(p) for p in _parses(question) if p.tag.POS in ("VERB", "INFN")} - _BARE_VERBS


_BARE_VERBS = frozenset(("быть", "звать", "называть", "назвать"))


def _asked_of(question: str) -> tuple[set, set]:
    """What a line giving the value must name: the nouns asked «какой»/«который»/«чей» of («сколько»
    asks a count, its noun a unit), and the adjectives right before the nouns asked about
    («младшего брата»: «младший»; «моего» points, it qualifies nothing)."""
    parses, nouns, asked = _nouns(question)
    attribute = {_lemma(parses[i]) for i, by in asked.items() if by != "сколько"}
    qualifiers = {_lemma(parses[i - 1]) for i in nouns if i not in asked and i > 0
                  and "ADJF" in parses[i - 1].tag and "Apro" not in parses[i - 1].tag}
    return attribute, qualifiers


_DENIES = frozenset("не нет нету ни неизвестно неизвестный".split())
_SESSION = re.compile(r"\b(?:сессия|сессии|session)\s*\d+", re.IGNORECASE)  # «(раньше: …, сессия 18)»
_LABEL = re.compile(r"^[^\W\d_][^\W\d_ ]*(?: [^\W\d_]+){0,2}: ")  # a speaker's label: «Ассистент: »
