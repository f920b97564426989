"""The benchmarks local_eval runs, one declaration each: everything the other modules ask of one.

    benchmarks.get("locomo").judge == "locomo"
    benchmarks.load("longmemeval", "../shared/data/longmemeval/longmemeval_s_dev.json.gz")

A declaration names the benchmark's adapter (`tasks/<name>.py`), the fields every item of
its file has, its judge prompts, the answer budget and shorten step it runs with unless
told otherwise, its question types, the scores its rows carry beyond the lexical ones and
its own prediction file. Read by `run.py` (choices, defaults, help), `datafile.py` (format,
fields), `scoring.py` (judge, extra scores), `results.py` (official files) and `bench/`.

Adding a benchmark: its adapter in `tasks/`, one declaration below, and a judge prompt
file `prompts/judge_<judge>.yaml` if none of the present ones fits.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from submit.config import Config

from . import metrics
from .tasks import gigamemory, locomo, locomo_refined, longmemeval

DEMO = Path(__file__).resolve().parent / "data" / "demo" / "questions.jsonl"
# LoCoMo-Refined's qa_id (tasks/locomo_refined.py): only runs on its questions file have one.
REFINED_QA_ID = re.compile(r".+#q\d{4,}")


@dataclass(frozen=True)
class Official:
    """A benchmark's own prediction file: `line(row)` for each result row it takes, else None."""
    name: str
    line: Callable[[dict], Optional[dict]]


@dataclass(frozen=True)
class Benchmark:
    name: str
    load: Callable[[str], list]  # the file's records (`tasks/<name>.py`)
    fields: tuple  # what every top-level item has; a tuple inside means "one of these"
    types: tuple  # its question types, as records name them
    judge: str  # its judge prompts: prompts/judge_<judge>.yaml
    json_lines: bool = False  # one item per line; else one JSON document (.gz allowed)
    context_chars: int = Config().memory.context_chars  # the answer budget without --context-chars
    shorten: bool = False  # the shorten step without --shorten
    scores: Optional[Callable] = None  # more scores per row: (answer, golds, abstention) -> dict
    official: Optional[Official] = None  # its own prediction file, beside the contest's two
    questions: Optional[Callable] = None  # (path, questions_path) -> records: --refined
    data: Optional[Path] = None  # the shipped file of a benchmark that takes no --data


def _hypothesis(row: dict) -> dict:
    return {"question_id": row["id"], "hypothesis": row["answer"]}


def _prediction(row: dict) -> Optional[dict]:
    # ids of the original LoCoMo file ("conv-26_q0") are not qa_ids: its evaluator would refuse them
    if not REFINED_QA_ID.fullmatch(row["id"]):
        return None
    return {"qa_id": row["id"], "predicted_answer": row["answer"]}


_CONTEST = dict(load=gigamemory.load, fields=("id", "question", "question_type", "ans", ("sessions", "dialogue_id")),
                types=("fact_equal_session", "info_consolidation", "info_updating", "no_info"),
                judge="gigamemory", json_lines=True)

BENCHMARKS = {b.name: b for b in (
    # the shipped Russian sample: the contest's format, its own file
    Benchmark("demo", data=DEMO, **_CONTEST),
    Benchmark("gigamemory", **_CONTEST),
    Benchmark("longmemeval", load=longmemeval.load, judge="longmemeval",
              fields=("question_id", "question_type", "question", "answer", "haystack_session_ids",
                      "haystack_sessions"),
              types=("single-session-user", "single-session-assistant", "single-session-preference",
                     "multi-session", "knowledge-update", "temporal-reasoning"),
              official=Official("hypotheses.jsonl", _hypothesis)),
    # 16000 characters: chosen from measured answer accuracy and evidence recall (docs/evaluating.md)
    Benchmark("locomo", load=locomo.load, judge="locomo", fields=("sample_id", "conversation", "qa"),
              types=tuple(locomo.CATEGORIES.values()), context_chars=16000, scores=metrics.refined_row,
              official=Official("predictions.jsonl", _prediction), questions=locomo_refined.load),
)}


def get(name: str) -> Benchmark:
    """The declaration of `name`; ValueError naming the known ones."""
    if name not in BENCHMARKS:
        raise ValueError(f"unknown dataset {name!r}; choose one of {', '.join(BENCHMARKS)}")
    return BENCHMARKS[name]


def load(name: str, path: Optional[str] = None, refined: Optional[str] = None) -> list:
    """Records of a benchmark's file: `load("gigamemory", "format_example.jsonl")`, `load("demo")`.

    `refined` (LoCoMo only): LoCoMo-Refined's `questions.jsonl`; the questions come from it,
    the conversations from `path` (`load("locomo", "locomo10.json", "questions.jsonl")`)."""
    benchmark = get(name)
    path = path or (str(benchmark.data) if benchmark.data else None)
    if not path:
        raise ValueError(f"--dataset {name} needs --data PATH")
    if refined:
        if benchmark.questions is None:
            raise ValueError(f"--refined is LoCoMo-Refined's questions.jsonl: it goes with --dataset locomo, "
                             f"not {name}")
        return benchmark.questions(path, refined)
    return benchmark.load(path)
