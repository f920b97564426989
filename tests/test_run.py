"""`local_eval/run.py`: the main job writes its three files; the contest sample gives 4 rows."""
import csv
import json
import subprocess
import sys

from conftest import HANG_GUARD, ROOT


def run(*args, cwd=ROOT):
    """run.py with `args`, on the scripted LLM unless they name one (the default is the local model
    when it is installed)."""
    llm = () if {"--llm", "--help", "retrieval"} & set(args) else ("--llm", "scripted")
    return subprocess.run([sys.executable, "local_eval/run.py", *args, *llm], cwd=cwd,
                          capture_output=True, text=True, timeout=HANG_GUARD)


def test_help_documents_every_option():
    out = run("--help").stdout
    for option in ("--dataset", "--data", "--limit", "--out", "--llm", "--embedder"):
        assert option in out


def test_help_lists_every_kind_and_type_and_says_each_default_once(monkeypatch):
    from local_eval import benchmarks, options, specs
    monkeypatch.setenv("COLUMNS", "2000")  # one line per option: no word cut at a hyphen
    monkeypatch.setitem(specs.LLM_KINDS, "newkind", specs.Kind("newkind:ARG", lambda spec: None))  # listed too
    text = options.parser().format_help()
    line = {o: text.split(f"\n  {o} ")[1].split("\n  --")[0] for o in ("--llm", "--context-chars")}
    for row in specs.LLM_KINDS.values():
        assert row.usage in line["--llm"], row.usage
    assert "newkind:ARG" in line["--llm"] and "gguf:" not in text
    assert line["--context-chars"].count("default") == 1 and "(default: None)" not in text
    assert all(t in text for b in benchmarks.BENCHMARKS.values() for t in b.types)
    assert "130 interrupted" in text


def test_default_run_on_the_demo_writes_table_and_files(tmp_path):
    proc = run("--out", str(tmp_path), "--embedder", "hash")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["records"] == 10
    assert set(summary["by_type"]) == {"fact_equal_session", "info_consolidation", "info_updating", "no_info"}
    assert summary["overall"]["n"] == 10 and summary["mode"] == "answer"
    assert summary["scorer"] == "lexical" and summary["llm"]["calls_per_dialogue"] > 1
    for name in ("output.json", "submit.csv", "report.md", "accuracy.png", "stages.png", "results.jsonl"):
        assert (tmp_path / name).is_file(), name
    under = summary["profile"]["measured_under"]  # what the projection was measured under
    assert under["embed_cache_hit_rate"] is not None and under["load_per_core"] is not None and under["cores"]
    assert summary["overall"]["evidence_n"] == 8  # the demo's questions with evidence turns (no_info has none)


def test_contest_sample_gives_four_rows(tmp_path, shared_data):
    proc = run("--dataset", "gigamemory", "--data", str(shared_data / "gigamemory/format_example.jsonl"),
               "--out", str(tmp_path), "--embedder", "hash")
    assert proc.returncode == 0, proc.stderr
    with (tmp_path / "submit.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert [r["id"] for r in rows] == ["1", "2", "3", "4"]
    assert all(r["answer"] and float(r["answer_time"]) > 0 for r in rows)
    assert (tmp_path / "summary.json").is_file()


def test_retrieval_mode_writes_the_six_metrics_overall_and_per_type(tmp_path, shared_data):
    proc = run("--mode", "retrieval", "--dataset", "gigamemory", "--embedder", "hash", "--out", str(tmp_path),
               "--data", str(shared_data / "gigamemory/ru_dev_questions.jsonl"))
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((tmp_path / "summary.json").read_text())
    metrics = {"session_recall_all@5", "session_recall_all@10", "evidence_recall@4000c",
               "evidence_recall@8000c", "evidence_recall@16000c", "evidence_recall@32000c"}
    assert metrics <= set(summary["overall"]) and summary["overall"]["n"] == 20  # no_info left out
    assert all(0.0 <= summary["overall"][m] <= 1.0 for m in metrics)
    assert summary["by_type"] and all(metrics <= set(v) for v in summary["by_type"].values())


def test_dataset_other_than_demo_needs_data():
    proc = run("--dataset", "locomo")
    assert proc.returncode == 2 and "--data" in proc.stderr and proc.stderr.count("\n") == 1


def test_an_interrupted_run_resumes_without_redoing_finished_records(tmp_path):
    from local_eval import results
    assert run("--out", str(tmp_path), "--embedder", "hash", "--limit", "3").returncode == 0
    first = results.read(tmp_path)
    with (tmp_path / "results.jsonl").open("a") as f:
        f.write('{"id": "demo-04", "cut mid-line')  # an interruption while writing
    proc = run("--out", str(tmp_path), "--embedder", "hash")
    assert proc.returncode == 0
    rows = results.read(tmp_path)
    assert [r["id"] for r in rows[:3]] == [r["id"] for r in first]
    assert rows[:3] == first and len(rows) == 10
    assert len({r["id"] for r in rows}) == 10


def test_shards_merge_into_one_report_with_official_formats(tmp_path, shared_data):
    from conftest import write_refined
    data, refined = str(shared_data / "locomo/locomo10_dev.json"), str(write_refined(tmp_path / "questions.jsonl"))
    for k in (1, 2):
        proc = run("--dataset", "locomo", "--data", data, "--refined", refined, "--shard", f"{k}/2", "--limit", "2",
                   "--out", str(tmp_path / f"s{k}"), "--embedder", "hash")
        assert proc.returncode == 0, proc.stderr
        assert all(str(fact) in proc.stdout for fact in (refined, data, "conv-99"))  # which questions were left out
    proc = run("--dataset", "locomo", "--merge", str(tmp_path / "s1"), str(tmp_path / "s2"),
               "--out", str(tmp_path / "all"), "--embedder", "hash")
    assert proc.returncode == 0, proc.stderr
    predictions = [json.loads(x) for x in (tmp_path / "all/predictions.jsonl").read_text().splitlines()]
    assert [p["qa_id"] for p in predictions] == ["conv-26#q0000", "conv-26#q0001", "conv-26#q0002", "conv-30#q0000"]  # by id
    assert set(predictions[0]) == {"qa_id", "predicted_answer"}
    assert predictions[0]["predicted_answer"] == "I don't have that information."  # English, scripted
    summary = json.loads((tmp_path / "all/summary.json").read_text())
    assert summary["overall"]["refined_f1"] == 0.0 and summary["overall"]["refined_bleu"] == 0.0


def test_refined_questions_go_with_locomo_only(tmp_path):
    proc = run("--dataset", "gigamemory", "--data", "x.jsonl", "--refined", "q.jsonl")
    assert proc.returncode == 2 and "--refined" in proc.stderr and "locomo" in proc.stderr
