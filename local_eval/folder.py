"""A run folder: where a run writes, and shard folders merged into one.

Without `--out` a run writes into `runs/<dataset>-<mode>`. A folder holding `results.jsonl`
or `summary.json` is a run; its manifest (`manifest.py`) says whether a rerun may go on
there. `--merge DIR... --out OUT` gathers the rows of shard folders of one dataset and
the same settings. Called by run.py.
"""
from __future__ import annotations

from pathlib import Path

from . import manifest, results
from .errors import UsageError

ROOT = Path(__file__).resolve().parent.parent
PRODUCTS = (results.RESULTS, "summary.json")  # a folder holding one of these is a run


def output_folder(args) -> Path:
    """--out, or runs/<dataset>-<mode>; refused when it (or a parent) is an existing file."""
    if args.merge and not args.out:
        raise UsageError("--merge needs --out: a new folder for the merged run")
    out = Path(args.out or ROOT / "runs" / f"{args.dataset}-{args.mode}")
    for folder in (out, *out.parents):
        if folder.exists():
            if not folder.is_dir():
                raise UsageError(f"--out {out}: {folder} is a file, not a folder")
            break
    return out


def set_aside(out: Path) -> None:
    """--fresh: the old rows move to results.jsonl.bak, and the run says so."""
    if results.set_aside(out):
        print(f"--fresh: the old rows are in {out / results.RESULTS}.bak")


def merge(args, out: Path) -> list:
    """--merge DIR... --out OUT: the rows of shard folders of one dataset and the same settings,
    written into OUT with their common manifest; `args` then describes the sources."""
    merged = manifest.common([Path(s) for s in args.merge], out)
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
        setattr(args, name, value)  # the summary describes the sources, whatever the command line said
    return rows
