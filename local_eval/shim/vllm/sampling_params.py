"""`vllm.sampling_params` of the stand-in: `SamplingParams` and `GuidedDecodingParams` with vLLM 0.9.2's
defaults (vllm/sampling_params.py:205-247: max_tokens 16, temperature 1.0) and its checks of the
values the stand-in acts on; every other argument a submission passes is kept in `other`."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Optional


@dataclass
class GuidedDecodingParams:
    json: Any = None
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
            raise ValueError("You can only use one kind of guided decoding ('json', 'regex', 'choice', 'grammar').")

    def schema(self) -> Optional[dict]:
        """The JSON schema this asks for; ValueError for the kinds the stand-in cannot hold a reply to
        (vLLM itself takes regex and grammar: this is the stand-in's limit, said as such)."""
        if self.json is not None:
            return json.loads(self.json) if isinstance(self.json, str) else dict(self.json)
        if self.choice:
            return {"enum": list(self.choice)}
        if self.json_object:
            return {"type": "object"}
        kinds = [k for k in ("regex", "grammar", "structural_tag") if getattr(self, k)]
        raise ValueError(f"guided decoding by {', '.join(kinds) or 'nothing'} is not supported by "
                         "local_eval's vLLM stand-in (json, choice and json_object are)")


class SamplingParams:
    def __init__(self, n: int = 1, temperature: float = 1.0, top_p: float = 1.0, top_k: int = 0,
                 max_tokens: Optional[int] = 16, min_tokens: int = 0, seed: Optional[int] = None, stop=None,
                 stop_token_ids=None, include_stop_str_in_output: bool = False, skip_special_tokens: bool = True,
                 spaces_between_special_tokens: bool = True, truncate_prompt_tokens: Optional[int] = None,
                 guided_decoding: Optional[GuidedDecodingParams] = None, logprobs: Optional[int] = None, **other):
        if n < 1:
            raise ValueError(f"n must be at least 1, got {n}.")
        if max_tokens is not None and max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {max_tokens}.")
        if logprobs is not None and logprobs < 0:
            raise ValueError(f"logprobs must be non-negative, got {logprobs}.")
        if truncate_prompt_tokens is not None and truncate_prompt_tokens < 1:
            raise ValueError(f"truncate_prompt_tokens must be >= 1, got {truncate_prompt_tokens}")
        self.n, self.temperature, self.top_p, self.top_k = n, temperature, top_p, top_k
        self.max_tokens, self.min_tokens, self.seed = max_tokens, min_tokens, seed
        self.stop = [stop] if isinstance(stop, str) else list(stop or [])
        self.stop_token_ids = list(stop_token_ids or [])
        self.include_stop_str_in_output = include_stop_str_in_output
        self.skip_special_tokens = skip_special_tokens
        self.spaces_between_special_tokens = spaces_between_special_tokens
        self.truncate_prompt_tokens = truncate_prompt_tokens
        self.guided_decoding, self.logprobs = guided_decoding, logprobs
        self.other = other

    def schema(self) -> Optional[dict]:
        return self.guided_decoding.schema() if self.guided_decoding is not None else None

    def __repr__(self) -> str:
        return (f"SamplingParams(n={self.n}, temperature={self.temperature}, max_tokens={self.max_tokens}, "
                f"seed={self.seed}, stop={self.stop}, logprobs={self.logprobs}, "
                f"truncate_prompt_tokens={self.truncate_prompt_tokens})")
