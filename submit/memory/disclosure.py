"""Which user messages can tell something about the user: a rule run before any extraction call.

Most of what a user writes to an assistant is a request («Посоветуй, куда поехать летом»,
«Расскажи про КПТ»); a small extractor asked about such a message writes the request down as a
fact (Qwen2.5-Coder-1.5B over a contest dialogue: 172 of 228 "facts" were requests, topics or
garbled, by two judges; bench/results/fact_quality.md). `tells_about_user` is the cheap test
run before any call: a message can hold a fact about its writer only when it has a word that
points at them or their life: a first-person pronoun, a verb in the first person or the past
tense (Russian drops pronouns: «Купили Шкоду», «Вернулся из похода»), a person's name, or a
word for kin or a pet («Свекровь гостит до воскресенья»). On the contest sample's 950 user
messages it skips 39% and keeps the messages of 93% of the facts a capable model found
(bench/results/fact_quality.md). English text passes whole: the test is for Russian, the contest's
language. Called by `facts` when the settings' `extract_filter` is "disclosure" (off in the
contest: it loses 2 of 126 answer-bearing messages with a capable extractor, and the time
budget has room for every message).
"""
from __future__ import annotations

import re
from functools import lru_cache

from .lang import has_cyrillic
from .lexical import morph

PRONOUNS = frozenset("""я мне меня мной мой моя моё мое мои моего моей моим моих моему моими мою мы нас нам нами
наш наша наше наши нашего нашей нашим наших нашему нашу""".split())
KIN = """жена муж сын дочь дочка тёща свекровь тесть свёкор мама мать папа отец батя брат сестра сестрёнка бабушка
дедушка внук внучка племянник племянница друг подруга коллега начальник парень девушка ребёнок дети малыш семья
родители тётя дядя кот кошка собака пёс лошадь конь питомец""".split()
_WORD = re.compile(r"[а-яёa-z]+")


@lru_cache(maxsize=200_000)
def _parse(word: str) -> tuple:
    """(grammemes, lemma) of a Russian word's likeliest reading."""
    best = morph().parse(word)[0]
    return frozenset(str(best.tag).replace(" ", ",").split(",")), best.normal_form


@lru_cache(maxsize=1)
def _kin() -> frozenset:
    return frozenset(_parse(word)[1] for word in KIN)


def marks(text: str) -> set:
    """The kinds of words in `text` that point at its writer: `marks("Купили Шкоду") == {"past"}`."""
    found = set()
    for word in _WORD.findall(text.lower()):
        if word in PRONOUNS:
            found.add("pronoun")
        if not has_cyrillic(word):
            continue
        grammemes, lemma = _parse(word)
        if "VERB" in grammemes and "1per" in grammemes:
            found.add("first_person")
        if "VERB" in grammemes and "past" in grammemes:
            found.add("past")
        if grammemes & {"Name", "Surn", "Patr"}:
            found.add("name")
        if lemma in _kin():
            found.add("kin")
    return found


def tells_about_user(text: str) -> bool:
    """True when the message may say something about its writer (any English message: not judged)."""
    return not has_cyrillic(text) or bool(marks(text))
