"""Lexical scoring, pure functions: token F1, exact match, abstention detection, and
LoCoMo-Refined's own F1 and BLEU-1.

These are labeled "lexical" in every report: they are not the contest's LLM judge.
Token F1 follows SQuAD's definition (normalize, split on whitespace, bag overlap). Where a
benchmark accepts several gold answers, every score is the best over them.
Called by run.py.
"""
from __future__ import annotations

import math
import re
import string
from collections import Counter
from typing import Sequence, Union

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


def lexical_score(prediction: str, gold: Union[str, Sequence[str]], abstention: bool) -> dict:
    """Scores of one answer, each the best over the gold answers (one string or several);
    for abstention questions, "correct" means it abstained.

    `lexical_score("Luna", ["Max", "Luna"], False)` == {"f1": 1.0, "em": 1.0, "correct": 1.0}
    """
    if abstention:
        hit = float(is_abstention(prediction))
        return {"f1": hit, "em": hit, "correct": hit}
    golds = [gold] if isinstance(gold, str) else list(gold) or [""]
    f1 = max(token_f1(prediction, g) for g in golds)
    return {"f1": f1, "em": max(exact_match(prediction, g) for g in golds),
            "correct": float(not is_abstention(prediction) and f1 >= 0.5)}


# LoCoMo-Refined's lexical metrics, as its evaluator computes them
# (github.com/mem-eval-suite/LoCoMo_refined: src/bleu_f1.py, src/evaluate.py), written
# here from those definitions. Tokens are runs of word characters and single punctuation
# marks, lowercased; nothing else is normalized (no article or punctuation removal).
_REFINED_TOKEN = re.compile(r"\w+|[^\w\s]")


def refined_tokens(text: str) -> list[str]:
    """`refined_tokens("On 7 May, 2023.")` == ["on", "7", "may", ",", "2023", "."]"""
    return [t.lower() for t in _REFINED_TOKEN.findall(text)]


def _overlap(pred: list, ref: list) -> int:
    return sum((Counter(pred) & Counter(ref)).values())


def refined_f1(prediction: str, reference: str) -> float:
    """Bag-of-tokens F1 (`compute_token_f1`): 0.0 when either side has no token."""
    pred, ref = refined_tokens(prediction), refined_tokens(reference)
    common = _overlap(pred, ref) if pred and ref else 0
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(ref)
    return 2 * precision * recall / (precision + recall)


def refined_bleu1(prediction: str, reference: str) -> float:
    """Sentence BLEU-1 (`compute_bleu1`): clipped unigram precision times the brevity
    penalty exp(1 - r/c) when the prediction is shorter (c < r); no higher orders, no smoothing."""
    pred, ref = refined_tokens(prediction), refined_tokens(reference)
    if not pred or not ref:
        return 0.0
    precision = _overlap(pred, ref) / len(pred)
    penalty = math.exp(1.0 - len(ref) / len(pred)) if len(pred) < len(ref) else 1.0
    return penalty * precision


def refined_prediction(text: str) -> str:
    """The answer the evaluator reads: stripped; the last \\boxed{...} if any, else what
    follows "final answer:" (any case), then what follows "</think>"."""
    cleaned = (text or "").strip()
    boxed = _last_boxed(cleaned)
    if boxed is not None:
        return boxed
    at = cleaned.lower().find("final answer:")
    if at >= 0:
        cleaned = cleaned[at + len("final answer:"):].strip()
    return cleaned.split("</think>", 1)[1].strip() if "</think>" in cleaned else cleaned


def _last_boxed(text: str):
    found = None
    for match in re.finditer(r"\\box(?:ed)?\{", text):
        depth, start = 0, match.end()
        for i in range(match.end() - 1, len(text)):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            if depth == 0:
                break
        found = text[start:i if depth == 0 else len(text)].strip()
    return found


def refined_scores(prediction: str, answers: Sequence[str]) -> dict:
    """LoCoMo-Refined's `--metrics f1 bleu` for one answer against its gold candidates.

    As its `_evaluate_candidates`: a prediction equal to a candidate scores 1.0 and 1.0;
    an empty one 0.0; otherwise the candidate with the best (F1, BLEU) pair, first on ties,
    gives both numbers, so BLEU is that candidate's, not the best BLEU over candidates.
    `refined_scores("last year", ["2022", "last year"])` == {"refined_f1": 1.0, "refined_bleu": 1.0}
    """
    prediction = refined_prediction(prediction)
    candidates = [str(a) for a in answers if a not in (None, "")] or [""]
    if prediction in candidates:
        return {"refined_f1": 1.0, "refined_bleu": 1.0}
    if not prediction or not any(candidates):
        return {"refined_f1": 0.0, "refined_bleu": 0.0}
    f1, bleu = max((refined_f1(prediction, c), refined_bleu1(prediction, c)) for c in candidates)
    return {"refined_f1": f1, "refined_bleu": bleu}



def refined_row(prediction: str, answers: Sequence[str], abstention: bool) -> dict:
    """A LoCoMo result row's `refined_f1` and `refined_bleu`; None for adversarial questions,
    which LoCoMo-Refined dropped (their gold is a refusal, not an answer to compare)."""
    if abstention:
        return {"refined_f1": None, "refined_bleu": None}
    return refined_scores(prediction, answers)
