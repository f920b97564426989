"""A plain response store: `cache:DIR+SPEC` records replies, `replay:DIR` answers only from
them, `collect:DIR` answers from them and queues every other prompt for a batch job.

An expensive GPU run can be replayed exactly on a CPU machine, and replies produced
elsewhere can be dropped in. Files in DIR, all JSON lines:
  store.jsonl     {"key", "reply", "lines"?, "prompt_tokens"?, "output_tokens"?, "seconds"?, "top"?}
                  replies recorded by `cache:` (append-only), with the model's own counts
  replies.jsonl   {"key", "reply", "lines"?, "top"?}   replies produced elsewhere, read like the store
  pending.jsonl   {"key", "messages", "settings"}   prompts `replay:` missed or `collect:` queued
key = sha256 of the canonical JSON of {"messages": chat, "settings": {"max_tokens", "schema"}}, the
settings with "logprobs": K as well for a call that asked for them (the decline gate's), whose
row keeps the first token's alternatives as "top": [[token, logprob], ...].
"lines" (optional) are short hashes of the prompt's lines (`line_prints`): when a replay misses
because a prompt changed, the stored prompt nearest to it is found by them and the run says which
lines are new, so a changed ranking or template can be told from a changed question.

A damaged line (cut by an interruption, or not of its file's shape) is skipped, counted
and said once per file read; appends always start on a fresh line. Batch mode
(`collect:`) is the loop: a pass answers what the store holds, queues the rest once per
key and gives them placeholders (the run marks those records incomplete); replies go
into replies.jsonl (`answer_pending`, or any other job); the next pass goes a layer
further (extraction, then the answers that read its facts, then judges).
"""
from __future__ import annotations

import hashlib
import json
import logging
import time
from pathlib import Path
from typing import Callable, Optional

from submit.memory.llm import LLM, BackendUnavailable, Generation, StopRun, empty_instance

from .. import jsonl
from .split import SplitLLM

log = logging.getLogger("gigamemory")

STORE, REPLIES, PENDING = "store.jsonl", "replies.jsonl", "pending.jsonl"
USAGE = ("prompt_tokens", "output_tokens", "seconds")  # a recorded reply's own counts (cache:)


def settings_of(max_tokens: int, schema, logprobs: int = 0) -> dict:
    """A call's settings as keyed; `logprobs` only where asked, so earlier stores keep their keys."""
    return {"max_tokens": max_tokens, "schema": schema, **({"logprobs": logprobs} if logprobs else {})}


def prompt_key(chat: list, settings: dict) -> str:
    canonical = json.dumps({"messages": chat, "settings": settings}, ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(canonical.encode("utf-8", "replace")).hexdigest()


def line_prints(chat: list) -> list[str]:
    """A 10-hex-digit hash of every line of every message (role included), in order."""
    return [hashlib.sha1(f"{m.get('role')}\x00{line}".encode("utf-8", "replace")).hexdigest()[:10]
            for m in chat for line in str(m.get("content", "")).split("\n")]


def nearest_change(chat: list, prints: dict) -> str:
    """Which lines of `chat` the most similar recorded prompt lacks: one sentence, or '' when no
    recorded prompt has line prints."""
    mine = line_prints(chat)
    if not prints or not mine:
        return ""
    own = set(mine)
    key, theirs = max(prints.items(), key=lambda kv: (len(own & kv[1]) / len(own | kv[1]), kv[0]))
    lines = [line for m in chat for line in str(m.get("content", "")).split("\n")]
    new = [line for line, h in zip(lines, mine) if h not in theirs and line.strip()]
    if not new:
        return f" The nearest recorded prompt ({key[:12]}) has every line of it, in another order or with more lines."
    first = new[0] if len(new[0]) <= 160 else new[0][:157] + "..."
    return (f" The nearest recorded prompt ({key[:12]}, {len(own & theirs)} of this prompt's {len(own)} distinct lines)"
            f" lacks {len(new)} of its lines, the first: {first!r}.")


def keyed(chats, max_tokens: int, schema, logprobs: int = 0) -> tuple[dict, list]:
    """The settings of one call and each chat's store key."""
    settings = settings_of(max_tokens, schema, logprobs)
    return settings, [prompt_key(c, settings) for c in chats]


def _is_reply(row: dict) -> bool:
    return isinstance(row.get("key"), str) and isinstance(row.get("reply"), str)


def _is_prompt(row: dict) -> bool:
    return isinstance(row.get("key"), str) and isinstance(row.get("messages"), list) and isinstance(
        row.get("settings"), dict)


def read_rows(path: Path, valid: Callable[[dict], bool]) -> tuple[list[dict], list[int]]:
    """`jsonl.read_rows`, saying once how many damaged lines were skipped."""
    rows, damaged = jsonl.read_rows(path, valid)
    if damaged:
        log.warning(jsonl.damaged_note(damaged, path))
    return rows, damaged


append_rows = jsonl.append_rows


class Store:
    def __init__(self, folder: str, create: bool = True):
        if not folder:
            raise BackendUnavailable("a reply store needs a folder: cache:DIR+SPEC, replay:DIR, collect:DIR")
        self.dir = Path(folder)
        if create:
            self.dir.mkdir(parents=True, exist_ok=True)
        elif not self.dir.is_dir():
            raise BackendUnavailable(f"no reply store at {folder!r}")
        self.replies: dict = {}
        self.prints: dict = {}  # key -> set of line prints, for rows that carry them
        self.usage: dict = {}  # key -> (prompt tokens, output tokens, seconds) as the model counted them
        self.tops: dict = {}  # key -> the first token's alternatives, for calls that asked for them
        for name in (STORE, REPLIES):
            for r in read_rows(self.dir / name, _is_reply)[0]:
                self.replies[r["key"]] = r["reply"]
                if isinstance(r.get("top"), list):
                    self.tops[r["key"]] = tuple((str(t), float(lp)) for t, lp in r["top"])
                if isinstance(r.get("lines"), list):
                    self.prints[r["key"]] = set(map(str, r["lines"]))
                if all(isinstance(r.get(k), (int, float)) for k in USAGE):
                    self.usage[r["key"]] = tuple(r[k] for k in USAGE)
        rows, damaged = read_rows(self.dir / PENDING, _is_prompt)
        self.pending: dict = {r["key"]: r for r in rows}
        self._pending_tidy = not damaged and len(rows) == len(self.pending)  # no bad or repeated line

    def add(self, key: str, reply: str, chat: Optional[list] = None, usage: Optional[tuple] = None,
            top: tuple = ()) -> None:
        """Store a reply; `usage` (prompt tokens, output tokens, seconds) is what a replay reports,
        `top` the first token's alternatives of a call that asked for them."""
        self.replies[key] = reply
        row = {"key": key, "reply": reply}
        if top:
            row["top"] = [list(t) for t in top]
            self.tops[key] = tuple(top)
        if usage is not None:
            row.update(zip(USAGE, usage))
            self.usage[key] = usage
        if chat is not None:
            row["lines"] = line_prints(chat)
            self.prints[key] = set(row["lines"])
        append_rows(self.dir / STORE, [row])

    def queue(self, rows: list) -> int:
        """Add prompts to pending.jsonl, each key once; how many were new."""
        new = {r["key"]: r for r in rows if r["key"] not in self.pending and r["key"] not in self.replies}
        append_rows(self.dir / PENDING, list(new.values()))
        self.pending.update(new)
        return len(new)

    def outstanding(self) -> list[dict]:
        """Pending prompts that still have no reply."""
        return [r for k, r in self.pending.items() if k not in self.replies]

    def drop_answered(self) -> None:
        """Rewrite pending.jsonl with only the prompts still waiting (and no damaged lines)."""
        waiting = self.outstanding()
        if self._pending_tidy and len(waiting) == len(self.pending):
            return
        path = self.dir / PENDING
        tmp = path.with_name(PENDING + ".tmp")
        tmp.write_bytes(b"")
        append_rows(tmp, waiting)
        tmp.replace(path)  # never a half-written queue
        self.pending, self._pending_tidy = {r["key"]: r for r in waiting}, True


class CachingLLM(LLM):
    """`cache:DIR+SPEC`: replies from the store, the rest from the wrapped backend (then stored)."""

    def __init__(self, folder: str, inner: LLM):
        self.store, self.inner = Store(folder), inner
        self.name = f"cache+{inner.name}"
        self.concurrent_calls = inner.concurrent_calls
        self.prior_seconds_per_prompt = inner.prior_seconds_per_prompt
        self.fell_back = inner.fell_back
        self.gives_logprobs = inner.gives_logprobs

    @property
    def identity(self) -> str:
        return self.inner.identity  # the model whose replies it stores

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def _generate(self, chats, *, max_tokens, schema, purpose, logprobs=0):
        _, keys = keyed(chats, max_tokens, schema, logprobs)
        missing = [i for i, k in enumerate(keys) if k not in self.store.replies]
        # A backend that answers one prompt after another is asked so: each reply is stored as it
        # comes (an interrupted hour-long batch keeps what it made); others get the batch whole.
        step = 1 if getattr(self.inner, "one_at_a_time", False) else max(1, len(missing))
        made = {}
        for first in range(0, len(missing), step):
            part = missing[first:first + step]
            start = time.perf_counter()
            fresh = self.inner.generate([chats[i] for i in part], max_tokens=max_tokens, schema=schema,
                                        purpose=purpose, logprobs=logprobs)
            seconds = round((time.perf_counter() - start) / len(part), 3)  # a batch's time, shared
            for i, generation in zip(part, fresh):
                self.store.add(keys[i], generation.text, chats[i],
                               (generation.prompt_tokens, generation.output_tokens, seconds), generation.top)
            made.update(zip(part, fresh))
        return [made.get(i) or self._stored(chats[i], keys[i]) for i in range(len(chats))]

    def _stored(self, chat, key) -> Generation:
        """The stored reply, with the tokens the model counted when it was recorded, else estimated."""
        reply, top = self.store.replies[key], self.store.tops.get(key, ())
        if key in self.store.usage:
            prompt, output, _ = self.store.usage[key]
            return Generation(reply, int(prompt), int(output), top)
        return Generation(reply, sum(self.count_tokens(m["content"]) for m in chat), self.count_tokens(reply), top)


class ReplayLLM(CachingLLM):
    """`replay:DIR`: answers only from the store; a miss writes pending.jsonl and stops the run."""

    name = "replay"
    concurrent_calls = False
    prior_seconds_per_prompt = 0.0  # answers at once
    fell_back = False
    gives_logprobs = True  # what the store holds: a reply recorded without alternatives reads as none

    def __init__(self, folder: str):
        self.store = Store(folder, create=False)

    @property
    def identity(self) -> str:
        return f"{self.name}:{self.store.dir.resolve()}"  # one store's calibration is not another's

    def count_tokens(self, text: str) -> int:
        return max(1, len(text) // 4) if text else 0

    def _generate(self, chats, *, max_tokens, schema, purpose, logprobs=0):
        keys, missing = self._misses(chats, max_tokens, schema, logprobs)
        if missing:
            self.store.queue(missing)
            raise StopRun(f"replay: {len(missing)} prompt(s) have no stored reply; they are in "
                          f"{self.store.dir / PENDING}. Produce replies and add them to "
                          f"{self.store.dir / REPLIES} as {{\"key\", \"reply\"}} lines, then run again."
                          + self._changed(missing[0]["messages"]))
        return [self._stored(c, k) for c, k in zip(chats, keys)]

    def _changed(self, chat) -> str:
        """The line a changed prompt gained, and how to record the store again ('' for no near prompt)."""
        change = nearest_change(chat, self.store.prints)
        return change and (f"{change} If the code changed the prompt since the store was recorded, record it "
                           f"again: the same command with cache:{self.store.dir}+MODEL (the model that made it) "
                           f"in place of replay:{self.store.dir}.")

    def _misses(self, chats, max_tokens: int, schema, logprobs: int = 0) -> tuple[list, list]:
        """Each chat's store key, and a pending.jsonl row for every chat the store cannot answer."""
        settings, keys = keyed(chats, max_tokens, schema, logprobs)
        return keys, [{"key": k, "messages": c, "settings": settings}
                      for k, c in zip(keys, chats) if k not in self.store.replies]


class CollectLLM(ReplayLLM):
    """`collect:DIR`: stored replies where there are any; every other prompt is queued in
    pending.jsonl and answered with a placeholder (a schema's empty instance, else `MARKER`).

    After a miss, the rest of the record's prompts read placeholder data (an answer prompt
    holds the facts extraction gave), so they get placeholders without being queued: one
    pass collects one layer. `next_record` opens the next record; `placeholders` counts
    every placeholder given, so the run can mark those records incomplete."""

    name = "collect"
    MARKER = "[collect: the reply to this prompt is pending]"

    def __init__(self, folder: str):
        self.store = Store(folder)
        self.store.drop_answered()
        self.placeholders = 0
        self.queued = 0  # prompts this pass added to pending.jsonl
        self._missed = False  # a placeholder was given in the current record

    def next_record(self) -> None:
        self._missed = False

    def _generate(self, chats, *, max_tokens, schema, purpose, logprobs=0):
        keys, missing = self._misses(chats, max_tokens, schema, logprobs)
        if missing and not self._missed:
            self.queued += self.store.queue(missing)
        self._missed = self._missed or bool(missing)
        self.placeholders += len(missing)
        placeholder = json.dumps(empty_instance(schema)) if schema else self.MARKER
        return [self._stored(c, k) if k in self.store.replies else Generation(placeholder, 0, 0)
                for c, k in zip(chats, keys)]


def collectors(llm: Optional[LLM]) -> list:
    """The `collect:` backends a spec made: itself, or those on either side of a `split:`."""
    if isinstance(llm, CollectLLM):
        return [llm]
    if isinstance(llm, SplitLLM):
        return collectors(llm.structured) + collectors(llm.text)
    return []


def next_record(llm: Optional[LLM]) -> None:
    """A new record begins: a `collect:` backend may queue its prompts again."""
    for collector in collectors(llm):
        collector.next_record()


def placeholders(llm: Optional[LLM]) -> int:
    """Placeholder replies the `collect:` backends have given so far; 0 for every other backend."""
    return sum(collector.placeholders for collector in collectors(llm))


def pending_state(llm: Optional[LLM]) -> list:
    """(prompts still waiting, prompts queued by this pass, the folder) per `collect:` backend."""
    return [(len(c.store.outstanding()), c.queued, c.store.dir) for c in collectors(llm)]


def answer_pending(folder: str, llm: LLM, batch: int = 64) -> int:
    """Reply to every waiting prompt of a store with `llm`, appending to replies.jsonl as it goes
    (so an interrupted job keeps what it did); how many replies were written."""
    store = Store(folder, create=False)
    groups: dict = {}
    for row in store.outstanding():
        groups.setdefault(json.dumps(row["settings"], sort_keys=True), []).append(row)
    written = 0
    for rows in groups.values():
        settings = rows[0]["settings"]
        for start in range(0, len(rows), batch):
            chunk = rows[start:start + batch]
            replies = llm.generate([r["messages"] for r in chunk], max_tokens=settings["max_tokens"],
                                   schema=settings["schema"], logprobs=settings.get("logprobs", 0))
            append_rows(store.dir / REPLIES, [{"key": r["key"], "reply": g.text, "lines": line_prints(r["messages"]),
                                               **({"top": [list(t) for t in g.top]} if g.top else {})}
                                              for r, g in zip(chunk, replies)])
            written += len(chunk)
    return written
