"""An oracle extractor: LoCoMo's gold `observation` facts, fed through the same slot and
index path as extracted facts, to measure what perfect extraction would add to retrieval.

Observations carry no slot keys; each gets the speaker plus its first content lemmas
as a key, so facts about the same thing can still chain. Called by bench/extraction.py ledger.
"""
from __future__ import annotations

from submit.memory.facts import Fact
from submit.memory.lexical import tokenize

from . import harness


def observation_facts(record) -> list[Fact]:
    """Gold facts of a LoCoMo record, each pointing at the flat position of its dia_id."""
    _, origins = harness.flatten(record)
    position = {(o.session_id, o.index): k for k, o in enumerate(origins)}
    session_order = {s.id: i for i, s in enumerate(record.sessions)}
    where = record.extra.get("dia_ids", {})
    facts = []
    for per_speaker in record.extra.get("observation", {}).values():
        for speaker, items in per_speaker.items():
            for text, *ids in items:
                unit = where.get(str(ids[0]) if ids else "")
                if unit is None or (unit.session_id, unit.index) not in position:
                    continue
                idx = position[(unit.session_id, unit.index)]
                slot = ".".join([speaker.lower(), *tokenize(text)[1:3]])
                facts.append(Fact(slot, text, text, idx, session_order[unit.session_id], idx // 2))
    return facts
