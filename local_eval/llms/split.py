"""`split:STRUCTURED_SPEC;TEXT_SPEC`: the memory's structured calls to one backend, every other call to another.

The structured calls (extraction, the versions pass and its check: `llm.STRUCTURED`) go to
the first backend; the answer, its cite ask (which reads the answer's material, though it
carries a schema), the list asks, the shorten step and the decline gate to the second. The caller says each call's
purpose, so nothing is guessed from the schema. This lets a real reader answer over facts
that come from elsewhere, e.g. the recorded extraction fixture read by the local model:
    --llm 'split:fixture:../shared/data/gigamemory/extraction_fixture.jsonl;llama:.models/m.gguf'
Both sides keep their own stores and counts; the ledger sees one backend.
"""
from __future__ import annotations

from submit.memory.llm import LLM, STRUCTURED


class SplitLLM(LLM):
    def __init__(self, structured: LLM, text: LLM):
        self.structured, self.text = structured, text
        self.name = f"split({structured.name};{text.name})"
        self.concurrent_calls = structured.concurrent_calls and text.concurrent_calls
        self.prior_seconds_per_prompt = structured.prior_seconds_per_prompt  # the budget plans extraction
        self.fell_back = structured.fell_back or text.fell_back
        self.gives_logprobs = text.gives_logprobs  # the decline gate reads the answer's material

    def _generate(self, chats, *, max_tokens, schema, purpose, logprobs=0):
        side = self.structured if purpose in STRUCTURED else self.text
        return side.generate(chats, max_tokens=max_tokens, schema=schema, purpose=purpose, logprobs=logprobs)

    @property
    def identity(self) -> str:
        return self.text.identity  # the answers' reader: what a calibration is of

    def count_tokens(self, text: str) -> int:
        return self.text.count_tokens(text)

    def close(self) -> None:
        self.structured.close()
        self.text.close()

