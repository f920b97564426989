"""SubmitModelWithMemory: the only class the contest harness sees.

It reads the configuration once, builds the LLM before anything touches CUDA (vLLM's
rule), keeps one `DialogueMemory` per dialogue id, and turns any failure into a safe
answer, counting it in `fallbacks` so evaluation reports it instead of hiding it. The
time budget degrades extraction when the run falls behind, and a hard ceiling bounds
every answer: past it, the safe reply comes back while the late work finishes aside.
"""
from __future__ import annotations

import logging
from collections import Counter
from concurrent.futures import ThreadPoolExecutor, TimeoutError as FutureTimeout
from typing import List, Optional

from models import Message
from submit_interface import ModelWithMemory

from .config import Config, resolve_embedder, resolve_llm
from .memory.answer import NO_INFO, detect_lang
from .memory.budget import BudgetSettings, TimeBudget
from .memory.dialogue import Answer, DialogueMemory, Settings
from .memory.embed import CachedEmbedder, Embedder, make_embedder
from .memory.llm import LLM, StopRun, make_llm
from .memory.turns import clean_text

log = logging.getLogger("gigamemory")


class SubmitModelWithMemory(ModelWithMemory):
    def __init__(self, model_path: str, config: Optional[Config] = None,
                 llm: Optional[LLM] = None, embedder: Optional[Embedder] = None):
        self.config = config or Config.from_env()
        self.model_path = model_path
        # vLLM must start before any CUDA use, so the LLM comes first.
        self.llm = llm or make_llm(resolve_llm(self.config.llm, model_path))
        self.embedder = embedder or make_embedder(resolve_embedder(self.config.embedder))
        if self.config.embed_cache_dir:
            self.embedder = CachedEmbedder(self.embedder, f"{self.config.embed_cache_dir}/embeddings.sqlite")
        self.settings = Settings(context_chars=self.config.context_chars,
                                 max_turn_chars=self.config.max_turn_chars,
                                 answer_max_tokens=self.config.answer_max_tokens,
                                 extract_max_tokens=self.config.extract_max_tokens)
        self.budget = TimeBudget(BudgetSettings(total_seconds=self.config.budget_hours * 3600,
                                                expected_dialogues=self.config.expected_dialogues,
                                                answer_ceiling_seconds=self.config.answer_ceiling_s))
        # One worker: answers run one at a time, and a late one keeps the LLM to itself.
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gigamemory-answer")
        self.memories: dict[str, DialogueMemory] = {}
        self.traces: dict[str, Answer] = {}
        self.fallbacks: Counter = Counter()
        log.info("gigamemory: llm=%s embedder=%s", self.llm.name, self.embedder.name)

    def _memory(self, dialogue_id) -> DialogueMemory:
        key = str(dialogue_id)
        if key not in self.memories:
            self.memories[key] = DialogueMemory(self.llm, self.embedder, self.settings)
        return self.memories[key]

    def write_to_memory(self, messages: List[Message], dialogue_id: str) -> None:
        try:
            self._memory(dialogue_id).write(messages)
        except Exception:  # a lost pair is better than a lost run
            self.fallbacks["write_error"] += 1
            log.exception("write_to_memory failed for dialogue %s", dialogue_id)

    def answer_to_question(self, dialogue_id: str, question: str) -> str:
        """Never raises; returns within the ceiling: the answer, or a safe "no information"."""
        question = question if isinstance(question, str) else clean_text(question)
        memory = self._memory(dialogue_id)
        level = self.budget.level(memory.started)
        if level:
            self.fallbacks[f"budget_level_{level}"] += 1
        future = self._worker.submit(self._ladder, memory, question, level)
        try:
            result = future.result(timeout=max(0.0, self.budget.remaining(memory.started)))
        except FutureTimeout:
            self.fallbacks["ceiling"] += 1
            log.error("answer for dialogue %s passed the %.0f s ceiling", dialogue_id,
                      self.config.answer_ceiling_s)
            result = None
        finally:
            self.budget.done()
        if result is None:
            self.fallbacks["no_information"] += 1
            return NO_INFO[detect_lang(question)]
        self.traces[str(dialogue_id)] = result
        return result.text

    def _ladder(self, memory: DialogueMemory, question: str, level: int) -> Optional[Answer]:
        """Full answer -> raw evidence only -> None (the caller's safe reply); each rung counted."""
        for use_facts, rung in ((True, None), (False, "raw_evidence")):
            try:
                result = memory.answer(question, use_facts=use_facts, level=level)
            except StopRun:  # a replay miss: the eval must stop and say why
                raise
            except Exception:
                log.exception("answer failed (facts=%s)", use_facts)
                continue
            if rung:
                self.fallbacks[rung] += 1
            if result.fallback:
                self.fallbacks[result.fallback] += 1
            return result
        return None

    def clear_memory(self, dialogue_id: str) -> None:
        self.memories.pop(str(dialogue_id), None)
        self.traces.pop(str(dialogue_id), None)

    # Side channel for local evaluation only; the contest harness never calls these.
    def set_dates(self, dialogue_id: str, session_dates: dict, question_date: Optional[str]) -> None:
        """Session dates and the question's date, where a benchmark has them."""
        store = self._memory(dialogue_id).store
        store.session_dates.update({str(k): str(v) for k, v in session_dates.items() if v})
        store.question_date = question_date

    def trace(self, dialogue_id: str) -> Optional[Answer]:
        """The last answer's record (context provenance, timings); gone after clear_memory."""
        return self.traces.get(str(dialogue_id))

    def memory_stats(self, dialogue_id: str) -> Optional[dict]:
        memory = self.memories.get(str(dialogue_id))
        if memory is None:
            return None
        return {"llm": memory.ledger.totals(), "timings": dict(memory.timings),
                "extraction": dict(memory.extraction), "facts": len(memory.facts),
                "turns": len(memory.store.turns), "sessions": memory.store.session_count}
