"""Retrieval-only evaluation (`run.py --mode retrieval`): is the evidence in the context?

For each record the dialogue goes through the same memory code as the contest (turn
store, index, fused ranking, context packing), with no LLM. Metrics, per record:
  session_recall_all@k   every evidence session among the k best-ranked sessions
  evidence_recall@Nc     every evidence unit inside the context packed at N characters
Abstention records (no evidence by definition) are left out. Each record also keeps where
its evidence ranked (`EvidenceRank`), which `report.write_retrieval` lists for the misses.
"""
from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass
from typing import Optional

from local_eval import harness

BUDGETS = (4000, 8000, 16000, 32000)
SESSION_KS = (5, 10)
METRICS = tuple(f"session_recall_all@{k}" for k in SESSION_KS) + tuple(
    f"evidence_recall@{b}c" for b in BUDGETS)


def evidence_recall(units: list, context_ids) -> float:
    """1.0 when every unit (a set of flat positions, any one of which satisfies it) meets the context.

    `evidence_recall([{3}, {7, 8}], {3, 8})` == 1.0; `evidence_recall([{3}], {4})` == 0.0.
    """
    held = set(context_ids)
    return float(all(unit & held for unit in units))


def session_recall_all(evidence_sessions, ranked_sessions: list, k: int) -> float:
    """1.0 when every evidence session is among the first k ranked sessions."""
    return float(set(evidence_sessions) <= set(ranked_sessions[:k]))


@dataclass(frozen=True)
class EvidenceRank:
    """Where one evidence unit landed: "D3:5 rank 41 (session 3: rank 7)"."""
    name: str  # the benchmark's name for it ("D3:5"), else "session 3 #4"
    session_id: str
    rank: Optional[int]  # 1-based rank of its best turn among all ranked turns; None: never ranked
    session_rank: Optional[int]  # 1-based rank of its session; None: the session never ranked
    in_context: bool  # inside the context packed at the scoring budget

    def describe(self) -> str:
        show = lambda r: "not ranked" if r is None else f"rank {r}"  # noqa: E731
        return f"{self.name} {show(self.rank)} (session {self.session_id}: {show(self.session_rank)})"


@dataclass(frozen=True)
class Scored:
    scores: dict  # the six METRICS
    evidence: tuple = ()  # of EvidenceRank, one per evidence unit
    budget: int = 8000  # the context budget `in_context` refers to


@dataclass(frozen=True)
class Measured:
    id: str
    question_type: str
    scores: dict
    index_seconds: float  # 0.0 when the record reused its dialogue's memory
    retrieve_seconds: float
    wall_seconds: float  # index + retrieve, wall clock
    built: bool = True  # False: another record of the same dialogue built the memory
    question: str = ""
    evidence: tuple = ()  # of EvidenceRank

    @property
    def missed(self) -> bool:
        """Some evidence unit is outside the context packed at the scoring budget."""
        return not all(e.in_context for e in self.evidence)


def measure(record, embedder, settings, facts_of=None, memories=None, budget: int = 8000) -> Measured:
    """One record through the memory: write every pair, rank once, pack at every budget.

    `facts_of(record)`, when given, supplies facts (e.g. the LoCoMo oracle's) to the memory.
    `memories` (a dict) lets records of one dialogue share the memory built for the first."""
    start, wall = time.process_time(), time.perf_counter()
    key = dialogue_key(record)
    found = memories.get(key) if memories is not None else None
    memory, origins = found or build(record, embedder, settings, facts_of)
    if memories is not None and found is None:
        memories.clear()  # records come grouped by dialogue: keep one memory, not all of them
        memories[key] = (memory, origins)
    indexed = time.process_time()
    scored = score(record, memory, origins, budget)
    return Measured(record.id, record.question_type, scored.scores, indexed - start, time.process_time() - indexed,
                    time.perf_counter() - wall, built=found is None, question=record.question,
                    evidence=scored.evidence)


def dialogue_key(record) -> tuple:
    """Records with the same key read the same dialogue, so they can share one built memory."""
    return record.dialogue_id, tuple(s.id for s in record.sessions)


def usable(records) -> list:
    """The records these metrics apply to: abstention questions have no evidence to find."""
    return [r for r in records if not r.abstention and r.evidence]


def score(record, memory, origins, budget: int = 8000) -> Scored:
    """The six metrics of one record against its built memory, ranked with `memory.settings`,
    and where each evidence unit ranked (in context or not at `budget` characters)."""
    from submit.memory.answer import detect_lang
    from submit.memory.retrieve import rank_sessions

    memory.store.question_date = record.question_date
    hits = memory.rank(record.question)
    lang = detect_lang(record.question)
    held = {b: memory.packed(hits, lang, b).turn_ids for b in {*BUDGETS, budget}}
    units = harness.evidence_positions(record, origins)
    sessions = rank_sessions(hits, memory.store)
    scores = {f"session_recall_all@{k}": session_recall_all(record.evidence_sessions, sessions, k)
              for k in SESSION_KS}
    scores.update({f"evidence_recall@{b}c": evidence_recall(units, held[b]) for b in BUDGETS})
    turn_rank = {h.turn_idx: i for i, h in enumerate(hits, 1)}
    session_rank = {sid: i for i, sid in enumerate(sessions, 1)}
    in_context = set(held[budget])
    evidence = tuple(evidence_rank(unit, positions, turn_rank, session_rank, in_context)
                     for unit, positions in zip(record.evidence, units))
    return Scored(scores, evidence, budget)


def evidence_rank(unit, positions: set, turn_rank: dict, session_rank: dict, held: set) -> EvidenceRank:
    """The best rank among the turns that satisfy one evidence unit (any one of them does)."""
    ranks = [turn_rank[p] for p in positions if p in turn_rank]
    return EvidenceRank(unit.name(), unit.session_id, min(ranks, default=None),
                        session_rank.get(unit.session_id), bool(positions & held))


def build(record, embedder, settings, facts_of=None):
    """The dialogue's memory with every pair written and every key embedded (no LLM)."""
    from submit.memory.dialogue import DialogueMemory
    from submit.memory.llm import ScriptedLLM

    messages, origins = harness.flatten(record)
    memory = DialogueMemory(ScriptedLLM(), embedder, settings)
    memory.store.session_dates.update({s.id: s.date for s in record.sessions if s.date})
    for pair in harness.pairs(messages):
        memory.write(pair)
    if facts_of is not None:
        memory.add_facts(facts_of(record))
    memory.index_pending()
    return memory, origins


def aggregate(measured: list) -> tuple[dict, dict]:
    """Means overall and per question type, with CPU seconds (indexing: per dialogue built)."""
    def means(rows):
        out = {m: round(sum(r.scores[m] for r in rows) / len(rows), 4) for m in METRICS}
        out["n"] = len(rows)
        built = [r for r in rows if r.built]  # none in a type whose dialogues another type built
        out["cpu_s_index_per_dialogue"] = (round(sum(r.index_seconds for r in built) / len(built), 3)
                                           if built else None)
        out["cpu_s_retrieve_per_question"] = round(sum(r.retrieve_seconds for r in rows) / len(rows), 3)
        out["wall_s_per_question"] = round(sum(r.wall_seconds for r in rows) / len(rows), 3)
        return out
    by_type = defaultdict(list)
    for row in measured:
        by_type[row.question_type].append(row)
    if not measured:
        return {"n": 0}, {}
    return means(measured), {t: means(rows) for t, rows in sorted(by_type.items())}


def build_embedder(spec: str, cache_dir):
    from pathlib import Path
    from submit.config import resolve_embedder
    from submit.memory.embed import CachedEmbedder, make_embedder
    embedder = make_embedder(resolve_embedder(spec))
    if cache_dir:
        embedder = CachedEmbedder(embedder, str(Path(cache_dir) / "embeddings.sqlite"))
    return embedder


def evaluate(records, embedder, settings, progress: bool = True, facts_of=None) -> list:
    """Measured rows of every usable record; `in_context` refers to `settings.context_chars`."""
    from tqdm import tqdm
    memories: dict = {}
    return [measure(r, embedder, settings, facts_of, memories, settings.context_chars)
            for r in tqdm(usable(records), desc="retrieval", unit="q", disable=not progress, dynamic_ncols=True)]


def run(records, options, embedder=None) -> tuple[dict, list]:
    """`run.py --mode retrieval`: the summary ("overall", "by_type") and the Measured rows."""
    embedder = embedder or build_embedder(options.embedder, options.cache_dir)
    settings = options.config().memory
    measured = evaluate(records, embedder, settings)
    overall, by_type = aggregate(measured)
    summary = {"mode": "retrieval", "dataset": options.dataset, "data": options.data,
               "refined": options.refined, "embedder": options.embedder,
               "retrieval_method": settings.retrieve.method, "context_chars": options.context_chars,
               "records": len(records),
               "overall": overall, "by_type": by_type}
    return summary, measured


def explain(records, question_id: str, embedder, settings, top: int = 20) -> list[str]:
    """Why each turn ranked where it did for one question: the `top` best turns and every evidence
    turn, each with its best dense and BM25 key scores, their fusion and what each stage of its
    dialogue's profile added (markdown); the shares add up to the score."""
    from submit.memory.retrieve import rank_sessions
    record = next((r for r in records if r.id == question_id), None)
    if record is None:
        from .errors import UsageError
        raise UsageError(f"--explain {question_id}: no question of that id among the {len(records)} chosen")
    memory, origins = build(record, embedder, settings)
    memory.store.question_date = record.question_date
    hits = memory.rank(record.question, explain=True)
    evidence = {p for unit in harness.evidence_positions(record, origins) for p in unit}
    stages = [name for name, _ in hits[0].shares] if hits else []
    head = ["rank", "turn", "session", "score", "dense cosine", "BM25", *stages, "evidence"]
    lines = [f"# {record.id}: {record.question}", "",
             f"A {memory.profile.kind} chat; sessions ranked: {', '.join(rank_sessions(hits, memory.store)[:10])}", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for rank, hit in enumerate(hits, 1):
        if rank <= top or hit.turn_idx in evidence:
            shares = " | ".join(f"{share:+.3f}" if name != "fused" else f"{share:.3f}" for name, share in hit.shares)
            lines.append(f"| {rank} | {hit.turn_idx} | {memory.store.turns[hit.turn_idx].session_id} | "
                         f"{hit.score:.3f} | {hit.dense:.3f} | {hit.lexical:.2f} | {shares} | "
                         f"{'yes' if hit.turn_idx in evidence else ''} |")
    return lines


def print_table(summary: dict) -> None:
    print(f"\n{summary['dataset']}: retrieval ({summary['retrieval_method']}, embedder="
          f"{summary['embedder']}), {summary['overall'].get('n', 0)} questions with evidence")
    cols = ["n", *METRICS, "cpu_s_index_per_dialogue", "cpu_s_retrieve_per_question", "wall_s_per_question"]
    short = ["n", "sess@5", "sess@10", "ev@4k", "ev@8k", "ev@16k", "ev@32k", "idx s", "ret s", "wall s"]
    print(f"{'question type':<28}" + "".join(f"{c:>9}" for c in short))
    rows = [*summary["by_type"].items(), ("ALL", summary["overall"])]
    for name, m in rows:
        if m.get("n"):
            print(f"{name:<28}" + "".join(f"{'-' if m[c] is None else m[c]:>9}" for c in cols))
