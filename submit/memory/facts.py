"""Fact extraction: pending message pairs -> one batched LLM call -> atomic `Fact` records.

`prefilter` skips pairs that cannot hold a fact about the user (placeholders, bare
acknowledgments) and trims long pasted texts to the user's own words; it is deliberately
light: Russian drops pronouns ("Купили Шкоду", "Вернулся из похода"), so a first-person
test skipped 7 of 48 evidence turns on the dev data;
`build_prompts` makes one chat per remaining pair, with the preceding context needed to
resolve references; `parse_facts` reads whatever the model returned, counting what it
had to drop. The dialogue's profile (`profiles.Profile`) says whose turns are candidates, what
each is read with (`CONTEXTS`) and which prompt asks; in a chat between two named people
(LoCoMo) both speakers' turns are candidates, the prompt asks about the person who wrote the
message, and each fact's key ends with that person's name, so one person's job never
versions another's. Called by `dialogue`.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from typing import Optional, Sequence

from .. import prompts
from .disclosure import tells_about_user
from .lexical import normalize_word
from .profiles import ASSISTANT_CHAT, Profile
from .turns import NO_REPLY, USER, Turn, speaker_of

MAX_FACTS_PER_PAIR = 10
STRICT_MIN_CHARS = 25  # the budget's stricter pre-filter: shorter messages are rarely facts
LIMITS = {"slot": 60, "value": 200, "statement": 300}
FACTS_SCHEMA = {
    "type": "object",
    "properties": {"facts": {"type": "array", "items": {
        "type": "object",
        "properties": {"slot": {"type": "string"}, "value": {"type": "string"},
                       "statement": {"type": "string"}},
        "required": ["slot", "value", "statement"]}}},
    "required": ["facts"],
}
SMALL_TALK = frozenset(
    "спасибо спс благодарю ок окей ok да нет ага угу понятно понял поняла ясно хорошо отлично супер класс "
    "круто привет здравствуй здравствуйте пока ладно давай продолжай дальше еще ещё большое огромное "
    "thanks thank you ok okay yes no great cool nice got it hi hello bye sure continue please".split())
_WORD = re.compile(r"[^\W\d_]+(?:'[a-z]+)?", re.UNICODE)
# Requests to process a pasted text: the text is someone else's, only the head is the user's.
_TASK = re.compile(r"переведи|перевод|перескажи|сократи|исправь|проверь|отредактируй|summar|translat|"
                   r"rewrite|proofread|paraphrase", re.IGNORECASE)


@dataclass(frozen=True)
class Fact:
    slot: str
    value: str
    statement: str
    turn_idx: int  # the user turn it came from (provenance)
    session_order: int
    pair_index: int


@dataclass(frozen=True)
class Candidate:
    """A pair worth an extraction call: its user turn, the text to read, the context before it."""
    turn: Turn
    text: str
    before: str


def may_hold_facts(text: str) -> bool:
    """False for what cannot say anything about the user: no words, or bare small talk."""
    words = _WORD.findall(text.lower())
    if not any(len(w) >= 3 for w in words):
        return False
    return not (len(words) <= 4 and all(w in SMALL_TALK for w in words))


def user_text(text: str, pasted_chars: int = 1500, head_chars: int = 400) -> str:
    """The part of a user message that speaks for the user: long pasted texts keep their head."""
    if len(text) > pasted_chars and _TASK.search(text[:head_chars]):
        return text[:head_chars]
    return text[:pasted_chars]


def prefilter(turns: Sequence[Turn], stats: Optional[Counter] = None,
              profile: Profile = ASSISTANT_CHAT, rule: str = "all") -> list[Candidate]:
    """Candidates among the turns of the profile's roles, each with its context (`CONTEXTS`);
    `stats` counts seen/skipped. `rule` "disclosure" also skips, in a user–assistant chat, the
    messages that say nothing about their writer (`disclosure.tells_about_user`)."""
    stats = stats if stats is not None else Counter()
    contexts = CONTEXTS[profile.fact_context](turns, profile.extract_roles)
    out = []
    for i, turn in enumerate(turns):
        if turn.role not in profile.extract_roles:
            continue
        stats["user_turns"] += 1
        text = user_text(turn.text.strip())
        if not text or text == NO_REPLY or not may_hold_facts(text):
            stats["skipped"] += 1
            continue
        if rule == "disclosure" and not profile.named and not tells_about_user(text):
            stats["skipped_by_rule"] += 1
            continue
        out.append(Candidate(turn, text, contexts[i]))
    stats["candidates"] += len(out)
    return out


def previous_turn(turns: Sequence[Turn], roles: tuple) -> dict:
    """Turn position -> what the message answers: the turn before it in the session, short."""
    return {i: turns[i - 1].text[:300] if i and turns[i - 1].session_id == turn.session_id else ""
            for i, turn in enumerate(turns) if turn.role in roles}


def previous_exchange(turns: Sequence[Turn], roles: tuple) -> dict:
    """Turn position -> what the message may refer to: the previous message of the session read
    (skipped or not) and the reply to it, both short."""
    contexts, previous = {}, {}
    for i, turn in enumerate(turns):
        if turn.role in roles:
            contexts[i] = previous.get(turn.session_id, "")
            previous[turn.session_id] = _context_line(turns, i, user_text(turn.text.strip()))
    return contexts


CONTEXTS = {"turn": previous_turn, "exchange": previous_exchange}


def _context_line(turns: Sequence[Turn], i: int, text: str) -> str:
    """What the next user turn may refer to: this user turn and the reply to it, both short."""
    reply = turns[i + 1].text if i + 1 < len(turns) and turns[i + 1].role != USER else ""
    return f"{text[:300]}\n→ {reply[:200]}" if reply else text[:300]


def build_prompts(candidates: Sequence[Candidate], lang: str, profile: Profile = ASSISTANT_CHAT) -> list[list]:
    return [prompts.render(profile.extract_prompt, lang, message=c.text, before=c.before) for c in candidates]


def parse_facts(raw: str, candidate: Candidate, stats: Counter, named: bool = False) -> list[Fact]:
    """Facts from one reply; malformed items are dropped and counted, never raised. A reply cut
    short (at max_tokens) keeps its complete items and counts as `cut`, apart from `unparsable`
    ones. With `named` (the profile's) each key gets the speaker's name: `job` -> `job.Caroline`."""
    items = _json_items(raw)
    if items is None:
        items = complete_items(raw)
        stats["cut" if items is not None else "unparsable"] += 1
    if items is None:
        return []
    facts = []
    speaker = speaker_of(candidate.turn.text) if named else None
    for item in items[:MAX_FACTS_PER_PAIR]:
        fact = _fact(item, candidate.turn, speaker)
        if fact is None:
            stats["bad_items"] += 1
        else:
            facts.append(fact)
    stats["facts"] += len(facts)
    return facts


def _json_items(raw: str):
    for data in json_candidates(raw):
        if isinstance(data, dict):
            data = data.get("facts")
        if isinstance(data, list):
            return data
    return None


def json_candidates(raw: str):
    """What a model reply may hold as JSON, in order: all of it, its outermost {...}, its
    outermost [...]; each that parses is yielded (a reply with prose around the JSON still counts)."""
    text = (raw or "").strip()
    for candidate in (text, _between(text, "{", "}"), _between(text, "[", "]")):
        try:
            yield json.loads(candidate)
        except (ValueError, TypeError):
            continue


def complete_items(raw: str) -> Optional[list]:
    """The complete items of a JSON array cut short, None where there is no array:
    `complete_items('{"facts": [{"a": 1}, {"b"')` == [{"a": 1}]."""
    text = raw or ""
    start = text.find("[")
    if start < 0:
        return None
    decoder, items, i = json.JSONDecoder(), [], start + 1
    while True:
        try:
            item, i = decoder.raw_decode(text, _skip_space(text, i))
        except ValueError:  # cut inside this item, or not JSON at all: what came before stands
            return items
        items.append(item)
        i = _skip_space(text, i)
        if not text.startswith(",", i):
            return items
        i += 1


def _skip_space(text: str, i: int) -> int:
    while i < len(text) and text[i].isspace():
        i += 1
    return i


def _between(text: str, open_: str, close: str) -> str:
    start, end = text.find(open_), text.rfind(close)
    return text[start:end + 1] if 0 <= start < end else ""


def _fact(item, turn: Turn, speaker: Optional[str] = None) -> Optional[Fact]:
    if not isinstance(item, dict):
        return None
    fields = {k: " ".join(str(item.get(k) or "").split())[:LIMITS[k]] for k in LIMITS}
    if not fields["slot"] or not fields["value"]:
        return None
    if speaker and speaker.lower() not in fields["slot"].lower():
        fields["slot"] = f"{fields['slot']}.{speaker}"
    statement = fields["statement"] or f"{fields['slot']}: {fields['value']}"
    return Fact(fields["slot"], fields["value"], statement, turn.idx, turn.session_order, turn.pair_index)


def slot_words(slot: str) -> str:
    """`slot_words("Собака.Клички")` -> "собака кличка": the normalized key slots match on."""
    words = re.findall(r"[^\W_]+", slot.lower().replace("ё", "е"))
    return " ".join(normalize_word(w) for w in words)
