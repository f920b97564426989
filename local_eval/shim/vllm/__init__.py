"""A stand-in for vLLM 0.9.2's offline API, so a contest submission runs unchanged on a CPU.

Contest submissions (ours, the organizers' baseline, anyone's) build `vllm.LLM(model=…)` and call
`generate(prompts | prompt_token_ids=…, sampling_params=…)`, `chat(…)` and `get_tokenizer()`.
`local_eval/submission.py` puts this package first on `sys.path` for the run and `configure`s it
with one of our LLM backends (`--llm`: the local model, a reply store, any spec) and the tokenizer
of the model folder it made, so the submission's token ids become the prompt text our backend
reads as is (a one-message chat of role `prompt`). Decoding is greedy whatever the sampling
parameters say (our backends decode greedily; `stats["not_greedy"]` counts the requests that
asked otherwise). A JSON schema in `GuidedDecodingParams(json=…)` holds the reply as vLLM's
xgrammar would; other guided kinds are refused with a ValueError, as vLLM refuses what its
backend cannot do.

A prompt longer than the backend's context is cut to its latest tokens, as
`SamplingParams(truncate_prompt_tokens=k)` does (the organizers' baseline asks for 131072, more than a
small local model holds); `stats` counts the prompts cut and the tokens dropped, and the run
reports them. Only what the contest image's vLLM offers is here; what a submission calls beyond
it fails as it would there, with AttributeError.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from .sampling_params import GuidedDecodingParams, SamplingParams  # noqa: F401  (vLLM exports SamplingParams)

__version__ = "0.9.2"
from local_eval.llms.llama import PROMPT_ROLE  # noqa: E402  (the one spelling of the role)

_STATE: dict = {"llm": None, "tokenizer": None, "context": None}
stats: Counter = Counter()


def configure(llm, tokenizer, context_tokens: int) -> None:
    """Bind the stand-in to an LLM backend and the tokenizer the submission will load."""
    _STATE.update(llm=llm, tokenizer=tokenizer, context=context_tokens)
    stats.clear()


def TokensPrompt(prompt_token_ids: Sequence[int], **extra) -> dict:  # noqa: N802  (a TypedDict in vLLM)
    return {"prompt_token_ids": list(prompt_token_ids), **extra}


@dataclass
class CompletionOutput:
    index: int
    text: str
    token_ids: list
    cumulative_logprob: Optional[float] = None
    logprobs: Any = None
    finish_reason: Optional[str] = None
    stop_reason: Any = None


@dataclass
class RequestOutput:
    request_id: str
    prompt: Optional[str]
    prompt_token_ids: list
    outputs: list = field(default_factory=list)
    finished: bool = True
    prompt_logprobs: Any = None
    metrics: Any = None
    num_cached_tokens: int = 0


class LLM:
    """`vllm.LLM`: engine arguments are accepted and kept (`engine_args`), the model folder is
    the one the run prepared; every call goes to the configured backend."""

    def __init__(self, model: str, **engine_args):
        if _STATE["llm"] is None:
            raise RuntimeError("this vllm is local_eval's stand-in and was not configured "
                               "(run the submission through local_eval/run.py --submission)")
        self.model, self.engine_args = model, engine_args
        self._requests = 0

    def get_tokenizer(self):
        return _STATE["tokenizer"]

    def generate(self, prompts=None, sampling_params=None, prompt_token_ids=None, use_tqdm=True, **_unused) -> list:
        """Text prompts, token prompts (`TokensPrompt` dicts) or `prompt_token_ids=`, as vLLM 0.9.2
        takes them; one `SamplingParams` for all, or a list paired one to one."""
        items = _prompts(prompts, prompt_token_ids)
        params = sampling_params if isinstance(sampling_params, list) else [sampling_params or SamplingParams()] * len(
            items)
        if len(params) != len(items):
            raise ValueError(f"{len(params)} sampling params for {len(items)} prompts")
        return [self._one(ids, text, sp) for (ids, text), sp in zip(items, params)]

    def chat(self, messages, sampling_params=None, use_tqdm=True, chat_template=None, add_generation_prompt=True,
             continue_final_message=False, chat_template_kwargs=None, **_unused) -> list:
        """One conversation (a list of role/content dicts) or a batch of them."""
        batch = messages if messages and isinstance(messages[0], list) else [messages]
        tokenizer = _STATE["tokenizer"]
        ids = [tokenizer.apply_chat_template(m, add_generation_prompt=add_generation_prompt,
                                             continue_final_message=continue_final_message,
                                             chat_template=chat_template, **(chat_template_kwargs or {}))
               for m in batch]
        return self.generate([TokensPrompt(prompt_token_ids=i) for i in ids], sampling_params)

    def _one(self, ids: list, text: Optional[str], params: SamplingParams) -> RequestOutput:
        tokenizer, context = _STATE["tokenizer"], _STATE["context"]
        ids = list(ids) if ids is not None else tokenizer.encode(text, add_special_tokens=False)
        room = max(1, context - params.max_tokens)
        if len(ids) > room:  # the latest tokens, as truncate_prompt_tokens keeps them
            stats["prompts_cut"] += 1
            stats["tokens_cut"] += len(ids) - room
            ids = ids[-room:]
        if params.temperature >= 1e-5:
            stats["not_greedy"] += 1
        rendered = tokenizer.decode(ids, skip_special_tokens=False)
        generation = _STATE["llm"].generate([[{"role": PROMPT_ROLE, "content": rendered}]],
                                            max_tokens=params.max_tokens, schema=params.schema())[0]
        stats["requests"] += 1
        stats["prompt_tokens"] += len(ids)
        stats["output_tokens"] += generation.output_tokens
        out_ids = tokenizer.encode(generation.text, add_special_tokens=False)
        finish = "length" if generation.output_tokens >= params.max_tokens else "stop"
        self._requests += 1
        return RequestOutput(str(self._requests - 1), text, ids,
                             [CompletionOutput(0, generation.text, out_ids, finish_reason=finish)])


def _prompts(prompts, prompt_token_ids) -> list[tuple]:
    """(token ids or None, text or None) per prompt, from any of the forms vLLM 0.9.2 accepts."""
    if prompt_token_ids is not None:
        batch = prompt_token_ids if prompt_token_ids and isinstance(prompt_token_ids[0], list) else [prompt_token_ids]
        return [(list(ids), None) for ids in batch]
    if prompts is None:
        raise ValueError("generate() needs prompts or prompt_token_ids")
    batch = prompts if isinstance(prompts, (list, tuple)) else [prompts]
    out = []
    for item in batch:
        if isinstance(item, str):
            out.append((None, item))
        elif isinstance(item, dict) and "prompt_token_ids" in item:
            out.append((list(item["prompt_token_ids"]), None))
        elif isinstance(item, dict) and "prompt" in item:
            out.append((None, item["prompt"]))
        else:  # vLLM 0.9.2 refuses a bare list of ints inside `prompts` too
            raise TypeError(f"unsupported prompt: {type(item).__name__}")
    return out
