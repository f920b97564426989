"""`llama:MODEL[,ctx=N][,threads=N][,prefix=0|1][,memo=0|1]`: a GGUF model on the CPU, in-process.

MODEL is a GGUF path or a pinned name (`llama:qwen2.5-coder-0.5b`, local_eval/llms/pins.py).
xllamacpp (llama.cpp's server as a library, prebuilt CPU wheels) loads the model once and
takes OpenAI-style requests in-process: the GGUF's own chat template, greedy and seeded,
every schema prompt held to its JSON schema on one line (`{"k": v, ...}`: the indented form
the grammar would also allow costs a third more output tokens), token counts from the
server's usage (its own tokenizer).

One slot, one prompt at a time. The server keeps the previous prompt's cache, so prompts
that share an instruction prefix (every extraction prompt) read only their new tail
(`prefix=1`); parallel slots measured slower on 2 cores and lose that (docs/local_model.md).
A prefix read apart from its tail can flip a near-tie in greedy decoding, so replies are
reproducible for the same sequence of prompts, not for one prompt alone; `prefix=0` reads
every prompt whole. Greedy decoding gives a prompt asked again the same reply, so the
backend keeps its replies for the process (`memo=1`): a benchmark that asks several
questions over one dialogue builds the same extraction prompts for each and pays for them
once; the ledger still counts their tokens, but the later records' answer_time is lower
than a contest run's (`memo=0` for timings). Evaluation only: never in the contest zip.
Built by `local_eval.specs` (the spec's `,key=value` options become `Options`).
"""
from __future__ import annotations

import hashlib
import json
import os
import secrets
import urllib.request
import weakref
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
    """What the spec string may set after the model: `ctx=16384,threads=2,prefix=0,memo=0`."""
    # tokens of context: the 28 Russian dev answer prompts at 8k characters are 3,778–4,121 tokens
    # for Qwen2.5 (their `prompt_tokens` in bench/results/readers/qwen1.5b_ru_dev.jsonl)
    ctx: int = 16384
    threads: int = 0  # 0: every CPU this process may use
    prefix: int = 1  # 1: reuse the previous prompt's common prefix; 0: read every prompt whole
    memo: int = 1  # 1: a prompt asked again gets the reply it got before

    @classmethod
    def of(cls, values: dict) -> "Options":
        """`Options.of({"ctx": "4096"}) == Options(ctx=4096)`: the spec's options, each a known key and digits."""
        for key, value in values.items():
            if key not in cls.__dataclass_fields__ or not value.isdigit():
                raise BackendUnavailable(f"llama: {key}={value!r} is not one of ctx=N, threads=N, prefix=0|1, memo=0|1")
        return cls(**{key: int(value) for key, value in values.items()})


def model_path(model: str) -> Path:
    """`model_path("qwen2.5-coder-0.5b")` -> .models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf: a pinned name
    or a GGUF path, which must be there."""
    if not model:
        raise BackendUnavailable("llama: spec must look like "
                                 "llama:FILE.gguf[,ctx=N][,threads=N][,prefix=0|1][,memo=0|1]")
    path = _located(model)
    if not path.is_file():
        hint = (f"; fetch it with tools/fetch_model.py {model}" if model in pins.PINS else
                f"; the model names: {pins.listing()}; or the path of a .gguf file" if not model.endswith(".gguf")
                else "")
        raise BackendUnavailable(f"llama: no GGUF file at {str(path)!r}{hint}")
    return path


def _located(model: str) -> Path:
    """Where a pinned name's GGUF file is installed, or the path given."""
    return pins.path_of(model) if model in pins.PINS else Path(model)


# One extraction prompt of the 1.5B, uncached, on two quiet cores (docs/local_model.md, "Speed");
# a whole contest dialogue took 18 s a turn on a busy machine (bench/results/real_extraction.md).
SECONDS_PER_TURN = 9.0
LONG_EXTRACTION_S = 15 * 60


def extraction_note(records: list) -> str:
    """What a user should know before the local model extracts facts from these records'
    dialogues (each dialogue once): '' when that takes less than LONG_EXTRACTION_S."""
    dialogues = {record.dialogue_id: record for record in records}
    turns = sum(m["role"] == "user" for record in dialogues.values() for session in record.sessions
                for m in session.messages)
    seconds = turns * SECONDS_PER_TURN
    if seconds < LONG_EXTRACTION_S:
        return ""
    return (f"the local model extracts facts from each of the {turns} user turns of {len(dialogues)} "
            f"dialogue(s) before answering: about {seconds / 3600:.1f} h on two CPU cores (docs/local_model.md); "
            f"--facts off answers from the excerpts alone (minutes a question), --llm openai:URL#MODEL "
            f"uses a GPU server")


def cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


class Engine:
    """One loaded model behind its server, shared by every backend built on the same file and
    options (a reader and a judge on one model load it once)."""

    def __init__(self, path: Path, options: Options):
        # OpenMP threads that spin while they wait take the CPU from each other on a shared
        # 2-core machine: output went from 3 to 16 tokens/s with the 0.5B (docs/local_model.md).
        # Read when the library loads, so it is set before the import.
        os.environ.setdefault("OMP_WAIT_POLICY", "passive")
        try:
            import xllamacpp
        except ImportError as e:
            raise BackendUnavailable("backend 'llama:' needs xllamacpp "
                                     "(pip install xllamacpp; make install has it)") from e
        self.key = secrets.token_hex(16)  # the server also listens on 127.0.0.1: only we may call it
        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.n_ctx = options.ctx
        params.n_parallel = 1
        params.cpuparams.n_threads = params.cpuparams_batch.n_threads = options.threads or cpus()
        params.api_keys = [self.key]
        params.verbosity = -1  # no log lines over the progress bar
        self.server = xllamacpp.Server(params)
        self.url = self.server.listening_address


def identity(model: str) -> str:
    """`LlamaBackend(model).identity` without loading the model (`LLM.identity`): what a kept
    calibration of it is keyed by, `llama:qwen2.5-coder-1.5b-instruct-q4_k_m.gguf`."""
    return f"{LlamaBackend.name}:{_located(model).name}"


_ENGINES: "weakref.WeakValueDictionary[tuple, Engine]" = weakref.WeakValueDictionary()


def engine(path: Path, options: Options) -> Engine:
    """The loaded model for this file and these options: the one already loaded, or a new one."""
    key = (str(path.resolve()), options.ctx, options.threads)
    found = _ENGINES.get(key)
    if found is None:
        found = _ENGINES[key] = Engine(path, options)
    return found


class LlamaBackend(LLM):
    """A GGUF model, loaded once (`engine`) and kept while a backend holds it."""

    name = "llama"
    gives_logprobs = True  # llama.cpp's chat and completions endpoints return top_logprobs
    # Seconds per extraction prompt for the time budget before the first dialogue measures
    # it (the demo's extraction rates on a busy 2-core machine: docs/local_model.md).
    prior_seconds_per_prompt = 10.0
    # It answers a batch one prompt after another, so a reply store over it (`cache:`) loses
    # nothing by asking prompt by prompt, and keeps each reply as soon as it is made.
    one_at_a_time = True

    def __init__(self, model: str, options: Optional[dict] = None):
        self.path, self.options = model_path(model), Options.of(options or {})
        self.model_file = self.path.name  # `identity(model)`
        self.engine = engine(self.path, self.options)
        self.memo: dict = {}  # sha256 of the request -> its Generation

    def _generate(self, chats, *, max_tokens, schema, purpose, logprobs=0):
        from submit import guard
        ticket, out = guard.current(), []
        for chat in chats:
            if ticket is not None:  # an abandoned answer frees the engine after this prompt
                ticket.check()
            out.append(self._one(chat, max_tokens, schema, logprobs))
        return out

    def _one(self, chat, max_tokens, schema, logprobs=0) -> Generation:
        if not self.options.memo:
            return self._ask(chat, max_tokens, schema, logprobs)
        key = hashlib.sha256(json.dumps([chat, max_tokens, schema] + ([logprobs] if logprobs else []),
                                        ensure_ascii=False).encode()).hexdigest()
        if key not in self.memo:
            self.memo[key] = self._ask(chat, max_tokens, schema, logprobs)
        return self.memo[key]

    def _ask(self, chat, max_tokens, schema, logprobs=0) -> Generation:
        if is_rendered(chat):
            return self._complete(chat[0]["content"], max_tokens, schema, logprobs)
        for _ in range(SHORTEN_TRIES):
            body = {**request(chat, max_tokens, schema), "cache_prompt": bool(self.options.prefix)}
            if logprobs:
                body.update(logprobs=True, top_logprobs=logprobs)
            reply = self.engine.server.handle_chat_completions(body)
            error = reply.get("error") if isinstance(reply, dict) else {"message": repr(reply)}
            if not error:
                usage = reply.get("usage") or {}
                text = reply["choices"][0]["message"].get("content") or ""
                return Generation(text.strip(), int(usage.get("prompt_tokens", 0)),
                                  int(usage.get("completion_tokens", 0)), first_top(reply))
            if error.get("type") != "exceed_context_size_error":
                raise LlamaError(f"llama: {error.get('message', error)}")
            chat = fit(chat, error, max_tokens)
        raise LlamaError(f"llama: the prompt does not fit {self.options.ctx} tokens even after shortening")

    def _complete(self, prompt: str, max_tokens: int, schema, logprobs: int = 0) -> Generation:
        """A prompt already rendered with the chat template (a submission's, through local_eval's
        vLLM stand-in), completed as it is: the server tokenizes it, special tokens included."""
        body = {**request([], max_tokens, schema), "prompt": prompt, "cache_prompt": bool(self.options.prefix)}
        del body["messages"]
        if logprobs:  # the completions endpoint answers them in the chat endpoint's shape
            body["logprobs"] = logprobs
        reply = self.engine.server.handle_completions(body)
        error = reply.get("error") if isinstance(reply, dict) else {"message": repr(reply)}
        if error:
            raise LlamaError(f"llama: {error.get('message', error)}")
        usage = reply.get("usage") or {}
        return Generation((reply["choices"][0].get("text") or "").strip(), int(usage.get("prompt_tokens", 0)),
                          int(usage.get("completion_tokens", 0)), first_top(reply))

    def count_tokens(self, text: str) -> int:
        """Tokens of a text by the model's own tokenizer (the server's /tokenize)."""
        if not text:
            return 0
        body = json.dumps({"content": text, "add_special": False}).encode()
        call = urllib.request.Request(f"{self.engine.url}/tokenize", data=body, headers={
            "Content-Type": "application/json", "Authorization": f"Bearer {self.engine.key}"})
        with urllib.request.urlopen(call, timeout=60) as response:
            return len(json.loads(response.read())["tokens"])

    def close(self) -> None:
        self.engine = None  # the model is freed once no backend holds it


def first_top(reply: dict) -> tuple:
    """The first generated token's alternatives in an OpenAI-shaped chat reply (llama.cpp's,
    vLLM's server's), as (token, logprob) pairs; () where the reply has none."""
    content = ((reply.get("choices") or [{}])[0].get("logprobs") or {}).get("content") or []
    if not content:
        return ()
    return tuple((str(t.get("token", "")), float(t.get("logprob", -1e9))) for t in content[0].get("top_logprobs") or [])


PROMPT_ROLE = "prompt"  # a chat of one message with this role is a rendered prompt, sent as it is


def is_rendered(chat: list) -> bool:
    """A chat of one message with the role `PROMPT_ROLE`: a prompt rendered already (local_eval/shim/vllm)."""
    return len(chat) == 1 and chat[0].get("role") == PROMPT_ROLE


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
