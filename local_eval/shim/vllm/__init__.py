"""NOT the vLLM package: a stand-in for vLLM 0.9.2's offline API, the contract a contest submission meets, on a CPU.

Used only by local_eval and the tests: `local_eval/run.py --submission` puts local_eval/shim/ on the
submission process's import path, after the harness folder (local_eval/shim/child.py), and the tests
put it in place of `vllm`. It is never shipped: the contest zip carries only `submit/`, and the
contest machine's `import vllm` finds the real vLLM 0.9.2. It is named `vllm` because that is the
name a submission imports (local_eval/shim/README.md).

A submission (ours, the organizers' baseline, anyone's) builds `vllm.LLM(model=…)` and calls
`generate(prompts | prompt_token_ids=…, sampling_params=…)`, `chat(…)` and `get_tokenizer()`.
What vLLM 0.9.2 refuses, this refuses with vLLM's error (../shared/docs/VLLM.md cites each line of
its source): an engine argument `EngineArgs` lacks (TypeError), `max_model_len` above the model
folder's, `truncate_prompt_tokens` above `max_model_len`, a prompt longer than `max_model_len`
(token prompts are never cut), an empty prompt, a schema xgrammar does not support, more than 20
logprobs. What it honours, it honours: `truncate_prompt_tokens` (a text prompt keeps its last k
tokens), `max_tokens` (None: up to the context), `stop` (the text ends before the first stop
string), `n` (n completions, identical: decoding is greedy whatever the temperature, and
`stats["not_greedy"]` counts the requests that asked otherwise), `logprobs` (vLLM's shape, from
the backend; a backend that gives none makes the request fail, said in one line), and guided JSON
or choice, held by the backend. Requests are validated one at a time, so one that raises leaves
the earlier ones queued and the next `generate` returns them first, as vLLM's does.

Behind it is `answer(text, max_tokens, schema, logprobs) -> str | Reply`, set by `configure`: in
`local_eval/run.py --submission` the run's `--llm` (local_eval/shim/child.py asks the parent
process), in tests a function. The reader behind it may hold less than the model folder's
length (the contest's GigaChat reads 131072 tokens, the local 1.5B 16384): a prompt vLLM takes but
the reader cannot hold keeps its latest tokens, and `stats` counts these cuts (`prompts_cut`,
`tokens_cut`) as `refused` counts vLLM's refusals by kind; the run prints both. Only what the
contest image's vLLM offers is here: what a submission calls beyond it fails with AttributeError.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from .engine_args import MAX_LOGPROBS, check_engine_args, check_max_model_len, derived_max_model_len, xgrammar_refuses
from .outputs import CompletionOutput, Logprob, RequestOutput
from .sampling_params import GuidedDecodingParams, SamplingParams

__all__ = ["LLM", "SamplingParams", "TokensPrompt", "RequestOutput", "CompletionOutput", "configure", "stats"]
__version__ = "0.9.2"
_ = GuidedDecodingParams  # vllm.sampling_params has it; `vllm` itself does not export it


@dataclass(frozen=True)
class Reply:
    """The backend's answer to one prompt; `logprobs` per output token: (token id, logprob) pairs, the
    chosen token first, then the most likely others."""
    text: str
    logprobs: Optional[list] = None
    top: Optional[list] = None  # or the first token's alternatives as [token text, logprob], the chosen first


_STATE: dict = {"answer": None, "tokenizer": None, "reader_context": None}
stats: Counter = Counter()  # requests, prompt_tokens, output_tokens, prompts_cut, tokens_cut, not_greedy
refused: Counter = Counter()  # vLLM's refusals, by kind


def configure(answer: Callable, tokenizer=None, reader_context: Optional[int] = None) -> None:
    """Bind the stand-in to the backend that answers its prompts; `tokenizer` in place of the model
    folder's (tests), `reader_context` the tokens the backend reads (None: as many as vLLM takes)."""
    _STATE.update(answer=answer, tokenizer=tokenizer, reader_context=reader_context)
    stats.clear()
    refused.clear()


def TokensPrompt(prompt_token_ids: Sequence[int], **extra) -> dict:  # noqa: N802  (a TypedDict in vLLM)
    return {"prompt_token_ids": list(prompt_token_ids), **extra}


class LLM:
    """`vllm.LLM(model, **engine_args)`: the tokenizer and length of the model folder, every request
    answered by the configured backend; `calls` holds each generate's prompt count."""

    def __init__(self, model: str, **engine_args):
        if _STATE["answer"] is None:
            raise RuntimeError("this vllm is local_eval's stand-in and was not configured "
                               "(run the submission through local_eval/run.py --submission)")
        check_engine_args(engine_args)
        self.model, self.engine_args, self.calls = model, engine_args, []
        self.tokenizer = _STATE["tokenizer"] or _load_tokenizer(model, engine_args)
        derived = derived_max_model_len(model, getattr(self.tokenizer, "model_max_length", None))
        self.max_model_len = check_max_model_len(engine_args.get("max_model_len"), derived)
        self._queue: list = []
        self._next_id = 0

    def get_tokenizer(self):
        return self.tokenizer

    def generate(self, prompts=None, sampling_params=None, prompt_token_ids=None, use_tqdm=True,
                 lora_request=None, **_unused) -> list:
        """Text prompts, token prompts (`TokensPrompt` dicts) or `prompt_token_ids=`, as vLLM 0.9.2
        takes them; one `SamplingParams` for all, or a list paired one to one."""
        items = _prompts(prompts, prompt_token_ids)
        params = sampling_params if isinstance(sampling_params, list) else [sampling_params or SamplingParams()] * len(
            items)
        if len(params) != len(items):
            raise ValueError("The lengths of prompts and params must be the same.")
        for p in params:
            self._check_truncation(p.truncate_prompt_tokens)
        self.calls.append(len(items))
        for (ids, text), p in zip(items, params):  # vLLM adds (and validates) one request at a time
            self._add(ids, text, p)
        done, self._queue = self._queue, []
        return [self._run(*request) for request in done]

    def chat(self, messages, sampling_params=None, use_tqdm=True, lora_request=None, chat_template=None,
             chat_template_content_format="auto", add_generation_prompt=True, continue_final_message=False,
             tools=None, chat_template_kwargs=None, **_unused) -> list:
        """One conversation (a list of role/content dicts) or a batch of them, rendered with the tokenizer."""
        batch = messages if messages and isinstance(messages[0], list) else [messages]
        ids = [self.tokenizer.apply_chat_template(m, add_generation_prompt=add_generation_prompt,
                                                  continue_final_message=continue_final_message,
                                                  chat_template=chat_template, tools=tools,
                                                  **(chat_template_kwargs or {})) for m in batch]
        return self.generate([TokensPrompt(prompt_token_ids=i) for i in ids], sampling_params, use_tqdm=use_tqdm)

    def _check_truncation(self, k: Optional[int]) -> None:
        if k is not None and k > self.max_model_len:  # vllm/entrypoints/utils.py, called by generate
            refused["truncate_prompt_tokens"] += 1
            raise ValueError(f"truncate_prompt_tokens value ({k}) is greater than max_model_len "
                             f"({self.max_model_len}). Please, select a smaller truncation size.")

    def _add(self, ids: Optional[list], text: Optional[str], params: SamplingParams) -> None:
        """Tokenize (a text prompt cut to its last `truncate_prompt_tokens`), validate, queue."""
        if ids is None:
            ids = self.tokenizer.encode(text, add_special_tokens=True)
            if params.truncate_prompt_tokens is not None:
                ids = ids[-params.truncate_prompt_tokens:]
        if not ids:
            refused["empty"] += 1
            raise ValueError("The decoder prompt cannot be empty")
        if len(ids) > self.max_model_len:  # vllm/v1/engine/processor.py
            refused["too_long"] += 1
            raise ValueError(f"The decoder prompt (length {len(ids)}) is longer than the maximum model length of "
                             f"{self.max_model_len}. Make sure that `max_model_len` is no smaller than the number "
                             "of text tokens.")
        schema = params.schema()
        if schema is not None and xgrammar_refuses(schema):
            refused["schema"] += 1
            raise ValueError("The provided JSON schema contains features not supported by xgrammar.")
        if params.logprobs is not None and params.logprobs > MAX_LOGPROBS:
            refused["logprobs"] += 1
            raise ValueError(f"Requested sample logprobs of {params.logprobs}, which is greater than max allowed: "
                             f"{MAX_LOGPROBS}")
        self._queue.append((str(self._next_id), text, list(ids), params))
        self._next_id += 1

    def _run(self, request_id: str, text: Optional[str], ids: list, params: SamplingParams) -> RequestOutput:
        room = self.max_model_len - len(ids)  # V1 stops at max_model_len; max_tokens=None goes up to it
        max_tokens = min(params.max_tokens or room, room) or 1
        kept, max_tokens = _reader_cut(ids, max_tokens)
        if params.temperature >= 1e-5:
            stats["not_greedy"] += 1
        prompt = self.tokenizer.decode(kept, skip_special_tokens=False)
        reply = _STATE["answer"](prompt, max_tokens, params.schema(), params.logprobs)
        reply = Reply(reply) if isinstance(reply, str) else reply
        if reply.logprobs is None and reply.top is not None:
            reply = Reply(reply.text, first_step(reply.top, self.tokenizer))
        if params.logprobs is not None and reply.logprobs is None:
            raise ValueError("logprobs: the backend behind local_eval's vLLM stand-in gives none "
                             "(its --llm cannot score tokens)")
        out = self._completion(reply, max_tokens, params)
        stats["requests"] += 1
        stats["prompt_tokens"] += len(kept)
        stats["output_tokens"] += len(out.token_ids)
        return RequestOutput(request_id, text, ids, outputs=[_copy(out, i) for i in range(params.n)])

    def _completion(self, reply: Reply, max_tokens: int, params: SamplingParams) -> CompletionOutput:
        """The reply as vLLM returns it: cut at `max_tokens` (finish "length") or at the first stop string."""
        out_ids = self.tokenizer.encode(reply.text, add_special_tokens=False)
        finish, stop_reason, text = "stop", None, reply.text
        if len(out_ids) > max_tokens:
            out_ids, finish = out_ids[:max_tokens], "length"
            text = self.tokenizer.decode(out_ids, skip_special_tokens=params.skip_special_tokens)
        hits = [(text.find(s), s) for s in params.stop if s and s in text]
        if hits:
            at, stop_reason = min(hits)
            text, finish = text[:at + (len(stop_reason) if params.include_stop_str_in_output else 0)], "stop"
            out_ids = self.tokenizer.encode(text, add_special_tokens=False)
        logprobs = _logprobs(reply.logprobs[:len(out_ids)], self.tokenizer) if params.logprobs is not None else None
        cumulative = sum(next(iter(step.values())).logprob for step in logprobs) if logprobs else None
        return CompletionOutput(0, text, out_ids, cumulative, logprobs, finish, stop_reason)


def _load_tokenizer(model: str, engine_args: dict):
    from transformers import AutoTokenizer
    return AutoTokenizer.from_pretrained(engine_args.get("tokenizer") or model,
                                         trust_remote_code=bool(engine_args.get("trust_remote_code")))


def _reader_cut(ids: list, max_tokens: int) -> tuple:
    """The prompt's latest tokens the reader holds with room for the reply (at most half its context),
    and the reply's cap there; counted in `stats` when tokens are dropped."""
    context = _STATE["reader_context"]
    if context is None or len(ids) + max_tokens <= context:
        return ids, max_tokens
    room = min(max_tokens, context // 2)
    keep = context - room
    if len(ids) > keep:
        stats["prompts_cut"] += 1
        stats["tokens_cut"] += len(ids) - keep
        ids = ids[-keep:]
    return ids, min(max_tokens, context - len(ids))


def first_step(top: list, tokenizer) -> list:
    """Logprobs of one step, (token id, logprob) pairs, from alternatives given as text (our backends
    give the first output token's only: what a one-token question reads); each text's first token id."""
    pairs = [(tokenizer.encode(text, add_special_tokens=False)[:1], lp) for text, lp in top]
    return [[(ids[0], lp) for ids, lp in pairs if ids]]


def _logprobs(steps: list, tokenizer) -> list:
    """vLLM's shape: per output token, {token id: Logprob} with ranks by probability, the chosen first."""
    out = []
    for pairs in steps:
        order = sorted((lp for _, lp in pairs), reverse=True)
        out.append({tid: Logprob(lp, order.index(lp) + 1, tokenizer.decode([tid])) for tid, lp in pairs})
    return out


def _copy(out: CompletionOutput, index: int) -> CompletionOutput:
    return CompletionOutput(index, out.text, list(out.token_ids), out.cumulative_logprob, out.logprobs,
                            out.finish_reason, out.stop_reason)


def _prompts(prompts, prompt_token_ids) -> list[tuple]:
    """(token ids or None, text or None) per prompt, from any of the forms vLLM 0.9.2 accepts."""
    if prompt_token_ids is not None:
        batch = prompt_token_ids if prompt_token_ids and isinstance(prompt_token_ids[0], list) else [prompt_token_ids]
        return [(list(ids), None) for ids in batch]
    if prompts is None:
        raise ValueError("Either prompts or prompt_token_ids must be provided.")
    batch = prompts if isinstance(prompts, (list, tuple)) else [prompts]
    out = []
    for item in batch:
        if isinstance(item, str):
            out.append((None, item))
        elif isinstance(item, dict) and "prompt_token_ids" in item:
            out.append((list(item["prompt_token_ids"]), None))
        elif isinstance(item, dict) and "prompt" in item:
            out.append((None, item["prompt"]))
        else:  # vLLM 0.9.2 refuses a bare list of ints inside `prompts` (inputs/parse.py)
            raise TypeError(f"unsupported prompt: {type(item).__name__}")
    return out
