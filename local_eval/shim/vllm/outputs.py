"""`vllm.outputs` of the stand-in: what `generate` returns, in vLLM 0.9.2's shapes (vllm/outputs.py:24-140;
`Logprob` is vllm/sequence.py's)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional


@dataclass
class Logprob:
    logprob: float
    rank: Optional[int] = None
    decoded_token: Optional[str] = None


@dataclass
class CompletionOutput:
    index: int
    text: str
    token_ids: list
    cumulative_logprob: Optional[float] = None
    logprobs: Optional[list] = None  # per output token, {token id: Logprob} of the top ones and the chosen one
    finish_reason: Optional[str] = None
    stop_reason: Any = None


@dataclass
class RequestOutput:
    request_id: str
    prompt: Optional[str]
    prompt_token_ids: list
    prompt_logprobs: Optional[list] = None
    outputs: list = field(default_factory=list)
    finished: bool = True
    metrics: Any = None  # V1 leaves it None (VLLM.md §4)
    num_cached_tokens: int = 0
