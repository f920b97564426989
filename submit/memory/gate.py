"""The decline gate: the reader's own one-token "does the material hold the answer?", read as
P(yes), and the run's calibration that decides below which P(yes) an answer is declined.

A threshold fitted on one model means nothing for another, so none is written here: each run asks its
own model over a calibration set (`submit/calibration/`, English in `Settings.calibration_dir`) and takes
the threshold by `calibrate`'s rule. Pure functions; `calibrating` runs the calibration, `dialogue` the gate.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Optional, Sequence

from .. import prompts
from .lang import asks_yes_no

CALIBRATION_DIR = Path(__file__).resolve().parent.parent / "calibration"
TOP_K = 20  # alternatives asked for: vLLM's default max_logprobs, llama.cpp's and OpenAI's limit
YES = {"ru": ("да",), "en": ("yes",)}
NO = {"ru": ("нет",), "en": ("no",)}
MAX_CALLS = 64  # calibration prompts asked per language, at most


MODES = ("off", "calibrated", "kept")


def speaks_for(question: str) -> bool:
    """Whether the calibration's threshold speaks for the question's form: not for a Russian yes/no
    question («Есть ли у меня самокат?»), a form the shipped calibration sets hold none of."""
    return not asks_yes_no(question)


def ask(lang: str) -> str:
    """The gate's question: it takes the place of the answer prompt's last line."""
    return prompts.text("gate", lang, "ask")


def read(llm, chats: Sequence[list], lang: str, purpose: str) -> tuple:
    """The gate's P(yes) (None: unreadable) for each answer chat (the answer prompt as built, its last
    line the answer's ask), the one-token question in its place, and the generations it took:
    one batched call for all chats, so the calibration and the live gate read alike."""
    replies = llm.generate([with_ask(c, ask(lang)) for c in chats], max_tokens=1, purpose=purpose, logprobs=TOP_K)
    return [p_yes(r.top, lang) for r in replies], replies


def p_yes(top: Sequence[tuple], lang: str) -> Optional[float]:
    """P(yes) / (P(yes) + P(no)) over the first token's alternatives, a token counting for the word it
    begins ("Д" is yes; English yes/no count in either language); None when neither is among them.
    `p_yes([("да", -0.1), ("нет", -2.4)], "ru")` is about 0.91."""
    yes = no = 0.0
    yes_words, no_words = YES[lang] + YES["en"], NO[lang] + NO["en"]
    for token, logprob in top:
        word = str(token).strip().lower()
        if not word:
            continue
        p = math.exp(logprob)
        if any(w.startswith(word) for w in yes_words):
            yes += p
        elif any(w.startswith(word) for w in no_words):
            no += p
    return yes / (yes + no) if yes + no > 0 else None


@dataclass(frozen=True)
class Calibration:
    """What one run's calibration found for one language: the gate `on` with its `threshold`
    (decline where P(yes) < threshold), or off and `why`; the rates it has on the calibration set."""
    lang: str
    on: bool
    why: str
    threshold: Optional[float] = None
    answerable: int = 0  # calibration prompts of each kind with a readable P(yes)
    unanswerable: int = 0
    answerable_declined: float = 0.0  # the rates at the threshold, on the calibration set itself
    unanswerable_declined: float = 0.0
    auc: Optional[float] = None  # P(an answerable prompt scores above an unanswerable one)
    calls: int = 0
    scores: tuple = field(default=(), repr=False)  # (id, answerable, P(yes) or None) per prompt

    def as_dict(self) -> dict:
        return {**asdict(self), "scores": [list(s) for s in self.scores]}


def auc(positive: Sequence[float], negative: Sequence[float]) -> Optional[float]:
    """Mann–Whitney: the share of (positive, negative) pairs ordered right, ties half."""
    if not positive or not negative:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in positive for n in negative)
    return wins / (len(positive) * len(negative))


def calibrate(lang: str, scores: Sequence[tuple], max_false: float = 0.05,
              no_answer_share: float = 0.25, min_auc: float = 0.7) -> Calibration:
    """The rule: decline strictly below the (floor(max_false * n) + 1)-th lowest of the n answerable
    scores; on only where the unanswerable share declined times `no_answer_share` beats the answerable
    share declined times the rest (0.25: the contest asks four question types, one of them
    `no_info`), and AUC ≥ `min_auc` (0.7: Hosmer & Lemeshow's "acceptable"; a threshold read off
    weakly separating scores does not carry to other questions).
    `scores`: (id, answerable, P(yes) or None) per calibration prompt; unreadable ones are left out,
    and the gate is off without both kinds."""
    answerable = sorted(p for _, a, p in scores if a and p is not None)
    unanswerable = [p for _, a, p in scores if not a and p is not None]
    base = dict(lang=lang, answerable=len(answerable), unanswerable=len(unanswerable),
                auc=_rounded(auc(answerable, unanswerable)), calls=len(scores), scores=tuple(scores))
    if not answerable or not unanswerable:
        unread = sum(p is None for _, _, p in scores)
        return Calibration(on=False, why=f"no readable P(yes) for both kinds ({unread} of {len(scores)} "
                                         "replies had neither yes nor no among their alternatives)", **base)
    threshold = answerable[min(len(answerable) - 1, math.floor(max_false * len(answerable)))]
    false = sum(p < threshold for p in answerable) / len(answerable)
    declined = sum(p < threshold for p in unanswerable) / len(unanswerable)
    on = False
    if declined * no_answer_share <= false * (1 - no_answer_share):
        why = (f"scores do not separate: at {false:.0%} of answerable declined it would decline {declined:.0%} "
               f"of unanswerable, no gain where {no_answer_share:.0%} of questions have no answer")
    elif base["auc"] is None or base["auc"] < min_auc:
        why = (f"scores separate too weakly to carry to other questions: AUC {base['auc']} under {min_auc} "
               f"(it would decline {declined:.0%} of unanswerable at {false:.0%} of answerable)")
    else:
        on, why = True, f"declines {declined:.0%} of unanswerable at {false:.0%} of answerable (calibration set)"
    return Calibration(on=on, why=why, threshold=round(threshold, 6), answerable_declined=round(false, 4),
                       unanswerable_declined=round(declined, 4), **base)


def _rounded(value: Optional[float]) -> Optional[float]:
    return None if value is None else round(value, 4)


def calibration_file(lang: str, context_chars: int, folders: Sequence[Path] = (CALIBRATION_DIR,)) -> Optional[Path]:
    """The set for `lang` built at the evidence budget nearest the run's (`ru.c8000.jsonl`), from the
    first of `folders` that holds any set for `lang`; None where none does."""
    for folder in folders:
        found = {int(p.name.split(".c")[1].split(".")[0]): p for p in Path(folder).glob(f"{lang}.c*.jsonl")}
        if found:
            return found[min(found, key=lambda c: (abs(c - context_chars), c))]
    return None


def load_set(path: Path, limit: int = MAX_CALLS) -> list[dict]:
    """The calibration prompts, answerable and unanswerable alternating so a cut keeps both kinds."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    kinds = [[r for r in rows if r["answerable"]], [r for r in rows if not r["answerable"]]]
    mixed = [r for pair in zip(*kinds) for r in pair] + kinds[0][len(kinds[1]):] + kinds[1][len(kinds[0]):]
    return mixed[:limit]


def speaker_margin(hits: Sequence, turns: Sequence, question: str, people: Sequence[str]) -> Optional[float]:
    """Where the question names exactly one of a chat's two people: the best dense score of that
    person's turns among `hits` (their `turn_idx` into `turns`) minus the other's; None otherwise (a
    question about what the other one did finds the other's words best: LoCoMo's adversarial ones).
    Reader-free, so its threshold carries from one model to another, not from one embedder to another."""
    from .turns import speaker_of
    named = named_people(question, people)
    if len(named) != 1 or len(people) != 2:
        return None
    best = {p: -1.0 for p in people}
    for hit in hits:
        who = speaker_of(turns[hit.turn_idx].text)
        if who in best and hit.dense > best[who]:
            best[who] = hit.dense
    other = [p for p in people if p != named[0]][0]
    return best[named[0]] - best[other]


def named_people(question: str, people: Sequence[str]) -> list[str]:
    """The people the question names: a word of it starts with the name («Johns's», LoCoMo's typo,
    names John; «Senate» does not name Nate)."""
    return [p for p in people if re.search(rf"\b{re.escape(p)}", question)]


def rule_of(settings) -> dict:
    """`calibrate`'s rule as a run's settings (`dialogue.Settings`) state it, as keyword arguments."""
    return {"max_false": settings.gate_max_false, "no_answer_share": settings.gate_no_answer_share,
            "min_auc": settings.gate_min_auc}


def speaker_calibration(lang: str, rows: Sequence[dict], embedder: str, max_false: float = 0.05,
                        no_answer_share: float = 0.25, min_auc: float = 0.7) -> Calibration:
    """The speaker decline's threshold by `calibrate`'s rule from the calibration rows' recorded
    `speaker_margin`s (tools/calibration.py), where they were measured with this run's embedder."""
    scores = [(r["id"], bool(r["answerable"]), r.get("speaker_margin")) for r in rows]
    if not any(s is not None for _, _, s in scores):
        return Calibration(lang, False, "the calibration set records no speaker margins "
                                        "(not a chat between two people)")
    measured = {r.get("embedder") for r in rows}
    if measured != {embedder}:
        return Calibration(lang, False, f"speaker margins measured with {sorted(map(str, measured))}, "
                                        f"this run embeds with {embedder!r}")
    return replace(calibrate(lang, scores, max_false, no_answer_share, min_auc), calls=0)  # no model asked


def with_ask(messages: list, question_ask: str) -> list:
    """The answer prompt with its last line (the answer prompt's `ask`) replaced by another."""
    head = messages[-1]["content"].rsplit("\n", 1)[0]
    return messages[:-1] + [{**messages[-1], "content": f"{head}\n{question_ask}"}]
