"""One dialogue's memory: the whole flow from stored pairs to an answer.

`write` only records (cheap); `answer` does the expensive work in batches: rank the
turns for the question, pack them into a budgeted context, ask the LLM. Every stage's
seconds are kept in `timings` for the profiler. Called by `model_inference`.
"""
from __future__ import annotations

import time
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from . import answer as answer_step
from .context import Context, pack
from .embed import Embedder
from .llm import LLM, Ledger
from .turns import USER, TurnStore


@dataclass(frozen=True)
class Settings:
    context_chars: int = 8000
    max_turn_chars: int = 1200
    answer_max_tokens: int = 100


@dataclass
class Answer:
    text: str
    context: Context
    lang: str
    fallback: Optional[str] = None  # why the answer did not come from the LLM, if it did not
    timings: dict = field(default_factory=dict)


class DialogueMemory:
    def __init__(self, llm: LLM, embedder: Embedder, settings: Settings = Settings()):
        self.llm = llm
        self.embedder = embedder
        self.settings = settings
        self.store = TurnStore()
        self.ledger = Ledger()
        self.timings: dict = defaultdict(float)

    @contextmanager
    def stage(self, name: str):
        start = time.perf_counter()
        try:
            yield
        finally:
            self.timings[name] += time.perf_counter() - start

    def write(self, messages) -> None:
        with self.stage("write"):
            self.store.add_pair(messages)

    def answer(self, question: str, use_facts: bool = True) -> Answer:
        """The answer record; `use_facts=False` answers from raw evidence alone (a fallback rung)."""
        lang = answer_step.detect_lang(question)
        context = self.build_context(question, lang)
        chat = answer_step.build_prompt(question, context, lang,
                                        question_date=self.store.question_date)
        with self.stage("answer"):
            generation = self.llm.generate([chat], max_tokens=self.settings.answer_max_tokens)[0]
        self.ledger.add("answer", [generation])
        text = answer_step.clean_answer(generation.text)
        fallback = None if text else "empty_answer"
        return Answer(text=text or answer_step.NO_INFO[lang], context=context, lang=lang,
                      fallback=fallback, timings=dict(self.timings))

    def build_context(self, question: str, lang: str) -> Context:
        ranked = self.rank(question)
        with self.stage("pack"):
            return pack(self.store, ranked, self.settings.context_chars, lang,
                        self.settings.max_turn_chars)

    def rank(self, question: str) -> list:
        """User turns by dense similarity to the question (the v0 ranking)."""
        turns = [t for t in self.store.turns if t.role == USER and t.text.strip()]
        if not turns:
            return []
        with self.stage("embed"):
            passages = self.embedder.embed_passages([t.text for t in turns])
        with self.stage("retrieve"):
            query = self.embedder.embed_queries([question])[0]
            order = np.argsort(-(passages @ query), kind="stable")
        return [turns[i] for i in order]
