"""Versioned facts: a newer fact replaces an older one only when both speak of the same
attribute of the same thing (the job, the age, the favourite film) and the value changed.

Two friends, two hobbies, two concerts are separate facts and all stay current: the
consolidation questions need every one of them, and a reader told that a value was
"replaced" believes it. So a link is made only on strong evidence: the same normalized key
(lemmas of the slot words, in any order), a different value, and statements that say the
same thing about it once the values are taken out (`frame`). Slot keys alone cannot tell
an update from a second fact on the same topic — an extractor that sees one message at a
time names keys loosely — hence the statements. The supersession pass (`versions`) may
decide candidate pairs instead of this rule; its decisions override the rule pair by pair.

A repeat (same key, same value, same frame) confirms a current fact; it is not a version.
Old facts are never deleted: `history` gives what a current fact replaced. Called by
`dialogue`; `versions` asks the LLM about `candidates`.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

from .facts import Fact, slot_words
from .lexical import tokenize

# Share of frame lemmas two statements must share to speak of the same attribute.
FRAME_MATCH = 0.5
_SUBJECT = frozenset({"пользователь", "user"})


def order(fact: Fact) -> tuple:
    return (fact.session_order, fact.pair_index, fact.turn_idx)


def key_of(fact: Fact) -> tuple:
    """`key_of(slot="Кличка собаки")` == `key_of(slot="собака.кличка")`: sorted lemmas of the slot."""
    return tuple(sorted(slot_words(fact.slot).split()))


def topic_of(fact: Fact) -> str:
    """What a fact is about, for grouping: the lemma of its slot's first word ("работа", "сын")."""
    words = slot_words(fact.slot.split(".")[0]).split()
    return words[0] if words else "—"


def same_value(a: Fact, b: Fact) -> bool:
    return _norm(a.value) == _norm(b.value)


def frame(fact: Fact) -> frozenset:
    """The statement's lemmas without the value's and without "user": what it says about the slot."""
    return frozenset(tokenize(fact.statement)) - frozenset(tokenize(fact.value)) - _SUBJECT


def frame_similarity(a: Fact, b: Fact) -> float:
    """Jaccard overlap of the two frames; two empty frames ("Пользователь курит.") agree."""
    fa, fb = frame(a), frame(b)
    if not fa and not fb:
        return 1.0
    return len(fa & fb) / len(fa | fb)


def specific(fact: Fact) -> bool:
    """A key of two or more words ("собака.кличка", "место жительства") names an attribute of a
    thing; a one-word key ("сын", "работа") only a topic, under which many facts stay true."""
    return len(key_of(fact)) >= 2


def rule_replaces(old: Fact, new: Fact) -> bool:
    """The link made without the LLM: the same specific key, a new value.

    On the recorded extraction fixture this links 0.96 correctly; keys cut to their first
    component (as a one-message extractor may name them) it leaves alone, where any key or
    statement-overlap rule measured joined mostly unrelated facts (docs/log.md, "Facts and versions")."""
    return specific(old) and specific(new) and key_of(old) == key_of(new) and not same_value(old, new)


def _norm(text: str) -> str:
    return " ".join(text.lower().replace("ё", "е").split()).strip(" .«»\"")


@dataclass(frozen=True)
class Link:
    old: Fact
    new: Fact


class Slots:
    """Every distinct fact of a dialogue, which of them replaced which, and the repeats."""

    def __init__(self):
        self.facts: list[Fact] = []  # distinct facts, oldest first
        self.repeats: dict[Fact, Fact] = {}  # a repeat -> the fact it restates
        self.replaced_by: dict[Fact, Fact] = {}  # old -> the fact that replaced it
        self.decided: dict[tuple, bool] = {}  # (old, new) -> the supersession pass's verdict
        self.checked: dict[tuple, Optional[bool]] = {}  # (old, new) -> the check's verdict, None if unusable
        self.candidates: list[tuple] = []  # every (old, new) pair that replaces, before the earliest is chosen

    def add(self, facts: Iterable[Fact]) -> list[Fact]:
        """File new facts (repeats aside), relink, and return the distinct new ones."""
        fresh = []
        for fact in sorted(facts, key=order):
            if fact in self.repeats or fact in self.facts:
                continue
            original = self._restated(fact)
            if original is not None:
                self.repeats[fact] = original
            else:
                self.facts.append(fact)
                fresh.append(fact)
        self.facts.sort(key=order)
        self.relink()
        return fresh

    def _restated(self, fact: Fact) -> Optional[Fact]:
        for other in reversed(self.facts):
            if key_of(other) == key_of(fact) and same_value(other, fact) and \
                    frame_similarity(other, fact) >= FRAME_MATCH:
                return other
        return None

    def decide(self, verdicts: dict) -> None:
        """The supersession pass's verdicts on (old, new) pairs; they override the rule."""
        self.decided.update(verdicts)
        self.relink()

    def confirm(self, verdicts: dict) -> None:
        """The check's verdicts on (old, new) pairs: False unlinks a pair for good, True or None
        (an unusable reply) leaves it to the pass and the rule."""
        self.checked.update(verdicts)
        self.relink()

    def unchecked(self) -> list[tuple]:
        """The pairs that replace now and that no check has been asked about, oldest new fact first."""
        return [pair for pair in self.candidates if pair not in self.checked]

    def relink(self) -> None:
        """Links from the verdicts and, for pairs the pass did not judge, the rule, less the pairs
        the check turned down; each old fact is replaced at most once, by the earliest later fact
        that replaces it while current."""
        replacing: dict = defaultdict(list)  # new -> the older facts it replaces
        by_key: dict = defaultdict(list)
        for fact in self.facts:
            by_key[key_of(fact)].append(fact)
        for bucket in by_key.values():
            for j, new in enumerate(bucket):
                replacing[new] += [old for old in bucket[:j] if (old, new) not in self.decided
                                   and order(old) < order(new) and rule_replaces(old, new)]
        for (old, new), verdict in self.decided.items():
            if verdict and order(old) < order(new):
                replacing[new].append(old)
        self.candidates, self.replaced_by = [], {}
        for new in self.facts:
            for old in sorted(replacing.get(new, ()), key=order):
                if self.checked.get((old, new)) is not False:
                    self.candidates.append((old, new))
                    self.replaced_by.setdefault(old, new)

    def links(self) -> list[Link]:
        return [Link(old, new) for old, new in self.replaced_by.items()]

    def current(self, fact: Fact) -> Fact:
        """The fact now standing for `fact`: itself, what it restates, or what replaced it."""
        fact = self.repeats.get(fact, fact)
        while fact in self.replaced_by:
            fact = self.replaced_by[fact]
        return fact

    def is_current(self, fact: Fact) -> bool:
        return fact not in self.replaced_by and fact not in self.repeats

    def history(self, fact: Fact) -> list[Fact]:
        """The facts `fact` replaced, directly or through earlier replacements, oldest first."""
        before = {new: [] for new in self.replaced_by.values()}
        for old, new in self.replaced_by.items():
            before[new].append(old)
        out, todo = [], list(before.get(fact, []))
        while todo:
            old = todo.pop()
            out.append(old)
            todo += before.get(old, [])
        return sorted(out, key=order)


@dataclass(frozen=True)
class FactLine:
    """One line of the answer prompt: a current fact and what it replaced, with provenance."""
    topic: str
    fact: Fact
    replaced: tuple  # of Fact, oldest first

    @property
    def label(self) -> str:
        """The topic as the extractor wrote it ("книги"), for the reader; `topic` is its lemma."""
        return self.fact.slot.split(".")[0].strip() or self.topic

    @property
    def turn_ids(self) -> tuple:
        return (self.fact.turn_idx, *(f.turn_idx for f in self.replaced))


LABELS = {"ru": ("сессия", "раньше"), "en": ("session", "earlier")}


def render(line: FactLine, lang: str) -> str:
    """`[сессия 5] Пользователь — старший механик. (раньше: «механик», сессия 3)`"""
    session, replaced = LABELS[lang]
    text = f"[{session} {line.fact.session_order + 1}] {line.fact.statement}"
    if line.replaced:
        older = "; ".join(f"«{f.value}», {session} {f.session_order + 1}" for f in line.replaced)
        text += f" ({replaced}: {older})"
    return text


def group_lines(lines: Sequence[FactLine]) -> list[tuple]:
    """(topic, lines) in the order topics first appear, each topic's lines oldest first."""
    groups: dict = {}
    for line in lines:
        groups.setdefault(line.topic, []).append(line)
    return [(topic, sorted(items, key=lambda x: order(x.fact))) for topic, items in groups.items()]
