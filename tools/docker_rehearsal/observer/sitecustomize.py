"""The docker rehearsal's observer: imported at start-up as `sitecustomize` because the container's
PYTHONPATH names this folder (tools/docker_rehearsal/in_container.sh); the contest has no such file.

It changes nothing the organizers' `run.py` or the submission does; it only watches, so that the
rehearsal can say what the harness's own output cannot:
- once `submit` is imported (the zip's offline install, `submit/bootstrap.py`, ran in it), where
  each pin of the zip's `wheels/pins.txt` was found: installed from the zip, or in the image. A pin
  found nowhere stops the run at once, naming it.
- each `SubmitModelWithMemory` built: its LLM, embedder and fallbacks, written to
  $REHEARSAL_REPORT when built, after each answer and at exit. Built with a fallback (an LLM that
  did not start, an embedder that did not load) stops the run at once.
tools/docker_rehearsal/verdict.py reads the report. It holds no reference to the class: the
harness drops it when done, and vLLM's engine shuts down with it (kept alive to the end, the
engine's process is joined by multiprocessing's exit handler before vLLM's own shuts it down,
and the run never exits).
"""
import atexit
import importlib.abc
import importlib.util
import json
import os
import sys
import sysconfig

_REPORT = os.environ.get("REHEARSAL_REPORT")
_counters = []  # each class's `fallbacks` Counter: read at exit, and no reference to the class
_state = {}


def _write() -> None:
    if _counters:
        _state["fallbacks"] = {k: v for k, v in _counters[-1].items() if v}
    if _REPORT:
        with open(_REPORT, "w", encoding="utf-8") as f:
            json.dump(_state, f, ensure_ascii=False, indent=1)


def _origins() -> dict:
    """Each pin of the zip's pins.txt: "image" (the interpreter's own folders), "zip" (elsewhere:
    the bootstrap's install) or None (nowhere)."""
    bootstrap = sys.modules["submit.bootstrap"]
    image = {os.path.realpath(sysconfig.get_paths()[key]) for key in ("purelib", "platlib", "stdlib", "platstdlib")}
    found = {}
    for pin in bootstrap.pins():
        name = pin.split("==")[0]
        spec = importlib.util.find_spec(bootstrap.MODULES.get(name, name))
        if spec is None:
            found[pin] = None
            continue
        origin = os.path.realpath(spec.origin or next(iter(spec.submodule_search_locations)))
        found[pin] = "image" if any(origin.startswith(folder + os.sep) for folder in image) else "zip"
    return found


def _built_with(model) -> str:
    """Why the class, just built, is not what the contest should get; "" when it is."""
    fallbacks = {k: v for k, v in model.fallbacks.items() if v}
    if fallbacks:
        return f"built with fallbacks {fallbacks}: llm {model.llm.name}, embedder {model.embedder.name}"
    if model.embedder.name == "hash" and model.config.embedder != "hash":
        return "the embedder resolved to 'hash' (lexical only): the zip ships no embedder"
    return ""


def _watch(package) -> None:
    """After `submit` is imported: the pins' origins, and the class watched."""
    _state["pins"] = _origins()
    missing = [pin for pin, where in _state["pins"].items() if where is None]
    if missing:
        _state["missing"] = missing
        _write()
        raise SystemExit(f"rehearsal: after the zip's offline install the image still lacks {', '.join(missing)}")
    cls = package.SubmitModelWithMemory
    init, answer = cls.__init__, cls.answer_to_question

    def __init__(self, *args, **kwargs):
        init(self, *args, **kwargs)
        _counters.append(self.fallbacks)
        _state.update(llm=self.llm.name, embedder=self.embedder.name, answers=0, built=_built_with(self))
        _write()
        if _state["built"]:
            raise SystemExit(f"rehearsal: {_state['built']}")

    def answer_to_question(self, *args, **kwargs):
        reply = answer(self, *args, **kwargs)
        _state["answers"] += 1
        _write()
        return reply

    cls.__init__, cls.answer_to_question = __init__, answer_to_question


class _WatchSubmit(importlib.abc.MetaPathFinder):
    """Finds `submit` as the other finders do, and runs `_watch` after its module ran."""

    def find_spec(self, name, path=None, target=None):
        if name != "submit":
            return None
        sys.meta_path.remove(self)  # once: the real finders take it from here
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None:
            run = spec.loader.exec_module

            def exec_module(module):
                run(module)
                _watch(module)

            spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, _WatchSubmit())
atexit.register(lambda: _counters and _write())
