"""Retrieval: a question -> turns ranked by a fusion of dense and BM25 evidence.

In a user–assistant chat the dense query first moves towards its best user keys
(`expand_query`). Each key's score goes to the turn it points to (best key wins); the two
rankings are fused (`fuse`), then each turn gets a share of its session's strength, so evidence
spread over a session's turns and sessions that keep coming up rank together. In a peer
chat (two people writing short turns, like LoCoMo) the dense query instead drops the
speakers' names and the dialogue's common direction (`peer_query`), its best hits query
again on their own (`with_hit_queries`), a turn also takes a share of its neighbours'
scores, a turn by a speaker the question names gets a bonus, and so does a turn of a
session held in the period the question names (`period`). The turns of the facts the
answer shows get a bonus too (`favoured`). `rank_sessions` aggregates turns into sessions.
Called by `dialogue` and local_eval.
"""
from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Collection

import numpy as np

from .index import KeyIndex
from .lexical import tokenize
from .timeref.periods import named_period
from .turns import USER, TurnStore, speaker_of, speakers


@dataclass(frozen=True)
class Hit:
    turn_idx: int
    score: float
    dense: float  # best dense key score of the turn (cosine), -1 if none
    lexical: float  # best BM25 key score of the turn, 0 if none


@dataclass(frozen=True)
class RetrieveSettings:
    method: str = "hybrid"  # "hybrid", "dense" or "bm25"
    # Weights measured on LongMemEval_S, LoCoMo and Russian dev (bench/retrieval.py): e5
    # cosines vary by ~0.1 between relevant and not, so BM25 gets a small weight.
    lexical_weight: float = 0.1  # weight of max-normalized BM25 next to cosine similarity
    session_weight: float = 0.3  # share of the session's best score added to each turn
    # Turns with no dense key (long assistant replies) rank by BM25 alone, on a smaller
    # weight: their many generic words match questions without holding user facts.
    lexical_only_weight: float = 0.05
    # ... unless the question asks what the assistant said ("remind me what you recommended").
    assistant_question_weight: float = 0.3
    # Peer chats (the second side writes short turns too: LoCoMo's two friends) stay on one
    # topic for several turns, so a turn also takes a share of its best neighbour's score
    # and sessions weigh more. Measured on LoCoMo dev, LongMemEval_S and Russian dev
    # (README): it helps the first and hurts the other two, hence the gate.
    peer_max_median_chars: int = 400  # median length of the second side's turns
    peer_session_weight: float = 0.5
    peer_neighbor_weight: float = 0.5
    # A turn that opens with a speaker's name ("Caroline: ...") the question names (any chat;
    # assistant chats rarely open turns so). In LoCoMo, a question that names one person has
    # nearly all its evidence in that person's turns. 0.12: chosen held-out, as below.
    speaker_weight: float = 0.12
    # Peer chats' dense query (`peer_query`), chosen leave-one-conversation-out on LoCoMo
    # (bench/locomo_cv.py, README): the share taken by the question with the speakers' names
    # replaced by "someone", and the share of the dialogue's mean key vector taken away.
    peer_nameless_weight: float = 1.0
    peer_centroid_weight: float = 0.3
    # Pseudo-relevance feedback in user-assistant chats (`expand_query`): the dense query is
    # moved towards its 3 best user keys, half weight. It lifts LongMemEval's multi-session
    # questions and costs LoCoMo (hence not in peer chats); numbers in the README.
    feedback_keys: int = 3
    feedback_weight: float = 0.5
    # ... and BM25 also searches the 5 lemmas those best user turns share (`feedback_terms`),
    # at the question's own weight. Numbers in the README.
    feedback_terms: int = 5
    feedback_terms_weight: float = 1.0
    # Peer chats: each of the `hit_queries` best keys (of distinct turns) also queries on its own,
    # and a key's cosine becomes (1 - w) x its own + w x its best cosine to one of them
    # (`with_hit_queries`). Chosen leave-one-conversation-out on LoCoMo (bench/locomo_cv.py,
    # bench/results/lists.md): multi-hop questions gather items said in other sessions.
    hit_queries: int = 2
    hit_query_weight: float = 0.2
    # In a peer chat, a question that names a period ("on 25 May, 2022", "last Saturday":
    # `period`) gives turns of sessions held in it, or up to `period_after_days` after it (an
    # event is told in the next chat), this bonus; periods longer than `period_max_days` say
    # too little. Chosen leave-one-conversation-out on LoCoMo (README): 0.2 and 3 days in 4
    # folds of 5. Not in user-assistant chats: LongMemEval_S's questions with a period
    # ("a week ago", their evidence spread over older sessions too) gained nothing at any
    # weight from 0.02 to 0.2 and lost session recall at 0.2.
    period_weight: float = 0.2
    period_after_days: int = 3
    period_max_days: int = 31
    # The turns the answer's fact lines came from (`search(favoured=...)`) get this bonus: the
    # facts of a topic the question names bring their own messages into the excerpts, so a list
    # answer finds every item twice (bench/lists.py, README). Nothing in retrieval-only runs.
    fact_turn_weight: float = 0.05


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
           settings: RetrieveSettings = RetrieveSettings(), favoured: Collection[int] = ()) -> list[Hit]:
    """All turns with any key, best first; `favoured` turns (the sources of the facts the answer
    shows) get `fact_turn_weight`."""
    if asks_about_assistant(question):
        settings = replace(settings, lexical_only_weight=settings.assistant_question_weight)
    peer = is_peer_chat(store, settings.peer_max_median_chars)
    if peer and settings.method != "bm25":
        query_vector = peer_query(index, store, question, query_vector, settings)
    dense_scores, dense_keys = index.dense_search(query_vector)
    if settings.feedback_keys and not peer and settings.method != "bm25":
        dense_scores, dense_keys = index.dense_search(
            expand_query(index, query_vector, dense_scores, settings.feedback_keys, settings.feedback_weight))
    if settings.hit_queries and peer and settings.method != "bm25":
        dense_scores = with_hit_queries(index, dense_scores, dense_keys, settings.hit_queries,
                                        settings.hit_query_weight)
    question_tokens = tokenize(question)
    lexical_scores, lexical_keys = index.lexical_search_tokens(question_tokens)
    dense = best_per_turn(dense_scores, dense_keys)
    lexical = best_per_turn(lexical_scores, lexical_keys)
    if settings.feedback_terms and not peer and settings.method == "hybrid":
        lexical = _with_feedback_terms(index, store, question_tokens, dense, lexical, settings)
    fused = fuse(dense, lexical, settings)
    scores = _neighbor_boost(fused, store, settings.peer_neighbor_weight) if peer else fused
    session_weight = settings.peer_session_weight if peer else settings.session_weight
    if session_weight:
        scores = _session_boost(scores, fused, store, session_weight)
    if settings.speaker_weight:
        scores = _speaker_boost(scores, store, question, settings.speaker_weight)
    if peer and settings.period_weight:
        scores = _period_boost(scores, store, question, settings)
    if favoured and settings.fact_turn_weight:
        scores = {t: s + settings.fact_turn_weight * (t in favoured) for t, s in scores.items()}
    hits = [Hit(t, s, dense.get(t, -1.0), lexical.get(t, 0.0)) for t, s in scores.items()]
    hits.sort(key=lambda h: (-h.score, h.turn_idx))
    return hits


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
    moved = query_vector + weight * index.vectors(top).mean(axis=0)
    return (moved / max(float(np.linalg.norm(moved)), 1e-12)).astype(np.float32)


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
    return ((1 - weight) * scores + weight * nearest).astype(np.float32)


def peer_query(index: KeyIndex, store: TurnStore, question: str, query_vector: np.ndarray,
               settings: RetrieveSettings) -> np.ndarray:
    """The dense query of a peer chat: moved towards the question without the speakers' names,
    then away from the mean of the dialogue's keys.

    Every turn opens with its speaker's name ("Tim: ..."), so a name in the question pulls
    the query towards greetings that name the person ("Hey Tim!") rather than the topic;
    whose turns matter is left to the speaker bonus. And all turns of one chat share a
    common direction (two friends' small talk): a key close to the mean says little."""
    query = query_vector
    nameless = nameless_question(question, speakers(store))
    if settings.peer_nameless_weight and nameless != question:
        query = _unit((1 - settings.peer_nameless_weight) * query
                      + settings.peer_nameless_weight * index.embedder.embed_queries([nameless])[0])
    mean = key_mean(index)
    if settings.peer_centroid_weight and mean is not None:
        query = _unit(query - settings.peer_centroid_weight * mean)
    return query


def key_mean(index: KeyIndex):
    """The mean of every embedded dense key of the dialogue, None when it has none."""
    index.embed_pending()
    if not index.dense_keys:
        return None
    return index.vectors(range(len(index.dense_keys))).mean(axis=0)


def _unit(vector: np.ndarray) -> np.ndarray:
    return (vector / max(float(np.linalg.norm(vector)), 1e-12)).astype(np.float32)


def _with_feedback_terms(index: KeyIndex, store: TurnStore, question_tokens: list, dense: dict, lexical: dict,
                         settings: RetrieveSettings) -> dict:
    """BM25 for the question plus `feedback_terms_weight` x BM25 for the terms its best user turns share."""
    best_user = sorted((t for t in dense if store.turns[t].role == USER), key=lambda t: (-dense[t], t))
    terms = index.feedback_terms(best_user[: settings.feedback_keys], question_tokens, settings.feedback_terms)
    if not terms:
        return lexical
    scores, keys = index.lexical_search_tokens(terms)
    extra = best_per_turn(scores, keys)
    top, top_extra = max(lexical.values(), default=0.0) or 1.0, max(extra.values(), default=0.0) or 1.0
    weight = settings.feedback_terms_weight
    return {t: lexical.get(t, 0.0) / top + weight * extra.get(t, 0.0) / top_extra
            for t in lexical.keys() | extra.keys()}


def is_peer_chat(store: TurnStore, max_median_chars: int) -> bool:
    """True when the second side writes short turns too: a chat between people, not an assistant."""
    lengths = [len(t.text) for t in store.turns if t.role != USER and t.text.strip()]
    return bool(lengths) and float(np.median(lengths)) <= max_median_chars


def _session_boost(scores: dict, base: dict, store: TurnStore, weight: float) -> dict:
    """Each turn of `scores` plus `weight` x its session's best `base` score."""
    best = defaultdict(lambda: -np.inf)
    for t, s in base.items():
        sid = store.turns[t].session_id
        best[sid] = max(best[sid], s)
    return {t: s + weight * best[store.turns[t].session_id] for t, s in scores.items()}


def _neighbor_boost(scores: dict, store: TurnStore, weight: float) -> dict:
    """Each turn plus `weight` x the better of its two neighbours in the same session."""
    floor = min(scores.values(), default=0.0)
    out = {}
    for t, s in scores.items():
        sid = store.turns[t].session_id
        near = [scores[u] for u in (t - 1, t + 1) if u in scores and store.turns[u].session_id == sid]
        out[t] = s + weight * (max(near) if near else floor)
    return out


NAME_PLACEHOLDER = "someone"


def nameless_question(question: str, names) -> str:
    """The question with each of these names (whole words) replaced by "someone".

    `nameless_question("What is Tim's job?", {"Tim"})` == "What is someone's job?"."""
    for name in sorted(names):
        question = re.sub(rf"\b{re.escape(name)}\b", NAME_PLACEHOLDER, question)
    return question


def _speaker_boost(scores: dict, store: TurnStore, question: str, weight: float) -> dict:
    """A bonus for turns that open with "Name: " when the question names that person."""
    named: dict = {}
    out = dict(scores)
    for t in scores:
        name = speaker_of(store.turns[t].text)
        if not name:
            continue
        if name not in named:
            named[name] = re.search(rf"\b{re.escape(name)}\b", question) is not None
        if named[name]:
            out[t] += weight
    return out


def _period_boost(scores: dict, store: TurnStore, question: str, settings: RetrieveSettings) -> dict:
    """A bonus for turns of sessions dated inside the period the question names, or just after it."""
    period = named_period(question, store.day(store.question_date))
    if period is None or (period[1] - period[0]).days >= settings.period_max_days:
        return scores
    first, last = period[0], period[1] + timedelta(days=settings.period_after_days)
    inside = {sid for sid, text in store.session_dates.items()
              if (day := store.day(text)) is not None and first <= day <= last}
    if not inside:
        return scores
    return {t: s + settings.period_weight * (store.turns[t].session_id in inside) for t, s in scores.items()}


def rank_sessions(hits: list, store: TurnStore) -> list[str]:
    """Session ids by their best turn's score (the session-level view of a ranking)."""
    order, seen = [], set()
    for hit in hits:
        sid = store.turns[hit.turn_idx].session_id
        if sid not in seen:
            seen.add(sid)
            order.append(sid)
    return order
