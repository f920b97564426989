"""The run-time of each answer: plan, breaker, ceiling, settle.

`Runtime.answer` takes a dialogue's memory and a question and gives back the memory's answer or
None (the caller's safe reply) within the ceiling. Plan: the time budget sizes this dialogue's
extraction from the backend's measured speed. Breaker: skip an LLM that keeps failing, probing it
now and then. Run under the ceiling (`guard.run_with_ceiling`): past it the safe reply comes back
and the abandoned work stops before its next call. Settle: count what failed, teach the breaker
and the budget. The LLM and the embedder the memories use are this run-time's guarded ones, so
abandoned work cannot hold them past a grace.
"""
from __future__ import annotations

import logging
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Optional

from . import fallbacks as why
from . import guard
from .config import Config
from .memory.budget import FULL, STRICT, TOP_TURNS, Plan, TimeBudget
from .memory.dialogue import Answer, DialogueMemory
from .memory.embed import Embedder
from .memory.facts import STRICT_MIN_CHARS
from .memory.llm import LLM, StopRun

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


class Runtime:
    """The run's budget, breaker and guards; `fallbacks` is the adapter's counter, which every
    answer's reasons go to. `llm` and `embedder` (guarded) are what the memories call."""

    def __init__(self, llm: LLM, embedder: Embedder, config: Config, clock: guard.Clock, fallbacks: Counter):
        self.config, self.clock, self.fallbacks = config, clock, fallbacks
        self.budget = TimeBudget(config.budget, clock, prior_rate=llm.prior_seconds_per_prompt)
        grace = min(BUSY_GRACE_S, 0.1 * config.budget.answer_ceiling_s)
        self.llm = guard.GuardedLLM(llm, guard.Gate(not llm.concurrent_calls, grace, clock))
        self.embedder = guard.GuardedEmbedder(embedder, guard.Gate(True, grace, clock))
        self.breaker = guard.Breaker()
        self.plans: dict[str, Plan] = {}
        self._busy: dict[str, threading.Lock] = {}

    def answer(self, memory: DialogueMemory, key: str, question: str, started: float) -> Optional[Answer]:
        """The memory's answer to `question`, within the ceiling counted from `started`; None where
        neither the LLM nor the memory alone gave one. Raises only StopRun (an eval replay miss)."""
        busy = self._busy.setdefault(key, threading.Lock())
        use_llm, probe = self.breaker.allow()
        job = Job(memory, busy, question, self._plan(memory, key), use_llm, guard.Ticket(self.clock))
        finished = guard.run_with_ceiling(lambda: self._work(job), job.ticket, self.budget.remaining(started))
        self.budget.done()
        outcome = job.outcome if finished else self._abandoned(key, use_llm)
        if outcome.error is not None:
            raise outcome.error
        self._settle(outcome, use_llm, probe, job.ticket)
        return outcome.answer

    def forget(self, key: str) -> None:
        for table in (self.plans, self._busy):
            table.pop(key, None)

    def stats(self, key: str) -> dict:
        """The budget's figures, with this dialogue's extraction level where it was planned."""
        plan = self.plans.get(key)
        return {**self.budget.stats(), **({"level": plan.level, "prompts": plan.prompts} if plan else {})}

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
        if outcome.answer is None:
            self.fallbacks[why.NO_INFORMATION] += 1
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
