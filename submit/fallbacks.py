"""Why an answer did not come the normal way: every reason `SubmitModelWithMemory.fallbacks`
counts, named once.

`FAILED` are the reasons that mean something failed, so the answer did not come from the LLM
(local_eval marks such a record incomplete and runs it again); the others are the model's own
doing or the time budget's (`budget_level_N`, `EMPTY_ANSWER`), or a backend that started in
place of the one asked for. Called by `model_inference`, `runtime` and local_eval's `scoring`; the two
reasons an answer record carries itself are the memory's (`memory.dialogue`).
"""
from __future__ import annotations

from .memory.dialogue import EMPTY_ANSWER, MEMORY_ANSWER  # noqa: F401  (the memory's own reasons, named here too)

WRITE_ERROR = "write_error"  # a pair could not be written
RAW_EVIDENCE = "raw_evidence"  # the answer with facts failed; answered from the excerpts alone
CEILING = "ceiling"  # the answer passed its hard ceiling
NO_INFORMATION = "no_information"  # the safe "no information" reply
BREAKER_OPEN = "breaker_open"  # the LLM kept failing and was skipped
ENGINE_BUSY = "engine_busy"  # an exclusive engine was still held by abandoned work
ANSWER_ERROR = "answer_error"  # the answer's work raised
CLEAR_ERROR = "clear_error"  # clear_memory failed (the dialogue stays in memory)
LLM_FALLBACK = "llm_fallback"  # the LLM asked for did not start; another answers
EMBEDDER_FALLBACK = "embedder_fallback"  # an embedder failed to load; the next one embeds

FAILED = (WRITE_ERROR, RAW_EVIDENCE, CEILING, NO_INFORMATION, MEMORY_ANSWER, BREAKER_OPEN, ENGINE_BUSY,
          ANSWER_ERROR)


def budget_level(level: int) -> str:
    """`budget_level(2) == "budget_level_2"`: extraction degraded to that level of the time budget."""
    return f"budget_level_{level}"
