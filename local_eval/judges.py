"""LLM judges: pure functions of (question, gold, answer, type) plus one LLM call each.

Prompts are files in local_eval/prompts/ (our own words), rendered strictly, judged at
temperature 0 (every backend decodes greedily); which set judges a benchmark is its
declaration's `judge` (benchmarks.py):
  longmemeval  per-type yes/no rules: knowledge-update accepts the old value beside the
               new; temporal tolerates off-by-one counts of days/weeks/months; preference
               questions are judged against a rubric; abstention is right when the
               response says the information is missing
  locomo       LoCoMo-Refined's strict rule: all required information, nothing
               unsupported, the gold answer's time granularity; adversarial = abstention.
               Several acceptable answers (LoCoMo-Refined's gold lists) are all shown in
               one prompt, any one sufficing; the release's own evaluator instead asks once
               per candidate and keeps the best verdict (one call here instead of several)
  gigamemory   binary, Russian: the answer means the same as the gold for this question
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Optional, Sequence

import jinja2
import yaml

PROMPTS = Path(__file__).resolve().parent / "prompts"
_ENV = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False)


SMALL_MODEL_NOTE = ("small-model judge: a local CPU model (llama:) reads the verdicts; it misjudges "
                    "paraphrases and abstentions now and then, so its scores are a check, not a number to publish")


def small_model(spec: Optional[str]) -> bool:
    """A judge spec that runs the local CPU model, also inside cache:/split: (`cache:DIR+llama:M`)."""
    from . import specs
    try:
        return spec is not None and specs.uses_local_model(specs.parse(spec))
    except specs.SpecError:  # a merged run's `store:DIR`: replies from a store, no model
        return False


@dataclass(frozen=True)
class Item:
    question: str
    gold: str
    answer: str
    question_type: str
    abstention: bool = False
    golds: tuple = ()  # every acceptable answer when there are several; empty = (gold,)


@lru_cache(maxsize=None)
def _templates(benchmark: str) -> dict:
    raw = yaml.safe_load((PROMPTS / f"judge_{benchmark}.yaml").read_text(encoding="utf-8"))
    return {name: _ENV.from_string(text) for name, text in raw.items()}


def rule_for(benchmark: str, item: Item) -> str:
    """Which rule judges the item: the abstention rule, its type's own, or the default."""
    templates = _templates(benchmark)
    if item.abstention:
        for name in ("abstention", "adversarial"):
            if name in templates:
                return name
    return item.question_type if item.question_type in templates else "default"


def judge_prompt(benchmark: str, item: Item) -> list:
    """The one-message chat a judge model sees for an item."""
    template = _templates(benchmark)[rule_for(benchmark, item)]
    text = template.render(question=item.question, gold=item.gold, golds=list(item.golds or (item.gold,)),
                           answer=item.answer).strip()
    return [{"role": "user", "content": text}]


def parse_verdict(reply: str) -> Optional[bool]:
    """yes/да -> True, no/нет -> False, anything else -> None (counted as wrong, and reported)."""
    words = re.findall(r"[a-zа-яё]+", (reply or "").lower())
    for word in words[:5]:
        if word in ("yes", "да", "верно", "correct"):
            return True
        if word in ("no", "нет", "неверно", "incorrect"):
            return False
    return None


def judge(llm, benchmark: str, items: Sequence[Item], retries: int = 2) -> list[Optional[bool]]:
    """Verdicts for a batch; an unparsable reply is asked again, then left as None."""
    verdicts: list[Optional[bool]] = [None] * len(items)
    todo = list(range(len(items)))
    for _ in range(1 + retries):
        if not todo:
            break
        replies = llm.generate([judge_prompt(benchmark, items[i]) for i in todo], max_tokens=5)
        for i, reply in zip(todo, replies):
            verdicts[i] = parse_verdict(reply.text)
        todo = [i for i in todo if verdicts[i] is None]
    return verdicts
