"""Backend specs: one grammar into a tree, one table of kinds, and the lists made from it."""
import dataclasses
import re

import pytest

from local_eval import specs
from local_eval.specs import Spec, parse
from submit.memory import embed, llm_backends

from conftest import ROOT


def test_the_grammar_gives_a_tree():
    assert parse("scripted") == Spec("scripted")
    assert parse("replay:bench/stores/x") == Spec("replay", "bench/stores/x")
    assert parse("cache:runs/s+vllm:/m") == Spec("cache", "runs/s", inner=(Spec("vllm", "/m"),))
    assert parse("split:fixture:a.jsonl;llama:m,ctx=4096") == Spec("split", inner=(
        Spec("fixture", "a.jsonl"), Spec("llama", "m", options=(("ctx", "4096"),))))
    assert parse("split:cache:d+llama:m;replay:r").inner[0].inner == (Spec("llama", "m"),)
    assert parse("openai:http://h:8000/v1#Qwen") == Spec("openai", "http://h:8000/v1#Qwen")
    for text in ("cache:d+scripted", "split:replay:a;llama:m,ctx=1", "hf:/m", "scripted"):
        assert specs.text(parse(text)) == text


@pytest.mark.parametrize("text, says", [
    ("gguf:x", "unknown LLM backend 'gguf'"), ("cache:d+gguf:x", "unknown LLM backend 'gguf'"),
    ("cache:d", "cache:DIR+SPEC"), ("split:scripted", "split:SPEC;SPEC"), ("split:;scripted", "split:SPEC;SPEC"),
    ("llama:m,ctx", "is not key=value")])
def test_what_the_grammar_refuses(text, says):
    with pytest.raises(specs.SpecError, match=re.escape(says)):
        parse(text)


def test_questions_about_a_spec_walk_its_tree():
    split = parse("split:replay:d;cache:c+llama:m")
    assert (specs.structured(split).kind, specs.answering(split).kind) == ("replay", "llama")
    assert specs.uses_local_model(split) and not specs.uses_local_model(specs.structured(split))
    assert specs.answering(parse("cache:d+scripted")) == Spec("scripted")
    assert specs.identity("collect:runs/b") == specs.identity("replay:runs/b") == "store:runs/b"
    assert specs.identity("cache:runs/b+scripted") == "cache:runs/b+scripted"
    assert specs.tag(parse("openai:http://h:8000/v1#GigaChat")) == "openai-GigaChat"
    assert specs.tag(parse("cache:d+hf:/models/Qwen2.5-0.5B")) == "cache-hf-Qwen2.5-0.5B"


def test_the_table_holds_every_kind_the_submission_builds():
    assert set(llm_backends.BACKENDS) <= set(specs.LLM_KINDS)
    assert set(embed.BACKENDS) == set(specs.EMBEDDER_KINDS)
    assert all(row.usage.split(":")[0].split("[")[0] == kind for kind, row in specs.LLM_KINDS.items())
    assert {kind for kind, row in specs.LLM_KINDS.items() if row.wraps} == {"cache", "split"}


def test_help_and_the_docs_list_the_tables_kinds(monkeypatch):
    from local_eval import options
    monkeypatch.setenv("COLUMNS", "2000")  # one line per option: no word cut where argparse wraps
    text = " ".join(options.parser().format_help().split())
    docs = " ".join((ROOT / "docs/evaluating.md").read_text(encoding="utf-8").split())
    for kinds, option in ((specs.LLM_KINDS, "--llm"), (specs.EMBEDDER_KINDS, "--embedder")):
        assert specs.usage(kinds) in text, option
        listed = docs.split(f"`{option} ")[1].split("`")[0].split(" | ")
        assert listed == [row.usage for row in kinds.values()], option


def test_a_spec_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        parse("scripted").kind = "hf"


def test_the_docs_show_every_kind_with_an_example_that_parses_to_it():
    docs = (ROOT / "docs/evaluating.md").read_text(encoding="utf-8")
    section = docs.split("## Backend specs", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip().strip("`") for c in line.replace("\\|", "\0").split("|")[1:-1]]
        if len(cells) == 4 and cells[0] in specs.LLM_KINDS:
            rows[cells[0]] = [c.replace("\0", "|") for c in cells]
    assert set(rows) == set(specs.LLM_KINDS)
    for kind, (_, shape, example, _) in rows.items():
        assert shape == specs.LLM_KINDS[kind].usage, kind
        assert parse(example.split(" ", 1)[1].strip("'")).kind == kind, example
