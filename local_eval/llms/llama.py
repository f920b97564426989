"""`llama:MODEL[,ctx=N][,threads=N]`: a GGUF model on the CPU, in-process, through xllamacpp.

MODEL is a GGUF path or a pinned name (`llama:qwen2.5-coder-0.5b`, local_eval/llms/pins.py).
xllamacpp (llama.cpp's server as a library, prebuilt CPU wheels) loads the model once and
takes OpenAI-style requests in-process: the GGUF's own chat template, greedy and seeded,
every schema prompt constrained to its JSON schema (one line, `{"k": v, ...}`: the
indented form the grammar would also allow costs a third more output tokens), token
counts from the server's usage (its own tokenizer). One slot, one prompt at a time: the
server keeps the previous prompt's cache, so prompts that share an instruction prefix
(every extraction prompt) read only their new tail; parallel slots measured slower on 2
cores and lose that (docs/local_model.md). The cache makes replies reproducible for the
same sequence of prompts, not for one prompt alone: a prefix read separately can flip a
near-tie in greedy decoding; `cache=0` reads every prompt whole. Evaluation only: never in
the contest zip. Built by `local_eval.llms.make_llm`.
"""
from __future__ import annotations

import json
import os
import secrets
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from submit.memory.llm import LLM, BackendUnavailable, Generation

from . import pins

SEED = 42
SHORTEN_TRIES = 4


class LlamaError(RuntimeError):
    """The server refused or failed a request (its own message)."""


@dataclass(frozen=True)
class Options:
    """What the spec string may set after the model: `ctx=16384,threads=2,cache=0`."""
    ctx: int = 16384  # tokens of context: an 8k-character answer prompt in Russian is ~3.6k
    threads: int = 0  # 0: every CPU this process may use
    cache: int = 1  # 1: reuse the previous prompt's common prefix; 0: read every prompt whole

    @classmethod
    def parse(cls, items: list[str]) -> "Options":
        values = {}
        for item in items:
            key, eq, value = item.partition("=")
            if not eq or key not in cls.__dataclass_fields__ or not value.isdigit():
                raise BackendUnavailable(f"llama: {item!r} is not one of ctx=N, threads=N, cache=0|1")
            values[key] = int(value)
        return cls(**values)


def parse_spec(arg: str) -> tuple[Path, Options]:
    """`"qwen2.5-coder-0.5b,ctx=4096"` -> (.models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf, Options(ctx=4096))."""
    model, *items = arg.split(",")
    if not model:
        raise BackendUnavailable("llama: spec must look like llama:FILE.gguf[,ctx=N][,threads=N]")
    path = pins.path_of(model) if model in pins.PINS else Path(model)
    if not path.is_file():
        hint = f"; fetch it with tools/fetch_model.py {model}" if model in pins.PINS else ""
        raise BackendUnavailable(f"llama: no GGUF file at {str(path)!r}{hint}")
    return path, Options.parse(items)


def cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


class LlamaBackend(LLM):
    """One GGUF model loaded once and kept; `close()` stops its server."""

    name = "llama"

    def __init__(self, arg: str):
        self.path, self.options = parse_spec(arg)
        # OpenMP threads that spin while they wait take the CPU from each other on a shared
        # 2-core machine: output went from 3 to 16 tokens/s with the 0.5B (docs/local_model.md).
        # Read when the library loads, so it is set before the import.
        os.environ.setdefault("OMP_WAIT_POLICY", "passive")
        try:
            import xllamacpp
        except ImportError as e:
            raise BackendUnavailable("backend 'llama:' needs xllamacpp (pip install xllamacpp; make install has it)") from e
        self.key = secrets.token_hex(16)  # the server also listens on 127.0.0.1: only we may call it
        self.server = xllamacpp.Server(self._params(xllamacpp))
        self.url = self.server.listening_address

    def _params(self, xllamacpp):
        params = xllamacpp.CommonParams()
        params.model.path = str(self.path)
        params.n_ctx = self.options.ctx
        params.n_parallel = 1
        threads = self.options.threads or cpus()
        params.cpuparams.n_threads = params.cpuparams_batch.n_threads = threads
        params.api_keys = [self.key]
        params.verbosity = -1  # no log lines over the progress bar
        return params

    def _generate(self, chats, *, max_tokens, schema):
        from submit import guard
        ticket, out = guard.current(), []
        for chat in chats:
            if ticket is not None:  # an abandoned answer frees the engine after this prompt
                ticket.check()
            out.append(self._one(chat, max_tokens, schema))
        return out

    def _one(self, chat, max_tokens, schema) -> Generation:
        for _ in range(SHORTEN_TRIES):
            body = {**request(chat, max_tokens, schema), "cache_prompt": bool(self.options.cache)}
            reply = self.server.handle_chat_completions(body)
            error = reply.get("error") if isinstance(reply, dict) else {"message": repr(reply)}
            if not error:
                usage = reply.get("usage") or {}
                text = reply["choices"][0]["message"].get("content") or ""
                return Generation(text.strip(), int(usage.get("prompt_tokens", 0)),
                                  int(usage.get("completion_tokens", 0)))
            if error.get("type") != "exceed_context_size_error":
                raise LlamaError(f"llama: {error.get('message', error)}")
            chat = fit(chat, error, max_tokens)
        raise LlamaError(f"llama: the prompt does not fit {self.options.ctx} tokens even after shortening")

    def count_tokens(self, text: str) -> int:
        """Tokens of a text by the model's own tokenizer (the server's /tokenize)."""
        if not text:
            return 0
        body = json.dumps({"content": text, "add_special": False}).encode()
        call = urllib.request.Request(f"{self.url}/tokenize", data=body, headers={
            "Content-Type": "application/json", "Authorization": f"Bearer {self.key}"})
        with urllib.request.urlopen(call, timeout=60) as response:
            return len(json.loads(response.read())["tokens"])

    def close(self) -> None:
        self.server = None  # its destructor stops the server's loop and frees the model


def request(chat: list, max_tokens: int, schema: Optional[dict]) -> dict:
    """The body of one chat: greedy, seeded, held to the schema's one-line JSON when there is one."""
    body = {"messages": chat, "max_tokens": max_tokens, "temperature": 0.0, "seed": SEED}
    if schema:
        body["grammar"] = grammar(schema)
    return body


def grammar(schema: dict) -> str:
    """The schema as llguidance grammar (what xllamacpp's own json_schema_to_grammar writes),
    with the separators fixed to the model's usual one-line form."""
    one_line = {"whitespace_flexible": False, "item_separator": ", ", "key_separator": ": "}
    return "%llguidance {}\nstart: %json " + json.dumps({**schema, "x-guidance": one_line}, ensure_ascii=False)


def fit(chat: list, error: dict, max_tokens: int) -> list:
    """The chat with its last message cut (head and tail kept) so that the prompt, by the
    server's count, leaves room for the reply."""
    from submit.memory.llm_backends import shorten_chat
    tokens, ctx = int(error.get("n_prompt_tokens") or 0), int(error.get("n_ctx") or 0)
    factor = (ctx - max_tokens) / max(tokens, 1) * 0.9 if tokens and ctx > max_tokens else 0.5
    return shorten_chat(chat, max(0.05, factor))
