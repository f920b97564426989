"""Which facts the answer prompt shows: the topic the question names first, then the nearest.

A question names its topic in its own words («Какие у меня растения?», «Что растёт у меня на
подоконнике?»), and the extractor filed the facts under slot keys («растения.фикус»,
«растения.кактус»); dense similarity of the question to each statement («Пользователь купил горшок
для фикуса») left half of a topic
out of a list answer. A fact is in the question's topic when its slot key holds a lemma of the
question, or when its key's first word (the topic, «растения») is one of the `labels` topics nearest
the question. `select` takes the few nearest facts, then the topic's facts (nearest first), then
the nearest others, while their lines fit a character budget. Called by `dialogue`.
"""
from __future__ import annotations

from typing import Callable, Iterable, Sequence

import numpy as np

from .facts import Fact, slot_words
from .lexical import tokenize


def topic_words(question: str, names: Iterable[str] = ()) -> frozenset:
    """The question's lemmas, less the people's names (in a chat between people every key ends with one).

    `topic_words("Какие у меня растения?")` == {"растение"}."""
    skip = {lemma for name in names for lemma in tokenize(name)}
    return frozenset(tokenize(question)) - skip


def label_of(fact: Fact) -> str:
    """The topic as the extractor wrote it: the slot key's first component («растения»)."""
    return fact.slot.split(".")[0].strip()


def nearest_labels(labels: Sequence[str], scores: np.ndarray, k: int) -> frozenset:
    """The k labels with the best scores (ties: the earlier label)."""
    order = sorted(range(len(labels)), key=lambda i: (-float(scores[i]), i))
    return frozenset(labels[i] for i in order[:k])


def in_topic(fact: Fact, words: frozenset, labels: frozenset) -> bool:
    """True when the fact's slot key holds one of the words («хобби.фотография» for {"хобби"}) or
    its topic is one of the labels."""
    return label_of(fact) in labels or not words.isdisjoint(slot_words(fact.slot).split())


def select(nearest: Sequence[Fact], topical: Callable[[Fact], bool], line_chars: Callable[[Fact], int],
           budget: int, max_lines: int, nearest_first: int) -> list[Fact]:
    """Facts for the prompt, in the order they were chosen: the `nearest_first` nearest, then the
    `topical` ones (nearest first), then the rest by nearness; a fact goes in while its line
    (`line_chars(fact)` characters) fits the budget, at most `max_lines` of them.

    `nearest` is every current fact, nearest the question first."""
    later = nearest[nearest_first:]
    order = [*nearest[:nearest_first], *(f for f in later if topical(f)), *(f for f in later if not topical(f))]
    chosen, used = [], 0
    for fact in order:
        size = line_chars(fact)
        if used + size <= budget:
            chosen.append(fact)
            used += size
        if len(chosen) >= max_lines:
            break
    return chosen
