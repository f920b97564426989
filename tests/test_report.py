"""Reports that explain themselves: summary.json documented key by key, the retrieval
report's missed questions with evidence ranks, LoCoMo-Refined predictions only with qa_ids."""
import json
import re
import subprocess
import sys

import pytest

from conftest import HANG_GUARD, ROOT
from local_eval import report, results, retrieval_eval as R
from local_eval.retrieval_eval import EvidenceRank, Measured

DOC = ROOT / "docs" / "summary.md"
VARYING = {"by_type": "<type>", "stages": "<stage>", "fallbacks": "<name>", "why": "<check>"}


def run(*args):
    """run.py on the scripted LLM (the default is the local model when it is installed)."""
    llm = () if "retrieval" in args else ("--llm", "scripted")
    return subprocess.run([sys.executable, "local_eval/run.py", "--embedder", "hash", *llm, *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=HANG_GUARD)


@pytest.fixture(scope="module")
def demo_runs(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs")
    for mode in ("answer", "retrieval"):
        proc = run("--mode", mode, "--out", str(out / mode))
        assert proc.returncode == 0, proc.stderr
    return out


def key_paths(block: dict, prefix=()) -> set:
    """Dotted paths of every leaf and every dict, with varying keys (types, stages) as placeholders."""
    paths = set()
    for key, value in block.items():
        name = VARYING[prefix[-1]] if prefix and prefix[-1] in VARYING else key
        path = (*prefix, name)
        paths.add(".".join(path))
        if isinstance(value, dict):
            paths |= key_paths(value, path)
    # a type's block = overall's fields; one language's calibration = any other's
    return {re.sub(r"^gate\.((speaker_)?calibration|checks)\.[a-z]{2}\b", r"gate.\1.<lang>",
                   p.replace("by_type.<type>.", "overall.")) for p in paths}


def documented(section: str) -> set:
    text = DOC.read_text(encoding="utf-8").split(f"## {section}")[1].split("\n## ")[0]
    return set(re.findall(r"^\| `([^`]+)` \|", text, re.MULTILINE))


def test_every_answer_mode_key_is_documented(demo_runs):
    summary = json.loads((demo_runs / "answer/summary.json").read_text())
    assert "overall" in summary and "accuracy" not in summary  # no more accuracy.accuracy
    assert key_paths(summary) - documented("Answer mode") == set()


def test_every_retrieval_mode_key_is_documented(demo_runs):
    summary = json.loads((demo_runs / "retrieval/summary.json").read_text())
    assert summary["mode"] == "retrieval" and summary["context_chars"] == 8000
    assert key_paths(summary) - documented("Retrieval mode") == set()


def test_locomo_refined_keys_are_documented(tmp_path, shared_data):
    from conftest import write_refined
    proc = run("--dataset", "locomo", "--data", str(shared_data / "locomo/locomo10_dev.json"), "--limit", "1",
               "--refined", str(write_refined(tmp_path / "q.jsonl")), "--out", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((tmp_path / "out/summary.json").read_text())
    assert {"overall.refined_f1", "overall.refined_bleu"} <= key_paths(summary)
    assert key_paths(summary) - documented("Answer mode") == set()
    assert str(summary["overall"]["refined_f1"]) in (tmp_path / "out/report.md").read_text()  # shown, not just kept


def test_retrieval_mode_writes_report_and_missed_beside_the_summary(demo_runs):
    text = (demo_runs / "retrieval/report.md").read_text()
    summary = json.loads((demo_runs / "retrieval/summary.json").read_text())
    assert all(f"{summary['overall'][m]}" in text for m in R.METRICS)  # the table shows the summary's figures
    assert (demo_runs / "retrieval/missed.jsonl").read_text() == ""  # nothing missed on the demo


def test_missed_questions_list_each_evidence_turn_with_its_ranks(tmp_path):
    scores = dict.fromkeys(R.METRICS, 0.0)
    missed = Measured("conv-26_q5", "multi-hop", scores, 0.0, 0.0, 0.0, question="When did Caroline move?",
                      evidence=(EvidenceRank("D3:5", "3", 41, 7, False), EvidenceRank("D4:1", "4", 3, 1, True)))
    found = Measured("conv-26_q6", "single-hop", scores, 0.0, 0.0, 0.0, question="Q?",
                     evidence=(EvidenceRank("D1:1", "1", 1, 1, True),))
    lost = Measured("conv-26_q7", "temporal", scores, 0.0, 0.0, 0.0, question="Q2?",
                    evidence=(EvidenceRank("D9:1", "9", None, None, False),))
    summary = {"dataset": "locomo", "retrieval_method": "hybrid", "embedder": "hash", "context_chars": 8000,
               "overall": {"n": 3, **scores}, "by_type": {}}
    assert report.write_retrieval(summary, [missed, found, lost], tmp_path) == ["report.md", "missed.jsonl"]
    text = (tmp_path / "report.md").read_text()
    # the report lists the two missed questions with every evidence turn and its ranks, not the one found
    assert all(fact in text for fact in ("conv-26_q5", "When did Caroline move?", "D3:5", "41", "D4:1", "conv-26_q7",
                                         "D9:1")) and "conv-26_q6" not in text
    rows = [json.loads(x) for x in (tmp_path / "missed.jsonl").read_text().splitlines()]
    assert [r["id"] for r in rows] == ["conv-26_q5", "conv-26_q7"]
    assert rows[0]["evidence"][0] == {"name": "D3:5", "session_id": "3", "rank": 41, "session_rank": 7,
                                      "in_context": False}


def test_score_ranks_each_evidence_unit_and_its_session():
    from local_eval.tasks import Evidence, Record, Session
    from submit.memory.dialogue import Settings
    from submit.memory.embed import make_embedder
    from submit.memory.retrieve import RetrieveSettings

    def session(sid, user, assistant):
        return Session(sid, ({"role": "user", "content": user}, {"role": "assistant", "content": assistant}))
    record = Record("q1", "d1", "What colour is the Zanzibar bicycle?", "single", "red", (
        session("1", "We talked about the weather for a long while today.", "Indeed."),
        session("2", "I painted the Zanzibar bicycle bright red.", "Lovely colour."),
        session("3", "The neighbours are loud again tonight.", "Sorry to hear.")),
        evidence=(Evidence("2", 0, "D2:1"), Evidence("3", 0)), evidence_sessions=("2", "3"))
    memory, origins = R.build(record, make_embedder("hash"), Settings(retrieve=RetrieveSettings(method="bm25")))
    scored = R.score(record, memory, origins, budget=120)
    first, second = scored.evidence
    assert first == EvidenceRank("D2:1", "2", 1, 1, True)  # the only turn sharing the question's words
    assert second.name == "session 3 #0" and second.session_id == "3" and not second.in_context
    assert second.rank > 1 and second.session_rank > 1
    assert scored.scores["evidence_recall@4000c"] == 1.0 and scored.budget == 120


def test_locomo_predictions_need_refined_qa_ids(tmp_path):
    rows = [{"id": i, "question": "Q", "answer": "A", "answer_time": 0.1} for i in ("conv-26_q0", "conv-26_q1")]
    assert results.write_official(rows, "locomo", tmp_path) == ["submit.csv", "output.json"]
    assert not (tmp_path / "predictions.jsonl").exists()
    rows = [dict(rows[0], id="conv-26#q0000"), dict(rows[1], id="conv-30#q0012")]
    assert results.write_official(rows, "locomo", tmp_path)[-1] == "predictions.jsonl"
    assert (tmp_path / "predictions.jsonl").read_text() == (
        '{"qa_id": "conv-26#q0000", "predicted_answer": "A"}\n{"qa_id": "conv-30#q0012", "predicted_answer": "A"}\n')


def test_plots_name_dataset_n_llm_and_scorer():
    summary = {"dataset": "locomo", "records": 50, "llm_spec": "vllm:/m", "scorer": "judge:openai:x"}
    assert report._title(summary) == "locomo · n=50 · llm vllm:/m · scorer judge:openai:x"


def test_a_long_plot_title_wraps_inside_the_figure(tmp_path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    summary = {"dataset": "locomo", "records": 50, "llm_spec": "replay:bench/stores/locomo/reader",
               "scorer": "judge:replay:bench/stores/locomo/judge_b"}
    title = f"Accuracy per question type — {report._title(summary)}"
    fig, ax = plt.subplots(figsize=(8, 3))
    report._bars(ax, ["a", "b"], [("accuracy", [0.5, 0.25], report.DARK)], lambda v: f"{v:.2f}")
    report._finish(fig, ax, title, tmp_path / "accuracy.png", 1)
    box, frame = ax.title.get_window_extent(fig.canvas.get_renderer()), fig.bbox
    assert frame.x0 <= box.x0 and box.x1 <= frame.x1 and box.y1 <= frame.y1
    assert "".join(ax.title.get_text().split()) == "".join(title.split())  # every word, on more lines
    plt.close(fig)
