"""The versions pass: the LLM names, in one view of a topic, the attribute each fact is about.

An extractor that sees one message at a time names slot keys loosely ("сын" for the son's
name, his hobby and his homework alike), so keys alone cannot say whether a newer fact
gives a new value of an older fact's attribute. Facts are grouped by topic
(`slots.topic_of`: the first word of the key); the LLM reads each group's statements, oldest
first, under integer aliases, and returns one attribute key per record ("сын.имя",
"сын.увлечения"), the same key only for the same attribute of the same thing. A newer fact
whose key an older one shares, with another value, is that attribute's new version. All
groups go in one batched call. Every pair of a group whose reply parsed gets a verdict; a
group whose reply is empty, malformed or of the wrong length gets none, and the rule in
`slots` decides it as if there were no pass.

A shared key still joins notes that are all true: a refinement ("жареная картошка" → "с
лисичками"), a new option beside the old ones, a second opinion. So every pair that would
link is then checked on its own (`check`): the two statements, and one question, does the
later replace the earlier? A "no" removes that link for good; an unusable reply leaves it,
so the check can only take links away, never add one. Called by `dialogue`.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Optional, Sequence

from .. import prompts
from .facts import json_candidates, slot_words
from .llm import VERSIONS, VERSIONS_CHECK
from .slots import Slots, order, same_value, topic_of

MAX_GROUP = 16  # facts per prompt; bigger topics are cut into overlapping windows
OVERLAP = 4
SCHEMA = {
    "type": "object",
    "properties": {"keys": {"type": "array", "items": {"type": "string"}}},
    "required": ["keys"],
}
LABEL = {"ru": "сессия", "en": "session"}
CHECK_MAX_TOKENS = 16
CHECK_SCHEMA = {
    "type": "object",
    "properties": {"replaces": {"type": "boolean"}},
    "required": ["replaces"],
}
_YES_NO = {"true": True, "false": False, "yes": True, "no": False, "да": True, "нет": False}


@dataclass(frozen=True)
class Group:
    topic: str
    facts: tuple  # oldest first; alias i+1 is facts[i]


def groups(slots: Slots, fresh: Sequence) -> list[Group]:
    """Topics with two or more facts, at least one of them new; windows of MAX_GROUP facts."""
    by_topic: dict = {}
    for fact in slots.facts:
        by_topic.setdefault(topic_of(fact), []).append(fact)
    new, out = set(fresh), []
    for topic, facts in by_topic.items():
        facts.sort(key=order)
        for start in range(0, max(1, len(facts) - OVERLAP), MAX_GROUP - OVERLAP):
            window = facts[start:start + MAX_GROUP]
            if len(window) > 1 and new.intersection(window):
                out.append(Group(topic, tuple(window)))
    return out


def record(i: int, fact, lang: str) -> str:
    """`3. [сессия 5] работа.должность — Пользователь работает токарем.`"""
    return f"{i}. [{LABEL[lang]} {fact.session_order + 1}] {fact.slot} — {fact.statement}"


def build_prompts(found: Sequence[Group], lang: str) -> list[list]:
    return [prompts.render("versions", lang, topic=g.topic,
                           records=[record(i, f, lang) for i, f in enumerate(g.facts, start=1)])
            for g in found]


def parse(raw: str, group: Group, stats: Counter) -> Optional[dict]:
    """Verdicts {(old, new): same attribute, new value} for every ordered pair of the group,
    or None when the reply is not one key per record."""
    keys = _keys(raw, len(group.facts))
    if keys is None:
        stats["versions_unparsable"] += 1
        return None
    facts = group.facts
    verdicts = {}
    for j, new in enumerate(facts):
        for i, old in enumerate(facts[:j]):
            if order(old) < order(new):
                verdicts[(old, new)] = keys[i] == keys[j] and not same_value(old, new)
    return verdicts


def _keys(raw: str, n: int) -> Optional[list]:
    """The reply's keys, normalized like slot keys; None unless exactly n non-empty strings."""
    for data in json_candidates(raw):
        keys = data.get("keys") if isinstance(data, dict) else None
        if isinstance(keys, list) and len(keys) == n and all(isinstance(k, str) and k.strip() for k in keys):
            return [tuple(sorted(slot_words(k).split())) for k in keys]
    return None


def decide(llm, slots: Slots, fresh: Sequence, lang: str, max_tokens: int, stats: Counter) -> list:
    """Ask about every group touching the new facts in one call; apply the verdicts; the generations."""
    found = groups(slots, fresh)
    if not found:
        return []
    generations = llm.generate(build_prompts(found, lang), max_tokens=max_tokens, schema=SCHEMA, purpose=VERSIONS)
    stats["versions_groups"] += len(found)
    verdicts: dict = {}
    for group, generation in zip(found, generations):
        for pair, verdict in (parse(generation.text, group, stats) or {}).items():
            verdicts[pair] = verdicts.get(pair, False) or verdict  # overlapping windows: a yes stands
    slots.decide(verdicts)
    stats["versions_links"] = len(slots.replaced_by)
    return generations


def note(fact, lang: str) -> str:
    """`[сессия 5] Пользователь работает токарем.`: a statement as the check shows it."""
    return f"[{LABEL[lang]} {fact.session_order + 1}] {fact.statement}"


def check_prompts(pairs: Sequence[tuple], lang: str) -> list[list]:
    return [prompts.render("versions_check", lang, earlier=note(old, lang), later=note(new, lang))
            for old, new in pairs]


def parse_check(raw: str) -> Optional[bool]:
    """{"replaces": true} -> True; a bare yes / no / да / нет as well; None for anything else."""
    for data in json_candidates(raw):
        if isinstance(data, dict) and isinstance(data.get("replaces"), bool):
            return data["replaces"]
    words = (raw or "").strip().lower().strip(" .!\"«»").split()
    return _YES_NO.get(words[0]) if len(words) == 1 else None


def check(llm, slots: Slots, lang: str, stats: Counter) -> list:
    """Ask, in one call, about every pair that would link and has not been asked; a "no" unlinks
    it, an unusable reply leaves it. The generations."""
    pairs = slots.unchecked()
    if not pairs:
        return []
    generations = llm.generate(check_prompts(pairs, lang), max_tokens=CHECK_MAX_TOKENS, schema=CHECK_SCHEMA,
                               purpose=VERSIONS_CHECK)
    verdicts = {pair: parse_check(g.text) for pair, g in zip(pairs, generations)}
    stats["versions_checked"] += len(pairs)
    stats["versions_check_unparsable"] += sum(v is None for v in verdicts.values())
    stats["versions_check_rejected"] += sum(v is False for v in verdicts.values())
    slots.confirm(verdicts)
    stats["versions_links"] = len(slots.replaced_by)
    return generations
