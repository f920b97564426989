"""`openai:URL#MODEL`: any OpenAI-compatible chat server (`vllm serve`, llama.cpp's server).

For judges and readers served elsewhere, and for `tools/answer_pending.py` finishing a
`collect:` run. Requests go out in parallel (`workers`), greedy and seeded; a schema prompt
asks for `response_format: json_schema`. Token counts are the server's own `usage`.
"""
from __future__ import annotations

import json
import os
from concurrent.futures import ThreadPoolExecutor

from submit.memory.llm import LLM, BackendUnavailable, Generation
from submit.memory.llm_backends import SEED, strip_junk

from .llama import first_top, is_rendered


class OpenAIBackend(LLM):
    """Any OpenAI-compatible chat server (`vllm serve`, llama.cpp server): `openai:URL#MODEL`."""

    name = "openai"
    concurrent_calls = True  # the server queues requests itself
    gives_logprobs = True  # for chats (`top_logprobs`); a server that refuses them fails the call

    def __init__(self, arg: str, workers: int = 8, timeout: float = 600.0):
        url, _, model = arg.partition("#")
        if not url or not model:
            raise BackendUnavailable("openai: spec must look like openai:http://host:8000/v1#model-name")
        self.url, self.model, self.workers, self.timeout = url.rstrip("/"), model, workers, timeout
        self.api_key = os.environ.get("OPENAI_API_KEY", "EMPTY")

    def _generate(self, chats, *, max_tokens, schema, purpose, logprobs=0):
        with ThreadPoolExecutor(self.workers) as pool:
            return list(pool.map(lambda c: self._one(c, max_tokens, schema, logprobs), chats))

    def _one(self, chat, max_tokens, schema, logprobs=0) -> Generation:
        import urllib.request
        # A prompt rendered already (a submission's, through local_eval's vLLM stand-in) goes to
        # the completions endpoint as it is; vLLM's and llama.cpp's servers read it with its special tokens.
        rendered = is_rendered(chat)
        body = {"model": self.model, "max_tokens": max_tokens, "temperature": 0.0, "seed": SEED,
                **({"prompt": chat[0]["content"]} if rendered else {"messages": chat})}
        if logprobs and not rendered:
            body.update(logprobs=True, top_logprobs=logprobs)
        if schema:
            body["response_format"] = {"type": "json_schema",
                                       "json_schema": {"name": "reply", "schema": schema}}
        endpoint = "completions" if rendered else "chat/completions"
        request = urllib.request.Request(f"{self.url}/{endpoint}", data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json",
                                                  "Authorization": f"Bearer {self.api_key}"})
        with urllib.request.urlopen(request, timeout=self.timeout) as response:
            data = json.loads(response.read())
        usage = data.get("usage") or {}
        choice = data["choices"][0]
        text = (choice.get("text") if rendered else choice["message"].get("content")) or ""
        return Generation(strip_junk(text), int(usage.get("prompt_tokens", 0)),
                          int(usage.get("completion_tokens", 0)), () if rendered else first_top(data))
