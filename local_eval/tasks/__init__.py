"""Benchmark tasks: each turns its file into contest-shaped records plus gold data.

The typed records every adapter returns (`Record`, `Session`, `Evidence`) and the shard
selection; one module per benchmark, declared in `local_eval/benchmarks.py`, whose `load`
is the entry point.
"""
from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional


@dataclass(frozen=True)
class Session:
    id: str
    messages: tuple  # of {"role": str, "content": str} dicts, as in the contest files
    date: Optional[str] = None  # side channel only; the contest has no dates


@dataclass(frozen=True)
class Evidence:
    """One evidence unit: a message of a session, by its index in the original session.

    `index=None` means "any message of that session" (GigaMemory questions without quotes).
    `label` is the benchmark's own name for it, where it has one (LoCoMo's dia_id "D3:5").
    """
    session_id: str
    index: Optional[int] = None
    label: Optional[str] = field(default=None, compare=False)

    def name(self) -> str:
        """"D3:5", else "session 3 #4" (0-based message index) or "session 3"."""
        if self.label:
            return self.label
        return f"session {self.session_id}" + ("" if self.index is None else f" #{self.index}")


@dataclass(frozen=True)
class Record:
    id: str
    dialogue_id: str
    question: str
    question_type: str
    gold: str
    sessions: tuple  # of Session
    evidence: tuple = ()  # of Evidence; empty = unknown
    evidence_sessions: tuple = ()  # session ids that hold the answer
    abstention: bool = False
    question_date: Optional[str] = None
    answers: tuple = ()  # every acceptable gold answer (LoCoMo-Refined); empty = just `gold`
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def golds(self) -> tuple:
        """The acceptable answers: `answers`, or `(gold,)` when the benchmark gives one."""
        return self.answers or (self.gold,)


def read_json(path: str):
    """One JSON document, gzip-compressed (`.gz`) or not."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(Path(path), "rt", encoding="utf-8") as f:
        return json.load(f)


def parse_shard(spec: str) -> tuple[int, int]:
    """`parse_shard("2/4")` == (2, 4); ValueError unless the spec is K/N with 1 <= K <= N."""
    try:
        k, n = (int(x) for x in spec.split("/"))
    except ValueError:
        k = n = 0
    if not 1 <= k <= n:
        raise ValueError(f"must look like K/N with 1 <= K <= N, got {spec!r}")
    return k, n


def shard(records: list, k: int, n: int) -> list:
    """Shard k of n: record i belongs to shard i % n + 1 (round-robin, so each shard mixes all types)."""
    return [r for i, r in enumerate(records) if i % n == k - 1]
