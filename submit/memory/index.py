"""Per-dialogue search indexes over *keys*: texts that point back to turns.

A turn gives one lexical key (its whole text, for BM25 over lemmas) and dense keys
(chunks of its text, so a long pasted text cannot drown a short personal statement).
Extracted facts are added as extra keys pointing to their source turns. A float32 matrix holds
the dense keys' normalized vectors, scored by `similarities` (the same bits on any machine),
bm25s the lexical ones. Keys are embedded lazily, in one batch, when the first search needs
them. Called by `retrieve` and `dialogue`.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from .embed import Embedder
from .lexical import tokenize
from .turns import NO_REPLY, USER, Turn

HAS_WORD = re.compile(r"\w")
EMPTY = "\u2205"  # the token of a key with no words (bm25s needs one)
# Cosines are compared at this many decimals: closer ones are one score, and the earlier key
# (turn, fact) wins the tie. Below 1e-6 a difference is arithmetic noise, not evidence.
SCORE_DECIMALS = 6


def similarities(vectors: np.ndarray, query: np.ndarray) -> np.ndarray:
    """The inner product of each row with the query (cosines, for unit vectors), float64, rounded
    to `SCORE_DECIMALS`: the same bits on any machine, whatever the number or order of the rows.

    FAISS and BLAS sum a dot product in an order chosen for the CPU (AVX-512 or AVX2, blocks of
    rows), so one record's scores differed in the last bits between machines and near-ties
    flipped, changing the answer prompt (issue 46). Here each product of two float32 values is
    exact in float64 and numpy's own pairwise loop sums each row, in one order on every CPU.
    `similarities(np.eye(2), [0.6, 0.8])` == [0.6, 0.8]."""
    rows = np.asarray(vectors, dtype=np.float64).reshape(-1, np.shape(query)[-1])
    return np.round((rows * np.asarray(query, dtype=np.float64)).sum(axis=1), SCORE_DECIMALS)


@dataclass(frozen=True)
class Key:
    text: str
    turn_idx: int
    kind: str  # "turn", "chunk" or "fact"
    role: str
    ref: int = -1  # for a fact key: the fact's position in its memory's list of facts


@dataclass(frozen=True)
class IndexSettings:
    chunk_chars: int = 600  # dense key size; e5-small sees ~512 tokens at most
    max_chunks: int = 3  # per user turn: long pasted texts keep only their head
    # Short assistant replies are conversation (LoCoMo's second speaker) and get a dense
    # key; long ones are generic answers, left to BM25 (embedding them is most of the cost).
    assistant_dense_max_chars: int = 400


def chunks(text: str, size: int, limit: int) -> list[str]:
    """Up to `limit` pieces of about `size` chars, cut at whitespace where possible."""
    pieces, rest = [], text.strip()
    while rest and len(pieces) < limit:
        if len(rest) <= size:
            pieces.append(rest)
            break
        cut = rest.rfind(" ", size // 2, size)
        cut = cut if cut > 0 else size
        pieces.append(rest[:cut])
        rest = rest[cut:].strip()
    return pieces


class KeyIndex:
    def __init__(self, embedder: Embedder, settings: IndexSettings = IndexSettings()):
        self.embedder = embedder
        self.settings = settings
        self.dense_keys: list[Key] = []
        self.lexical_keys: list[Key] = []
        self._vectors = np.zeros((0, 0), dtype=np.float32)  # a row per embedded dense key
        self._embedded = 0  # dense keys already embedded
        self._bm25 = None
        self._bm25_size = 0
        self._tokens: list = []  # per lexical key, as BM25 indexed it
        self._df: Counter = Counter()  # lemma -> lexical keys holding it

    def add_turns(self, turns: Sequence[Turn]) -> None:
        s = self.settings
        for turn in turns:
            if not HAS_WORD.search(turn.text) or turn.text.strip() == NO_REPLY:
                continue  # empty, a lone zero-width space or the harness's placeholder: nothing to find
            self.lexical_keys.append(Key(turn.text, turn.idx, "turn", turn.role))
            if turn.role == USER:
                pieces = chunks(turn.text, s.chunk_chars, s.max_chunks)
            elif len(turn.text) <= s.assistant_dense_max_chars:
                pieces = [turn.text.strip()]
            else:
                pieces = []
            self.dense_keys += [Key(p, turn.idx, "chunk", turn.role) for p in pieces]

    def add_keys(self, texts: Sequence[str], turn_ids: Sequence[int], kind: str = "fact",
                 role: str = USER, refs: Optional[Sequence[int]] = None) -> None:
        """Extra keys (e.g. extracted facts) that point to their source turns (and `refs`, to the facts)."""
        refs = list(refs) if refs is not None else [-1] * len(texts)
        for text, idx, ref in zip(texts, turn_ids, refs):
            if text and text.strip():
                key = Key(text.strip(), int(idx), kind, role, int(ref))
                self.dense_keys.append(key)
                self.lexical_keys.append(key)

    def dense_search(self, query_vector: np.ndarray) -> tuple[np.ndarray, list]:
        """Scores of every dense key (`similarities`), and the keys."""
        self.embed_pending()
        if not self._embedded:
            return np.zeros(0, dtype=np.float64), []
        return similarities(self._vectors, query_vector), self.dense_keys[: self._embedded]

    def dense_search_many(self, query_vectors: np.ndarray) -> np.ndarray:
        """Scores of every embedded dense key for each query: (queries x keys), by position."""
        self.embed_pending()
        queries = np.asarray(query_vectors).reshape(-1, self._vectors.shape[1])
        return np.stack([similarities(self._vectors, q) for q in queries]).reshape(len(queries), self._embedded)

    def vectors(self, positions) -> np.ndarray:
        """The embedded vectors of these dense keys (by position in `dense_keys`)."""
        return self._vectors[[int(i) for i in positions]]

    def lexical_search(self, query: str) -> tuple[np.ndarray, list]:
        """BM25 score of every lexical key for the query's lemmas."""
        return self.lexical_search_tokens(tokenize(query))

    def lexical_search_tokens(self, tokens: Sequence[str]) -> tuple[np.ndarray, list]:
        """BM25 score of every lexical key for these (already lemmatized) tokens."""
        if not self.lexical_keys or not tokens:
            return np.zeros(len(self.lexical_keys), dtype=np.float32), self.lexical_keys
        self._build_bm25()
        vocab = self._bm25.vocab_dict
        known = [t for t in tokens if t in vocab]
        if not known:
            return np.zeros(len(self.lexical_keys), dtype=np.float32), self.lexical_keys
        return np.asarray(self._bm25.get_scores(known), dtype=np.float32), self.lexical_keys

    def feedback_terms(self, turn_ids: Sequence[int], exclude: Sequence[str], n: int) -> list[str]:
        """The n lemmas that best mark these turns: turns holding it x log(N / document frequency).

        Lexical pseudo-relevance feedback (RM3-like): the words the best turns share name
        what the question only implies ("Dr. Patel" for "doctors")."""
        if n <= 0 or not turn_ids or not self.lexical_keys:
            return []
        self._build_bm25()
        wanted, skip = set(turn_ids), set(exclude)
        held: Counter = Counter()
        for key, tokens in zip(self.lexical_keys, self._tokens):
            if key.kind == "turn" and key.turn_idx in wanted:
                held.update(set(tokens) - skip - {EMPTY})
        total = len(self._tokens)
        weight = {t: c * math.log(total / (1 + self._df[t])) for t, c in held.items()}
        return sorted(weight, key=lambda t: (-weight[t], t))[:n]

    def embed_pending(self) -> None:
        pending = self.dense_keys[self._embedded:]
        if not pending:
            return
        vectors = np.asarray(self.embedder.embed_passages([k.text for k in pending]), dtype=np.float32)
        self._vectors = np.concatenate([self._vectors.reshape(-1, vectors.shape[1]), vectors])
        self._embedded = len(self.dense_keys)

    def _build_bm25(self) -> None:
        if self._bm25 is not None and self._bm25_size == len(self.lexical_keys):
            return
        import bm25s
        corpus = [tokenize(k.text) or [EMPTY] for k in self.lexical_keys]
        self._tokens = corpus
        self._df = Counter(t for tokens in corpus for t in set(tokens))
        self._bm25 = bm25s.BM25()
        self._bm25.index(corpus, show_progress=False)
        self._bm25_size = len(self.lexical_keys)
