"""Any contest-format submission through local_eval: the vLLM stand-in, the loader and its errors.

The stand-in is checked with a character tokenizer (every character one token) and the scripted
LLM, so what reaches the backend can be read exactly; the folders are written here, in the
contest's layout.
"""
import json
import sys
import textwrap
from pathlib import Path

import pytest

from local_eval import submission
from submit.memory.llm import ScriptedLLM

ROOT = Path(__file__).resolve().parent.parent


class CharTokenizer:
    """One token per character; the chat template marks roles in angle brackets."""

    def encode(self, text, add_special_tokens=False):
        return [ord(c) for c in text]

    def decode(self, ids, skip_special_tokens=False):
        return "".join(chr(i) for i in ids)

    def apply_chat_template(self, messages, add_generation_prompt=True, **_):
        text = "".join(f"<{m['role']}>{m['content']}" for m in messages) + ("<assistant>" if add_generation_prompt else "")
        return self.encode(text)


@pytest.fixture
def vllm(restored_imports):
    llm = ScriptedLLM()
    module = submission.use_stand_in_vllm(llm, CharTokenizer(), context_tokens=40)
    yield module, llm


def test_token_and_text_prompts_reach_the_backend_as_the_rendered_prompt(vllm):
    module, llm = vllm
    llm.enqueue("first", "second", "third")
    engine = module.LLM(model="/app/models/x", trust_remote_code=True, gpu_memory_utilization=0.85)
    tok = engine.get_tokenizer()
    ids = tok.apply_chat_template([{"role": "user", "content": "hi"}])
    outs = engine.generate(prompt_token_ids=ids, sampling_params=module.SamplingParams(temperature=0.0, max_tokens=5))
    outs += engine.generate([module.TokensPrompt(prompt_token_ids=ids), "plain text"],
                            module.SamplingParams(temperature=0.0, max_tokens=5))
    assert [o.outputs[0].text for o in outs] == ["first", "second", "third"]
    assert [h[0] for h in llm.history] == [[{"role": "prompt", "content": "<user>hi<assistant>"}]] * 2 + [
        [{"role": "prompt", "content": "plain text"}]]
    assert outs[0].prompt_token_ids == ids and module.stats["requests"] == 3


def test_a_prompt_over_the_context_keeps_its_latest_tokens_and_is_counted(vllm):
    module, llm = vllm
    engine = module.LLM(model="m")
    text = "x" * 50 + "THE QUESTION"
    engine.generate(text, module.SamplingParams(temperature=0.0, max_tokens=10, truncate_prompt_tokens=131072))
    sent = llm.history[-1][0][0]["content"]
    assert sent == text[-30:] and sent.endswith("THE QUESTION")  # 40 tokens of context, 10 for the reply
    assert (module.stats["prompts_cut"], module.stats["tokens_cut"]) == (1, 32)


def test_guided_json_holds_the_reply_to_the_schema_and_sampling_is_said(vllm):
    module, llm = vllm
    from vllm.sampling_params import GuidedDecodingParams
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    engine = module.LLM(model="m")
    out = engine.generate("q", module.SamplingParams(max_tokens=8, guided_decoding=GuidedDecodingParams(json=schema)))
    assert llm.history[-1][2] == schema and out[0].outputs[0].text == '{"a": 0}'
    assert module.stats["not_greedy"] == 1  # vLLM's default temperature is 1.0: decoded greedily all the same
    with pytest.raises(ValueError, match="regex"):
        engine.generate("q", module.SamplingParams(guided_decoding=GuidedDecodingParams(regex="a+")))


def test_chat_renders_with_the_tokenizer(vllm):
    module, llm = vllm
    module.LLM(model="m").chat([{"role": "user", "content": "hey"}], module.SamplingParams(max_tokens=3))
    assert llm.history[-1][0][0]["content"] == "<user>hey<assistant>"


def write(folder, files: dict):
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


ECHO = """
    from vllm import LLM, SamplingParams
    from submit_interface import ModelWithMemory

    class SubmitModelWithMemory(ModelWithMemory):
        def __init__(self, model_path):
            self.llm = LLM(model=model_path)
            self.seen = {}
        def write_to_memory(self, messages, dialogue_id):
            self.seen.setdefault(dialogue_id, []).extend(m.content for m in messages)
        def clear_memory(self, dialogue_id):
            self.seen.pop(dialogue_id, None)
        def answer_to_question(self, dialogue_id, question):
            if question == "crash":
                raise RuntimeError("boom")
            out = self.llm.generate(" | ".join(self.seen[dialogue_id]) + " ? " + question, SamplingParams(max_tokens=9))
            return out[0].outputs[0].text
"""


def test_a_folder_in_the_contests_layout_loads_and_answers(vllm, tmp_path):
    module, llm = vllm
    write(tmp_path, {"submit/__init__.py": "from .model_inference import SubmitModelWithMemory\n",
                     "submit/model_inference.py": ECHO})
    model = submission.Guarded(submission.load(str(tmp_path), "/app/models/x"))
    from models import Message
    model.write_to_memory([Message("user", "I have a cat"), Message("assistant", "nice")], "d1")
    llm.enqueue("A cat.")
    assert model.answer_to_question("d1", "pets?") == "A cat."
    assert llm.history[-1][0][0]["content"] == "I have a cat | nice ? pets?"
    assert model.answer_to_question("d1", "crash") == "" and model.errors == ["answer_to_question('d1'): RuntimeError: boom"]


def test_load_errors_are_one_line_naming_the_file(vllm, tmp_path):
    with pytest.raises(submission.SubmissionError, match="not a contest submission"):
        submission.load(str(tmp_path), "m")
    write(tmp_path, {"__init__.py": "from .model_inference import SubmitModelWithMemory\n",
                     "model_inference.py": "import faiss_that_is_not_there\n"})
    with pytest.raises(submission.SubmissionError) as error:
        submission.load(str(tmp_path), "m")
    assert str(error.value).startswith(f"submission {tmp_path / 'model_inference.py'}:1: ModuleNotFoundError")
    assert "\n" not in str(error.value)
    write(tmp_path, {"model_inference.py": "class SubmitModelWithMemory:\n    def __init__(self, p):\n"
                                          "        raise OSError('no weights at ' + p)\n"})
    with pytest.raises(submission.SubmissionError, match=r"model_inference.py:3: OSError: no weights at /m"):
        submission.load(str(tmp_path), "/m")


class JsonTokenizer(CharTokenizer):
    """A chat template that writes the messages as JSON, so a rendered prompt reads back exactly."""

    def apply_chat_template(self, messages, add_generation_prompt=True, **_):
        return self.encode(json.dumps(messages, ensure_ascii=False))


class Unrendering(ScriptedLLM):
    """The scripted LLM, with a rendered prompt read back into its messages first."""

    def _generate(self, chats, **kwargs):
        chats = [json.loads(c[0]["content"]) if c[0]["role"] == "prompt" else c for c in chats]
        return super()._generate(chats, **kwargs)


def test_our_submission_through_the_stand_in_asks_and_answers_as_the_direct_run(tmp_path, monkeypatch,
                                                                               restored_imports):
    from local_eval import benchmarks, harness
    from submit import SubmitModelWithMemory
    from submit.config import Config
    records = benchmarks.load("demo")[:2]
    direct_llm = Unrendering()
    direct = SubmitModelWithMemory("", config=Config(llm="scripted", embedder="hash"), llm=direct_llm)
    through_llm = Unrendering()
    submission.use_stand_in_vllm(through_llm, JsonTokenizer(), context_tokens=10_000_000)
    monkeypatch.setenv("GIGAMEMORY_LLM", f"vllm:{tmp_path}")
    monkeypatch.setenv("GIGAMEMORY_EMBEDDER", "hash")
    monkeypatch.setenv("GIGAMEMORY_VLLM_MAX_MODEL_LEN", "10000000")
    through = submission.Guarded(submission.load(str(ROOT), str(tmp_path)))
    answers = [[harness.run_record(model, r).answer for r in records] for model in (direct, through)]
    assert answers[0] == answers[1] and all(answers[0])
    assert len(direct_llm.history) > 2 * len(records)  # extraction, versions and answer calls, not only answers
    assert [h[0] for h in through_llm.history] == [h[0] for h in direct_llm.history]
    assert through.errors == [] and through.memory_stats(records[-1].id) is None  # cleared after its record


def test_run_py_says_a_folder_that_is_not_a_submission_in_one_line(tmp_path):
    import subprocess
    for argv, said in ((["--submission", str(tmp_path)], "not a contest submission"),
                       (["--submission-ctx", "4096"], "goes with --submission")):
        done = subprocess.run([sys.executable, "local_eval/run.py", "--llm", "scripted", "--out", str(tmp_path / "run"),
                               *argv], cwd=ROOT, capture_output=True, text=True, timeout=600)
        assert done.returncode == 2 and said in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
