"""Lexical scoring, pure functions: token F1, exact match, and abstention detection.

These are labeled "lexical" in every report: they are not the contest's LLM judge.
Token F1 follows SQuAD's definition (normalize, split on whitespace, bag overlap).
"""
from __future__ import annotations

import re
import string
from collections import Counter

_PUNCT = re.compile(f"[{re.escape(string.punctuation)}«»—–…“”„]")
_ARTICLES = re.compile(r"\b(a|an|the)\b")
ABSTAIN_PATTERNS = re.compile(
    r"нет (такой |этой |этих |таких )?(информации|данных|сведений)|не (знаю|упоминал|говорил|указ)"
    r"|don't have (that|this|any|the|enough)? ?information|do not have|not mentioned|no information"
    r"|not (know|sure)|unknown|не могу сказать", re.IGNORECASE)


def normalize(text: str) -> str:
    """Lowercase, ё->е, drop punctuation and English articles, squeeze spaces."""
    text = text.lower().replace("ё", "е")
    text = _PUNCT.sub(" ", text)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def token_f1(prediction: str, gold: str) -> float:
    """`token_f1("the cat Luna", "Luna")` == 0.5 (precision 1/2, recall 1/1)."""
    pred, ref = normalize(prediction).split(), normalize(gold).split()
    if not pred or not ref:
        return float(pred == ref)
    common = sum((Counter(pred) & Counter(ref)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(ref)
    return 2 * precision * recall / (precision + recall)


def exact_match(prediction: str, gold: str) -> float:
    return float(normalize(prediction) == normalize(gold))


def is_abstention(answer: str) -> bool:
    return bool(ABSTAIN_PATTERNS.search(answer or ""))


def lexical_score(prediction: str, gold: str, abstention: bool) -> dict:
    """Scores of one answer; for abstention questions, "correct" means it abstained."""
    if abstention:
        hit = float(is_abstention(prediction))
        return {"f1": hit, "em": hit, "correct": hit}
    f1 = token_f1(prediction, gold)
    return {"f1": f1, "em": exact_match(prediction, gold),
            "correct": float(not is_abstention(prediction) and f1 >= 0.5)}
