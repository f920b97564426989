"""`vllm.sampling_params` of the stand-in: `SamplingParams` and `GuidedDecodingParams` with vLLM 0.9.2's
defaults (max_tokens 16, temperature 1.0), keeping every other argument a submission passes."""
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
    disable_fallback: bool = False
    disable_any_whitespace: bool = False
    disable_additional_properties: bool = False
    whitespace_pattern: Optional[str] = None
    structural_tag: Optional[str] = None

    def schema(self) -> Optional[dict]:
        """The JSON schema this asks for; ValueError for the kinds the stand-in cannot hold a reply to."""
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
    def __init__(self, n: int = 1, temperature: float = 1.0, top_p: float = 1.0, top_k: int = -1,
                 max_tokens: Optional[int] = 16, seed: Optional[int] = None, stop=None, stop_token_ids=None,
                 skip_special_tokens: bool = True, spaces_between_special_tokens: bool = True,
                 truncate_prompt_tokens: Optional[int] = None, guided_decoding: Optional[GuidedDecodingParams] = None,
                 logprobs: Optional[int] = None, **other):
        if truncate_prompt_tokens is not None and truncate_prompt_tokens < 1:
            raise ValueError(f"truncate_prompt_tokens must be >= 1, got {truncate_prompt_tokens}")
        self.n, self.temperature, self.top_p, self.top_k = n, temperature, top_p, top_k
        self.max_tokens = 16 if max_tokens is None else max_tokens
        self.seed, self.stop, self.stop_token_ids, self.logprobs = seed, stop, stop_token_ids, logprobs
        self.skip_special_tokens = skip_special_tokens
        self.spaces_between_special_tokens = spaces_between_special_tokens
        self.truncate_prompt_tokens = truncate_prompt_tokens
        self.guided_decoding = guided_decoding
        self.other = other

    def schema(self) -> Optional[dict]:
        return self.guided_decoding.schema() if self.guided_decoding is not None else None

    def __repr__(self) -> str:
        return (f"SamplingParams(temperature={self.temperature}, max_tokens={self.max_tokens}, seed={self.seed}, "
                f"truncate_prompt_tokens={self.truncate_prompt_tokens})")
