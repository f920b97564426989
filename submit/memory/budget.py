"""The time budget: the hidden set (hundreds to ~1,200 dialogues) must finish inside 7 hours.

Extraction is the expensive stage (one LLM prompt per user turn: the contest sample's four
dialogues hold 950 user messages, `shared/data/gigamemory/extraction_fixture.jsonl`), and its
cost depends on a backend we only meet at run time: vLLM on an A100, or transformers when vLLM
fails to start (assumed far slower: `HFBackend.prior_seconds_per_prompt`). So
the budget learns the backend's speed: seconds per extraction prompt and the seconds
each answer spends besides extraction, over the last `window` dialogues. Before each
answer `plan` picks the best extraction the dialogue can afford, given what is left of
the run's time for the dialogues still expected and the answer ceiling:
0 FULL every candidate, 1 STRICT a stricter pre-filter, 2 TOP_TURNS only the N user
turns retrieval ranks highest for the question (N as many as fit), 3 NO_EXTRACTION
(retrieval and the answer only). Until a backend has been measured, a prior rate is used
where one is known, otherwise the first dialogue extracts a small calibration batch; a
rate so slow that nothing is extracted is re-measured every `remeasure_every` dialogues.
Only answers that finished inside their ceiling teach it: a hung call is not a speed.
`remaining` bounds each answer by the hard ceiling. Called by `runtime` (which
owns the clock and feeds the measurements) and `dialogue` (which reads the level).
"""
from __future__ import annotations

import math
import statistics
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Callable, Mapping, Optional

from .limits import amount, check_fields, count

FULL, STRICT, TOP_TURNS, NO_EXTRACTION = 0, 1, 2, 3


@dataclass(frozen=True)
class BudgetSettings:
    """The time budget's part of the settings tree (`submit.config.Config.budget`)."""
    hours: float = field(default=6.5, metadata=amount(1000.0))  # of the 7 allowed, a margin kept for start-up
    # The hidden set's size, planned for: a participant's published code counts 1,167 (unverified);
    # planned for fewer, the budget is spent before the last dialogues, answered without extraction.
    expected_dialogues: int = field(default=1200, metadata=count(1, 10_000_000))
    # The hard ceiling on one answer, from its own start; far below threading's TIMEOUT_MAX (an
    # `inf` ceiling once raised OverflowError out of answer_to_question).
    answer_ceiling_s: float = field(default=150.0, metadata=amount(7 * 24 * 3600.0))
    ceiling_share: float = 0.7  # plan a dialogue to finish well inside its ceiling
    window: int = 20  # dialogues the learned rates average over (the backend may change speed)
    calibration_prompts: int = 16  # the first dialogue's batch when no rate is known
    min_top_turns: int = 4  # fewer affordable prompts than this: no extraction at all
    remeasure_every: int = 10  # dialogues without extraction before a small batch re-measures the rate

    def __post_init__(self):
        check_fields(self)

    @property
    def total_seconds(self) -> float:
        return self.hours * 3600

    @property
    def share(self) -> float:
        return self.total_seconds / self.expected_dialogues


@dataclass(frozen=True)
class Plan:
    level: int
    prompts: int  # extraction prompts the level allows (TOP_TURNS: how many top user turns)
    allowance_s: float  # seconds this dialogue may spend and keep the run on schedule
    projected_s: float  # seconds the plan is expected to take, by the learned rates
    calibration: bool = False  # a small first batch to measure an unknown backend


UNPLANNED = Plan(FULL, 0, math.inf, 0.0)  # no budget: every candidate extracted (tests, bench scripts)


class TimeBudget:
    def __init__(self, settings: BudgetSettings = BudgetSettings(), clock: Callable[[], float] = time.monotonic,
                 prior_rate: Optional[float] = None):
        self.settings, self.clock, self.prior_rate = settings, clock, prior_rate
        self.started = clock()
        self.answered = 0
        self._extract: deque = deque(maxlen=settings.window)  # (seconds, prompts) per dialogue
        self._other: deque = deque(maxlen=settings.window)  # seconds besides extraction per answer
        self._lock = threading.Lock()  # answer workers report while the caller plans
        self._measured_at = 0  # `answered` when extraction was last measured
        self._remeasuring = False  # the next measurement replaces the window

    def observe(self, extract_seconds: float, extract_prompts: int, other_seconds: Optional[float]) -> None:
        """One answer's measurements: its extraction, and the rest (None when it did not finish)."""
        with self._lock:
            if extract_prompts > 0:
                if self._remeasuring:
                    self._extract.clear()
                    self._remeasuring = False
                self._extract.append((max(0.0, extract_seconds), extract_prompts))
                self._measured_at = self.answered
            if other_seconds is not None:
                self._other.append(max(0.0, other_seconds))

    def rate(self) -> Optional[float]:
        """Seconds per extraction prompt: measured over the window, else the prior, else None."""
        with self._lock:
            prompts = sum(n for _, n in self._extract)
            return sum(s for s, _ in self._extract) / prompts if prompts else self.prior_rate

    def overhead(self) -> float:
        """Median seconds an answer spends besides extraction (retrieval, the answer call): the
        median, because the first answer also pays one-time loading (lemmatizer, kernels)."""
        with self._lock:
            return statistics.median(self._other) if self._other else 0.0

    def lag(self) -> float:
        """Seconds the run is behind its schedule (negative: ahead)."""
        return (self.clock() - self.started) - self.answered * self.settings.share

    def allowance(self) -> float:
        """What is left of the run's time over the dialogues still expected, within the ceiling."""
        s = self.settings
        left = s.total_seconds - (self.clock() - self.started)
        per_dialogue = left / max(1, s.expected_dialogues - self.answered)
        return max(0.0, min(per_dialogue, s.ceiling_share * s.answer_ceiling_s))

    def plan(self, prompts: Mapping[int, int]) -> Plan:
        """The best extraction that fits; `prompts` = candidate prompts at FULL, STRICT, TOP_TURNS."""
        allowance, rate, other = self.allowance(), self.rate(), self.overhead()
        if allowance <= 0:
            return Plan(NO_EXTRACTION, 0, allowance, other)
        if rate is None:  # nothing known about this backend yet: a small batch to measure it
            n = self.settings.calibration_prompts
            if prompts[FULL] <= n:
                return Plan(FULL, prompts[FULL], allowance, other, calibration=True)
            return Plan(TOP_TURNS, min(n, prompts[TOP_TURNS]), allowance, other, calibration=True)
        spare = allowance - other
        for level in (FULL, STRICT):
            if prompts[level] * rate <= spare:
                return Plan(level, prompts[level], allowance, other + prompts[level] * rate)
        n = min(prompts[TOP_TURNS], int(spare / rate) if spare > 0 else 0)
        if n >= self.settings.min_top_turns:
            return Plan(TOP_TURNS, n, allowance, other + n * rate)
        if self.answered - self._measured_at >= self.settings.remeasure_every:
            # A rate this slow would never be measured again: the backend may have recovered,
            # and this measurement, the freshest, replaces the window.
            n = min(self.settings.min_top_turns, prompts[TOP_TURNS])
            self._remeasuring = True
            return Plan(TOP_TURNS, n, allowance, other + n * rate, calibration=True)
        return Plan(NO_EXTRACTION, 0, allowance, other)

    def remaining(self, answer_started: float) -> float:
        """Seconds left under the hard ceiling for an answer that started at `answer_started`."""
        return self.settings.answer_ceiling_s - (self.clock() - answer_started)

    def done(self) -> None:
        self.answered += 1

    def stats(self) -> dict:
        rate = self.rate()
        return {"seconds_per_prompt": None if rate is None else round(rate, 4),
                "measured_dialogues": len(self._extract), "overhead_s": round(self.overhead(), 3),
                "allowance_s": round(self.allowance(), 2), "lag_s": round(self.lag(), 2),
                "answered": self.answered}
