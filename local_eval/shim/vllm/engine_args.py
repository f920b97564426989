"""What vLLM 0.9.2 takes and refuses before any model runs, as its source has it (../shared/docs/VLLM.md).

`ENGINE_ARGS`: the fields of `EngineArgs` (vllm/engine/arg_utils.py), the keywords `LLM()` passes
on; any other is a TypeError there. `derived_max_model_len`: the model folder's length keys
(vllm/config.py `_get_and_verify_max_len`). `xgrammar_refuses`: the schema features 0.9.2's
xgrammar backend rejects (vllm/v1/structured_output/backend_xgrammar.py
`has_xgrammar_unsupported_json_features`). Called by the stand-in's `LLM`.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

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
# vllm/config.py: the config keys a model's length is derived from (the smallest one present wins).
LENGTH_KEYS = ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "model_max_length",
               "max_sequence_length", "max_seq_length", "seq_len")
MAX_LOGPROBS = 20  # EngineArgs.max_logprobs' default: more top logprobs per token are refused


def check_engine_args(engine_args: dict) -> None:
    unknown = sorted(set(engine_args) - ENGINE_ARGS)
    if unknown:  # EngineArgs is a dataclass: its __init__ says this
        raise TypeError(f"EngineArgs.__init__() got an unexpected keyword argument {unknown[0]!r}")


def derived_max_model_len(model: str, tokenizer_max: Optional[int]) -> int:
    """The smallest length key of `model`/config.json, and the tokenizer's `model_max_length`."""
    config = Path(model) / "config.json"
    if not config.is_file():
        raise ValueError(f"local_eval's vLLM stand-in: no config.json in the model folder {model!r} "
                         "(vLLM reads the model's length from it)")
    values = json.loads(config.read_text(encoding="utf-8"))
    found = [int(values[k]) for k in LENGTH_KEYS if isinstance(values.get(k), (int, float))]
    if tokenizer_max and tokenizer_max < 10 ** 12:  # transformers' "no limit" is a huge number
        found.append(int(tokenizer_max))
    return min(found) if found else 2048  # vLLM's default when the config names no length


def check_max_model_len(asked: Optional[int], derived: int) -> int:
    """`LLM(max_model_len=…)` above what the model folder allows is an error (config.py)."""
    if asked is None:
        return derived
    if asked > derived:
        raise ValueError(f"User-specified max_model_len ({asked}) is greater than the derived max_model_len "
                         f"({derived} from the model's config.json). This may lead to incorrect model outputs or "
                         "CUDA errors. To allow overriding this maximum, set the env var "
                         "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1")
    return asked


def xgrammar_refuses(schema) -> bool:
    """The JSON schema features xgrammar 0.1.19 does not support, anywhere in the schema."""
    if isinstance(schema, list):
        return any(xgrammar_refuses(item) for item in schema)
    if not isinstance(schema, dict):
        return False
    kind = schema.get("type")
    if (kind in ("integer", "number") and "multipleOf" in schema
            or kind == "array" and any(k in schema for k in ("uniqueItems", "contains", "minContains", "maxContains"))
            or kind == "string" and "format" in schema
            or kind == "object" and any(k in schema for k in ("minProperties", "maxProperties", "propertyNames",
                                                               "patternProperties"))):
        return True
    return any(xgrammar_refuses(value) for value in schema.values() if isinstance(value, (dict, list)))
