"""A run folder: where a run writes, and shard folders merged into one.

Without `--out` a run writes into `runs/<dataset>-<mode>`, followed by a tag for every
setting of its mode that is not the default (`runs/locomo-retrieval-hash`,
`runs/demo-answer-openai-GigaChat-4000c`), so two commands that differ in a setting never
meet in one default folder. A folder holding `results.jsonl`
or `summary.json` is a run; its manifest (`manifest.py`) says whether a rerun may go on
there. `--merge DIR... --out OUT` gathers the rows of shard folders of one dataset and
the same settings. One run writes a folder at a time (`lock`); the submission's log goes to
its `run.log` (`log`), not the terminal. Called by run.py.
"""
from __future__ import annotations

import dataclasses
import fcntl
import logging
import os
import re
from contextlib import contextmanager
from pathlib import Path

from . import manifest, results, specs
from .errors import UsageError

ROOT = Path(__file__).resolve().parent.parent
PRODUCTS = (results.RESULTS, "summary.json")  # a folder holding one of these is a run
LOCK = ".lock"  # held by the run writing the folder
LOG = "run.log"  # the submission's log lines of every pass, appended


def output_folder(options) -> Path:
    """--out, or runs/<dataset>-<mode>; refused when it (or a parent) is an existing file."""
    if options.merge and not options.out:
        raise UsageError("--merge needs --out: a new folder for the merged run")
    out = Path(options.out) if options.out else ROOT / "runs" / default_name(options)
    for folder in (out, *out.parents):
        if folder.exists():
            if not folder.is_dir():
                raise UsageError(f"--out {out}: {folder} is a file, not a folder")
            break
    return out


def default_name(options) -> str:
    """`<dataset>-<mode>`, then a tag per setting that differs from `options.defaults` (parse_args')."""
    tags = ["refined"] if options.refined else []
    tags += [tag(name, getattr(options, name)) for name in manifest.SETTINGS[options.mode]
             if getattr(options, name) != options.defaults[name]]
    return "-".join([options.dataset, options.mode, *tags])


def tag(name: str, value) -> str:
    """A setting in a folder name: `hash` (--embedder hash), `4000c`, `no-dates`, `answer-ceiling300`."""
    option = name.replace("_", "-")
    if isinstance(value, bool):
        return option if value else f"no-{option}"
    if name in ("llm", "judge", "embedder"):
        kinds = specs.EMBEDDER_KINDS if name == "embedder" else specs.LLM_KINDS
        return ("judge-" if name == "judge" else "") + specs.tag(specs.parse(value, kinds))
    if name == "submission":  # the folder's own name: runs/ru-answer-baseline
        return re.sub(r"[^\w.]+", "-", Path(value).resolve().name)
    if name == "context_chars":
        return f"{value}c"
    return f"{option}{value:g}" if isinstance(value, (int, float)) else re.sub(r"[^\w.]+", "-", str(value)).strip("-")


def set_aside(out: Path) -> None:
    """--fresh: the old rows move to results.jsonl.bak, and the run says so."""
    if results.set_aside(out):
        print(f"--fresh: the old rows are in {out / results.RESULTS}.bak")


def sources(options, out: Path) -> manifest.Manifest:
    """--merge DIR... --out OUT: the manifest the shard folders share, checked against OUT and
    the settings given (nothing written yet)."""
    merged = manifest.common([Path(s) for s in options.merge], out)
    refuse_other_settings(options, merged)
    if not options.fresh:
        old = manifest.read(out)
        if old is not None and not old.merged_from:
            raise UsageError(f"--out {out} holds a run, not a merge; pick another --out")
        manifest.check(out, merged, PRODUCTS)
    return merged


def merge(options, out: Path, merged: manifest.Manifest) -> tuple:
    """The rows of the shard folders, written into OUT with their common manifest, and the options
    as the sources were made with (what the summary describes)."""
    if options.fresh:
        set_aside(out)
    rows = results.merge(options.merge, out)
    manifest.write(out, merged)
    fields = {f.name for f in dataclasses.fields(options)}
    made = {name: value for name, value in [("dataset", merged.dataset), ("data", merged.data),
                                            *merged.settings.items()] if name in fields}
    return rows, dataclasses.replace(options, **made, llm_fallback=None)


def refuse_other_settings(options, merged: manifest.Manifest) -> None:
    """A setting given with --merge that its sources were not made with would be ignored: refused."""
    for name, value in [("dataset", merged.dataset), *merged.settings.items()]:
        if name not in options.given:  # refined_sha256 is no option; it is never given
            continue
        given = getattr(options, name)
        if name in ("llm", "judge"):
            given = specs.identity(given)
        if given != value:
            option = "--" + name.replace("_", "-")
            raise UsageError(f"--merge: its sources were made with {option} {value}, not {given}; "
                             f"the settings come from the sources, leave {option} out")


@contextmanager
def lock(out: Path):
    """Held while a run writes OUT: a second run into the same folder is refused (UsageError)
    instead of both writing and the official files holding only the last one's rows. The
    lock is the kernel's (flock), so a killed run never leaves it held."""
    out.mkdir(parents=True, exist_ok=True)
    with open(out / LOCK, "a+", encoding="utf-8") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.seek(0)
            holder = f.read().strip() or "?"
            raise UsageError(f"{out} is being written by another run (pid {holder}); wait for it to finish, "
                             "or pass another --out") from None
        f.seek(0)
        f.truncate()
        f.write(f"{os.getpid()}\n")
        f.flush()
        yield


class Log(logging.FileHandler):
    """OUT/run.log, counting the warnings and errors it takes; `last_cause` is the innermost
    exception of the last traceback logged, for the terminal line of a failing backend."""

    def __init__(self, path: Path):
        super().__init__(path, encoding="utf-8", delay=True)  # no file until a line comes
        self.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
        self.problems = 0
        self.last_cause = ""

    def emit(self, record):
        self.problems += record.levelno >= logging.WARNING
        if record.exc_info and record.exc_info[1] is not None:
            self.last_cause = cause(record.exc_info[1])
        super().emit(record)


def cause(error: BaseException) -> str:
    """`ConnectionRefusedError: [Errno 111] Connection refused`: the error at the bottom of a chain
    (urllib's URLError holds it as `reason`)."""
    while error.__cause__ or error.__context__:
        error = error.__cause__ or error.__context__
    if isinstance(getattr(error, "reason", None), BaseException):
        error = error.reason
    return f"{type(error).__name__}: {str(error)[:200]}"


@contextmanager
def log(out: Path):
    """The submission's log (a failed call's traceback, every fallback) into OUT/run.log while
    the records run: a backend that is down is one line on the terminal, not hundreds."""
    logger = logging.getLogger("gigamemory")
    handler, propagate = Log(out / LOG), logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate
        handler.close()
