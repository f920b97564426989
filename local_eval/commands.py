"""The commands a run prints for the user to go on: the same run again, and the batch-mode
step that answers pending prompts.

Paths are shown as the user would type them here (relative below the current folder),
and `--fresh` is never repeated (running it again would start over). Called by run.py.
"""
from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

from .llms import store as llm_store

ROOT = Path(__file__).resolve().parent.parent


def short(path) -> str:
    """A path as the user would type it here: relative below the current folder, else absolute."""
    relative = os.path.relpath(path)
    return str(path) if relative.startswith("..") else relative


def again(argv: list) -> str:
    """The command line of this run, to run it again (without --fresh)."""
    return shlex.join([short(sys.executable), short(ROOT / "local_eval" / "run.py"),
                       *[a for a in argv if a != "--fresh"]])


def batch_report(llm, argv: list) -> None:
    """After a `collect:` pass: what is pending, where, and the command that goes on."""
    for pending, queued, folder in llm_store.pending_state(llm):
        if not pending:
            print(f"collect: no prompt is pending in {folder}")
            continue
        tool = shlex.join([short(sys.executable), short(ROOT / "tools" / "answer_pending.py"), str(folder)])
        print(f"collect: {pending} prompt(s) pending in {folder / llm_store.PENDING} ({queued} new in this pass).\n"
              f"  Put their replies into {folder / llm_store.REPLIES} as {{\"key\", \"reply\"}} lines, e.g.\n"
              f"    {tool} --llm openai:http://HOST:8000/v1#MODEL\n"
              f"  then run again:\n    {again(argv)}")
