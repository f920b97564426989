"""Languages: the one place that tells Russian text from English, and the safe reply in each.

Two questions, two rules: `detect_lang` (which language a whole text is in: Cyrillic letters
against Latin ones) chooses prompts and replies; `has_cyrillic` (any Cyrillic letter at all)
chooses the time-phrase rules of `timeref` and the lemmatizer of `lexical`, where one Russian
word decides. `WORD` is the one spelling of a word for every module that splits text into words.
Used by `answer`, `timeref`, `lexical`, `gate`, `items`, `dialogue` and the scripted LLM.
"""
from __future__ import annotations

import re

NO_INFO = {"ru": "У меня нет такой информации.", "en": "I don't have that information."}
_CYRILLIC = re.compile(r"[а-яё]", re.IGNORECASE)
_LATIN = re.compile(r"[a-z]", re.IGNORECASE)
WORD = re.compile(r"[^\W_]+")  # a word: a run of letters and digits, any script


def detect_lang(text: str) -> str:
    """"ru" when Cyrillic letters are at least as many as Latin ones (and there are some), else "en".

    `detect_lang("Куда я еду?") == "ru"`; `detect_lang("Where do I live? (Омск)") == "en"`"""
    return "ru" if len(_CYRILLIC.findall(text)) >= len(_LATIN.findall(text)) and _CYRILLIC.search(text) else "en"


def asks_yes_no(question: str) -> bool:
    """A Russian question with the particle «ли» asks yes or no, whatever question word stands in it:
    `asks_yes_no("Помог ли мне совет, как починить кран?")` is True."""
    return "ли" in {w.lower() for w in WORD.findall(question)}


def has_cyrillic(text: str) -> bool:
    """`has_cyrillic("I left Омск")` is True."""
    return _CYRILLIC.search(text) is not None
