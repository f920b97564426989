"""Context packing: chosen turns laid out chronologically, grouped by session, in a budget.

`pack` takes turns in priority order (best first), keeps as many as fit the character
budget, and returns a `Context` that records exactly which turns it holds (provenance),
for the answer step and for evaluation. Where a session has a date, relative time in a
turn ("last week") gets its dates in brackets (`timeref`), so the reader need not count
days. In a chat between two named people (`named`, the profile's) each line is the speaker's
own "Name: text", with no user/assistant label: each session's opener plays the user, so that
label would flip between the two people. Called by `dialogue` and local_eval's retrieval metrics.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Iterable, Optional

from .timeref import annotate, text_lang
from .turns import Turn, TurnStore, speaker_of

ROLE_LABELS = {"ru": {"user": "Пользователь", "assistant": "Ассистент"},
               "en": {"user": "User", "assistant": "Assistant"}}
SESSION_LABEL = {"ru": "Сессия", "en": "Session"}


@dataclass(frozen=True)
class Context:
    text: str
    turn_ids: tuple  # idx of every turn inside, chronological
    budget: int

    @property
    def chars(self) -> int:
        return len(self.text)


def clip(text: str, limit: int) -> str:
    """Long pasted texts keep their head and tail; the middle rarely says who the user is."""
    if len(text) <= limit:
        return text
    half = max(1, (limit - 5) // 2)
    return f"{text[:half]} […] {text[-half:]}"


def pack(store: TurnStore, ranked: Iterable[Turn], budget: int, lang: str = "ru",
         max_turn_chars: int = 1200, named: bool = False) -> Context:
    """Greedy by rank: a turn goes in when its rendered line still fits the budget."""
    chosen, used, seen_sessions = [], 0, set()
    for turn in ranked:
        header = 0 if turn.session_id in seen_sessions else len(_header(store, turn, lang)) + 2
        if used + len(clip(turn.text, max_turn_chars)) + 1 + header > budget:
            continue  # too long before its label and time brackets are added: not worth rendering
        line = _line(store, turn, lang, max_turn_chars, named)
        if used + len(line) + 1 + header > budget:
            continue
        chosen.append((turn, line))
        seen_sessions.add(turn.session_id)
        used += len(line) + 1 + header
    chosen.sort(key=lambda pair: pair[0].idx)
    return Context(text=_layout(store, chosen, lang),
                   turn_ids=tuple(t.idx for t, _ in chosen), budget=budget)


def _header(store: TurnStore, turn: Turn, lang: str) -> str:
    date: Optional[str] = store.date_of(turn)
    label = f"### {SESSION_LABEL[lang]} {turn.session_order + 1}"
    return f"{label} ({date})" if date else label


def _line(store: TurnStore, turn: Turn, lang: str, max_turn_chars: int, named: bool) -> str:
    """`User: …` / `Caroline: …`, clipped, relative time resolved where the session is dated."""
    key = (turn.idx, store.date_of(turn), lang, max_turn_chars, named)
    line = store.rendered.get(key)
    if line is None:
        line = store.rendered[key] = _render(turn, store.day_of(turn), lang, max_turn_chars, named)
    return line


def _render(turn: Turn, day: Optional[date], lang: str, max_turn_chars: int, named: bool) -> str:
    text = clip(turn.text, max_turn_chars)
    if day:
        text = annotate(text, day, text_lang(text))
    if named and speaker_of(text):
        return text
    return f"{ROLE_LABELS[lang].get(turn.role, turn.role)}: {text}"


def _layout(store: TurnStore, chosen: list, lang: str) -> str:
    """(turn, its rendered line) in dialogue order -> the text, a header opening each session."""
    blocks, current = [], None
    for turn, line in chosen:
        if turn.session_id != current:
            blocks.append("\n" + _header(store, turn, lang) if blocks else _header(store, turn, lang))
            current = turn.session_id
        blocks.append(line)
    return "\n".join(blocks)
