"""How many relative time phrases `submit/memory/timeref.py` finds and resolves on real chats.

    .venv/bin/python bench/timeref.py                 # writes bench/results/timeref.{md,json}
    .venv/bin/python bench/timeref.py --sample 100    # also lists 100 random brackets to check by hand

Turns: every LoCoMo dev turn (session date "1:56 pm on 8 May, 2023") and the user turns of
the first 50 LongMemEval_S dev haystacks, each session once ("2023/05/20 (Sat) 01:45").
A broader candidate regex (`CANDIDATE`) marks what might be a time reference; a candidate
the resolver brackets is resolved, one it finds but leaves alone on purpose is "left
unresolved", one it does not find is "missed". The 30 most frequent unresolved and missed
phrases show what is left to do. Then LoCoMo's temporal questions (category 2): how often
the gold answer appears inside the evidence turns, raw vs annotated.
"""
from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from submit.memory import timeref as T

ROOT = Path(__file__).resolve().parent.parent

DATA = ROOT.parent / "shared" / "data"
LOCOMO = DATA / "locomo/locomo10_dev.json"
LONGMEMEVAL = DATA / "longmemeval/longmemeval_s_dev.json.gz"
WEEKDAYS = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
CANDIDATE = re.compile(
    r"\b(?:(?:[\w-]+\s+){1,3}ago|(?:last|next|this|past|coming|previous)\s+(?:\w+\s+)?"
    rf"(?:week|weekend|month|year|night|morning|afternoon|evening|summer|winter|spring|fall|autumn|{WEEKDAYS})s?"
    r"|yesterday|tomorrow|tonight|today|recently|lately|the other day"
    r"|(?:in|within|past|next|coming)\s+(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|an?|few|a\s+few"
    r"|couple|a\s+couple|several|the\s+(?:past|next|last|coming))(?:\s+of)?\s+(?:\w+\s+)?"
    r"(?:days?|weeks?|months?|years?)"
    r"|(?:\w+\s+){1,2}(?:days?|weeks?|months?|years?)\s+from\s+now)\b",
    re.I)


@dataclass(frozen=True)
class DatedTurn:
    source: str  # "LoCoMo dev" | "LongMemEval_S dev"
    date: str
    text: str
    dia_id: str = ""


def locomo_turns(path: Path) -> tuple:
    """Every turn with its session date, and the category-2 QA items with their conversation's turns."""
    turns, questions = [], []
    for conv in json.loads(path.read_text()):
        c = conv["conversation"]
        by_id = {}
        for key, session in c.items():
            if key.startswith("session_") and isinstance(session, list):
                for t in session:
                    turn = DatedTurn("LoCoMo dev", c.get(f"{key}_date_time", ""), t.get("text", ""), t["dia_id"])
                    turns.append(turn)
                    by_id[t["dia_id"]] = turn
        questions += [(qa, by_id) for qa in conv["qa"] if qa.get("category") == 2]
    return turns, questions


def longmemeval_turns(path: Path, n_questions: int) -> list:
    turns, seen = [], set()
    for item in json.load(gzip.open(path, "rt"))[:n_questions]:
        for sid, day, session in zip(item["haystack_session_ids"], item["haystack_dates"], item["haystack_sessions"]):
            if sid in seen:
                continue
            seen.add(sid)
            turns += [DatedTurn("LongMemEval_S dev", day, t["content"]) for t in session if t["role"] == "user"]
    return turns


def classify(turn: DatedTurn, counts: Counter, unresolved: Counter, missed: Counter, resolved: Counter) -> None:
    """Count the resolver's mentions and the candidates it resolved, left alone or missed."""
    day = T.parse_session_date(turn.date)
    counts["turns"] += 1
    counts["undated turns"] += day is None
    mentions = T.find_relative(turn.text, "en")
    spans = []
    for m in mentions:
        when = T.resolve(m.ref, day) if m.ref and day else None
        spans.append((m.start, m.end, when is not None))
        counts["found"] += 1
        counts["resolved"] += when is not None
        (resolved if when else unresolved)[m.phrase.lower()] += 1
    for c in CANDIDATE.finditer(turn.text):
        hit = [ok for start, end, ok in spans if start < c.end() and c.start() < end]
        counts["candidates"] += 1
        if not hit:
            counts["candidates missed"] += 1
            missed[c.group(0).lower()] += 1


def measure(turns: list) -> dict:
    counts, unresolved, missed, resolved = Counter(), Counter(), Counter(), Counter()
    start = time.perf_counter()
    for turn in turns:
        T.annotate(turn.text, turn.date, "en")
    seconds = time.perf_counter() - start
    for turn in turns:
        classify(turn, counts, unresolved, missed, resolved)
    chars = sum(len(t.text) for t in turns)
    return {"counts": dict(counts), "chars": chars, "annotate_s": round(seconds, 2),
            "unresolved": unresolved.most_common(30), "missed": missed.most_common(30),
            "resolved": resolved.most_common(30)}


def _norm(text: str) -> str:
    """Lowercase, punctuation gone, "February 24 2023" as "24 february 2023": the gold's many spellings."""
    text = re.sub(r"[^\w\s]", " ", text.lower())
    months = "|".join(m.lower() for m in T.MONTHS_EN)
    text = re.sub(rf"\b({months})\s+(\d{{1,2}})\s+(\d{{4}})\b", r"\2 \1 \3", text)
    return " ".join(text.split())


ANCHORED = re.compile(r"^\s*(?P<which>the|two)\s+(?P<what>\w+?)s?\s+(?P<rel>before|of|after)\s+(?P<day>.+?)\.?\s*$",
                      re.I)


def anchored_ref(gold: str):
    """The Ref and date behind a gold phrased against the session date: "The Friday before 15 July 2023"."""
    m = ANCHORED.match(gold)
    day = T.parse_session_date(re.sub(r"(\d)([A-Za-z])", r"\1 \2", m.group("day"))) if m else None
    if day is None:
        return None
    what, rel, n = m.group("what").lower(), m.group("rel").lower(), 2 if m.group("which").lower() == "two" else 1
    if rel == "before":
        table = {"week": T.Ref("week_of", -n, -n, True) if n > 1 else T.Ref("week", -1, -1, True),
                 "weekend": T.Ref("weekend", -n, -n)}
        weekday = next((i for i, k in enumerate(T.WEEKDAY_KEYS) if what.startswith(k) and what.endswith("day")), None)
        ref = T.Ref("weekday", -1, -1, False, weekday) if weekday is not None and what != "weekend" else table.get(what)
    else:  # "the week of D", "the weekend of / after D"
        ref = {"week": T.Ref("week", 0, 0), "weekend": T.Ref("weekend", 0, 0)}.get(what)
    return (ref, day) if ref else None


def gold_in_evidence(questions: list) -> dict:
    """LoCoMo category 2: is the gold answer inside the evidence turns, raw vs annotated?"""
    out = Counter()
    for qa, by_id in questions:
        turns = [by_id[e.strip()] for e in qa["evidence"] if e.strip() in by_id]
        gold = str(qa["answer"]).strip()
        raw = " ".join(t.text for t in turns)
        annotated = " ".join(T.annotate(t.text, t.date, "en") for t in turns)
        out["questions"] += 1
        out["raw verbatim"] += gold.lower() in raw.lower()
        out["annotated verbatim"] += gold.lower() in annotated.lower()
        out["raw normalized"] += _norm(gold) in _norm(raw)
        out["annotated normalized"] += _norm(gold) in _norm(annotated)
        relative_gold = re.search(r"\b(?:before|of|after)\s+\d{1,2}\s*\w+", gold, re.I) is not None
        out["gold relative to the session date"] += relative_gold
        out["evidence got a bracket"] += annotated != raw
        anchored = anchored_ref(gold) if relative_gold else None
        if anchored:
            out["relative gold, parsed"] += 1
            out["relative gold, same dates in a bracket"] += f"[{T.render(T.resolve(*anchored), 'en')}]" in annotated
        out["relative gold, evidence got a bracket"] += relative_gold and annotated != raw
    return dict(out)


def sample_brackets(turns: list, n: int, seed: int = 0) -> list:
    """n random resolved phrases with 60 characters either side, to check by hand."""
    found = []
    for turn in turns:
        day = T.parse_session_date(turn.date)
        for m in T.find_relative(turn.text, "en"):
            when = T.resolve(m.ref, day) if m.ref and day else None
            if when:
                end = m.end + 2 if turn.text[m.end:m.end + 2] in ("'s", "’s") else m.end  # as annotate puts it
                found.append((turn, m.start, end, T.render(when, "en")))
    picked = random.Random(seed).sample(found, min(n, len(found)))
    return [f"{t.date} | …{_flat(t.text[max(0, start - 60):start])}**{t.text[start:end]} [{bracket}]**"
            f"{_flat(t.text[end:end + 60])}…" for t, start, end, bracket in picked]


def _flat(text: str) -> str:
    return " ".join(text.split()).replace("|", "/")


def table(results: dict, qa: dict) -> str:
    head = ["set", "turns", "chars", "phrases found", "resolved", "left unresolved", "candidates",
            "candidates missed", "annotate s"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, r in results.items():
        c = r["counts"]
        lines.append(f"| {name} | {c['turns']} | {r['chars']} | {c.get('found', 0)} | {c.get('resolved', 0)} | "
                     f"{c.get('found', 0) - c.get('resolved', 0)} | {c.get('candidates', 0)} | "
                     f"{c.get('candidates missed', 0)} | {r['annotate_s']} |")
    n = qa["questions"]
    lines += ["", f"LoCoMo dev temporal questions (category 2, n = {n}): gold answer inside the evidence turns",
              "", "| match | raw turns | annotated turns |", "|---|---|---|",
              f"| verbatim (case-insensitive) | {qa['raw verbatim']} ({qa['raw verbatim'] / n:.3f}) | "
              f"{qa['annotated verbatim']} ({qa['annotated verbatim'] / n:.3f}) |",
              f"| normalized (punctuation, \"May 8\" order) | {qa['raw normalized']} "
              f"({qa['raw normalized'] / n:.3f}) | "
              f"{qa['annotated normalized']} ({qa['annotated normalized'] / n:.3f}) |",
              "", f"Evidence that got at least one bracket: {qa['evidence got a bracket']} of {n}; golds phrased "
              f"relative to the session date (\"The week before 9 June 2023\"), which no bracket can hold "
              f"verbatim: {qa['gold relative to the session date']} (their evidence bracketed: "
              f"{qa['relative gold, evidence got a bracket']}). Read with this module's conventions, "
              f"{qa.get('relative gold, parsed', 0)} of those golds parse (\"the Friday / weekend / week before D\", "
              f"\"two weeks before D\", \"the week of D\"), and for "
              f"{qa.get('relative gold, same dates in a bracket', 0)} "
              f"the evidence holds a bracket with exactly those dates."]
    return "\n".join(lines)


# Why a phrase stays without a bracket: what the unresolved and missed lists show, first match wins.
REASONS = (
    (r"^(?:next|this) (?:summer|winter|spring|fall|autumn)",
     "ambiguous: the season under way is not begun, or is as near as the last one"),
    (r"seconds|minutes|hours", "shorter than a day"),
    (r"^within|^in (?:a|an|a few|one|two|three|six|\d+) (?:day|week|month)s?$",
     "a duration or a deadline: \"within 5 days\", \"5 flights in 2 months\", \"haven't talked in a few days\""),
    (r"^coming", "without \"in/over the\": not read as a span"),
    (r"\d{4,} years ago|hundred|thousand", "no calendar date (or historical)"),
    (r"^today$", "generic use, rejected by a guard: \"in today's world\", \"still relevant today\""),
    (r"^yesterday$", "in quotes: the song \"Yesterday\", “Yesterday’s slang term…”"),
    (r"^last (?:month|week|night|two years)$",
     "after a determiner or before \"of/before\": \"that last month refers to\", \"our last night together\""),
    (r"so long ago|previous year|next morning", "relative to a narrated time, not the session"),
    (r"financial|new month|simple morning", "not a time reference"),
)


def reason(phrase: str) -> str:
    return next((why for pattern, why in REASONS if re.search(pattern, phrase)), "")


def phrase_lists(results: dict) -> str:
    lines = []
    for name, r in results.items():
        for key, title in (("missed", "candidates the resolver does not find"),
                           ("unresolved", "phrases found and left unresolved on purpose"),
                           ("resolved", "phrases resolved")):
            lines += ["", f"### {name}: {title} (30 most frequent)", ""]
            rows = [(f"- {count} × `{_flat(phrase)}`", reason(_flat(phrase)) if key != "resolved" else "")
                    for phrase, count in r[key]]
            lines += [f"{row} — {why}" if why else row for row, why in rows] or ["- none"]
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--locomo", default=str(LOCOMO))
    p.add_argument("--longmemeval", default=str(LONGMEMEVAL))
    p.add_argument("--questions", type=int, default=50, help="LongMemEval haystacks to read")
    p.add_argument("--sample", type=int, default=0, help="list this many random brackets")
    p.add_argument("--out", default=str(ROOT / "bench/results/timeref.md"))
    args = p.parse_args(argv)
    for path in (args.locomo, args.longmemeval):
        if not Path(path).is_file():
            print(f"timeref: no such file: {path}", file=sys.stderr)
            return 2
    locomo, questions = locomo_turns(Path(args.locomo))
    sets = {"LoCoMo dev": locomo, "LongMemEval_S dev": longmemeval_turns(Path(args.longmemeval), args.questions)}
    results = {name: measure(turns) for name, turns in sets.items()}
    qa = gold_in_evidence(questions)
    text = table(results, qa) + "\n" + phrase_lists(results) + "\n"
    if args.sample:
        text += f"\n### {args.sample} random brackets (both sets)\n\n"
        picked = sample_brackets(locomo + sets["LongMemEval_S dev"], args.sample)
        text += "\n".join(f"{i + 1}. {line}" for i, line in enumerate(picked)) + "\n"
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    command = ".venv/bin/python bench/timeref.py" + (f" --sample {args.sample}" if args.sample else "")
    out.write_text(f"# Relative time phrases\n\n`{command}`\n\n" + text)
    summary = {"sets": results, "locomo_category2": qa}
    out.with_suffix(".json").write_text(json.dumps(summary, indent=1, ensure_ascii=False))
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
