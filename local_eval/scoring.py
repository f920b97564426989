"""One result row per record: the record through the contest harness, scored, and whether it
is complete.

A row holds the answer, the lexical scores (and the benchmark's own, its declaration's
`scores`), the judge's verdict, whether the packed context held the evidence, the
fallbacks and the submission's stats. A row whose answer did not come from the LLM (a
failure, a batch-mode placeholder) or whose judge failed is `"complete": false`, with
`"incomplete"` naming why; `"conditions"` says what its time was measured under (the
embedding cache's hits and misses, the machine's load). Called by run.py for every record.
"""
from __future__ import annotations

import os
from collections import Counter

from submit.fallbacks import FAILED  # the submission's own list: an answer that did not come from the LLM

from . import benchmarks, harness, judges, metrics, retrieval_eval
from .llms import store as llm_store
from .submission import LLM_FAILED  # another submission's record whose --llm failed


def run_one(record, model, judge_llm, options) -> dict:
    """One record through the harness, scored; `complete` is False when its answer did not come
    from the LLM (a failure, or a batch-mode placeholder), and `incomplete` says why."""
    for llm in (model.llm, judge_llm):
        llm_store.next_record(llm)
    before, asked = Counter(model.fallbacks), llm_store.placeholders(model.llm)
    cache = _cache_counts(model.embedder)
    if hasattr(model, "run_record"):  # another submission, in its own process (local_eval/submission.py)
        result = model.run_record(record)
    else:
        result = harness.run_record(model, record, use_dates=not options.no_dates)
    delta = dict(Counter(model.fallbacks) - before)
    why = [k for k in (*FAILED, LLM_FAILED) if k in delta]
    if llm_store.placeholders(model.llm) > asked:
        why.append("pending_reply")
    judged = llm_store.placeholders(judge_llm)
    benchmark = benchmarks.get(options.dataset)
    row = score(record, result, delta, None if why else judge_llm, benchmark)  # a failed answer is not judged
    if llm_store.placeholders(judge_llm) > judged:
        why.append("pending_judge_reply")
    if row["judge_error"]:
        why.append("judge_failed")
    return {**row, "conditions": conditions(model.embedder, cache), "complete": not why, "incomplete": why}


def _cache_counts(embedder) -> tuple:
    """(hits, misses) of the embedding cache so far; (None, None) without one (--cache-dir '')."""
    return getattr(embedder, "hits", None), getattr(embedder, "misses", None)


def conditions(embedder, before: tuple) -> dict:
    """What the record's time was measured under: the embedding cache's hits and misses during
    it, and the machine's load per core as it ended (1-minute average, this run included)."""
    after = _cache_counts(embedder)
    hits, misses = (None, None) if after[0] is None else (after[0] - before[0], after[1] - before[1])
    return {"embed_cache_hits": hits, "embed_cache_misses": misses,
            "load_per_core": round(os.getloadavg()[0] / (os.cpu_count() or 1), 2)}


def score(record, result, fallbacks: dict, judge_llm, benchmark: benchmarks.Benchmark) -> dict:
    """One result row: answer, lexical scores, judge verdict, evidence in context, stats."""
    lexical = metrics.lexical_score(result.answer, record.golds, record.abstention)
    verdict, judge_error = verdict_of(record, result.answer, judge_llm, benchmark.judge)
    own = benchmark.scores(result.answer, record.golds, record.abstention) if benchmark.scores else {}
    return {"id": record.id, "question_type": record.question_type, "question": record.question,
            "gold": record.gold, "answer": result.answer, "answer_time": result.answer_time,
            "abstention": record.abstention, "f1": lexical["f1"], "em": lexical["em"],
            "lexical_correct": lexical["correct"], "judge": verdict, **own,
            "correct": float(bool(verdict)) if judge_llm is not None else lexical["correct"],
            "evidence_in_context": evidence_in_context(record, result), "fallbacks": fallbacks,
            "judge_error": judge_error, "stats": result.stats or {}}


def verdict_of(record, answer: str, judge_llm, prompts: str) -> tuple:
    """(verdict, error): the judge's True/False/None, or why it failed; (None, None) without a judge."""
    from submit.memory.llm import StopRun
    if judge_llm is None:
        return None, None
    item = judges.Item(record.question, record.gold, answer, record.question_type, record.abstention,
                       golds=record.golds)
    try:
        return judges.judge(judge_llm, prompts, [item])[0], None
    except StopRun:
        raise
    except Exception as error:  # a judge server that went down: this row is not finished
        return None, f"{type(error).__name__}: {str(error)[:200]}"


def evidence_in_context(record, result):
    """1.0 / 0.0: every evidence turn inside the packed context; None without evidence to find, or
    without a context to look in (another submission's, which gives no trace)."""
    if result.trace is None:
        return None
    _, origins = harness.flatten(record)
    units = harness.evidence_positions(record, origins)
    held = result.trace.context.turn_ids
    return retrieval_eval.evidence_recall(units, held) if units and not record.abstention else None
