"""The two kinds of chat, decided once per dialogue, and everything the kind changes, as values.

A dialogue is either a chat between two named people (LoCoMo: "Caroline: …" on both sides,
short turns) or a chat between a user and an assistant (the contest's, LongMemEval's).
`profile_of` decides which from the turns, by one definition: the second side writes short
turns (median at most `PEER_MAX_MEDIAN_CHARS`) and most turns of both sides open with a
speaker's name. Short replies alone are not enough: a terse assistant is still an assistant
(before issue 38 the ranking took short replies alone for a chat between people, while
extraction and the prompts asked for names too; no measured set had such a dialogue, the
shipped demo's three do).

A `Profile` holds what differs: whose turns extraction reads and what each message is read
with (`facts.CONTEXTS`), whether keys, lines and prompts use the speakers' names, the prompts'
names, how the dense query is formed (`retrieve.QUERIES`) and the ranking's stages with their
weights (`retrieve.STAGES`), folded in order. Weights chosen on LongMemEval_S, LoCoMo and Russian
dev (bench/retrieval.py table and cv; each measurement in docs/log.md, "Retrieval (no
LLM)" and "LoCoMo: held-out conversations"). The two profiles
live in the settings tree (`dialogue.Settings.profiles`), so a sweep can vary them. Called by
`dialogue`, which hands the profile to `facts`, `context`, `answer`, `topics` and `retrieve`;
none of them asks which kind it is.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar, Union

import numpy as np

from .turns import ASSISTANT, USER, TurnStore, speaker_of, speakers

PEER_MAX_MEDIAN_CHARS = 400  # the second side's median turn length in a chat between people
NAMED_SHARE = 0.8  # the share of each side's turns that open with a speaker's name


@dataclass(frozen=True)
class NamelessQuery:
    """The dense query of a chat between people (`retrieve.nameless_query`, `with_hit_queries`): the
    question without the speakers' names takes `nameless_weight` of it, the dialogue's mean key is
    taken away at `centroid_weight`; then each of the `hits` best keys queries on its own, at
    `hit_weight`. Chosen leave-one-conversation-out on LoCoMo (bench/retrieval.py cv; docs/log.md,
    "LoCoMo: held-out conversations")."""
    name: ClassVar[str] = "nameless"
    nameless_weight: float = 1.0
    centroid_weight: float = 0.3
    hits: int = 2
    hit_weight: float = 0.2


@dataclass(frozen=True)
class FeedbackQuery:
    """Pseudo-relevance feedback in a user–assistant chat (`retrieve.expand_query`): the dense
    query moves towards its `keys` best user keys at `weight`, and BM25 also searches the `terms`
    lemmas those turns share, at `terms_weight`. It lifts LongMemEval's multi-session questions
    and costs LoCoMo, hence not in chats between people (docs/log.md, "Retrieval (no LLM)")."""
    name: ClassVar[str] = "feedback"
    keys: int = 3
    weight: float = 0.5
    terms: int = 5
    terms_weight: float = 1.0


@dataclass(frozen=True)
class Stage:
    """One ranking stage after the fusion of dense and BM25 scores: `retrieve.STAGES[name]` adds
    `weight` times its evidence to each turn's score.
      neighbour  the better of the turn's two neighbours in its session (people stay on a topic)
      session    the best fused score of the turn's session
      speaker    1 when the turn opens with the name of a person the question names
      period     1 when the turn's session is dated inside the period the question names, or up to
                 `after_days` after it (an event is told in the next chat); periods of `max_days`
                 or more say too little
      favoured   1 for the turns of the facts the answer shows (`search(favoured=...)`)"""
    name: str
    weight: float
    after_days: int = 0
    max_days: int = 0


@dataclass(frozen=True)
class Profile:
    kind: str  # "peer" or "assistant": what reports and `--explain` print
    extract_roles: tuple  # whose turns extraction reads
    fact_context: str  # what each message is read with: `facts.CONTEXTS`
    named: bool  # fact keys end with the speaker, lines keep "Name: ", prompts speak of the people
    extract_prompt: str
    answer_prompt: str
    query: Union[NamelessQuery, FeedbackQuery]
    stages: tuple  # of Stage, folded in this order

    def stage(self, name: str) -> Stage:
        """The stage of that name: `ASSISTANT_CHAT.stage("session").weight == 0.3`."""
        return next(s for s in self.stages if s.name == name)

    def people(self, store: TurnStore) -> tuple:
        """The two speakers' names where lines and prompts name them, else none."""
        return tuple(speakers(store, 2)) if self.named else ()

    def with_stage(self, name: str, **changes) -> "Profile":
        """The profile with one stage changed: `PEER_CHAT.with_stage("period", weight=0.0)`."""
        if name not in {s.name for s in self.stages}:
            raise KeyError(f"{self.kind} chats have no {name!r} stage; they have {[s.name for s in self.stages]}")
        return replace(self, stages=tuple(replace(s, **changes) if s.name == name else s for s in self.stages))


# A chat between two people: both speakers are extracted, each message with the one it answers;
# neighbours and sessions weigh more (two friends stay on one topic for several turns), and a
# question that names a period lifts the sessions held in it (0.2 and 3 days: 4 folds of 5 on
# LoCoMo). A turn by a speaker the question names gets 0.12 (chosen held-out on LoCoMo).
PEER_CHAT = Profile(
    kind="peer", extract_roles=(USER, ASSISTANT), fact_context="turn", named=True,
    extract_prompt="extract_peer", answer_prompt="answer_peer", query=NamelessQuery(),
    stages=(Stage("neighbour", 0.5), Stage("session", 0.5), Stage("speaker", 0.12),
            Stage("period", 0.2, after_days=3, max_days=31), Stage("favoured", 0.05)))

# A user–assistant chat: the user's turns are extracted, each with the user's previous message and
# the reply to it; a turn takes 0.3 of its session's best score. No period stage: LongMemEval_S's
# questions with a period gained nothing at any weight from 0.02 to 0.2 and lost session recall
# at 0.2. The speaker stage rarely acts here (assistant chats seldom open turns with a name).
ASSISTANT_CHAT = Profile(
    kind="assistant", extract_roles=(USER,), fact_context="exchange", named=False,
    extract_prompt="extract", answer_prompt="answer", query=FeedbackQuery(),
    stages=(Stage("session", 0.3), Stage("speaker", 0.12), Stage("favoured", 0.05)))


@dataclass(frozen=True)
class Profiles:
    """The two profiles, as the settings tree holds them (`Settings.profiles`)."""
    peer: Profile = PEER_CHAT
    assistant: Profile = ASSISTANT_CHAT


def profile_of(store: TurnStore, profiles: Profiles = Profiles()) -> Profile:
    """The dialogue's profile: `profiles.peer` for a chat between two named people, else
    `profiles.assistant`."""
    return profiles.peer if short_replies(store) and named_sides(store) else profiles.assistant


def short_replies(store: TurnStore, max_median_chars: int = PEER_MAX_MEDIAN_CHARS) -> bool:
    """True when the second side writes short turns too (an assistant writes long ones)."""
    lengths = [len(t.text) for t in store.turns if t.role != USER and t.text.strip()]
    return bool(lengths) and float(np.median(lengths)) <= max_median_chars


def named_sides(store: TurnStore, share: float = NAMED_SHARE) -> bool:
    """True when most turns of both sides open with a speaker's name, and there are two names."""
    sides: dict = {}
    for turn in store.turns:
        if turn.text.strip() and turn.role in (USER, ASSISTANT):
            sides.setdefault(turn.role, []).append(speaker_of(turn.text))
    if len(sides) < 2 or len(speakers(store, 2)) < 2:
        return False
    return all(sum(1 for name in names if name) >= share * len(names) for names in sides.values())
