"""Benchmark tasks: each turns its file into contest-shaped records plus gold data.

`load(dataset, path)` is the one entry point `run.py` uses; one module per benchmark.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

DEMO_PATH = Path(__file__).resolve().parent.parent / "data" / "demo" / "questions.jsonl"


@dataclass(frozen=True)
class Session:
    id: str
    messages: tuple  # of {"role": str, "content": str} dicts, as in the contest files
    date: Optional[str] = None  # side channel only; the contest has no dates


@dataclass(frozen=True)
class Evidence:
    """One evidence unit: a message of a session, by its index in the original session.

    `index=None` means "any message of that session" (GigaMemory questions without quotes).
    """
    session_id: str
    index: Optional[int] = None


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
    extra: dict = field(default_factory=dict, compare=False, hash=False)


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


def load(dataset: str, path: Optional[str] = None) -> list[Record]:
    """Records of a dataset: `load("gigamemory", "format_example.jsonl")`."""
    from . import gigamemory, locomo, longmemeval

    loaders = {
        "demo": lambda p: gigamemory.load(p or str(DEMO_PATH)),
        "gigamemory": gigamemory.load,
        "longmemeval": longmemeval.load,
        "locomo": locomo.load,
    }
    if dataset not in loaders:
        raise ValueError(f"unknown dataset {dataset!r}; choose one of {sorted(loaders)}")
    if dataset != "demo" and not path:
        raise ValueError(f"--dataset {dataset} needs --data PATH")
    return loaders[dataset](path)
