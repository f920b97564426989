"""Prompts as files: `<task>.<lang>.yaml` with `system` and `user` Jinja templates.

A file may hold other named templates besides the chat (`ask`: the answer prompt's last
line, which the gate replaces with its own question); `text` renders one.

Rendered with StrictUndefined, so a missing variable fails loudly. Prompts never hold
the current date or ids the model could invent; the code supplies them.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import jinja2
import yaml

HERE = Path(__file__).resolve().parent
_ENV = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=False,
                          autoescape=False)


@lru_cache(maxsize=None)
def _load(task: str, lang: str) -> dict:
    path = HERE / f"{task}.{lang}.yaml"
    with path.open(encoding="utf-8") as f:
        raw = yaml.safe_load(f)
    return {role: _ENV.from_string(text) for role, text in raw.items()}


def render(task: str, lang: str, **variables) -> list[dict]:
    """A chat: `render("answer", "ru", question=..., context=..., facts=[])`."""
    templates = _load(task, lang)
    return [{"role": role, "content": templates[role].render(**variables).strip()}
            for role in ("system", "user") if role in templates]


def text(task: str, lang: str, key: str, **variables) -> str:
    """One named template of a prompt file: `text("answer", "ru", "ask") == "Ответ одним предложением:"`."""
    return _load(task, lang)[key].render(**variables).strip()


def available() -> list[tuple[str, str]]:
    """(task, lang) of every prompt file."""
    return sorted(tuple(p.name.split(".")[:2]) for p in HERE.glob("*.*.yaml"))
