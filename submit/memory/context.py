"""Context packing: chosen turns laid out chronologically, grouped by session, in a budget.

`pack` takes turns in priority order (best first), keeps as many as fit the character
budget, and returns a `Context` that records exactly which turns it holds (provenance),
for the answer step and for evaluation. Called by `dialogue`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional

from .turns import Turn, TurnStore

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
         max_turn_chars: int = 1200) -> Context:
    """Greedy by rank: a turn goes in when its rendered line still fits the budget."""
    chosen, used, seen_sessions = [], 0, set()
    for turn in ranked:
        line = _line(turn, lang, max_turn_chars)
        header = 0 if turn.session_id in seen_sessions else len(_header(store, turn, lang)) + 2
        if used + len(line) + 1 + header > budget:
            continue
        chosen.append(turn)
        seen_sessions.add(turn.session_id)
        used += len(line) + 1 + header
    chosen.sort(key=lambda t: t.idx)
    return Context(text=_layout(store, chosen, lang, max_turn_chars),
                   turn_ids=tuple(t.idx for t in chosen), budget=budget)


def _header(store: TurnStore, turn: Turn, lang: str) -> str:
    date: Optional[str] = store.date_of(turn)
    label = f"### {SESSION_LABEL[lang]} {turn.session_order + 1}"
    return f"{label} ({date})" if date else label


def _line(turn: Turn, lang: str, max_turn_chars: int) -> str:
    role = ROLE_LABELS[lang].get(turn.role, turn.role)
    return f"{role}: {clip(turn.text, max_turn_chars)}"


def _layout(store: TurnStore, chosen: list, lang: str, max_turn_chars: int) -> str:
    blocks, current = [], None
    for turn in chosen:
        if turn.session_id != current:
            blocks.append("\n" + _header(store, turn, lang) if blocks else _header(store, turn, lang))
            current = turn.session_id
        blocks.append(_line(turn, lang, max_turn_chars))
    return "\n".join(blocks)
