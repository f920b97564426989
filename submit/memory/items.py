"""Lists by selection: the facts shown to the answer step judged one by one, the kept ones read.

A small reader names one or two items of a list among thirty facts, though every item is in
front of it (bench/results/readers.md). Judging one fact against the question is a task it can
do: each shown fact line goes with the question into its own one-token yes/no (`items.*.yaml`),
all in one batched call, and a fact is kept where P(yes) ≥ `KEEP` (the model prefers yes to no).
Where two or more are kept the question asks for several things: the answer prompt shows only
the kept facts, and the values of kept facts the reader's sentence leaves out are joined to it.
One kept fact or none changes nothing. Called by `dialogue` (Settings.lists); pure but `judge`.
"""
from __future__ import annotations

from typing import Optional, Sequence

from .. import prompts
from .lang import WORD
from .gate import TOP_K, p_yes
from .llm import ITEMS
from .slots import FactLine

KEEP = 0.5
MODES = ("off", "select")
ALSO = {"ru": "также: ", "en": "also: "}


def judge(llm, question: str, lines: Sequence[FactLine], lang: str) -> tuple[list[Optional[float]], list]:
    """Each line's P(yes) that it names what the question asks for (None: the reply names neither
    word), and the generations spent."""
    chats = [prompts.render("items", lang, question=question, fact=line.fact.statement) for line in lines]
    replies = llm.generate(chats, max_tokens=1, purpose=ITEMS, logprobs=TOP_K)
    return [p_yes(reply.top, lang) for reply in replies], list(replies)


def keeps(score: Optional[float]) -> bool:
    """Whether a line with this P(yes) is kept (an unreadable reply is not)."""
    return score is not None and score >= KEEP


def _stems(text: str) -> set:
    return {w.lower()[:5] for w in WORD.findall(text) if len(w) >= 3}


def joined(answer: str, kept: Sequence[FactLine], lang: str) -> str:
    """The answer with the kept facts' values it does not mention joined to it, in the facts'
    order: `joined("Вы играете в футбол.", [футбол, пинг-понг], "ru")` is
    "Вы играете в футбол (также: пинг-понг)." — a value counts as mentioned when every word of
    it (its first five letters, so word endings may differ) is in the answer."""
    have = _stems(answer)
    missing = []
    for line in kept:
        value = line.fact.value.strip()
        if value and not _stems(value) <= have and value not in missing:
            missing.append(value)
    if not missing:
        return answer
    body, end = (answer[:-1], answer[-1]) if answer[-1:] in ".!" else (answer, ".")
    return f"{body} ({ALSO[lang]}{', '.join(missing)}){end}"
