"""Lexical analysis for BM25: words -> lemmas (Russian, pymorphy3) or stems (English, Snowball).

Each word is normalized by its own script, so mixed Russian/English text works. Lemmas
are cached per word: dialogues repeat their vocabulary. Called by `index`.
"""
from __future__ import annotations

from functools import lru_cache

from .lang import WORD, has_cyrillic


STOP_RU = frozenset("""
и в во не что он на я с со как а то все она так его но да ты к у же вы за бы по только ее мне было вот от
меня еще нет о из ему теперь когда даже ну вдруг ли если уже или ни быть был него до вас нибудь опять уж вам
ведь там потом себя ничего ей может они тут где есть надо ней для мы тебя их чем была сам чтоб без будто чего
раз тоже себе под будет ж тогда кто этот того потому этого какой совсем ним здесь этом один почти мой тем
чтобы нее сейчас были куда зачем всех никогда можно при наконец два об другой хоть после над больше тот
через эти нас про всего них какая много разве три эту моя впрочем хорошо свою этой перед иногда лучше чуть
том нельзя такой им более всегда конечно всю между это мочь весь свой который быть такой мы ты вы
""".split())
STOP_EN = frozenset("""
a an the and or but if of at by for with about to from in on is are was were be been being am do does did
i me my we our you your he him his she her it its they them their what which who whom this that these those
so than too very can will just should now have has had not no nor as until while into through during before
after above below up down out off over under again then once here there when where why how all any both each
few more most other some such only own same s t don ll m re ve y
""".split())


@lru_cache(maxsize=1)
def morph():
    """The one Russian morphological analyzer (pymorphy3), loaded once: `disclosure` reads it too."""
    import pymorphy3
    return pymorphy3.MorphAnalyzer()


@lru_cache(maxsize=1)
def _stemmer():
    import Stemmer
    return Stemmer.Stemmer("english")


@lru_cache(maxsize=200_000)
def normalize_word(word: str) -> str:
    """`normalize_word("собаки")` -> "собака"; `normalize_word("running")` -> "run"."""
    if has_cyrillic(word):
        return morph().parse(word)[0].normal_form.replace("ё", "е")
    if word.isascii() and word.isalpha():
        return _stemmer().stemWord(word)
    return word


def tokenize(text: str) -> list[str]:
    """Lowercased, stop words dropped, each word lemmatized or stemmed."""
    tokens = []
    for word in WORD.findall(text.lower()):
        if word in STOP_RU or word in STOP_EN:
            continue
        lemma = normalize_word(word)
        if lemma not in STOP_RU:
            tokens.append(lemma)
    return tokens
