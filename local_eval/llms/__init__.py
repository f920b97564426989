"""LLM backends of local evaluation: the contest's own, plus what only evaluation needs.

`make_llm(spec)` knows every kind `submit/memory/llm_backends.py` knows (`scripted`, `vllm`,
`hf`) and adds, none of which ships in the contest zip:
  openai:URL#MODEL     an OpenAI-compatible server (`openai.py`)
  cache:DIR+SPEC       records every reply of SPEC in DIR (`store.py`)
  replay:DIR           answers only from DIR's replies; a miss stops the run
  collect:DIR          answers from DIR, queues the rest for a batch job
  fixture:FILE[,FILE]  recorded extraction and versions output (`fixture.py`)
  split:SPEC;SPEC      schema prompts to the first backend, answers to the second (`split.py`)
  llama:MODEL[,k=v]    a GGUF model on the CPU through xllamacpp (`llama.py`, docs/local_model.md)
Called by `local_eval/run.py` (readers and judges), `tools/` and `bench/`.
"""
from __future__ import annotations

from typing import Callable

from submit.memory import llm_backends
from submit.memory.llm import LLM, BackendUnavailable


def _openai(arg: str) -> LLM:
    from .openai import OpenAIBackend
    return OpenAIBackend(arg)


def _llama(arg: str) -> LLM:
    from .llama import LlamaBackend
    return LlamaBackend(arg)


def _cache(arg: str) -> LLM:
    from .store import CachingLLM
    folder, plus, inner = arg.partition("+")
    if not plus or not inner:
        raise BackendUnavailable("cache: spec must look like cache:DIR+<backend spec>")
    return CachingLLM(folder, make_llm(inner))


def _replay(arg: str) -> LLM:
    from .store import ReplayLLM
    return ReplayLLM(arg)


def _collect(arg: str) -> LLM:
    from .store import CollectLLM
    return CollectLLM(arg)


def _fixture(arg: str) -> LLM:
    from .fixture import FixtureLLM
    return FixtureLLM(arg)


def _split(arg: str) -> LLM:
    from .split import SplitLLM, parse
    structured, text = parse(arg)
    return SplitLLM(make_llm(structured), make_llm(text))


BACKENDS: dict[str, Callable[[str], LLM]] = {
    **llm_backends.BACKENDS,
    "openai": _openai,
    "cache": _cache,
    "replay": _replay,
    "collect": _collect,
    "fixture": _fixture,
    "split": _split,
    "llama": _llama,
}


# What each kind's argument is, for --help; a kind registered without a line here shows as KIND:ARG.
USAGE = {"scripted": "scripted", "vllm": "vllm:DIR", "hf": "hf:DIR|FILE.gguf", "openai": "openai:URL#MODEL",
         "cache": "cache:DIR+SPEC", "replay": "replay:DIR", "collect": "collect:DIR",
         "fixture": "fixture:FILE[,FILE]"}


def usage() -> str:
    """Every kind BACKENDS knows, with its argument: `scripted | vllm:DIR | ...`."""
    return " | ".join(USAGE.get(kind, f"{kind}:ARG") for kind in BACKENDS)


def make_llm(spec: str) -> LLM:
    """`make_llm("cache:runs/store+vllm:/models/GigaChat")`: any kind above, by its spec."""
    return llm_backends.make_llm(spec, BACKENDS)
