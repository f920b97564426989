"""The mistakes a user of local_eval can make, as typed errors.

`run.py` prints these on one line and exits 2; anything else (our own bugs) keeps its
traceback, so only these types are ever caught for the user's sake.
"""
from __future__ import annotations


class UsageError(Exception):
    """A wrong option, spec or folder: one line on stderr, exit 2."""


class DataError(UsageError):
    """A data file that cannot be read as the dataset it was given as."""


class BackendFailing(Exception):
    """The LLM failed on every record so far: the run stops (exit 3) instead of failing them all."""
