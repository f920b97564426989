"""The submission and the judge of a run, built from its options.

`build_model(options)` is the one place where the options become a configured
`SubmitModelWithMemory` (the settings tree from `Options.config()`, the LLM from its spec);
`build_judge(options)` the `--judge` LLM. A start failure that is the user's to fix (an unknown
kind, a missing model or store, a broken embedding cache, a number out of range) comes back as
one-line `UsageError`. Called by run.py.
"""
from __future__ import annotations

import sqlite3
from contextlib import contextmanager
from pathlib import Path

from . import specs
from .errors import UsageError


@contextmanager
def startup_errors(options):
    """Backend start failures that are the user's to fix (a spec, a path, the cache file) as UsageError."""
    from submit.config import ConfigError
    from submit.memory.llm import BackendUnavailable
    try:
        yield
    except (BackendUnavailable, ConfigError) as e:
        raise UsageError(str(e)) from None
    except sqlite3.DatabaseError as e:  # raised when the cache file is opened, so it names that file
        cache = Path(options.cache_dir) / "embeddings.sqlite"
        raise UsageError(f"the embedding cache {cache} cannot be used ({e}); delete it, "
                         "or pass --cache-dir '' to run without it") from None


def build_model(options):
    """The configured submission: every kind the contest has, and the evaluation-only ones."""
    from submit import SubmitModelWithMemory
    with startup_errors(options):  # a number out of the tree's range is the user's too
        config = options.config()
        spec = specs.parse(options.llm)
        llm = specs.build(spec)
        model_path = spec.arg if spec.kind in ("vllm", "hf") else ""
        return SubmitModelWithMemory(model_path=model_path, config=config, llm=llm)


def build_judge(options):
    """The `--judge` LLM, None without one."""
    if not options.judge:
        return None
    with startup_errors(options):
        return specs.make_llm(options.judge)
