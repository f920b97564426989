"""`split:SCHEMA_SPEC;TEXT_SPEC`: schema prompts to one backend, every other prompt to another.

The memory's structured calls (extraction, the versions pass and its check) all carry a
JSON schema; the answer (and the shorten step) do not. Splitting on that lets a real reader
answer over facts that come from elsewhere, e.g. the recorded extraction fixture read by
the local model:
    --llm 'split:fixture:../shared/data/gigamemory/extraction_fixture.jsonl;llama:.models/m.gguf'
Both sides keep their own stores and counts; the ledger sees one backend.
"""
from __future__ import annotations

from submit.memory.llm import LLM


class SplitLLM(LLM):
    def __init__(self, structured: LLM, text: LLM):
        self.structured, self.text = structured, text
        self.name = f"split({structured.name};{text.name})"
        self.concurrent_calls = structured.concurrent_calls and text.concurrent_calls
        self.prior_seconds_per_prompt = structured.prior_seconds_per_prompt  # the budget plans extraction
        self.fell_back = structured.fell_back or text.fell_back

    def _generate(self, chats, *, max_tokens, schema):
        side = self.structured if schema else self.text
        return side.generate(chats, max_tokens=max_tokens, schema=schema)

    def count_tokens(self, text: str) -> int:
        return self.text.count_tokens(text)

    def close(self) -> None:
        self.structured.close()
        self.text.close()

