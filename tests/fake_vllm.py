"""A stand-in for vLLM 0.9.2's offline API, for tests that run without vllm installed.

It has vLLM's shapes and the behaviours our backend leans on, each as the real engine showed
them on CPU (bench/results/vllm_cpu.md) or as 0.9.2's source has them (shared/docs/VLLM.md):
`LLM(**kwargs)` refuses keywords `EngineArgs` lacks (TypeError); `generate` validates and queues
requests one at a time, so one that raises leaves the earlier ones queued, and the next call
returns them first; a token prompt longer than `max_model_len` raises ValueError; xgrammar
refuses some schema keywords (ValueError); `max_tokens` cuts a reply (`finish_reason="length"`).
Whitespace inside guided JSON is an engine setting (`guided_decoding_disable_any_whitespace`);
the request's own `disable_any_whitespace` is ignored, as V1's xgrammar backend ignores it.
With free whitespace the model pads after every colon, as Qwen2.5-Coder-0.5B did.

The "model" is `reply(prompt_text, params) -> object or str`: an object is written as JSON
for a guided request. Tokens are words, punctuation marks and single whitespace characters.
`install(monkeypatch)` puts this module in place of `vllm` and `vllm.sampling_params`.
"""
from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, fields
from typing import Any, Callable, Optional

# vllm/engine/arg_utils.py, the fields of EngineArgs in 0.9.2 (the keywords LLM() passes on).
ENGINE_ARGS = frozenset("""
model served_model_name tokenizer hf_config_path task skip_tokenizer_init enable_prompt_embeds tokenizer_mode
trust_remote_code allowed_local_media_path download_dir load_format config_format dtype kv_cache_dtype seed
max_model_len cuda_graph_sizes distributed_executor_backend pipeline_parallel_size tensor_parallel_size
data_parallel_size data_parallel_rank data_parallel_size_local data_parallel_address data_parallel_rpc_port
data_parallel_backend enable_expert_parallel enable_eplb num_redundant_experts eplb_window_size
eplb_step_interval eplb_log_balancedness max_parallel_loading_workers block_size enable_prefix_caching
prefix_caching_hash_algo disable_sliding_window disable_cascade_attn use_v2_block_manager swap_space
cpu_offload_gb gpu_memory_utilization max_num_batched_tokens max_num_partial_prefills max_long_partial_prefills
long_prefill_token_threshold max_num_seqs max_logprobs disable_log_stats revision code_revision rope_scaling
rope_theta hf_token hf_overrides tokenizer_revision quantization enforce_eager max_seq_len_to_capture
disable_custom_all_reduce tokenizer_pool_size tokenizer_pool_type tokenizer_pool_extra_config
limit_mm_per_prompt media_io_kwargs mm_processor_kwargs disable_mm_preprocessor_cache enable_lora
enable_lora_bias max_loras max_lora_rank fully_sharded_loras max_cpu_loras lora_dtype lora_extra_vocab_size
long_lora_scaling_factors enable_prompt_adapter max_prompt_adapters max_prompt_adapter_token device
num_scheduler_steps multi_step_stream_outputs ray_workers_use_nsight num_gpu_blocks_override
num_lookahead_slots model_loader_extra_config ignore_patterns preemption_mode scheduler_delay_factor
enable_chunked_prefill disable_chunked_mm_input disable_hybrid_kv_cache_manager guided_decoding_backend
guided_decoding_disable_fallback guided_decoding_disable_any_whitespace
guided_decoding_disable_additional_properties logits_processor_pattern speculative_config
qlora_adapter_name_or_path show_hidden_metrics_for_version otlp_traces_endpoint collect_detailed_traces
disable_async_output_proc scheduling_policy scheduler_cls override_neuron_config override_pooler_config
compilation_config worker_cls worker_extension_cls kv_transfer_config kv_events_config generation_config
enable_sleep_mode override_generation_config model_impl override_attention_dtype calculate_kv_scales
additional_config enable_reasoning reasoning_parser use_tqdm_on_load pt_load_map_location
enable_multimodal_encoder_data_parallel""".split())
# vllm/v1/structured_output/backend_xgrammar.py: schema keywords xgrammar 0.1.19 refuses.
XGRAMMAR_REFUSES = ("format", "multipleOf", "uniqueItems", "contains", "minContains", "maxContains",
                    "minProperties", "maxProperties", "propertyNames", "patternProperties")
PAD = " \n" * 6  # the whitespace a model puts after a colon when the grammar lets it
_TOKEN = re.compile(r"\w+|[^\w\s]|\s", re.UNICODE)


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


class Tokenizer:
    """One id per token; `decode(ids)` gives the text back. The chat template is Qwen's shape."""

    def __init__(self):
        self.vocab: dict = {}
        self.words: list = []

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        ids = []
        for token in tokens(text):
            if token not in self.vocab:
                self.vocab[token] = len(self.words)
                self.words.append(token)
            ids.append(self.vocab[token])
        return ids

    def decode(self, ids) -> str:
        return "".join(self.words[i] for i in ids)

    def apply_chat_template(self, chat, add_generation_prompt: bool = False) -> list[int]:
        text = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in chat)
        return self.encode(text + ("<|im_start|>assistant\n" if add_generation_prompt else ""))


@dataclass
class GuidedDecodingParams:
    json: Optional[Any] = None
    regex: Optional[str] = None
    choice: Optional[list] = None
    grammar: Optional[str] = None
    json_object: Optional[bool] = None
    backend: Optional[str] = None
    backend_was_auto: bool = False
    disable_fallback: bool = False
    disable_any_whitespace: bool = False
    disable_additional_properties: bool = False
    whitespace_pattern: Optional[str] = None
    structural_tag: Optional[str] = None

    def __post_init__(self):
        kinds = [self.json, self.regex, self.choice, self.grammar, self.json_object, self.structural_tag]
        if sum(k is not None for k in kinds) > 1:
            raise ValueError("You can only use one kind of guided decoding")


@dataclass
class SamplingParams:
    n: int = 1
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    seed: Optional[int] = None
    stop: Optional[list] = None
    stop_token_ids: Optional[list] = None
    max_tokens: Optional[int] = 16
    min_tokens: int = 0
    skip_special_tokens: bool = True
    spaces_between_special_tokens: bool = True
    include_stop_str_in_output: bool = False
    truncate_prompt_tokens: Optional[int] = None
    guided_decoding: Optional[GuidedDecodingParams] = None


@dataclass
class CompletionOutput:
    index: int
    text: str
    token_ids: list
    cumulative_logprob: Optional[float] = None
    logprobs: Optional[list] = None
    finish_reason: Optional[str] = None
    stop_reason: Optional[Any] = None


@dataclass
class RequestOutput:
    request_id: str
    prompt: Optional[str]
    prompt_token_ids: list
    prompt_logprobs: Optional[list]
    outputs: list
    finished: bool = True
    num_cached_tokens: int = 0


def TokensPrompt(prompt_token_ids: list, **extra) -> dict:  # a TypedDict in vLLM: calling it makes a dict
    return {"prompt_token_ids": prompt_token_ids, **extra}


class LLM:
    """`LLM(model, **engine_args)`; `reply` is the model, `calls` each generate's prompt count."""

    def __init__(self, model: str, **kwargs):
        unknown = sorted(set(kwargs) - ENGINE_ARGS)
        if unknown:
            raise TypeError(f"EngineArgs.__init__() got an unexpected keyword argument {unknown[0]!r}")
        self.model, self.kwargs, self.calls = model, kwargs, []
        self.reply: Callable = lambda prompt, params: "ok"
        self.max_model_len = kwargs.get("max_model_len", 32768)
        self.tokenizer = Tokenizer()
        self._queue: list = []
        self._next_id = 0

    def get_tokenizer(self) -> Tokenizer:
        return self.tokenizer

    def generate(self, prompts, sampling_params=None, use_tqdm=True):
        params = sampling_params or SamplingParams()
        self.calls.append(len(prompts))
        for prompt in prompts:  # vLLM adds (and validates) one request at a time
            self._add(prompt, params)
        done, self._queue = self._queue, []
        return [self._run(request_id, prompt, params) for request_id, prompt, params in done]

    def _add(self, prompt, params: SamplingParams) -> None:
        if not isinstance(prompt, dict):
            raise TypeError("expected a TokensPrompt")
        n = len(prompt["prompt_token_ids"])
        if n > self.max_model_len:
            raise ValueError(f"The decoder prompt (length {n}) is longer than the maximum model length of "
                             f"{self.max_model_len}.")
        schema = params.guided_decoding.json if params.guided_decoding else None
        refused = [k for k in XGRAMMAR_REFUSES if k in json.dumps(schema or {})]
        if refused:
            raise ValueError(f"The provided JSON schema contains features not supported by xgrammar: {refused}")
        self._queue.append((str(self._next_id), prompt, params))
        self._next_id += 1

    def _run(self, request_id: str, prompt: dict, params: SamplingParams) -> RequestOutput:
        ids = prompt["prompt_token_ids"]
        value = self.reply(self.tokenizer.decode(ids), params)
        guided = params.guided_decoding is not None and params.guided_decoding.json is not None
        text = self._json(value) if guided and not isinstance(value, str) else str(value)
        pieces = tokens(text)[: params.max_tokens]
        finish = "length" if len(pieces) < len(tokens(text)) else "stop"
        out = CompletionOutput(0, "".join(pieces), self.tokenizer.encode("".join(pieces)), finish_reason=finish)
        return RequestOutput(request_id, None, list(ids), None, [out])

    def _json(self, value) -> str:
        text = json.dumps(value, ensure_ascii=False)
        if self.kwargs.get("guided_decoding_disable_any_whitespace"):
            return text
        return re.sub(r'(?<=":) ', PAD, text)


def install(monkeypatch) -> None:
    """This module as `vllm` and `vllm.sampling_params` for one test."""
    module = sys.modules[__name__]
    monkeypatch.setitem(sys.modules, "vllm", module)
    monkeypatch.setitem(sys.modules, "vllm.sampling_params", module)


assert {f.name for f in fields(SamplingParams)} <= set("""n best_of presence_penalty frequency_penalty
repetition_penalty temperature top_p top_k min_p seed stop stop_token_ids ignore_eos max_tokens min_tokens logprobs
prompt_logprobs detokenize skip_special_tokens spaces_between_special_tokens logits_processors
include_stop_str_in_output truncate_prompt_tokens output_kind guided_decoding logit_bias allowed_token_ids
extra_args bad_words""".split()), "SamplingParams here has a field 0.9.2's lacks"
