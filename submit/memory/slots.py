"""Versioned slots: facts about the same thing form a chain; the newest is current.

Two facts share a slot when their normalized keys match (rapidfuzz on lemmatized key
words, or a weaker fuzzy match confirmed by embedding similarity). A chain is ordered by
(session order, pair index); older versions stay as history, never deleted. Called by
`dialogue`; `render` writes a chain for the answer prompt.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from .facts import Fact, slot_words

STRONG_MATCH = 90  # token_sort_ratio above which keys are the same slot outright
WEAK_MATCH = 60  # ... above which embedding similarity decides
EMBED_MATCH = 0.9


@dataclass(frozen=True)
class SlotVersion:
    slot: str  # the chain's key (its first spelling)
    fact: Fact

    @property
    def order(self) -> tuple:
        return (self.fact.session_order, self.fact.pair_index)


class Slots:
    def __init__(self, embedder=None):
        self.embedder = embedder
        self.chains: dict[str, list[SlotVersion]] = {}
        self._words: dict[str, str] = {}  # chain key -> normalized words
        self._vectors: dict[str, np.ndarray] = {}
        self._chain_of: dict[Fact, str] = {}  # every fact added, repeats too -> its chain key

    def add(self, facts: Sequence[Fact]) -> None:
        for fact in sorted(facts, key=lambda f: (f.session_order, f.pair_index)):
            key = self.match(fact.slot) or self._new_chain(fact.slot)
            chain = self.chains[key]
            self._chain_of[fact] = key
            if chain and _same_value(chain[-1].fact.value, fact.value):
                continue  # a repeat confirms the current value; it is not a new version
            chain.append(SlotVersion(key, fact))
            chain.sort(key=lambda v: v.order)

    def match(self, slot: str) -> Optional[str]:
        from rapidfuzz import fuzz, process
        words = slot_words(slot)
        if not self._words or not words:
            return None
        best = process.extractOne(words, self._words, scorer=fuzz.token_sort_ratio)
        if best is None:
            return None
        _, score, key = best
        if score >= STRONG_MATCH:
            return key
        if score >= WEAK_MATCH and self.embedder is not None:
            vector = self.embedder.embed_passages([words])[0]
            if float(vector @ self._vectors[key]) >= EMBED_MATCH:
                return key
        return None

    def _new_chain(self, slot: str) -> str:
        key = slot
        self.chains[key] = []
        self._words[key] = slot_words(slot)
        if self.embedder is not None:
            self._vectors[key] = self.embedder.embed_passages([self._words[key]])[0]
        return key

    def current(self, key: str) -> SlotVersion:
        return self.chains[key][-1]

    def chain_of(self, fact: Fact) -> Optional[str]:
        """The chain a fact went to (a repeat of the current value too), None if never added."""
        return self._chain_of.get(fact)


def _same_value(a: str, b: str) -> bool:
    return " ".join(a.lower().replace("ё", "е").split()) == " ".join(b.lower().replace("ё", "е").split())


def render(chain: Sequence[SlotVersion], lang: str) -> str:
    """One line: the current statement, then earlier values labeled as such."""
    label = {"ru": ("сессия", "раньше"), "en": ("session", "earlier")}[lang]
    current = chain[-1].fact
    line = f"[{label[0]} {current.session_order + 1}] {current.statement}"
    if len(chain) > 1:
        older = "; ".join(f"{v.fact.value} ({label[0]} {v.fact.session_order + 1})" for v in chain[:-1])
        line += f" ({label[1]}: {older})"
    return line
