import json
import os
import shutil
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = ROOT.parent / "shared" / "data"
# A test's time limit guards against a hang; it is no speed bound. A loaded machine (three model
# jobs beside `make test`) once took 47 minutes for the suite, and a 600 s limit failed a test that
# was only slow. Speed is measured by bench/ scripts, never asserted here.
HANG_GUARD = 3600
# The answer ceiling of the fault tests, on a clock the test moves (guard.ManualClock): no answer
# passes it unless the test moves the clock past it, however slow the machine.
CEILING = 5.0


@pytest.fixture(autouse=True)
def imports_as_found():
    """Every test leaves sys.path as it found it, and no module a fresh import would not give back
    (a stand-in's, a submission loaded from its folder): the tests after it import the real ones."""
    path, modules = list(sys.path), set(sys.modules)
    yield
    assert sys.path == path, f"the test left sys.path changed: {sorted(set(sys.path) ^ set(path))}"
    stale = sorted(name for name in set(sys.modules) - modules if not imported_as_found(name))
    assert not stale, f"the test left modules a fresh import would not give: {stale}"


def imported_as_found(name: str) -> bool:
    """Whether `sys.modules[name]` is the file a fresh import of `name` would find. A module with no
    file (made in memory, built in) counts as found, and so does one its package answers for: a
    submodule, or an alias a package registers (scipy's `_cyutility` is `scipy._cyutility`)."""
    module = sys.modules.get(name)
    origin, spec = getattr(module, "__file__", None), getattr(module, "__spec__", None)
    if "." in name or name.startswith("__") or origin is None or spec is None or spec.name != name:
        return True
    for finder in sys.meta_path:  # importlib.util.find_spec would answer from sys.modules itself
        spec = finder.find_spec(name, None) if hasattr(finder, "find_spec") else None
        if spec is not None:
            if spec.origin in ("frozen", "built-in"):  # the interpreter's own copy (runpy under xdist)
                return True
            return spec.origin is not None and os.path.samefile(spec.origin, origin)
    return False


@pytest.fixture
def restored_imports():
    """For a test that puts a stand-in on the import path (local_eval.submission.use_stand_in_vllm)
    or loads a submission from its folder: afterwards sys.path is as it was, and the modules a fresh
    import would not give (with their submodules) are dropped."""
    path, modules = list(sys.path), set(sys.modules)
    yield
    sys.path[:] = path
    stale = {name for name in set(sys.modules) - modules if not imported_as_found(name)}
    for name in [n for n in sys.modules if n.split(".")[0] in stale]:
        del sys.modules[name]


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not beside the checkout")
    return SHARED_DATA


def copy_checkout(dest: Path) -> Path:
    """DEST/repo: the checkout's files (tracked and new, nothing ignored), with ../shared beside it
    when the data is there; None where git cannot list them."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=ROOT,
                            capture_output=True, text=True)
    if listed.returncode:
        return None
    for name in filter(None, listed.stdout.split("\0")):
        if (ROOT / name).is_symlink():  # as git checks it out (local_eval/systems/rag/memory)
            (dest / "repo" / name).parent.mkdir(parents=True, exist_ok=True)
            os.symlink(os.readlink(ROOT / name), dest / "repo" / name)
        elif (ROOT / name).is_file():
            (dest / "repo" / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / "repo" / name)
    if SHARED_DATA.is_dir():
        (dest / "shared").symlink_to(SHARED_DATA.parent)
    return dest / "repo"


def citing_llm(replies=()):
    """The tests' scripted reader (`ScriptedLLM`) that cites as a careful reader does: the cited
    stage's second call (its cite ask, `decide.CITE_SCHEMA`) is answered by the reader itself, never
    from the test's queue, with the material line that shares the most words with its draft (none
    where no line shares one). A test of the answer path scripts its drafts only; one of the cite
    call scripts its replies on a plain ScriptedLLM."""
    from submit.memory import answer, decide
    from submit.memory.llm import ScriptedLLM

    class CitingLLM(ScriptedLLM):
        def _one(self, chat, max_tokens, schema):
            if schema == decide.CITE_SCHEMA:  # its own reply goes first, the test's queue stays as it was
                draft = answer.lemmas_of(chat[-2]["content"])
                lines = [line for line in chat[-3]["content"].splitlines() if line.strip()][:-2]  # question, ask aside
                shared = [(len(draft & answer.lemmas_of(line)), line) for line in lines]
                best = max(shared, default=(0, ""), key=lambda pair: pair[0])
                self.queue.appendleft(json.dumps({"quotes": [best[1].lstrip("- ")] if best[0] else []},
                                                 ensure_ascii=False))
            return super()._one(chat, max_tokens, schema)

    return CitingLLM(replies)


def answer_chat(llm) -> list:
    """The last plain answer prompt the scripted reader was asked (no schema: not its cite ask, not
    a list ask, not extraction)."""
    return next(chat for chat, _, schema in reversed(llm.history) if schema is None)


def make_model(replies=(), embedder="hash", clock=None, **config):
    """A submission on the scripted LLM (`citing_llm`) and the hash embedder: the real code path, no
    model. Its gate is off, so no calibration pass asks its 64 prompts of the scripted replies (and
    every answer check is on, uncalibrated): the gate's tests build their own."""
    import dataclasses

    from submit import SubmitModelWithMemory
    from submit.config import Config
    from submit.memory.dialogue import Settings
    config["memory"] = dataclasses.replace(config.get("memory", Settings()), gate="off")
    llm = citing_llm(replies)
    model = SubmitModelWithMemory("", config=Config(llm="scripted", embedder=embedder, **config), llm=llm,
                                  clock=clock)
    return model, llm


class Hang:
    """Scripted replies that hang until the test releases them: `reply(text)` is one such reply;
    `entered` counts the calls that are hanging now."""

    def __init__(self):
        self.release, self.entered = threading.Event(), threading.Semaphore(0)

    def reply(self, text='{"facts": []}'):
        def hung(chat):
            self.entered.release()
            self.release.wait(HANG_GUARD)
            return text
        return hung


def answer_in_time(model, clock, dialogue, question, hang=None, waits=1):
    """The answer to `question` on `clock` (a ManualClock), moved by the test: once the answer's
    LLM call hangs (`hang`) and `waits` waits are made on the clock, the clock goes to the earliest
    deadline waited for (the ceiling, an engine's grace). Returns the answer, the seconds it took
    on the clock, and the deadlines that were waited for, counted from the question."""
    start = clock()
    with ThreadPoolExecutor(1) as pool:
        answer = pool.submit(model.answer_to_question, dialogue, question)
        if hang is not None:
            assert hang.entered.acquire(timeout=HANG_GUARD), "no LLM call hung"
        deadlines = [d - start for d in clock.waiting(waits, HANG_GUARD)]
        clock.advance(deadlines[0])
        return answer.result(HANG_GUARD), clock() - start, deadlines


# LoCoMo-Refined `data/public/questions.jsonl` rows in the release's schema
# (github.com/mem-eval-suite/LoCoMo_refined, src/export.py), written by hand for the tests:
# the first two are the README's own examples; the answer lists and the conv-99 row are ours.
REFINED_ROWS = [
    {"qa_id": "conv-26#q0000", "sample_id": "conv-26", "conversation_idx": 0, "qa_index": 0,
     "speaker_a": "Caroline", "speaker_b": "Melanie",
     "question": "When did Caroline go to the LGBTQ support group?", "answer": ["7 May 2023"],
     "category": "2", "is_multi_modality": False, "evidence": ["D1:3"], "evidence_messages": []},
    {"qa_id": "conv-26#q0001", "sample_id": "conv-26", "conversation_idx": 0, "qa_index": 1,
     "speaker_a": "Caroline", "speaker_b": "Melanie", "question": "When did Melanie paint a sunrise?",
     "answer": ["2022", "last year"], "category": "2", "is_multi_modality": True, "evidence": ["D1:12"],
     "evidence_messages": []},
    {"qa_id": "conv-30#q0000", "sample_id": "conv-30", "conversation_idx": 1, "qa_index": 0,
     "speaker_a": "Jon", "speaker_b": "Gina", "question": "When did Jon lose his job as a banker?",
     "answer": ["19 January 2023"], "category": "2", "is_multi_modality": False, "evidence": ["D1:2"],
     "evidence_messages": []},
    {"qa_id": "conv-26#q0002", "sample_id": "conv-26", "conversation_idx": 0, "qa_index": 2,
     "speaker_a": "Caroline", "speaker_b": "Melanie", "question": "What did Caroline research?",
     "answer": ["Adoption agencies"], "category": "1", "is_multi_modality": False, "evidence": ["D2:8"],
     "evidence_messages": []},
    {"qa_id": "conv-99#q0000", "sample_id": "conv-99", "conversation_idx": 9, "qa_index": 0,
     "speaker_a": "A", "speaker_b": "B", "question": "Not in the dev file?", "answer": ["no"],
     "category": "4", "is_multi_modality": False, "evidence": [], "evidence_messages": []},
]


def write_refined(path: Path, rows=REFINED_ROWS) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def send_json(handler, payload: dict) -> None:
    """A fake OpenAI-compatible server's reply (http.server handlers in test_llm, test_run_integrity)."""
    import json
    data = json.dumps(payload).encode()
    handler.send_response(200)
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)
