"""The vLLM 0.9.2 stand-in (local_eval/shim/vllm), the contract a submission meets: what vLLM refuses it
refuses with vLLM's error, what vLLM honours it honours. Checked with a character tokenizer (every
character one token) and a backend that records what it was asked, so every count reads exactly."""
import json

import pytest
import vllm_stand_in


class CharTokenizer:
    """One token per character; the chat template marks roles in angle brackets."""
    model_max_length = 10 ** 30  # transformers' "no limit"

    def encode(self, text, add_special_tokens=False):
        return [ord(c) for c in text]

    def decode(self, ids, skip_special_tokens=False):
        return "".join(chr(i) for i in ids)

    def apply_chat_template(self, messages, add_generation_prompt=True, **_):
        text = "".join(f"<{m['role']}>{m['content']}" for m in messages) + ("<assistant>" if add_generation_prompt else "")
        return self.encode(text)


class Backend:
    """Replies from a queue (else "ok"); `asked` keeps (prompt, max_tokens, schema, logprobs)."""

    def __init__(self):
        self.replies, self.asked = [], []

    def __call__(self, prompt, max_tokens, schema, logprobs):
        self.asked.append((prompt, max_tokens, schema, logprobs))
        return self.replies.pop(0) if self.replies else "ok"


@pytest.fixture
def vllm(monkeypatch, tmp_path):
    module = vllm_stand_in.install(monkeypatch)
    backend = Backend()
    module.configure(backend, tokenizer=CharTokenizer(), reader_context=None)
    (tmp_path / "config.json").write_text(json.dumps({"max_position_embeddings": 60}))
    return module, backend, str(tmp_path)


def test_token_and_text_prompts_reach_the_backend_as_the_rendered_prompt(vllm):
    module, backend, model = vllm
    backend.replies = ["first", "second", "third"]
    engine = module.LLM(model=model, trust_remote_code=True, gpu_memory_utilization=0.85)
    ids = engine.get_tokenizer().apply_chat_template([{"role": "user", "content": "hi"}])
    greedy = module.SamplingParams(temperature=0.0, max_tokens=8)
    outs = engine.generate(prompt_token_ids=ids, sampling_params=greedy)
    outs += engine.generate([module.TokensPrompt(prompt_token_ids=ids), "plain text"], greedy)
    assert [o.outputs[0].text for o in outs] == ["first", "second", "third"]
    assert [a[0] for a in backend.asked] == ["<user>hi<assistant>"] * 2 + ["plain text"]
    assert outs[0].prompt_token_ids == ids and module.stats["requests"] == 3
    assert module.stats["not_greedy"] == 0


def test_chat_renders_with_the_tokenizer(vllm):
    module, backend, model = vllm
    module.LLM(model=model).chat([{"role": "user", "content": "hey"}], module.SamplingParams(max_tokens=3))
    assert backend.asked[-1][0] == "<user>hey<assistant>"


def test_what_vllm_refuses_at_the_engine_is_refused_with_its_error(vllm):
    module, _, model = vllm
    with pytest.raises(TypeError, match="EngineArgs.__init__\\(\\) got an unexpected keyword argument 'max_len'"):
        module.LLM(model=model, max_len=100)
    with pytest.raises(ValueError, match=r"User-specified max_model_len \(61\) is greater than the derived "
                                         r"max_model_len \(60"):
        module.LLM(model=model, max_model_len=61)
    assert module.LLM(model=model, max_model_len=50).max_model_len == 50


def test_a_prompt_over_max_model_len_raises_and_leaves_the_earlier_ones_queued(vllm):
    module, backend, model = vllm
    engine = module.LLM(model=model)
    with pytest.raises(ValueError, match=r"The decoder prompt \(length 61\) is longer than the maximum model "
                                         r"length of 60"):
        engine.generate([module.TokensPrompt(prompt_token_ids=[120] * 3), {"prompt_token_ids": [120] * 61}])
    with pytest.raises(ValueError, match="The decoder prompt cannot be empty"):
        engine.generate("")
    outs = engine.generate("mine")
    assert [o.prompt_token_ids for o in outs] == [[120] * 3, [ord(c) for c in "mine"]]  # vLLM's queue, first
    assert dict(module.refused) == {"too_long": 1, "empty": 1}


def test_truncate_prompt_tokens_keeps_a_text_prompts_last_tokens_and_may_not_pass_max_model_len(vllm):
    module, backend, model = vllm
    engine = module.LLM(model=model)
    engine.generate("x" * 100 + "QUESTION", module.SamplingParams(truncate_prompt_tokens=20))
    assert backend.asked[-1][0] == "x" * 12 + "QUESTION"
    with pytest.raises(ValueError, match=r"truncate_prompt_tokens value \(61\) is greater than max_model_len "
                                         r"\(60\). Please, select a smaller truncation size."):
        engine.generate("q", module.SamplingParams(truncate_prompt_tokens=61))
    with pytest.raises(ValueError, match="longer than the maximum model length"):  # token prompts are never cut
        engine.generate({"prompt_token_ids": [1] * 80}, module.SamplingParams(truncate_prompt_tokens=20))


def test_max_tokens_none_goes_up_to_the_context_and_a_long_reply_is_cut_with_finish_length(vllm):
    module, backend, model = vllm
    engine = module.LLM(model=model)
    backend.replies = ["a reply of many characters"]
    out = engine.generate("0123456789", module.SamplingParams(max_tokens=None))[0].outputs[0]
    assert backend.asked[-1][1] == 50 and (out.text, out.finish_reason) == ("a reply of many characters", "stop")
    backend.replies = ["a reply of many characters"]
    out = engine.generate("q", module.SamplingParams(max_tokens=7))[0].outputs[0]
    assert (out.text, out.token_ids, out.finish_reason) == ("a reply", [ord(c) for c in "a reply"], "length")


def test_stop_n_and_logprobs_are_honoured(vllm):
    module, backend, model = vllm
    engine = module.LLM(model=model)
    backend.replies = ["Paris. Then more", "yes"]
    out = engine.generate("q", module.SamplingParams(stop=["."], n=2, max_tokens=20))[0]
    assert [(o.index, o.text, o.finish_reason, o.stop_reason) for o in out.outputs] == [
        (0, "Paris", "stop", "."), (1, "Paris", "stop", ".")]
    backend.replies = [module.Reply("yes", [[(ord("y"), -0.1), (ord("n"), -2.5)], [(ord("e"), -0.2)],
                                            [(ord("s"), -0.3)]])]
    out = engine.generate("q", module.SamplingParams(logprobs=1, max_tokens=5))[0].outputs[0]
    assert out.logprobs[0] == {ord("y"): module.Logprob(-0.1, 1, "y"), ord("n"): module.Logprob(-2.5, 2, "n")}
    assert round(out.cumulative_logprob, 6) == -0.6 and len(out.logprobs) == 3
    with pytest.raises(ValueError, match="gives none"):  # a backend that cannot score tokens says so
        engine.generate("q", module.SamplingParams(logprobs=1))
    with pytest.raises(ValueError, match="Requested sample logprobs of 21, which is greater than max allowed: 20"):
        engine.generate("q", module.SamplingParams(logprobs=21))


def test_guided_json_goes_to_the_backend_and_a_schema_xgrammar_refuses_is_refused(vllm):
    module, backend, model = vllm
    from vllm.sampling_params import GuidedDecodingParams
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    engine = module.LLM(model=model)
    engine.generate("q", module.SamplingParams(max_tokens=8, guided_decoding=GuidedDecodingParams(json=schema)))
    assert backend.asked[-1][2] == schema and module.stats["not_greedy"] == 1  # vLLM's default temperature is 1.0
    dated = {"type": "object", "properties": {"day": {"type": "string", "format": "date"}}}
    with pytest.raises(ValueError, match="The provided JSON schema contains features not supported by xgrammar."):
        engine.generate("q", module.SamplingParams(guided_decoding=GuidedDecodingParams(json=dated)))
    named_format = {"type": "object", "properties": {"format": {"type": "string"}}}  # a property named so is fine
    engine.generate("q", module.SamplingParams(guided_decoding=GuidedDecodingParams(json=named_format)))
    with pytest.raises(ValueError, match="regex"):  # vLLM takes it; the stand-in cannot hold a reply to it
        engine.generate("q", module.SamplingParams(guided_decoding=GuidedDecodingParams(regex="a+")))
    with pytest.raises(ValueError, match="You can only use one kind of guided decoding"):
        GuidedDecodingParams(json=schema, regex="a+")


def test_a_prompt_vllm_takes_but_the_reader_cannot_hold_keeps_its_latest_tokens_and_is_counted(vllm):
    module, backend, model = vllm
    module.configure(backend, tokenizer=CharTokenizer(), reader_context=30)
    engine = module.LLM(model=model)
    engine.generate("x" * 38 + "THE QUESTION", module.SamplingParams(max_tokens=10))
    assert backend.asked[-1][:2] == ("x" * 8 + "THE QUESTION", 10)  # 30 tokens of context, 10 for the reply
    assert (module.stats["prompts_cut"], module.stats["tokens_cut"]) == (1, 30)
