"""Turns: every message written to memory, in order, with where it came from.

`TurnStore.add_pair` is the whole of `write_to_memory`'s work: O(1) per message.
Called by `dialogue.DialogueMemory`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import Optional

from .timeref.dates import parse_session_date

USER, ASSISTANT = "user", "assistant"
NAMED = re.compile(r"([A-ZА-ЯЁ][\w.'-]{1,30}): ")  # a turn that opens with its speaker's name
NO_REPLY = "<нет ответа>"  # the harness's placeholder after a trailing user message


@dataclass(frozen=True)
class Turn:
    idx: int  # position in the dialogue's flat message list (provenance key)
    session_id: str
    session_order: int  # 0-based order of first appearance of the session
    pair_index: int  # which write_to_memory call brought it
    role: str
    text: str


# Lone surrogates (unencodable: they break UTF-8 writers such as the harness's CSV) and
# control characters other than newline and tab.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def clean_text(value) -> str:
    """Any content as safe text: None -> "", bytes decoded, other objects through `str`
    (an object whose `str` raises, or an int past Python's digit limit, -> ""), lone
    surrogates and control characters dropped, "\\r\\n" -> "\\n". `clean_text("a\\x00b") == "ab"`."""
    try:
        text = _as_str(value)
    except Exception:  # a hostile __str__, or ValueError: an int too large to convert
        return ""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _UNSAFE.sub("", text)


def _as_str(value) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return str.__str__(value)  # the plain string even from a subclass that overrides methods
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "replace")
    text = str(value)
    return str.__str__(text) if isinstance(text, str) else ""


def normalize_role(value) -> str:
    role = clean_text(value).strip().lower()
    return role if role in (USER, ASSISTANT) else (role or "unknown")


class TurnStore:
    """All turns of one dialogue, plus the session ordering and optional session dates."""

    def __init__(self):
        self.turns: list[Turn] = []
        self.pairs = 0
        self._session_order: dict[str, int] = {}
        self.session_dates: dict[str, str] = {}  # as the benchmark writes them: context headers show these
        self.question_date: Optional[str] = None
        self._days: dict = {}  # each date string's calendar day, read once
        # Context lines already rendered (clip + time brackets), by everything they depend on:
        # the many questions of one benchmark dialogue, and each budget, render a turn once.
        self.rendered: dict[tuple, str] = {}

    def add_pair(self, messages) -> list[Turn]:
        """Any "pair" the harness sends: a list of messages, of any length, or anything else."""
        if messages is None:
            messages = ()
        elif not isinstance(messages, (list, tuple)):
            messages = (messages,)
        added = []
        for message in messages:
            session = self._session_key(getattr(message, "session_id", None))
            turn = Turn(
                idx=len(self.turns),
                session_id=session,
                session_order=self._session_order[session],
                pair_index=self.pairs,
                role=normalize_role(getattr(message, "role", None)),
                text=clean_text(getattr(message, "content", None)),
            )
            self.turns.append(turn)
            added.append(turn)
        self.pairs += 1
        return added

    def _session_key(self, session_id) -> str:
        if session_id is None:  # no id: stay in the current session
            key = self.turns[-1].session_id if self.turns else "0"
        else:
            key = clean_text(session_id)
        self._session_order.setdefault(key, len(self._session_order))
        return key

    @property
    def session_count(self) -> int:
        return len(self._session_order)

    def user_turns(self) -> list[Turn]:
        return [t for t in self.turns if t.role == USER]

    def date_of(self, turn: Turn) -> Optional[str]:
        return self.session_dates.get(turn.session_id)

    def day_of(self, turn: Turn) -> Optional[date]:
        return self.day(self.date_of(turn))

    def day(self, text: Optional[str]) -> Optional[date]:
        """The calendar day of a date string (`timeref.parse_session_date`), read once per string:
        retrieval and every context line ask again and again."""
        if text not in self._days:
            self._days[text] = parse_session_date(text)
        return self._days[text]


def speaker_of(text: str) -> Optional[str]:
    """`speaker_of("Caroline: I went…")` == "Caroline": the name a turn of a chat between people opens with."""
    found = NAMED.match(text)
    return found.group(1) if found else None


def speakers(store: "TurnStore", most: Optional[int] = None) -> list:
    """The names that open turns ("Caroline: …"), most frequent first: the people of a chat between people."""
    from collections import Counter
    counts = Counter(name for name in map(speaker_of, (t.text for t in store.turns)) if name)
    return [name for name, _ in counts.most_common(most)]
