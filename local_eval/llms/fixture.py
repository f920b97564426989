"""`fixture:PATH[,PATH...]`: recorded LLM output as a backend, for runs without GigaChat.

Files are JSON lines of two kinds (extra fields such as `dialogue_id` are ignored):
  {"message", "facts": [{"slot", "value", "statement"}]}   extraction: the facts a capable
      model extracted from one user message under our extraction instruction
      (`../shared/data/gigamemory/extraction_fixture.jsonl`)
  {"records": [...], "reply"}   the versions pass: the reply recorded for a group of facts,
      each record "key — statement", oldest first (`bench/fixtures/versions_fixture.jsonl`)
  {"earlier", "later", "reply"}   the versions check: the reply recorded for two statements
      (`bench/fixtures/versions_check_fixture.jsonl`); a judge's `"replaces": true|false` in
      place of `reply` answers as that verdict would
A prompt is matched on what it holds — the user's message after the extraction prompt's own
marker, the numbered records of a versions prompt, the two statements of a check — never on
a prompt hash, so a fixture survives changes to the instructions. A message the files do not know
gets `{"facts": []}`;
an unknown group of records gets an empty reply (unusable, so the slots' rule decides, as
without the pass); any other prompt with a schema its empty instance, any other prompt `ANSWER`.
Each call is read by the purpose its caller gives (`llm.PURPOSES`). `stats` counts what was matched.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Callable, Optional

from submit import prompts
from submit.memory.llm import EXTRACT, VERSIONS, VERSIONS_CHECK, LLM, BackendUnavailable, Generation, empty_instance

ANSWER = "Ответ из фикстуры: модели ответа здесь нет."
_SENTINEL = "\x00message\x00"
_RECORD = re.compile(r"^\s*\d+\.\s+\[[^\]]*\]\s+(.*\S)\s*$", re.MULTILINE)
_NOTE = re.compile(r"^[^:\n]*:\s*\[[^\]]*\]\s+(.*\S)\s*$", re.MULTILINE)  # "Ранняя заметка: [сессия 5] …"


def normalize(text: str) -> str:
    return " ".join(text.split())


def versions_records(content: str) -> list[str]:
    """The numbered records of a versions prompt ("3. [сессия 8] key — statement"), normalized."""
    return [normalize(r) for r in _RECORD.findall(content)]


def check_statements(content: str) -> list[str]:
    """The two statements of a versions-check prompt, earlier first, normalized."""
    return [normalize(m.group(1)) for m in _NOTE.finditer(content)]


def message_marker(lang: str) -> str:
    """The words our extraction prompt puts right before the user's message ("Сообщение пользователя:")."""
    content = prompts.render("extract", lang, message=_SENTINEL, before="")[-1]["content"]
    return content[: content.index(_SENTINEL)].strip()


def read_fixture(paths: str) -> tuple[dict, dict, dict]:
    """(normalized message -> its facts, normalized records -> the versions pass's reply,
    (earlier, later) statements -> the check's reply) from the files."""
    facts, replies, checks = {}, {}, {}
    for path in paths.split(","):
        file = Path(path)
        if not file.is_file():
            raise BackendUnavailable(f"fixture: no file at {path!r}")
        with file.open(encoding="utf-8") as f:
            for number, line in enumerate(f, start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                    if "records" in row:
                        replies[_records_key(row["records"])] = str(row["reply"])
                    elif "earlier" in row:
                        reply = row["reply"] if "reply" in row else json.dumps({"replaces": bool(row["replaces"])})
                        checks[_records_key([row["earlier"], row["later"]])] = str(reply)
                    else:  # the same message in two dialogues has the same facts
                        facts[normalize(row["message"])] = list(row["facts"])
                except (ValueError, KeyError, TypeError, AttributeError) as e:
                    raise BackendUnavailable(f"fixture: {path}:{number} is not a fixture row ({e})") from e
    return facts, replies, checks


def _records_key(records) -> tuple:
    return tuple(normalize(r) for r in records)


class FixtureLLM(LLM):
    """Extraction replies from a recorded file; `slot_map` rewrites each slot key (e.g. to its
    first dotted component, to test linking with keys named less consistently)."""

    name = "fixture"

    def __init__(self, path: str, slot_map: Optional[Callable[[str], str]] = None):
        self.facts, self.replies, self.checks = read_fixture(path)
        self.slot_map = slot_map
        self.markers = [message_marker(lang) for lang in ("ru", "en")]
        self.stats = Counter()

    def _generate(self, chats, *, max_tokens, schema, purpose):
        return [self._one(chat, schema, purpose) for chat in chats]

    def _one(self, chat, schema, purpose) -> Generation:
        content = chat[-1]["content"]
        if purpose == EXTRACT:
            reply = json.dumps({"facts": self._facts(self._message(content))}, ensure_ascii=False)
        elif purpose == VERSIONS:
            reply = self._versions(content)
        elif purpose == VERSIONS_CHECK:
            reply = self._check(content)
        elif schema:
            self.stats["other_schema_prompts"] += 1
            reply = json.dumps(empty_instance(schema), ensure_ascii=False)
        else:
            self.stats["answer_prompts"] += 1
            reply = ANSWER
        prompt = sum(self.count_tokens(m["content"]) for m in chat)
        return Generation(reply, prompt, self.count_tokens(reply))

    def _versions(self, content: str) -> str:
        reply = self.replies.get(tuple(versions_records(content)))
        self.stats["versions_matched" if reply is not None else "versions_unknown"] += 1
        return reply or ""

    def _check(self, content: str) -> str:
        reply = self.checks.get(tuple(check_statements(content)))
        self.stats["checks_matched" if reply is not None else "checks_unknown"] += 1
        return reply or ""

    def _message(self, content: str) -> str:
        """The user's message inside an extraction prompt: the text after our prompt's marker."""
        for marker in self.markers:
            at = content.find(marker)
            if at >= 0:
                return normalize(content[at + len(marker):])
        return normalize(content)

    def _facts(self, message: str) -> list:
        facts = self.facts.get(message)
        self.stats["matched" if facts is not None else "unknown_messages"] += 1
        facts = facts or []
        if self.slot_map is None:
            return facts
        return [{**f, "slot": self.slot_map(str(f.get("slot", "")))} for f in facts]


def first_component(slot: str) -> str:
    """`first_component("работа.должность")` == "работа": a key as a one-message extractor may name it."""
    return slot.split(".")[0].strip()
