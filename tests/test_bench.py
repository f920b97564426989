"""bench/retrieval.py, bench/extraction.py, bench/locomo_answers.py: settings parsed and typed, every combination
measured; links listed; LoCoMo answers tabled; a stale store said in one line."""
import json
import subprocess
import sys

import pytest

from conftest import HANG_GUARD, ROOT

from bench import retrieval as S


def test_vary_values_take_the_type_of_the_default_and_combine_after_the_defaults():
    session, keys = "profiles.assistant.stages.session.weight", "profiles.assistant.query.keys"
    vary = S.parse_vary([f"{session}=0.3,0.5", f"{keys}=0,3", "retrieve.method=dense"])
    assert vary == {session: [0.3, 0.5], keys: [0, 3], "retrieve.method": ["dense"]}
    assert isinstance(vary[keys][1], int)
    combos = S.combinations(vary)
    assert combos[0] == {} and len(combos) == 1 + 4
    assert {session: 0.5, keys: 3, "retrieve.method": "dense"} in combos
    assert S.combinations({}) == [{}]
    for wrong in ("no_such_field=1", "retrieve=1", "profiles.peer.stages.session.name=x", "facts=0"):
        with pytest.raises(ValueError, match="dotted path"):
            S.parse_vary([wrong])


def test_the_sweep_prints_a_row_per_combination_and_writes_json(tmp_path):
    out = tmp_path / "sweep.json"
    proc = subprocess.run([sys.executable, "bench/retrieval.py", "sweep", "--dataset", "demo", "--embedder", "hash",
                           "--cache-dir", "", "--vary", "profiles.assistant.stages.session.weight=0,0.3", "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=HANG_GUARD)
    assert proc.returncode == 0, proc.stderr
    results = json.loads(out.read_text())["results"]
    path = "profiles.assistant.stages.session.weight"
    assert [r["overrides"] for r in results] == [{}, {path: 0.0}, {path: 0.3}]
    assert all(0 <= r["overall"]["evidence_recall@8000c"] <= 1 and r["overall"]["n"] == 8 for r in results)


def test_the_sweep_warns_about_a_field_this_dataset_ignores():
    # the demo's chats are user–assistant chats (terse replies, no names): the peer profile is never read
    proc = subprocess.run([sys.executable, "bench/retrieval.py", "sweep", "--dataset", "demo", "--embedder", "hash",
                           "--cache-dir", "", "--vary", "profiles.peer.query.hits=0,2", "--vary",
                           "retrieve.method=dense,hybrid"], cwd=ROOT, capture_output=True, text=True, timeout=HANG_GUARD)
    assert proc.returncode == 0, proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and warnings[0].split()[1] == "profiles.peer.query.hits"


def test_idle_fields_compare_values_with_the_other_fields_held():
    combos = [{}, {"a": 1, "b": 1}, {"a": 1, "b": 2}, {"a": 2, "b": 1}, {"a": 2, "b": 2}]
    # fingerprints differ with a, not with b
    assert S.idle_fields({"a": [1, 2], "b": [1, 2]}, combos, ["d", "x", "x", "y", "y"]) == ["b"]
    assert S.idle_fields({"a": [1]}, [{}, {"a": 1}], ["d", "x"]) == []  # one value: nothing to compare


def test_chain_lengths_count_each_current_fact_with_the_facts_it_replaced():
    from bench import extraction
    from submit.memory.facts import Fact
    from submit.memory.slots import Slots
    slots = Slots()
    slots.add([Fact("работа должность", "стажёр", "Я стажёр", 1, 1, 1),
               Fact("работа должность", "разработчик", "Я разработчик", 5, 2, 5),
               Fact("работа должность", "тимлид", "Я тимлид", 9, 3, 9),
               Fact("город проживание", "Томск", "Я живу в Томске", 2, 1, 2)])
    assert sorted(extraction.chain_lengths(slots)) == [1, 3]


def _run_folder(folder, verdicts, answers=None):
    folder.mkdir()
    rows = [{"id": f"q{i}", "question_type": kind, "question": "Q", "gold": "G",
             "answer": (answers or {}).get(i, "A"), "answer_time": 0.1, "correct": 1.0, "f1": 1.0, "em": 1.0,
             "evidence_in_context": 1.0 if kind != "adversarial" else None,
             "judge": ok, "complete": True} for i, (kind, ok) in enumerate(verdicts)]
    rows.append({**rows[0], "id": "q99", "complete": False, "judge": None})  # an incomplete row is left out
    (folder / "results.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n{cut", encoding="utf-8")
    return folder


def test_locomo_answers_tables_all_answerable_and_judge_agreement(tmp_path):
    from bench import locomo_answers
    a = _run_folder(tmp_path / "a", [("single-hop", True), ("single-hop", False), ("adversarial", True),
                                     ("multi-hop", True)])
    b = _run_folder(tmp_path / "b", [("single-hop", True), ("single-hop", True), ("adversarial", True),
                                     ("multi-hop", True)])
    out = tmp_path / "res" / "answers.md"
    assert locomo_answers.main([str(a), str(b), "--agree", "a", "b", "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| a |")).strip("| ").split(" | ")
    assert row[1:7] == ["4", "0.750", "0.667", "1.000", "1.000", "0.500"]  # all, answerable, then each category
    agreement = next(line for line in text.splitlines() if "agree" in line)
    assert "3" in agreement and "4" in agreement  # the two judges agree on 3 of the 4 questions
    assert len((tmp_path / "res" / "answers" / "a.jsonl").read_text().splitlines()) == 4


def test_evidence_in_context_has_one_definition_in_run_and_bench():
    from bench import locomo_answers
    from local_eval import summary
    rows = [{"id": f"q{i}", "question_type": kind, "judge": True, "evidence_in_context": found, "correct": 1.0,
             "f1": 1.0, "em": 1.0} for i, (kind, found) in enumerate(
        [("single-hop", 1.0), ("single-hop", 0.0), ("temporal", None), ("adversarial", None)])]
    block = summary.block(rows)  # a temporal question whose gold names no evidence turn: left out, as abstention
    assert (block["evidence_in_context"], block["evidence_n"]) == (0.5, 2)
    assert locomo_answers.table({"r": rows})[-1].endswith("| 0.500 of 2 |")


def test_locomo_answers_refuses_agreement_over_different_answers(tmp_path):
    from bench import locomo_answers
    a = _run_folder(tmp_path / "a", [("single-hop", True)])
    b = _run_folder(tmp_path / "b", [("single-hop", True)], answers={0: "other"})
    with pytest.raises(SystemExit, match="answers differ"):
        locomo_answers.main([str(a), str(b), "--agree", "a", "b"])


def test_versioning_lists_every_link_it_counts(tmp_path, shared_data):
    out = tmp_path / "versioning.md"
    proc = subprocess.run([sys.executable, "bench/extraction.py", "versions", "--embedder", "hash", "--cache-dir", "",
                           "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=HANG_GUARD)
    assert proc.returncode == 0, proc.stderr[-2000:]
    figures = json.loads(out.with_suffix(".json").read_text())
    listing = (tmp_path / "versioning_links.md").read_text()
    for keyset in ("fixture keys", "first component"):
        counted = figures[f"{keyset} / recorded replies, no check"]["all"]
        head = f"## {keyset}: {counted['links']} links without the check, {counted['links'] - counted['right']} joining two fixture keys"
        assert head in listing
        checked = figures[f"{keyset} / recorded replies + check"]["all"]
        kept = int(listing.split(f"## {keyset}: ")[1].split("the check keeps ")[1].split()[0])
        assert kept <= checked["links"] and kept < counted["links"]  # the check took links away
        assert checked["check_calls"] > 0 and checked["check_unusable"] == 0
        assert checked["links"] + checked["check_rejected"] >= counted["links"]
    assert "- judge A calls replacements: all links" in listing
    lines = [line for line in listing.splitlines() if line.startswith("- ") and "·" in line]
    assert len(lines) == sum(figures[f"{k} / recorded replies, no check"]["all"]["links"] for k in ("fixture keys", "first component"))
    for line in lines:  # a link is "same key" exactly when both fixture keys are equal
        keys = line.split("`")[1], line.split("`")[3]
        assert all(f"{name}:" in line.split(" · check:")[0] for name in "ABCD")  # every link's pair is judged
        assert line.startswith("- same key") == (keys[0] == keys[1]), line


def test_lists_bench_tables_the_probe_and_varies_settings_of_both_kinds(tmp_path, shared_data):
    from bench import retrieval as lists
    favoured = "profiles.assistant.stages.favoured.weight"
    assert lists.parse_vary(["fact_chars=1800,2400", f"{favoured}=0"]) == {"fact_chars": [1800, 2400],
                                                                            favoured: [0.0]}
    out = tmp_path / "lists.json"
    proc = subprocess.run([sys.executable, "bench/retrieval.py", "lists", "--sets", "probe", "--embedder", "hash", "--cache-dir", "",
                           "--vary", f"{favoured}=0", "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=HANG_GUARD)
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = json.loads(out.read_text())["results"]
    assert [r["overrides"] for r in results] == [{}, {favoured: 0.0}]
    for result in results:  # the 24 probe questions, each with every column of the table
        assert len(result["rows"]) == 24 and all(0 <= r["items_in_facts"] <= 1 and r["facts_chars"] > 0
                                                 for r in result["rows"])
    assert "24" in next(line for line in out.with_suffix(".md").read_text().splitlines() if "| probe |" in line)


def test_a_stale_extraction_store_is_one_line_with_the_command_that_records_it(tmp_path, shared_data, capsys):
    from bench import extraction
    (tmp_path / "store.jsonl").write_text("")  # a store every prompt misses, as after a prompt change
    code = extraction.main(["real", "--llm", f"split:replay:{tmp_path};scripted", "--embedder", "hash"])
    err = capsys.readouterr().err.strip()
    assert code == 3 and len(err.splitlines()) == 1
    assert err.startswith("extraction.py real: stopped: the store in bench/fixtures/real_extraction is stale")
    assert err.endswith(f"--llm {extraction.RECORD}")
    assert not (ROOT / extraction.STORE / "pending.jsonl").exists()


def test_the_prompts_builder_writes_one_prompt_per_question_with_the_memorys_signals(tmp_path, shared_data, capsys):
    from bench import prompts, readers
    out = tmp_path / "probe.jsonl"
    assert prompts.main(["--set", "probe_lists", "--embedder", "hash", "--cache-dir", "", "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 24 and {r["set"] for r in rows} == {"probe_lists"} and all(r["answerable"] for r in rows)
    for row in rows:  # the answer prompt as the contest builds it, its facts from the recorded fixtures
        assert row["question"] in row["messages"][-1]["content"] and row["signals"]["topic_facts"] >= 0
        assert -1 <= row["signals"]["fact_dense"] <= 1 and 0 <= row["signals"]["turn_cover"] <= 1
    assert sum(r["signals"]["topic_facts"] > 0 for r in rows) > len(rows) / 2  # the memory held the facts
    capsys.readouterr()
    assert readers.main(["gate", "--prompts", str(out)]) == 0
    assert "| probe_lists | 24 (0) | fact_dense |" in capsys.readouterr().out


def test_the_prompts_builder_keeps_and_skips_records_by_id_prefix(shared_data):
    from bench import prompts
    every = prompts.records("locomo")
    kept = prompts.records("locomo", only=["conv-30_", "conv-41_"])
    assert kept and {r.id.split("_")[0] for r in kept} == {"conv-30", "conv-41"}
    rest = prompts.records("locomo", "1/13", skip=["conv-26_"])
    assert rest == [r for r in every if not r.id.startswith("conv-26_")][::13]
