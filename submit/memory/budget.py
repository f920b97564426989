"""The time budget: the hidden set (hundreds to ~1000 dialogues) must finish inside 7 hours.

Each dialogue has a share of the total; when a dialogue, or the run as a whole, runs
behind, extraction degrades step by step (`level`): 0 everything, 1 a stricter pre-filter,
2 only the user turns retrieval ranks highest for the question, 3 no extraction (retrieval
and the answer only). `answer_ceiling` bounds any single answer. Called by
`model_inference` (which owns the clock) and `dialogue` (which reads the level).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

FULL, STRICT, TOP_TURNS, NO_EXTRACTION = 0, 1, 2, 3


@dataclass(frozen=True)
class BudgetSettings:
    total_seconds: float = 6.5 * 3600  # 7 h for the answers, minus a margin for start-up
    expected_dialogues: int = 1000
    answer_ceiling_seconds: float = 150.0  # hard ceiling on one answer, writes included

    @property
    def share(self) -> float:
        return self.total_seconds / self.expected_dialogues


class TimeBudget:
    def __init__(self, settings: BudgetSettings = BudgetSettings(), clock: Callable[[], float] = time.monotonic):
        self.settings, self.clock = settings, clock
        self.started = clock()
        self.answered = 0

    def lag(self) -> float:
        """Seconds the run is behind its schedule (negative: ahead)."""
        return (self.clock() - self.started) - self.answered * self.settings.share

    def level(self, dialogue_started: float) -> int:
        """How much extraction this dialogue can afford now."""
        share = self.settings.share
        spent = self.clock() - dialogue_started + max(0.0, self.lag())
        if spent < 0.5 * share:
            return FULL
        if spent < share:
            return STRICT
        if spent < 2 * share:
            return TOP_TURNS
        return NO_EXTRACTION

    def remaining(self, dialogue_started: float) -> float:
        """Seconds left under the hard ceiling for this dialogue's answer."""
        return self.settings.answer_ceiling_seconds - (self.clock() - dialogue_started)

    def done(self) -> None:
        self.answered += 1
