"""A plain response store: `cache:DIR+SPEC` records replies, `replay:DIR` answers only from them.

An expensive GPU run can be replayed exactly on a CPU machine, and replies produced
elsewhere can be dropped in. Files in DIR, all JSON lines:
  store.jsonl     {"key", "reply"}    replies recorded by `cache:` (append-only)
  replies.jsonl   {"key", "reply"}    replies produced elsewhere, read like the store
  pending.jsonl   {"key", "messages", "settings"}   prompts a `replay:` run missed
key = sha256 of the canonical JSON of {"messages": chat, "settings": {"max_tokens", "schema"}}.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from .llm import LLM, Generation, StopRun


def settings_of(max_tokens: int, schema) -> dict:
    return {"max_tokens": max_tokens, "schema": schema}


def prompt_key(chat: list, settings: dict) -> str:
    canonical = json.dumps({"messages": chat, "settings": settings}, ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(canonical.encode("utf-8", "replace")).hexdigest()


class Store:
    def __init__(self, folder: str):
        self.dir = Path(folder)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.replies: dict = {}
        for name in ("store.jsonl", "replies.jsonl"):
            self._read(self.dir / name)

    def _read(self, path: Path) -> None:
        if not path.is_file():
            return
        with path.open(encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    row = json.loads(line)
                    self.replies[row["key"]] = row["reply"]

    def add(self, key: str, reply: str) -> None:
        self.replies[key] = reply
        with (self.dir / "store.jsonl").open("a", encoding="utf-8") as f:
            f.write(json.dumps({"key": key, "reply": reply}, ensure_ascii=False) + "\n")

    def write_pending(self, rows: list) -> Path:
        path = self.dir / "pending.jsonl"
        with path.open("a", encoding="utf-8") as f:
            for row in rows:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
        return path


class CachingLLM(LLM):
    """`cache:DIR+SPEC`: replies from the store, the rest from the wrapped backend (then stored)."""

    def __init__(self, folder: str, inner: LLM):
        self.store, self.inner = Store(folder), inner
        self.name = f"cache+{inner.name}"

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def _generate(self, chats, *, max_tokens, schema):
        settings = settings_of(max_tokens, schema)
        keys = [prompt_key(c, settings) for c in chats]
        missing = [i for i, k in enumerate(keys) if k not in self.store.replies]
        fresh = self.inner.generate([chats[i] for i in missing], max_tokens=max_tokens, schema=schema)
        for i, generation in zip(missing, fresh):
            self.store.add(keys[i], generation.text)
        made = dict(zip(missing, fresh))
        return [made.get(i) or self._stored(chats[i], keys[i]) for i in range(len(chats))]

    def _stored(self, chat, key) -> Generation:
        reply = self.store.replies[key]
        return Generation(reply, sum(self.count_tokens(m["content"]) for m in chat), self.count_tokens(reply))


class ReplayLLM(CachingLLM):
    """`replay:DIR`: answers only from the store; a miss writes pending.jsonl and stops the run."""

    name = "replay"

    def __init__(self, folder: str):
        self.store = Store(folder)

    def count_tokens(self, text: str) -> int:
        return max(1, len(text) // 4) if text else 0

    def _generate(self, chats, *, max_tokens, schema):
        settings = settings_of(max_tokens, schema)
        keys = [prompt_key(c, settings) for c in chats]
        missing = [(k, c) for k, c in zip(keys, chats) if k not in self.store.replies]
        if missing:
            path = self.store.write_pending([{"key": k, "messages": c, "settings": settings} for k, c in missing])
            raise StopRun(f"replay: {len(missing)} prompt(s) have no stored reply; they are in {path}. "
                          f"Produce replies and add them to {self.store.dir / 'replies.jsonl'} as "
                          '{"key", "reply"} lines, then run again.')
        return [self._stored(c, k) for c, k in zip(chats, keys)]
