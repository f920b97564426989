"""Any contest-format submission through `local_eval/run.py --submission`, run as the contest runs it.

Contestant folders are written here as a contestant writes them (absolute `submit.` imports, the
harness's `models` and `submit_interface`, files read relative to the harness's folder) and run in
their own process from a harness folder laid out like the organizers', with PYTHONPATH holding this
repository (whose editable install also maps `submit`): their class must answer, not ours. The model
folder is tests/vllm_stand_in.py's (a real tokenizer, made in a second); the reader is `scripted`.
"""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import vllm_stand_in

from local_eval import harness, submission

ROOT = Path(__file__).resolve().parent.parent

CONTESTANT = {
    "submit/__init__.py": "from submit.model_inference import SubmitModelWithMemory\n",
    "submit/helpers.py": "def last_two(texts):\n    return ' | '.join(texts[-2:])\n",
    "submit/weights/x.txt": "ВЕСА-42\n",
    "submit/model_inference.py": """
        from vllm import LLM, SamplingParams
        from models import Message
        from submit_interface import ModelWithMemory
        from submit.helpers import last_two


        class SubmitModelWithMemory(ModelWithMemory):
            def __init__(self, model_path):
                self.mark = open("submit/weights/x.txt", encoding="utf-8").read().strip()
                self.llm = LLM(model=model_path, trust_remote_code=True)
                self.memory = {}

            def write_to_memory(self, messages, dialogue_id):
                assert all(isinstance(m, Message) for m in messages)
                self.memory.setdefault(dialogue_id, []).extend(m.content for m in messages)

            def clear_memory(self, dialogue_id):
                self.memory.pop(dialogue_id, None)

            def answer_to_question(self, dialogue_id, question):
                if "животные" in question and "RAISE" in self.mark:
                    raise RuntimeError("no pets here: " + dialogue_id)
                prompt = last_two(self.memory[dialogue_id]) + " ? " + question
                out = self.llm.generate(prompt, SamplingParams(temperature=0.0, max_tokens=20))
                return "[" + self.mark + "] " + out[0].outputs[0].text
    """,
}
RAISING_LINE = 22  # the `raise` above, in submit/model_inference.py


def write(folder: Path, files: dict) -> Path:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> Path:
    return vllm_stand_in.write(tmp_path_factory.mktemp("model") / "tiny")


def run(model_dir: Path, folder, out: Path, *argv):
    """run.py --submission FOLDER on the demo, this repository first on PYTHONPATH."""
    env = {**os.environ, "TQDM_DISABLE": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "local_eval/run.py", "--submission", str(folder), "--llm", "scripted",
                           "--submission-model", str(model_dir), "--out", str(out), *argv],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


def test_a_contestants_folder_answers_with_its_own_class(tmp_path, model_dir):
    folder = write(tmp_path / "entry", CONTESTANT)
    done = run(model_dir, folder, tmp_path / "run", "--limit", "3")
    assert done.returncode == 0, done.stderr
    rows = json.loads((tmp_path / "run" / "output.json").read_text(encoding="utf-8"))
    assert [r["answer"] for r in rows] == ["[ВЕСА-42] У меня нет такой информации."] * 3
    src = tmp_path / "run" / "harness" / "src"
    assert sorted(p.name for p in src.iterdir()) == ["models.py", "submit", "submit_interface.py"]
    assert (src / "submit").resolve() == (folder / "submit").resolve()
    summary = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
    assert summary["llm"]["calls"] == 3 and summary["contest_stop"] is None


def test_nothing_of_ours_is_importable_as_submit_in_the_submissions_process(tmp_path, model_dir):
    # `submit.config` is a module of our own package, not of this folder's: it must not be found.
    folder = write(tmp_path / "entry", {"submit/__init__.py": "import submit.config\n"})
    done = run(model_dir, folder, tmp_path / "run")
    assert done.returncode == 3
    assert done.stderr.strip().splitlines() == [
        f"run.py: stopped: the submission raised while it was imported and built: {folder / 'submit'}/__init__.py:1: "
        f"ModuleNotFoundError: No module named 'submit.config'; the contest stops the whole run here "
        f"({tmp_path / 'run' / 'error.json'}); --keep-going runs past it"]


def test_a_raising_dialogue_stops_the_run_naming_its_file_unless_keep_going(tmp_path, model_dir):
    folder = write(tmp_path / "entry", {**CONTESTANT, "submit/weights/x.txt": "RAISE\n"})
    out = tmp_path / "run"
    done = run(model_dir, folder, out)
    where = f"{folder / 'submit' / 'model_inference.py'}:{RAISING_LINE}"
    assert done.returncode == 3
    assert done.stderr.strip().splitlines() == [
        f"run.py: stopped: the submission raised in answer_to_question of record 2 (demo-02): {where}: "
        f"RuntimeError: no pets here: demo-02; the contest stops the whole run here ({out / 'error.json'}); "
        "--keep-going runs past it"]
    error = json.loads((out / "error.json").read_text(encoding="utf-8"))
    assert error["exception"] == f"RuntimeError: no pets here: demo-02 in {where}"
    going = run(model_dir, folder, out, "--keep-going")
    assert going.returncode == 0, going.stderr
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["records"] == 10 and summary["fallbacks"] == {"submission_error": 1}
    assert summary["contest_stop"] == {"index": 2, "id": "demo-02", "call": "answer_to_question", "where": where,
                                       "error": "RuntimeError: no pets here: demo-02"}
    assert "the contest would have stopped the whole run at record 2 (demo-02)" in going.stdout
    assert not (out / "error.json").exists()
    again = run(model_dir, folder, out)  # without --keep-going the folder goes no further
    assert again.returncode == 3 and "made with --keep-going past the submission's exception" in again.stderr


def test_a_rerun_after_the_folder_changed_does_not_mix_its_rows(tmp_path, model_dir):
    folder = write(tmp_path / "entry", CONTESTANT)
    assert run(model_dir, folder, tmp_path / "run", "--limit", "1").returncode == 0
    write(folder, {"submit/weights/x.txt": "ВЕСА-43\n"})
    done = run(model_dir, folder, tmp_path / "run", "--limit", "2")
    assert done.returncode == 2 and "its files have changed since" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_a_folder_without_model_inference_is_a_submission_and_its_prints_go_to_the_log(tmp_path, model_dir):
    folder = write(tmp_path / "entry", {"submit/__init__.py": """
        print("hello from the submission")

        class SubmitModelWithMemory:
            def __init__(self, model_path):
                pass
            def write_to_memory(self, messages, dialogue_id):
                pass
            def clear_memory(self, dialogue_id):
                pass
            def answer_to_question(self, dialogue_id, question):
                return "own"
    """})
    done = run(model_dir, folder, tmp_path / "run", "--limit", "1")
    assert done.returncode == 0, done.stderr
    assert "hello from the submission" in (tmp_path / "run" / "run.log").read_text(encoding="utf-8")
    assert "hello" not in done.stdout


def test_options_of_our_own_submission_are_refused_in_one_line(tmp_path):
    folder = write(tmp_path / "entry", CONTESTANT)
    for argv, said in ((["--submission", str(tmp_path)], "not a contest submission"),
                       (["--submission-ctx", "4096"], "goes with --submission"),
                       (["--keep-going"], "goes with --submission"),
                       (["--submission", str(folder), "--context-chars", "900"], "--context-chars sets our own"),
                       (["--submission", str(folder), "--facts", "off"], "--facts sets our own"),
                       (["--submission", str(folder), "--embedder", "hash"], "--embedder sets our own"),
                       (["--submission", str(folder), "--answer-ceiling", "60"], "--answer-ceiling sets our own"),
                       (["--submission", str(folder), "--lists", "list"], "--lists sets our own"),
                       (["--submission", str(folder), "--llm", "openai:http://127.0.0.1:9/v1#m"],
                        "openai: chat server")):
        llm = [] if "--llm" in argv else ["--llm", "scripted"]
        done = subprocess.run([sys.executable, "local_eval/run.py", *llm, *argv], cwd=ROOT, capture_output=True,
                              text=True, timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert done.returncode == 2 and said in done.stderr, (argv, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1 and "runs/" not in done.stderr


class Unrendering:
    """The scripted LLM, with a rendered prompt read back into its messages first."""

    gives_logprobs = True  # the decline gate's calibration asks, through the stand-in's logprobs

    def __init__(self):
        from submit.memory.llm import ScriptedLLM
        self.inner = ScriptedLLM()
        self.name, self.history, self.scored = "scripted", self.inner.history, self.inner.scored

    def generate(self, chats, **kwargs):
        chats = [vllm_stand_in.messages_of(c[0]["content"]) if c[0]["role"] == "prompt" else c for c in chats]
        return self.inner.generate(chats, **kwargs)


def test_our_submission_in_its_own_process_asks_and_answers_as_the_direct_run(tmp_path, model_dir):
    from submit import SubmitModelWithMemory
    from submit.config import Config
    from submit.memory.llm import ScriptedLLM
    records = harness_records()
    direct_llm = ScriptedLLM()
    direct = SubmitModelWithMemory("", config=Config(llm="scripted", embedder="hash"), llm=direct_llm)
    through_llm = Unrendering()
    remote = submission.Remote(submission.package_dir(str(ROOT)), through_llm, str(model_dir), reader_context=None,
                               env={"GIGAMEMORY_LLM": f"vllm:{model_dir}", "GIGAMEMORY_EMBEDDER": "hash"})
    remote.start(tmp_path)
    try:
        through = [remote.run_record(r).answer for r in records]
    finally:
        ended = remote.close()
    assert ended is None  # a clean exit, no signal
    assert [harness.run_record(direct, r, use_dates=False).answer for r in records] == through and all(through)
    assert len(direct_llm.history) > 2 * len(records)  # extraction, versions and answer calls, not only answers
    assert [h[0] for h in through_llm.history] == [h[0] for h in direct_llm.history]
    # the gate's calibration, asked through the stand-in's logprobs as directly (no scores: off in both)
    assert [c for c, _ in through_llm.scored] == [c for c, _ in direct_llm.scored] and len(direct_llm.scored) == 64
    assert dict(remote.fallbacks) == {}


def harness_records():
    from local_eval import benchmarks
    return benchmarks.load("demo")[:2]


def test_a_replay_miss_stops_the_run_as_ours_does_not_as_the_submissions_failure(tmp_path, model_dir):
    folder = write(tmp_path / "entry", CONTESTANT)
    (tmp_path / "store").mkdir()
    env = {**os.environ, "TQDM_DISABLE": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "local_eval/run.py", "--submission", str(folder), "--llm",
                           f"replay:{tmp_path / 'store'}", "--submission-model", str(model_dir), "--out",
                           str(tmp_path / "run")], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 3 and done.stderr.startswith("run.py: stopped: replay: 1 prompt(s) have no stored reply")
    assert not (tmp_path / "run" / "error.json").exists()


def test_prompts_the_reader_cannot_hold_are_cut_and_said_on_the_terminal(tmp_path, model_dir):
    folder = write(tmp_path / "entry", CONTESTANT)
    done = run(model_dir, folder, tmp_path / "run", "--limit", "2", "--submission-ctx", "8")
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
    cut = summary["llm"]["tokens_cut"]
    assert summary["llm"]["prompts_cut"] == 2 and cut > 0
    assert f"vLLM stand-in: 2 prompt(s) cut to the reader's context ({cut} tokens dropped, their latest kept)" \
        in done.stdout


class Down:
    """An --llm that is down: every call raises."""
    name = "down"

    def generate(self, chats, **kwargs):
        raise ConnectionRefusedError("[Errno 111] Connection refused")


def test_a_failing_llm_is_the_records_incompleteness_not_the_submissions_stop(tmp_path, model_dir):
    folder = write(tmp_path / "entry", CONTESTANT)
    remote = submission.Remote(submission.package_dir(str(folder)), Down(), str(model_dir), reader_context=None)
    remote.start(tmp_path)
    try:
        result = remote.run_record(harness_records()[0])
    finally:
        assert remote.close() is None
    assert (result.answer, dict(remote.fallbacks)) == ("", {"llm_failed": 1})
    assert not (tmp_path / "error.json").exists()


# A vLLM an interpreter could have installed (not the stand-in: no `refused`, no `configure`): it
# answers with its model folder's name, so an answer says which engine loaded which folder.
REAL_VLLM = {"vllm/__init__.py": """
    import os


    class SamplingParams:
        def __init__(self, **kwargs):
            self.kwargs = kwargs


    class _Completion:
        def __init__(self, text):
            self.text, self.token_ids = text, [1, 2]


    class _Request:
        def __init__(self, prompt, text):
            ids = prompt if isinstance(prompt, list) else list(range(len(prompt.split())))
            self.prompt_token_ids, self.outputs = ids, [_Completion(text)]


    class LLM:
        def __init__(self, model, **kwargs):
            self.name = "engine loaded " + os.path.basename(model)

        def generate(self, prompts=None, sampling_params=None, prompt_token_ids=None, **kwargs):
            prompts = [prompt_token_ids] if prompts is None else prompts  # the baseline sends token ids
            prompts = prompts if isinstance(prompts, list) and not isinstance(prompts[0], int) else [prompts]
            return [_Request(p, self.name) for p in prompts]
"""}


def run_real(folder: Path, model: Path, out: Path, engine_path: str, *argv):
    """run.py --submission FOLDER --llm vllm:MODEL, `engine_path` on PYTHONPATH beside this repository."""
    env = {**os.environ, "TQDM_DISABLE": "1", "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), engine_path) if p)}
    env.pop("VLLM_CPU_LAUNCHER", None)
    return subprocess.run([sys.executable, "local_eval/run.py", "--submission", str(folder), "--llm", f"vllm:{model}",
                           "--out", str(out), *argv], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


def test_with_vllm_the_submission_imports_the_real_engine_and_loads_the_folder_itself(tmp_path, model_dir):
    folder = write(tmp_path / "entry", CONTESTANT)
    engine = write(tmp_path / "site", REAL_VLLM)
    done = run_real(folder, model_dir, tmp_path / "run", str(engine), "--limit", "2")
    assert done.returncode == 0, done.stderr
    rows = json.loads((tmp_path / "run" / "output.json").read_text(encoding="utf-8"))
    assert [r["answer"] for r in rows] == ["[ВЕСА-42] engine loaded tiny"] * 2
    summary = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
    assert summary["llm"]["calls"] == 2 and summary["llm"]["output_tokens"] == 4 and summary["llm"]["prompt_tokens"] > 0


def test_with_vllm_and_no_engine_to_import_the_run_says_so_in_one_line(tmp_path, model_dir):
    folder = write(tmp_path / "entry", CONTESTANT)
    done = run_real(folder, model_dir, tmp_path / "run", "", "--limit", "1")
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "runs the real vLLM in the submission's process" in done.stderr and "No module named 'vllm'" in done.stderr
    for argv, said in ((["--submission-ctx", "4096"], "--submission-ctx is for the vLLM stand-in"),
                       (["--submission-model", str(model_dir)], "--submission-model is for the vLLM stand-in")):
        refused = run_real(folder, model_dir, tmp_path / "run2", "", *argv)
        assert refused.returncode == 2 and said in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
    missing = run_real(folder, tmp_path / "nowhere", tmp_path / "run3", "")
    assert missing.returncode == 2 and "no config.json there" in missing.stderr
