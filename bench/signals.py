"""Signals for a decline gate: how well the memory's best evidence covers a question, without the reader.

A small reader asked to say "no information" when the material lacks the answer invents one
instead (bench/results/readers.md: 0 of 5 Russian `no_info`, 0 of 6 LoCoMo adversarial
declined by Qwen2.5-Coder-1.5B, and every prompt wording that made it decline cost answerable
questions). So the decision is made from what retrieval already knows, at no extra cost:
`signals` measures how well the best evidence covers the question (dense nearness of its best
turn and fact, the share of the question's content words the best line holds, whether a fact
files under the question's topic, and in a chat between two people whether the person the
question names is the one who said the best-matching things). Measured, not used by the contest
path: on Russian dev no signal separates the `no_info` questions (bench/gate.py). Called by
bench/prompts.py, which stores them beside each answer prompt.
"""
from __future__ import annotations

import numpy as np

from submit.memory.lexical import tokenize
from submit.memory.turns import USER, speaker_of

TOP_LINES = 10  # best-ranked turns whose words count for coverage


def content_words(question: str, names=()) -> frozenset:
    """The question's lemmas less the people's names: what an answer line should speak of."""
    skip = {lemma for name in names for lemma in tokenize(name)}
    return frozenset(tokenize(question)) - skip


def coverage(words: frozenset, texts) -> float:
    """The largest share of `words` that one text holds (0 when there are no words)."""
    if not words:
        return 0.0
    return max((len(words & set(tokenize(text))) / len(words) for text in texts), default=0.0)


def signals(memory, question: str) -> dict:
    """What the memory knows about how well it can answer `question`, as plain numbers."""
    hits = memory.rank(question)
    store, peer = memory.store, memory.profile.named
    names = list(memory.profile.people(store))
    words = content_words(question, names)
    top = [store.turns[h.turn_idx].text for h in hits
           if peer or store.turns[h.turn_idx].role == USER][:TOP_LINES]
    fact_scores, fact_texts = _fact_scores(memory, question)
    dense = [h.dense for h in hits if h.dense > -1]
    found = {"words": len(words), "turn_dense": max(dense, default=0.0),
             "turn_dense_z": _z(max(dense, default=0.0), dense),
             "turn_cover": coverage(words, top),
             "fact_dense": max(fact_scores, default=0.0),
             "fact_cover": coverage(words, fact_texts[:TOP_LINES]),
             "topic_facts": _topic_facts(memory, words)}
    if peer:
        found["speaker_margin"] = _speaker_margin(hits, store, question, names)
        found["fact_speaker_margin"] = _fact_speaker_margin(memory, question, names)
        found.update(_ownership(memory, hits, question, names))
    return found


def _ownership(memory, hits, question: str, names: list) -> dict:
    """Research signals: of the best 1, 3, 5, 10 turns (by the nameless query) and facts, the share
    said by (or about) the person the question names."""
    from submit.memory.retrieve import nameless_question
    named = [n for n in names if n in question]
    if len(named) != 1 or len(names) != 2:
        return {}
    who = named[0]
    query = memory.embedder.embed_queries([nameless_question(question, names)])[0]
    scores, keys = memory.index.dense_search(query)
    turns, facts, seen = [], [], set()
    for i in np.argsort(-scores, kind="stable"):
        key = keys[i]
        if key.kind == "fact":
            facts.append(memory.facts[key.ref].slot.rsplit(".", 1)[-1] == who)
        elif key.turn_idx not in seen:
            seen.add(key.turn_idx)
            turns.append(speaker_of(memory.store.turns[key.turn_idx].text) == who)
    out = {}
    for k in (1, 3, 5, 10):
        out[f"own_turns@{k}"] = sum(turns[:k]) / max(1, len(turns[:k]))
        out[f"own_facts@{k}"] = sum(facts[:k]) / max(1, len(facts[:k]))
    return out


def _fact_speaker_margin(memory, question: str, names: list) -> float:
    """In a chat between two people, when the question names one of them: how much nearer the
    question, its names taken out, the named person's facts are than the other's (each fact's key
    ends with its person's name). A question about the wrong person finds the other's facts."""
    from submit.memory.retrieve import nameless_question
    named = [n for n in names if n in question]
    if len(named) != 1 or len(names) != 2 or not memory.facts:
        return 0.0
    query = memory.embedder.embed_queries([nameless_question(question, names)])[0]
    scores, keys = memory.index.dense_search(query)
    best = {n: -1.0 for n in names}
    for i, key in enumerate(keys):
        if key.kind != "fact":
            continue
        owner = memory.facts[key.ref].slot.rsplit(".", 1)[-1]
        if owner in best and scores[i] > best[owner]:
            best[owner] = float(scores[i])
    other = [n for n in names if n != named[0]][0]
    return best[named[0]] - best[other]


def _fact_scores(memory, question: str) -> tuple[list, list]:
    """Cosines of the current facts to the question, best first, and their statements in that order."""
    if not memory.facts:
        return [], []
    scores, keys = memory.index.dense_search(memory._query_vector(question))
    ranked = sorted(((float(scores[i]), memory.facts[k.ref].statement) for i, k in enumerate(keys)
                     if k.kind == "fact"), key=lambda pair: -pair[0])
    return [s for s, _ in ranked], [t for _, t in ranked]


def _topic_facts(memory, words: frozenset) -> int:
    """How many facts file under a key that holds one of the question's words."""
    from submit.memory.facts import slot_words
    return sum(1 for fact in memory.facts if not words.isdisjoint(slot_words(fact.slot).split()))


def _z(value: float, population: list) -> float:
    """How far `value` stands above the mean of `population`, in standard deviations."""
    if len(population) < 2:
        return 0.0
    spread = float(np.std(population))
    return (value - float(np.mean(population))) / spread if spread > 0 else 0.0


def _speaker_margin(hits, store, question: str, names: list) -> float:
    """In a chat between two people, when the question names one of them: the best dense score of
    that person's turns minus the other's (a question about the wrong person matches the other's
    words best). 0 when the question names neither or both."""
    named = [n for n in names if n in question]
    if len(named) != 1 or len(names) != 2:
        return 0.0
    best = {n: -1.0 for n in names}
    for hit in hits:
        who = speaker_of(store.turns[hit.turn_idx].text)
        if who in best and hit.dense > best[who]:
            best[who] = hit.dense
    other = [n for n in names if n != named[0]][0]
    return best[named[0]] - best[other]
