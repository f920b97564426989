"""Build the contest zip: what `submit/` holds, at the zip's root; no caches, tests or eval data.

    .venv/bin/python tools/make_zip.py --out dist/submission.zip

Prints the size and a summary of the contents. Fails, writing nothing, when a pin of
`submit/wheels/pins.txt` has no wheel beside it (the contest machine has no internet, so
the submission could not install; `make wheels` fetches them), and above the contest's 5 GB.
"""
from __future__ import annotations

import argparse
import importlib.util
import sys
import zipfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUBMIT = ROOT / "submit"
LIMIT = 5 * 1000**3  # the contest's 5 GB
SKIP_DIRS = {"__pycache__", "_site", ".pytest_cache"}
SKIP_SUFFIXES = {".pyc", ".pyo"}


def files(source: Path = SUBMIT) -> list[Path]:
    """Every file the zip carries, relative to `source`, sorted."""
    out = []
    for path in source.rglob("*"):
        rel = path.relative_to(source)
        if path.is_file() and not (set(rel.parts) & SKIP_DIRS) and path.suffix not in SKIP_SUFFIXES:
            out.append(rel)
    return sorted(out)


def build(out: Path, source: Path = SUBMIT, limit: int = LIMIT) -> int:
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, allowZip64=True) as z:
        for rel in files(source):
            # wheels and weights are compressed already; storing them saves minutes
            kind = zipfile.ZIP_STORED if rel.parts[0] in ("wheels", "weights") else zipfile.ZIP_DEFLATED
            z.write(source / rel, rel.as_posix(), compress_type=kind)
    size = out.stat().st_size
    if size > limit:
        out.unlink()
        raise SystemExit(f"zip is {size / 1e9:.2f} GB, over the {limit / 1e9:.0f} GB limit: removed {out}")
    return size


def missing_wheels(source: Path = SUBMIT) -> list[str]:
    """Pins of `source`/wheels/pins.txt with no wheel of that name and version beside them, read
    by the source's own bootstrap (the reader the contest machine runs)."""
    spec = importlib.util.spec_from_file_location("source_bootstrap", source / "bootstrap.py")
    bootstrap = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bootstrap)
    wheels = source / "wheels"
    return [pin for pin in bootstrap.pins(wheels / "pins.txt") if not bootstrap.has_wheel(pin, wheels)]


def summary(source: Path = SUBMIT) -> str:
    by_top = Counter()
    sizes = Counter()
    for rel in files(source):
        top = rel.parts[0] if len(rel.parts) > 1 else "(root)"
        by_top[top] += 1
        sizes[top] += (source / rel).stat().st_size
    return "\n".join(f"  {top:<12}{by_top[top]:>6} files {sizes[top] / 1e6:>10.1f} MB" for top in sorted(by_top))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default=str(ROOT / "dist" / "submission.zip"))
    args = p.parse_args(argv)
    if not (SUBMIT / "__init__.py").is_file() or not (SUBMIT / "model_inference.py").is_file():
        raise SystemExit("submit/__init__.py and submit/model_inference.py must exist")
    lacking = missing_wheels(SUBMIT)
    if lacking:
        print(f"make_zip: error: {SUBMIT / 'wheels'} has no wheel for {len(lacking)} pin(s) of pins.txt "
              f"({', '.join(lacking)}); the contest machine has no internet, so the submission could not "
              "install: run `make wheels` first. Nothing written.", file=sys.stderr)
        return 1
    if not [p for p in (SUBMIT / "weights").glob("*") if p.is_dir()]:
        print("warning: submit/weights/ holds no embedder; run `make weights` on a machine with internet",
              file=sys.stderr)
    size = build(Path(args.out), SUBMIT)
    print(f"{args.out}: {size / 1e6:.1f} MB (limit 5000 MB)\n{summary(SUBMIT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
