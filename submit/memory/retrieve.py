"""Retrieval: a question -> turns ranked by a fusion of dense and BM25 evidence, then stages.

The dialogue's profile (`profiles.Profile`) says how: its query step (`QUERIES`) gives each
turn its best dense and BM25 key scores. In a user–assistant chat the dense query moves towards
its best user keys and BM25 also searches the lemmas they share (`feedback_query`); in a chat
between people it drops the speakers' names and the dialogue's common direction, and its best
hits query again on their own (`nameless_query`, `with_hit_queries`). The two are fused
(`fuse`), then the profile's stages (`STAGES`: the neighbours' and the session's share, the
speaker the question names, the period it names, the turns of the facts the answer shows) are
folded over the scores in order; `search(explain=True)` keeps each stage's share of each hit.
`rank_sessions` aggregates turns into sessions. Called by `dialogue` and local_eval.
"""
from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Callable, Collection

import numpy as np

from .index import SCORE_DECIMALS, KeyIndex
from .lexical import tokenize
from .profiles import ASSISTANT_CHAT, FeedbackQuery, NamelessQuery, Profile, Stage
from .timeref.periods import named_period
from .turns import USER, TurnStore, speaker_of, speakers


@dataclass(frozen=True)
class Hit:
    turn_idx: int
    score: float
    dense: float  # best dense key score of the turn (cosine), -1 if none
    lexical: float  # best BM25 key score of the turn, 0 if none
    shares: tuple = ()  # with `search(explain=True)`: ("fused", s), then (stage, what it added), in order


@dataclass(frozen=True)
class RetrieveSettings:
    method: str = "hybrid"  # "hybrid", "dense" or "bm25"
    # Weights measured on LongMemEval_S, LoCoMo and Russian dev (`bench/retrieval.py sweep`): e5
    # cosines of relevant and irrelevant turns lie close together, so BM25 gets a small weight.
    lexical_weight: float = 0.1  # weight of max-normalized BM25 next to cosine similarity
    # Turns with no dense key (long assistant replies) rank by BM25 alone, on a smaller
    # weight: their many generic words match questions without holding user facts.
    lexical_only_weight: float = 0.05
    # ... unless the question asks what the assistant said ("remind me what you recommended").
    assistant_question_weight: float = 0.3


@dataclass(frozen=True)
class Ask:
    """What every stage may read: the question, its dialogue, the fused scores, the favoured turns."""
    store: TurnStore
    question: str
    fused: dict
    favoured: frozenset


ASKS_ASSISTANT = re.compile(
    r"\byou (told|said|mentioned|recommended|suggested|provided|gave|listed|created|wrote|made|shared|explained)"
    r"|remind me|our (previous|earlier|last) (chat|conversation|discussion)"
    r"|напомни|(ты|вы) (мне )?(говорил|сказал|советовал|рекомендовал|предлагал|писал|перечислял|называл)",
    re.IGNORECASE)


def asks_about_assistant(question: str) -> bool:
    """True when the question is about the assistant's own words, which live in its long replies."""
    return bool(ASKS_ASSISTANT.search(question))


def best_per_turn(scores: np.ndarray, keys: list) -> dict:
    best: dict = {}
    for score, key in zip(scores.tolist(), keys):
        if score > best.get(key.turn_idx, -np.inf):
            best[key.turn_idx] = score
    return best


def fuse(dense: dict, lexical: dict, settings: RetrieveSettings) -> dict:
    """Turn -> fused score. Hybrid: cosine + w * BM25 / max BM25 (scores kept, not ranks:
    a naive rank fusion was measured worse than dense alone)."""
    if settings.method == "dense":
        return dict(dense)
    top = max(lexical.values(), default=0.0)
    norm = {t: s / top for t, s in lexical.items()} if top > 0 else {t: 0.0 for t in lexical}
    if settings.method == "bm25":
        return norm
    floor = min(dense.values(), default=0.0)  # a turn with no dense key gets the worst cosine
    fused = {t: s + settings.lexical_weight * norm.get(t, 0.0) for t, s in dense.items()}
    fused.update({t: floor + settings.lexical_only_weight * n for t, n in norm.items() if t not in dense})
    return fused


def search(index: KeyIndex, store: TurnStore, question: str, query_vector: np.ndarray,
           settings: RetrieveSettings = RetrieveSettings(), profile: Profile = ASSISTANT_CHAT,
           favoured: Collection[int] = (), explain: bool = False) -> list[Hit]:
    """All turns with any key, best first: the profile's query step, the fusion, then its stages in
    order; `favoured` turns (the sources of the facts the answer shows) feed the "favoured" stage.
    With `explain` each hit keeps its fused score and what each stage added (`Hit.shares`)."""
    if asks_about_assistant(question):
        settings = replace(settings, lexical_only_weight=settings.assistant_question_weight)
    dense, lexical = QUERIES[profile.query.name](index, store, question, query_vector, settings, profile.query)
    fused = fuse(dense, lexical, settings)
    ask = Ask(store, question, fused, frozenset(favoured))
    scores, shares = fused, {t: [("fused", s)] for t, s in fused.items()} if explain else None
    for stage in profile.stages:
        if not stage.weight:
            continue
        before, scores = scores, STAGES[stage.name](scores, stage, ask)
        if explain:
            for t, s in scores.items():
                shares[t].append((stage.name, s - before[t]))
    hits = [Hit(t, s, dense.get(t, -1.0), lexical.get(t, 0.0), tuple(shares[t]) if explain else ())
            for t, s in scores.items()]
    # Sums of the stages' shares equal in exact arithmetic tie, the earlier turn first.
    hits.sort(key=lambda h: (-round(h.score, SCORE_DECIMALS), h.turn_idx))
    return hits


def feedback_query(index: KeyIndex, store: TurnStore, question: str, query_vector: np.ndarray,
                   settings: RetrieveSettings, query: FeedbackQuery) -> tuple[dict, dict]:
    """(dense, BM25) best key score per turn in a user–assistant chat: the dense query moved towards
    its best user keys (`expand_query`), BM25 joined by the terms the best user turns share."""
    dense_scores, dense_keys = index.dense_search(query_vector)
    if query.keys and settings.method != "bm25":
        dense_scores, dense_keys = index.dense_search(
            expand_query(index, query_vector, dense_scores, query.keys, query.weight))
    question_tokens = tokenize(question)
    lexical_scores, lexical_keys = index.lexical_search_tokens(question_tokens)
    dense = best_per_turn(dense_scores, dense_keys)
    lexical = best_per_turn(lexical_scores, lexical_keys)
    if query.terms and settings.method == "hybrid":
        lexical = _with_feedback_terms(index, store, question_tokens, dense, lexical, query)
    return dense, lexical


def nameless_query(index: KeyIndex, store: TurnStore, question: str, query_vector: np.ndarray,
                   settings: RetrieveSettings, query: NamelessQuery) -> tuple[dict, dict]:
    """(dense, BM25) best key score per turn in a chat between people: the dense query without the
    speakers' names and the dialogue's common direction (`people_vector`), each of its best hits
    querying on its own too (`with_hit_queries`)."""
    dense_on = settings.method != "bm25"
    if dense_on:
        query_vector = people_vector(index, store, question, query_vector, query)
    dense_scores, dense_keys = index.dense_search(query_vector)
    if query.hits and dense_on:
        dense_scores = with_hit_queries(index, dense_scores, dense_keys, query.hits, query.hit_weight)
    lexical_scores, lexical_keys = index.lexical_search_tokens(tokenize(question))
    return best_per_turn(dense_scores, dense_keys), best_per_turn(lexical_scores, lexical_keys)


def expand_query(index: KeyIndex, query_vector: np.ndarray, scores: np.ndarray, k: int,
                 weight: float) -> np.ndarray:
    """Pseudo-relevance feedback: the query moved towards the mean of its k best user keys.

    Items of one kind said in different sessions ("how many plants did I buy") resemble
    each other more than they resemble the question; the first ones found pull in the rest."""
    user = np.array([key.role == USER for key in index.dense_keys[: len(scores)]], dtype=bool)
    if k <= 0 or not user.any():
        return query_vector
    candidates = np.where(user, scores, -np.inf)
    top = np.argsort(-candidates, kind="stable")[: min(k, int(user.sum()))]
    return unit(query_vector + weight * index.vectors(top).mean(axis=0))


def with_hit_queries(index: KeyIndex, scores: np.ndarray, keys: list, k: int, weight: float) -> np.ndarray:
    """Dense scores with each of the k best keys (of distinct turns) as a query of its own:
    (1 - weight) x the key's score + weight x its best cosine to one of those keys.

    A list's items are said in other sessions in other words ("What LGBTQ+ events has Caroline
    been to?": a support group, a pride parade); an item found resembles the next one more than
    the question does, and unlike the mean of the hits (`expand_query`) one item is enough."""
    top, seen = [], set()
    for i in np.argsort(-scores, kind="stable").tolist():
        if len(top) >= k:
            break
        if keys[i].turn_idx not in seen:
            seen.add(keys[i].turn_idx)
            top.append(i)
    if not top:
        return scores
    nearest = index.dense_search_many(index.vectors(top)).max(axis=0)
    return (1 - weight) * scores + weight * nearest


def people_vector(index: KeyIndex, store: TurnStore, question: str, query_vector: np.ndarray,
                  query: NamelessQuery) -> np.ndarray:
    """The dense query of a chat between people: moved towards the question without the speakers'
    names, then away from the mean of the dialogue's keys.

    Every turn opens with its speaker's name ("Tim: ..."), so a name in the question pulls
    the query towards greetings that name the person ("Hey Tim!") rather than the topic;
    whose turns matter is left to the speaker stage. And all turns of one chat share a
    common direction (two friends' small talk): a key close to the mean says little."""
    vector = query_vector
    nameless = nameless_question(question, speakers(store))
    if query.nameless_weight and nameless != question:
        vector = unit((1 - query.nameless_weight) * vector
                       + query.nameless_weight * index.embedder.embed_queries([nameless])[0])
    mean = key_mean(index)
    if query.centroid_weight and mean is not None:
        vector = unit(vector - query.centroid_weight * mean)
    return vector


def key_mean(index: KeyIndex):
    """The mean of every embedded dense key of the dialogue, None when it has none."""
    index.embed_pending()
    if not index.dense_keys:
        return None
    return index.vectors(range(len(index.dense_keys))).mean(axis=0)


def unit(vector: np.ndarray) -> np.ndarray:
    """The vector over its length, float64, the same bits on any machine: the length is summed by
    numpy's own loop (`similarities`), not by `np.linalg.norm`'s BLAS dot, whose order is the CPU's."""
    vector = np.asarray(vector, dtype=np.float64)
    length = float(np.sqrt((vector * vector).sum()))
    return vector / max(length, 1e-12)


def _with_feedback_terms(index: KeyIndex, store: TurnStore, question_tokens: list, dense: dict, lexical: dict,
                         query: FeedbackQuery) -> dict:
    """BM25 for the question plus `terms_weight` x BM25 for the terms its best user turns share."""
    best_user = sorted((t for t in dense if store.turns[t].role == USER), key=lambda t: (-dense[t], t))
    terms = index.feedback_terms(best_user[: query.keys], question_tokens, query.terms)
    if not terms:
        return lexical
    scores, keys = index.lexical_search_tokens(terms)
    extra = best_per_turn(scores, keys)
    top, top_extra = max(lexical.values(), default=0.0) or 1.0, max(extra.values(), default=0.0) or 1.0
    weight = query.terms_weight
    return {t: lexical.get(t, 0.0) / top + weight * extra.get(t, 0.0) / top_extra
            for t in lexical.keys() | extra.keys()}


def session_stage(scores: dict, stage: Stage, ask: Ask) -> dict:
    """Each turn plus `weight` x its session's best fused score."""
    best = defaultdict(lambda: -np.inf)
    for t, s in ask.fused.items():
        sid = ask.store.turns[t].session_id
        best[sid] = max(best[sid], s)
    return {t: s + stage.weight * best[ask.store.turns[t].session_id] for t, s in scores.items()}


def neighbour_stage(scores: dict, stage: Stage, ask: Ask) -> dict:
    """Each turn plus `weight` x the better of its two neighbours in the same session."""
    turns = ask.store.turns
    floor = min(scores.values(), default=0.0)
    out = {}
    for t, s in scores.items():
        sid = turns[t].session_id
        near = [scores[u] for u in (t - 1, t + 1) if u in scores and turns[u].session_id == sid]
        out[t] = s + stage.weight * (max(near) if near else floor)
    return out


NAME_PLACEHOLDER = "someone"


def nameless_question(question: str, names) -> str:
    """The question with each of these names (whole words) replaced by "someone".

    `nameless_question("What is Tim's job?", {"Tim"})` == "What is someone's job?"."""
    for name in sorted(names):
        question = re.sub(rf"\b{re.escape(name)}\b", NAME_PLACEHOLDER, question)
    return question


def speaker_stage(scores: dict, stage: Stage, ask: Ask) -> dict:
    """A bonus for turns that open with "Name: " when the question names that person."""
    named: dict = {}
    out = dict(scores)
    for t in scores:
        name = speaker_of(ask.store.turns[t].text)
        if not name:
            continue
        if name not in named:
            named[name] = re.search(rf"\b{re.escape(name)}\b", ask.question) is not None
        if named[name]:
            out[t] += stage.weight
    return out


def period_stage(scores: dict, stage: Stage, ask: Ask) -> dict:
    """A bonus for turns of sessions dated inside the period the question names, or just after it."""
    store = ask.store
    period = named_period(ask.question, store.day(store.question_date))
    if period is None or (period[1] - period[0]).days >= stage.max_days:
        return scores
    first, last = period[0], period[1] + timedelta(days=stage.after_days)
    inside = {sid for sid, text in store.session_dates.items()
              if (day := store.day(text)) is not None and first <= day <= last}
    if not inside:
        return scores
    return {t: s + stage.weight * (store.turns[t].session_id in inside) for t, s in scores.items()}


def favoured_stage(scores: dict, stage: Stage, ask: Ask) -> dict:
    """A bonus for the turns the facts shown to the answer came from (none in retrieval-only runs)."""
    if not ask.favoured:
        return scores
    return {t: s + stage.weight * (t in ask.favoured) for t, s in scores.items()}


QUERIES: dict[str, Callable] = {"feedback": feedback_query, "nameless": nameless_query}
STAGES: dict[str, Callable[[dict, Stage, Ask], dict]] = {
    "neighbour": neighbour_stage, "session": session_stage, "speaker": speaker_stage,
    "period": period_stage, "favoured": favoured_stage}


def rank_sessions(hits: list, store: TurnStore) -> list[str]:
    """Session ids by their best turn's score (the session-level view of a ranking)."""
    order, seen = [], set()
    for hit in hits:
        sid = store.turns[hit.turn_idx].session_id
        if sid not in seen:
            seen.add(sid)
            order.append(sid)
    return order
