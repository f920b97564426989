"""A run folder: where a run writes, and shard folders merged into one.

Without `--out` a run writes into `runs/<dataset>-<mode>`, followed by a tag for every
setting of its mode that is not the default (`runs/locomo-retrieval-hash`,
`runs/demo-answer-openai-GigaChat-4000c`), so two commands that differ in a setting never
meet in one default folder. A folder holding `results.jsonl`
or `summary.json` is a run; its manifest (`manifest.py`) says whether a rerun may go on
there. `--merge DIR... --out OUT` gathers the rows of shard folders of one dataset and
the same settings. Called by run.py.
"""
from __future__ import annotations

import re
from pathlib import Path

from . import manifest, results
from .errors import UsageError

ROOT = Path(__file__).resolve().parent.parent
PRODUCTS = (results.RESULTS, "summary.json")  # a folder holding one of these is a run


def output_folder(args) -> Path:
    """--out, or runs/<dataset>-<mode>; refused when it (or a parent) is an existing file."""
    if args.merge and not args.out:
        raise UsageError("--merge needs --out: a new folder for the merged run")
    out = Path(args.out) if args.out else ROOT / "runs" / default_name(args)
    for folder in (out, *out.parents):
        if folder.exists():
            if not folder.is_dir():
                raise UsageError(f"--out {out}: {folder} is a file, not a folder")
            break
    return out


def default_name(args) -> str:
    """`<dataset>-<mode>`, then a tag per setting that differs from `args.defaults` (parse_args')."""
    tags = ["refined"] if getattr(args, "refined", None) else []
    tags += [tag(name, getattr(args, name)) for name in manifest.SETTINGS[args.mode]
             if getattr(args, name) != getattr(args.defaults, name)]
    return "-".join([args.dataset, args.mode, *tags])


def tag(name: str, value) -> str:
    """A setting in a folder name: `hash` (--embedder hash), `4000c`, `no-dates`, `answer-ceiling300`."""
    option = name.replace("_", "-")
    if isinstance(value, bool):
        return option if value else f"no-{option}"
    if name in ("llm", "judge", "embedder"):
        return ("judge-" if name == "judge" else "") + spec_tag(manifest.spec_identity(value))
    if name == "context_chars":
        return f"{value}c"
    return f"{option}{value:g}" if isinstance(value, (int, float)) else spec_tag(str(value))


def spec_tag(spec: str) -> str:
    """`openai:http://h:8000/v1#GigaChat` -> `openai-GigaChat`, `hf:/models/Qwen2.5-0.5B` -> `hf-Qwen2.5-0.5B`."""
    kind, _, arg = spec.partition(":")
    if kind == "cache":
        return "cache-" + spec_tag(arg.partition("+")[2])
    name = arg.rpartition("#")[2] if "#" in arg else Path(arg.rstrip("/")).name
    return re.sub(r"[^\w.]+", "-", f"{kind}-{name}" if name else kind).strip("-")


def set_aside(out: Path) -> None:
    """--fresh: the old rows move to results.jsonl.bak, and the run says so."""
    if results.set_aside(out):
        print(f"--fresh: the old rows are in {out / results.RESULTS}.bak")


def merge(args, out: Path) -> list:
    """--merge DIR... --out OUT: the rows of shard folders of one dataset and the same settings,
    written into OUT with their common manifest; `args` then describes the sources."""
    merged = manifest.common([Path(s) for s in args.merge], out)
    refuse_other_settings(args, merged)
    if not args.fresh:
        old = manifest.read(out)
        if old is not None and not old.merged_from:
            raise UsageError(f"--out {out} holds a run, not a merge; pick another --out")
        manifest.check(out, merged, PRODUCTS)
    else:
        set_aside(out)
    rows = results.merge(args.merge, out)
    manifest.write(out, merged)
    for name, value in [("dataset", merged.dataset), ("data", merged.data), *merged.settings.items()]:
        setattr(args, name, value)  # the summary describes the sources
    return rows


def refuse_other_settings(args, merged: manifest.Manifest) -> None:
    """A setting given with --merge that its sources were not made with would be ignored: refused."""
    for name, value in [("dataset", merged.dataset), *merged.settings.items()]:
        given = getattr(args, name, None)
        if name in ("llm", "judge"):
            given = manifest.spec_identity(given)
        if name in args.given and given != value:
            option = "--" + name.replace("_", "-")
            raise UsageError(f"--merge: its sources were made with {option} {value}, not {given}; "
                             f"the settings come from the sources, leave {option} out")
