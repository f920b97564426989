"""bench/retrieval.py cv: settings chosen on the other conversations, held-out scores pooled."""
import json
import subprocess
import sys

import numpy as np

from conftest import HANG_GUARD, ROOT

from bench import retrieval as CV

EV16 = CV.R.METRICS.index(CV.SELECT)
EV32 = CV.R.METRICS.index("evidence_recall@32000c")


def hand_scores():
    """Two grid points over conversations a, b, c (two questions each)."""
    scores = np.zeros((2, 6, len(CV.R.METRICS)))
    scores[0, :, EV16] = [1, 1, 0, 0, 1, 0]
    scores[1, :, EV16] = [0, 0, 1, 1, 1, 1]
    scores[1, :, EV32] = 1.0  # point 1 is better on the other metrics: it wins ties on ev@16k
    return scores, np.array(["a", "a", "b", "b", "c", "c"])


def test_each_fold_chooses_on_the_other_conversations_and_pools_the_held_out_scores():
    scores, convs = hand_scores()
    points = [{"x": 1}, {"x": 2}]
    folds = CV.cross_validate(scores, convs, points)
    # a: trained on b, c (0.25 vs 1.0); b: on a, c (0.75 vs 0.5); c: on a, b (0.5 each, tie -> point 1)
    assert [(f["held_out"], f["point"], f["train_select"]) for f in folds] == [("a", 1, 1.0), ("b", 0, 0.75),
                                                                              ("c", 1, 0.5)]
    assert [f["held_out_scores"][CV.SELECT] for f in folds] == [0.0, 0.0, 1.0]
    assert CV.pooled(scores, convs, folds)[CV.SELECT] == round(2 / 6, 4)
    # only questions 0, 2, 4 (one per conversation): a with point 1 -> 0, b with 0 -> 0, c with 1 -> 1
    assert CV.pooled(scores, convs, folds, np.array([True, False] * 3))[CV.SELECT] == round(1 / 3, 4)
    assert CV.stability(folds, {"x": [1, 2], "fixed": [0.5]}) == {"x": {2: 2, 1: 1}}


def test_a_full_tie_goes_to_the_earlier_grid_point():
    scores = np.ones((3, 4, len(CV.R.METRICS)))
    assert CV.choose(scores, np.array([True, True, False, False])) == 0
    assert CV.grid_points({"a": [1, 2], "b": [3, 4]}) == [{"a": 1, "b": 3}, {"a": 1, "b": 4},
                                                          {"a": 2, "b": 3}, {"a": 2, "b": 4}]


def conversation(sample_id, a, b):
    turns = [{"speaker": a, "dia_id": "D1:1", "text": "I adopted a puppy named Rex last week."},
             {"speaker": b, "dia_id": "D1:2", "text": "Wow, congrats on the puppy!"}]
    return {"sample_id": sample_id, "qa": [{"question": f"What is the name of {a}'s puppy?", "answer": "Rex",
                                            "evidence": ["D1:1"], "category": 4}],
            "conversation": {"speaker_a": a, "speaker_b": b, "session_1": turns,
                             "session_1_date_time": "1:00 pm on 8 May, 2023"}}


SPEAKER = "profiles.peer.stages.speaker.weight"


def test_the_script_writes_one_fold_per_conversation(tmp_path):
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps([conversation("conv-1", "Ann", "Bob"), conversation("conv-2", "Cid", "Dee")]))
    out = tmp_path / "cv"
    proc = subprocess.run([sys.executable, "bench/retrieval.py", "cv", "--data", str(data), "--embedder", "hash",
                           "--cache-dir", "", "--vary", f"{SPEAKER}=0.04,0.12", "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=HANG_GUARD)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(out.with_suffix(".json").read_text())
    # one short session each: every setting holds all evidence, so the tie goes to the first point
    assert [(f["held_out"], f["chosen"]) for f in result["folds"]] == [("conv-1", {SPEAKER: 0.04}),
                                                                      ("conv-2", {SPEAKER: 0.04})]
    assert result["pooled_held_out"] == {m: 1.0 for m in CV.R.METRICS}
    assert result["pooled_held_out_by_type"] == {"single-hop": {"n": 2, **{m: 1.0 for m in CV.R.METRICS}}}
    assert result["stability"] == {SPEAKER: {"0.04": 2}}
    assert "1.000" in next(line for line in out.with_suffix(".md").read_text().splitlines() if "| conv-2 |" in line)


def test_a_missing_data_file_is_one_line_and_exit_2(tmp_path):
    proc = subprocess.run([sys.executable, "bench/retrieval.py", "cv", "--data", str(tmp_path / "none.json")],
                          cwd=ROOT, capture_output=True, text=True, timeout=HANG_GUARD)
    assert proc.returncode == 2 and proc.stderr.strip().count("\n") == 0
    assert "--data" in proc.stderr and "Traceback" not in proc.stderr
