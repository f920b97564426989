"""`local_eval/run.py`: the main job writes its three files; the contest sample gives 4 rows."""
import csv
import json
import subprocess
import sys

from conftest import ROOT


def run(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "local_eval/run.py", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=600)


def test_help_documents_every_option():
    out = run("--help").stdout
    for option in ("--dataset", "--data", "--limit", "--out", "--llm", "--embedder"):
        assert option in out


def test_default_run_on_the_demo_writes_table_and_files(tmp_path):
    proc = run("--out", str(tmp_path), "--embedder", "hash")
    assert proc.returncode == 0, proc.stderr
    assert "question type" in proc.stdout and "ALL" in proc.stdout
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["records"] == 10
    assert set(summary["lexical_by_type"]) == {"fact_equal_session", "info_consolidation",
                                               "info_updating", "no_info"}
    assert (tmp_path / "output.json").is_file() and (tmp_path / "submit.csv").is_file()


def test_contest_sample_gives_four_rows(tmp_path, shared_data):
    proc = run("--dataset", "gigamemory", "--data", str(shared_data / "gigamemory/format_example.jsonl"),
               "--out", str(tmp_path), "--embedder", "hash")
    assert proc.returncode == 0, proc.stderr
    with (tmp_path / "submit.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert [r["id"] for r in rows] == ["1", "2", "3", "4"]
    assert all(r["answer"] and float(r["answer_time"]) > 0 for r in rows)
    assert (tmp_path / "summary.json").is_file()


def test_dataset_other_than_demo_needs_data():
    proc = run("--dataset", "locomo")
    assert proc.returncode == 2 and "needs --data" in proc.stderr
