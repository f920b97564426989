"""The LLM protocol: a batch of chats in, a batch of generations out, and what it cost.

`LLM` is the base every backend subclasses (the contest's in `llm_backends`, local
evaluation's in `local_eval/llms`); every call says its purpose (`PURPOSES`), so what wraps a
backend need not guess it from the schema; `ScriptedLLM` is a first-class fake for tests and
CPU dry runs; `Ledger` counts calls and tokens per purpose; `from_spec` turns a "kind:argument"
spec into a backend through a table of builders. Called by `dialogue` (extraction, answer).
"""
from __future__ import annotations

import json
import math
from collections import deque
from dataclasses import dataclass, field
from typing import Optional, Sequence

from .lang import NO_INFO, detect_lang

Chat = list  # of {"role": str, "content": str}

# What a call is for, said by the caller: the ledger counts by it, the time budget measures the
# extraction stage by it (`guard.Ticket`), and `split:` sends the structured calls to its first
# backend. The extraction stage is the three structured calls about facts; the cited answer's
# quotes have a schema too, but they read the answer's material, so they are the answer's.
EXTRACT, VERSIONS, VERSIONS_CHECK = "extract", "versions", "versions_check"
ANSWER, SHORTEN = "answer", "shorten"
# The decline gate's one-token question (`gate`): its probabilities, not its text, are read; the
# run's calibration asks it of the shipped calibration prompts first.
GATE, CALIBRATE = "gate", "calibrate"
ITEMS = "items"  # lists by listing: the items of a question that asks for several things
PURPOSES = (EXTRACT, VERSIONS, VERSIONS_CHECK, ANSWER, SHORTEN, GATE, CALIBRATE, ITEMS)
STRUCTURED = frozenset({EXTRACT, VERSIONS, VERSIONS_CHECK})


class BackendUnavailable(RuntimeError):
    """The requested backend cannot run here (missing library, GPU or model files)."""


class StopRun(Exception):
    """A deliberate stop that must reach the user (a replay miss), never turned into a fallback."""


@dataclass(frozen=True)
class Generation:
    text: str
    prompt_tokens: int
    output_tokens: int
    # Asked with `logprobs=K`: the first generated token's K likeliest alternatives, as
    # (token text, natural log probability) pairs, likeliest first; () otherwise.
    top: tuple = ()


class LLM:
    """Base class: subclasses implement `_generate`; `generate` validates and counts.

    Traits the contest class plans by, set by each backend (a wrapper passes on its inner's):
    `concurrent_calls` — it may take a second call while one runs (an HTTP server queues
    requests itself; an in-process engine does not); `prior_seconds_per_prompt` — the time
    budget's guess of an extraction prompt's cost before the first measurement (None:
    calibrate first); `fell_back` — it was started in place of the backend asked for;
    `gives_logprobs` — `generate(..., logprobs=K)` fills each Generation's `top` (the decline gate
    reads them; without them the gate is off); `model_file` — the model file or folder it serves,
    where the backend knows one (`identity`: what a kept calibration is keyed by)."""

    name = "llm"
    model_file = ""
    concurrent_calls = False
    prior_seconds_per_prompt: Optional[float] = None
    fell_back = False
    gives_logprobs = False

    def generate(self, chats: Sequence[Chat], *, max_tokens: int, schema: Optional[dict] = None,
                 purpose: str = ANSWER, logprobs: int = 0) -> list[Generation]:
        """`llm.generate([[{"role": "user", "content": "Hi"}]], max_tokens=20)[0].text`; `purpose` is
        one of PURPOSES (a judge's or a tool's call is an answer); `logprobs=K` asks for the first
        token's K likeliest alternatives (`Generation.top`), from a backend that `gives_logprobs`."""
        if purpose not in PURPOSES:
            raise ValueError(f"purpose must be one of {', '.join(PURPOSES)}, got {purpose!r}")
        if logprobs and not self.gives_logprobs:
            raise BackendUnavailable(f"{self.name}: this backend gives no logprobs")
        if not chats:
            return []
        extra = {"logprobs": logprobs} if logprobs else {}  # backends without logprobs never see the keyword
        out = self._generate(list(chats), max_tokens=max_tokens, schema=schema, purpose=purpose, **extra)
        if len(out) != len(chats):
            raise RuntimeError(f"{self.name}: {len(out)} outputs for {len(chats)} prompts")
        return out

    def _generate(self, chats, *, max_tokens, schema, purpose):
        raise NotImplementedError

    @property
    def identity(self) -> str:
        """The backend and its model: `llama:qwen2.5-coder-1.5b-instruct-q4_k_m.gguf`, so two models of
        one kind of backend never share a kept calibration; the name alone where no model is known."""
        return f"{self.name}:{self.model_file}" if self.model_file else self.name

    def count_tokens(self, text: str) -> int:
        """Tokens of a text; backends with a tokenizer override this estimate."""
        return max(1, len(text) // 4) if text else 0

    def close(self) -> None:
        pass


def _log(p: float) -> float:
    return math.log(p) if p > 0 else -1e9


def empty_instance(schema: Optional[dict]):
    """The smallest value a JSON schema accepts: arrays empty, required fields emptied."""
    if not schema:
        return None
    kind = schema.get("type")
    if kind == "array":
        return []
    if kind == "object":
        props = schema.get("properties", {})
        return {k: empty_instance(props.get(k, {})) for k in schema.get("required", [])}
    return {"string": "", "integer": 0, "number": 0, "boolean": False}.get(kind)


class ScriptedLLM(LLM):
    """Replies from a queue (str, Exception to raise, or callable(chat) -> str), then defaults.

    With an empty queue it answers a schema prompt with the schema's empty instance and
    any other prompt with `default_answer(chat)` ("no information" in the prompt's
    language), so the whole pipeline runs without a model.
    `history` keeps every (chat, max_tokens, schema) it was asked, in order; `purposes` the
    purpose of each call and `batches` its size.

    A call that asks for logprobs (the decline gate's) draws from `scores` instead, a queue of
    P(yes) values (float, or callable(chat) -> float); with none left its reply has no
    alternatives, so the gate cannot read it (and a calibration turns the gate off). These
    calls are kept in `scored` (chat, purpose), apart from the text calls' history.
    """

    name = "scripted"
    concurrent_calls = True
    prior_seconds_per_prompt = 0.0
    gives_logprobs = True

    def __init__(self, replies: Sequence = (), history_limit: Optional[int] = None, scores: Sequence = ()):
        self.scores: deque = deque(scores)
        self.scored: deque = deque(maxlen=history_limit)
        self.queue: deque = deque(replies)
        # Tests read the whole history; a long CLI run keeps only the latest prompts.
        self.history: deque = deque(maxlen=history_limit)
        self.batches: deque = deque(maxlen=history_limit)
        self.purposes: deque = deque(maxlen=history_limit)

    @staticmethod
    def default_answer(chat: Chat) -> str:
        """The safe reply in the prompt's language: English benchmarks get English answers.

        `ScriptedLLM.default_answer([{"role": "user", "content": "Hi"}])` == "I don't have that information."
        """
        return NO_INFO[detect_lang(" ".join(str(m.get("content", "")) for m in chat))]

    def enqueue(self, *replies) -> None:
        self.queue.extend(replies)

    def enqueue_scores(self, *scores) -> None:
        self.scores.extend(scores)

    def _generate(self, chats, *, max_tokens, schema, purpose, logprobs=0):
        if logprobs:
            return [self._scored(chat, purpose) for chat in chats]
        self.batches.append(len(chats))
        self.purposes.append(purpose)
        return [self._one(chat, max_tokens, schema) for chat in chats]

    def _scored(self, chat, purpose) -> Generation:
        """A one-token reply whose alternatives say P(yes) = the next score ("да"/"yes" against "нет"/"no")."""
        self.scored.append((chat, purpose))
        score = self.scores.popleft() if self.scores else None
        if callable(score):
            score = score(chat)
        prompt = sum(self.count_tokens(m["content"]) for m in chat)
        if score is None:
            return Generation("", prompt, 0)
        yes, no = ("да", "нет") if detect_lang(chat[-1]["content"]) == "ru" else ("yes", "no")
        top = tuple(sorted(((yes, _log(score)), (no, _log(1.0 - score))), key=lambda t: -t[1]))
        return Generation(top[0][0], prompt, 1, top)

    def _one(self, chat, max_tokens, schema) -> Generation:
        self.history.append((chat, max_tokens, schema))
        reply = self.queue.popleft() if self.queue else None
        if isinstance(reply, BaseException):
            raise reply
        if callable(reply):
            reply = reply(chat)
        if reply is None:
            reply = json.dumps(empty_instance(schema)) if schema else self.default_answer(chat)
        prompt = sum(self.count_tokens(m["content"]) for m in chat)
        return Generation(text=reply, prompt_tokens=prompt, output_tokens=self.count_tokens(reply))


@dataclass
class Ledger:
    """LLM calls and tokens per purpose ("extract", "answer"), for the token budget report."""

    calls: dict = field(default_factory=dict)
    prompt_tokens: dict = field(default_factory=dict)
    output_tokens: dict = field(default_factory=dict)

    def add(self, purpose: str, generations: Sequence[Generation]) -> None:
        self.calls[purpose] = self.calls.get(purpose, 0) + len(generations)
        self.prompt_tokens[purpose] = self.prompt_tokens.get(purpose, 0) + sum(
            g.prompt_tokens for g in generations)
        self.output_tokens[purpose] = self.output_tokens.get(purpose, 0) + sum(
            g.output_tokens for g in generations)

    def totals(self) -> dict:
        return {
            "calls": sum(self.calls.values()),
            "prompt_tokens": sum(self.prompt_tokens.values()),
            "output_tokens": sum(self.output_tokens.values()),
            "by_purpose": {p: {"calls": self.calls[p], "prompt_tokens": self.prompt_tokens[p],
                               "output_tokens": self.output_tokens[p]} for p in self.calls},
        }


def from_spec(spec: str, backends: dict, what: str, **options):
    """A backend from "kind:argument" through a table of builders; unknown kinds say what is known.
    `options` go to the builder as keywords."""
    kind, _, arg = spec.partition(":")
    if kind not in backends:
        raise BackendUnavailable(f"unknown {what} {kind!r} in {spec!r}; known: {', '.join(sorted(backends))}")
    return backends[kind](arg, **options)

