"""The timing profile: every answer_time split into stages, and a projection of the hidden
set's total time against the contest's 7-hour limit.

Stages come from DialogueMemory.timings (seconds per stage, per dialogue): write,
extract, index, embed, retrieve, pack, answer, shorten (with --shorten on); "other" is
answer_time minus their sum.
The projection moves with what the times were measured under: a cold embedding cache
embeds every turn (a warm one embeds none), and a machine shared with other work runs
slower. `measured_under` says both: the cache's hit rate over the rows and the machine's
mean load per core. The 7 hours are the contest's, on its GPU: `projection_note` says the
projection is that budget measured on this machine's backend, and leaves it out for a local
CPU model, whose minutes a dialogue say nothing about the contest's run. Pure functions over
result rows; called by summary.py and report.py.
"""
from __future__ import annotations

import os

from submit.memory.budget import BudgetSettings

STAGES = ("write", "extract", "index", "embed", "retrieve", "pack", "answer", "shorten", "other")
LIMIT_SECONDS = 7 * 3600


def percentile(values: list, q: float) -> float:
    """Nearest-rank percentile: `percentile([1, 2, 3, 4], 0.5)` == 2."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, int(-(-q * len(ordered) // 1)))  # ceil(q * n), at least 1
    return ordered[min(rank, len(ordered)) - 1]


def stage_times(row: dict) -> dict:
    timings = dict((row.get("stats") or {}).get("timings") or {})
    out = {s: float(timings.get(s, 0.0)) for s in STAGES if s != "other"}
    out["other"] = max(0.0, float(row["answer_time"]) - sum(out.values()))
    return out


# A `llama:` call the memo answers takes microseconds; one the model reads, seconds on a CPU.
MEMO_CALL_S = 0.05


def memo_hit(row: dict) -> bool:
    """Whether the row's extraction came from a `llama:` memo (its dialogue extracted for an earlier
    question): under MEMO_CALL_S a call."""
    calls = row.get("stats", {}).get("llm", {}).get("by_purpose", {}).get("extract", {}).get("calls", 0)
    return bool(calls) and stage_times(row)["extract"] / calls < MEMO_CALL_S


def profile(rows: list, project_n: int = BudgetSettings().expected_dialogues, memo: bool = False) -> dict:
    """Stages, answer_time and the projection. With `memo` (a llama: model that keeps its replies),
    the extract stage is over the records that ran extraction; `extract_memo_hits` counts the others."""
    per_stage = {s: [stage_times(r)[s] for r in rows] for s in STAGES}
    hits = [r for r in rows if memo and memo_hit(r)]
    if hits:
        per_stage["extract"] = [stage_times(r)["extract"] for r in rows if not memo_hit(r)]
    totals = [float(r["answer_time"]) for r in rows]
    mean = sum(totals) / len(totals) if totals else 0.0
    projected = mean * project_n
    return {
        "stages": {s: {"p50": round(percentile(v, 0.5), 4), "p90": round(percentile(v, 0.9), 4),
                       "max": round(max(v, default=0.0), 4), "mean": round(sum(v) / len(v), 4) if v else 0.0}
                   for s, v in per_stage.items()},
        "answer_time": {"p50": round(percentile(totals, 0.5), 3), "p90": round(percentile(totals, 0.9), 3),
                        "max": round(max(totals, default=0.0), 3), "mean": round(mean, 3)},
        "projection": {"dialogues": project_n, "seconds": round(projected, 1),
                       "hours": round(projected / 3600, 2), "limit_hours": LIMIT_SECONDS / 3600,
                       "fits": projected <= LIMIT_SECONDS},
        "measured_under": measured_under(rows),
        "extract_memo_hits": len(hits),
    }


def uses_memo(llm_spec: str) -> bool:
    """A `llama:` model in the spec that keeps its replies (`memo=1`, its default)."""
    from . import specs
    try:
        return any(s.kind == "llama" and dict(s.options).get("memo", "1") != "0"
                   for s in specs.walk(specs.parse(llm_spec)))
    except specs.SpecError:
        return False


def extract_note(prof: dict) -> str:
    """Under the stage table: which records the extract stage is over ('' when all)."""
    hits = prof.get("extract_memo_hits", 0)
    return (f"extract: over the records that ran extraction; {hits} more reused their dialogue's extraction "
            "from the llama memo (an earlier question of the same dialogue) and are left out of it") if hits else ""


def projection_note(prof: dict, llm_spec: str) -> str:
    """The projection in words, or why there is none: `projected 1.12 h for 1000 dialogues against the
    contest's 7 h on its GPU (fits), measured here with --llm openai:...` (not for a llama: model)."""
    from . import specs
    try:
        local = specs.uses_local_model(specs.parse(llm_spec))
    except specs.SpecError:
        local = False
    if local:
        return (f"no projection against the contest's {LIMIT_SECONDS // 3600} h: --llm {llm_spec} is a local CPU "
                "model, not the contest's GPU backend")
    proj = prof["projection"]
    return (f"projected {proj['hours']} h for {proj['dialogues']} dialogues against the contest's "
            f"{proj['limit_hours']:.0f} h on its GPU ({'fits' if proj['fits'] else 'does not fit'}), measured on "
            f"this machine with --llm {llm_spec} and {describe(prof.get('measured_under', {}))} (a colder cache "
            "or a busier machine gives more)")


def measured_under(rows: list) -> dict:
    """The embedding cache's hit rate over the rows (None: no cache, or rows from before this was
    recorded) and the mean load per core while they ran (None likewise), and this machine's cores."""
    seen = [r["conditions"] for r in rows if r.get("conditions")]
    cached = [c for c in seen if c["embed_cache_hits"] is not None]
    looked = sum(c["embed_cache_hits"] + c["embed_cache_misses"] for c in cached)
    hit_rate = round(sum(c["embed_cache_hits"] for c in cached) / looked, 3) if looked else None
    load = round(sum(c["load_per_core"] for c in seen) / len(seen), 2) if seen else None
    return {"embed_cache_hit_rate": hit_rate, "load_per_core": load, "cores": os.cpu_count()}


def describe(under: dict) -> str:
    """`embedding cache 3% warm, load 1.9 per core on 2 cores`: what moves the projection."""
    rate = under.get("embed_cache_hit_rate")
    cache = "no embedding cache" if rate is None else f"embedding cache {rate:.0%} warm"
    load = under.get("load_per_core")
    return f"{cache}, load {'unknown' if load is None else load} per core on {under.get('cores')} cores"
