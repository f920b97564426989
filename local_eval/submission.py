"""Any contest-format submission, run unchanged: ours, the organizers' baseline, a contestant's own.

A submission is what the contest unpacks into its harness's `src/submit/`: a package whose
`__init__.py` gives `SubmitModelWithMemory(model_path)`. `load(folder, …)` takes a folder that
holds it (`FOLDER/submit/__init__.py`, or `FOLDER/__init__.py` beside `model_inference.py`),
imports it as a package of its own (so our own `submit` stays ours), with two things the contest
machine has and ours does not stood in for, for the run only: vLLM (`local_eval/shim/vllm`: the
offline API, answered by the `--llm` backend) and the model folder (`model_folder`: the local
model's tokenizer saved where `AutoTokenizer.from_pretrained(model_path)` finds it). A
submission's import error, missing package or exception in its constructor is one line naming
its file (`SubmissionError`); `Guarded` turns an exception in one dialogue into that record's
failure, counted, where the contest would stop the whole run. Called by run.py (`--submission`).
"""
from __future__ import annotations

import importlib.util
import logging
import sys
import traceback
from collections import Counter
from pathlib import Path
from typing import Optional

from .errors import UsageError

log = logging.getLogger("gigamemory")
SHIM = Path(__file__).resolve().parent / "shim"
PACKAGE = "contest_submission"  # the name the submission is imported under


class SubmissionError(UsageError):
    """The submission cannot be loaded or built: one line, naming its file."""


def package_dir(folder: str) -> Path:
    """The submission's package folder inside `folder`; SubmissionError when there is none."""
    root = Path(folder)
    for candidate in (root / "submit", root):
        if (candidate / "__init__.py").is_file() and (candidate / "model_inference.py").is_file():
            return candidate
    raise SubmissionError(f"{folder}: no submit/__init__.py with model_inference.py (nor both in the folder "
                          "itself): not a contest submission")


def model_folder(gguf: Path, cache: Path) -> Path:
    """A folder `AutoTokenizer.from_pretrained` reads the GGUF model's tokenizer from, made once."""
    folder = cache / f"{gguf.stem}-tokenizer"
    if not (folder / "tokenizer_config.json").is_file():
        from transformers import AutoTokenizer
        tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        tokenizer.save_pretrained(str(folder))
    return folder


def use_stand_in_vllm(llm, tokenizer, context_tokens: int):
    """Put the vLLM stand-in first on the import path, bound to `llm`; returns its module."""
    if str(SHIM) not in sys.path:
        sys.path.insert(0, str(SHIM))
    loaded = sys.modules.get("vllm")
    if loaded is not None and not str(getattr(loaded, "__file__", "")).startswith(str(SHIM)):
        raise SubmissionError("the real vllm is already imported in this process; the stand-in cannot replace it")
    import vllm
    vllm.configure(llm, tokenizer, context_tokens)
    return vllm


def load(folder: str, model_path: str):
    """The submission's `SubmitModelWithMemory(model_path)`, built."""
    package = package_dir(folder)
    for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
        del sys.modules[name]  # an earlier submission of this process must not lend its modules
    spec = importlib.util.spec_from_file_location(PACKAGE, package / "__init__.py",
                                                  submodule_search_locations=[str(package)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[PACKAGE] = module
    try:
        spec.loader.exec_module(module)
        cls = getattr(module, "SubmitModelWithMemory", None)
        if cls is None:
            raise SubmissionError(f"{package / '__init__.py'}: gives no SubmitModelWithMemory")
        return cls(model_path)
    except SubmissionError:
        raise
    except BaseException as error:  # their error, said in one line; Ctrl-C stays Ctrl-C
        if isinstance(error, KeyboardInterrupt):
            raise
        raise SubmissionError(f"submission {where(error, package)}: {type(error).__name__}: {error}") from None


def where(error: BaseException, package: Path) -> str:
    """`path/to/model_inference.py:12`: the deepest frame of the traceback inside the package, else
    the package's `__init__.py`."""
    inside = [f for f in traceback.extract_tb(error.__traceback__) if str(package) in f.filename]
    frame = inside[-1] if inside else None
    return f"{frame.filename}:{frame.lineno}" if frame else str(package / "__init__.py")


def counters() -> dict:
    """The vLLM stand-in's counters now (`vllm.stats`); none while it is not loaded."""
    module = sys.modules.get("vllm")
    return dict(getattr(module, "stats", {})) if str(getattr(module, "__file__", "")).startswith(str(SHIM)) else {}


class Guarded:
    """A submission whose exceptions stay inside the record they happened in: a failed write is
    counted, a failed answer becomes an empty answer, both logged with their traceback."""

    def __init__(self, model, package: Optional[Path] = None, llm=None):
        self.model, self.package = model, package
        self.llm, self.embedder = llm, None  # what run.py reads of our own class: the LLM its stand-in asks
        self.fallbacks: Counter = Counter()  # `submission_error`: a call of theirs that raised
        self.errors: list[str] = []
        self._started: dict = {}  # dialogue id -> the stand-in's counters at its first write

    def memory_stats(self, dialogue_id: str) -> Optional[dict]:
        """The LLM calls and tokens since the dialogue's first write, as the stand-in counted them
        (prompts cut to the reader's context included), and the errors of its calls."""
        start = self._started.get(dialogue_id)
        if start is None:
            return None
        now = counters()
        spent = {key: now[key] - start.get(key, 0) for key in now}
        return {"llm": {"calls": spent.get("requests", 0), **{k: spent.get(k, 0) for k in (
                    "prompt_tokens", "output_tokens", "prompts_cut", "tokens_cut")}},
                "errors": [e for e in self.errors if f"({dialogue_id!r})" in e]}

    def _failed(self, call: str, dialogue_id: str, error: Exception) -> None:
        self.errors.append(f"{call}({dialogue_id!r}): {type(error).__name__}: {error}")
        self.fallbacks["submission_error"] += 1
        log.error("submission: %s failed for %r", call, dialogue_id, exc_info=error)

    def write_to_memory(self, messages, dialogue_id: str) -> None:
        self._started.setdefault(dialogue_id, counters())
        try:
            self.model.write_to_memory(messages, dialogue_id)
        except Exception as error:
            self._failed("write_to_memory", dialogue_id, error)

    def answer_to_question(self, dialogue_id: str, question: str) -> str:
        try:
            answer = self.model.answer_to_question(dialogue_id, question)
        except Exception as error:
            self._failed("answer_to_question", dialogue_id, error)
            return ""
        if not isinstance(answer, str):  # the organizers' harness refuses the run for this
            self._failed("answer_to_question", dialogue_id, TypeError(f"returned {type(answer).__name__}, not str"))
            return ""
        return answer

    def clear_memory(self, dialogue_id: str) -> None:
        self._started.pop(dialogue_id, None)
        try:
            self.model.clear_memory(dialogue_id)
        except Exception as error:
            self._failed("clear_memory", dialogue_id, error)
