"""What the list join does to the contest's answers, replayed: in each reading, the answers its
joined items change (`cite + calibrated` to `cite + calibrated + list`, joined as the contest class
joins them), by question type, with the verdicts before and after (right to wrong is what the join
costs, wrong to right what it gains); then every changed answer of a question that asks for one
value — an update (`info_updating`), a choice offered (`answer.offered`) or one of several
(`items.ONE_OF_THEM`): issue 59 asks that those never get items appended — and every answer the
join turned wrong. No model is asked.

    .venv/bin/python bench/appended.py                  # the default readings
    .venv/bin/python bench/appended.py --calibration-users  # the 1.5B on users 21-26, where no rule was written
    .venv/bin/python bench/appended.py --reading 'R.jsonl|users_dev:8000|C.jsonl@submit/calibration/ru.c8000.jsonl'

A reading is `READING|PROMPTS|CALIBRATION`, as `bench/ablate.py` takes it: a `bench/readers.py read`
with its `cite` and list rows, the prompts it read, and `READING@SET` of the same reader's
calibration reading.
"""
from __future__ import annotations

import argparse
import sys
from collections import Counter

from bench import readers
from bench.ablate import (CALIBRATION_4K, CALIBRATION_8K, CALIBRATION_VERDICTS, R, VERDICTS, calibration_gold,
                          known_verdicts, with_gold)
from submit.memory import answer as answer_step
from submit.memory import items

BEFORE, AFTER = "cite + calibrated", "cite + calibrated + list"
READINGS = [
    f"{R}/{reader}_{name}_c{chars}.jsonl|{name}:{chars}|{R}/{reader}_calibration_users_c{chars}.jsonl@{calibration}"
    for reader, chars, calibration, names in (
        ("q15", 4000, CALIBRATION_4K, ("users_dev", "ru_dev")),
        ("q15", 8000, CALIBRATION_8K, ("users_dev", "ru_dev", "probe_lists")),
        ("q05", 4000, CALIBRATION_4K, ("users_dev", "ru_dev")),
        ("q05", 8000, CALIBRATION_8K, ("users_dev", "ru_dev")),
        ("fluent", 8000, CALIBRATION_8K, ("users_dev", "ru_dev", "probe_lists", "probe_versions")))
    for name in names
]
# The 1.5B's list asks on the calibration users 21-26 at 8k, recorded beside its calibration reading.
CALIBRATION_READINGS = [f"{R}/q15_calibration_users_c8000.jsonl|{CALIBRATION_8K}|"
                        f"{R}/q15_calibration_users_c8000.jsonl@{CALIBRATION_8K}"]
MOVES = ("right → wrong", "wrong → right", "wrong → wrong", "right → right", "unjudged")


def asks_one(row: dict) -> bool:
    """A question that asks for one value: an update, a choice offered, or one of several."""
    question = row["question"]
    return (row["question_type"] == "info_updating" or len(answer_step.offered(question)) >= 2
            or bool(items.ONE_OF_THEM.search(question)))


def changed(spec: str) -> list[tuple[dict, str, str]]:
    """(row, the answer before the join, after it) for each answer of the reading the join changes; a
    row without its gold takes the calibration question's (`ablate.calibration_gold`)."""
    answers, prompts, calibration = spec.split("|")
    switches, gold = readers.calibrated_switches(calibration)[0], calibration_gold()
    by_row: dict = {}
    for row, way, _, text in readers.answered([answers], "", False, [prompts], switches):
        if way in (BEFORE, AFTER):
            by_row.setdefault((row.get("set"), row["id"]), [with_gold(row, gold), {}])[1][way] = text
    return [(row, found[BEFORE], found[AFTER]) for row, found in by_row.values()
            if AFTER in found and found[AFTER] != found[BEFORE]]


def move(known: dict, row: dict, before: str, after: str) -> str:
    was, now = readers.verdict_of(known, row, before), readers.verdict_of(known, row, after)
    if was is None or now is None:
        return "unjudged"
    return f"{'right' if was else 'wrong'} → {'right' if now else 'wrong'}"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--reading", action="append", help="READING|PROMPTS|CALIBRATION (repeat; default: the local "
                   "readers' and the fluent stand-in's cited readings with list rows)")
    p.add_argument("--calibration-users", action="store_true", help="the 1.5B's list asks on the calibration "
                   "users 21-26 (8k) instead, where no rule was written")
    p.add_argument("--verdicts", help=f"verdict files, comma-separated (default: {VERDICTS}; with "
                   f"--calibration-users, {CALIBRATION_VERDICTS} after it)")
    args = p.parse_args(argv)
    known = known_verdicts(args.verdicts, args.calibration_users)
    print("| reading | answers changed by the join | by question type | " + " | ".join(MOVES) + " |")
    print("|---|---|---|" + "---|" * len(MOVES))
    one, lost = [], []
    for spec in args.reading or (CALIBRATION_READINGS if args.calibration_users else READINGS):
        name = spec.split("|", 1)[0].rsplit("/", 1)[-1].removesuffix(".jsonl")
        found = [(name, row, before, after, move(known, row, before, after)) for row, before, after in changed(spec)]
        types = Counter(row["question_type"] for _, row, _, _, _ in found)
        moves = Counter(moved for *_, moved in found)
        print(f"| {name} | {len(found)} | " + ", ".join(f"{t} {n}" for t, n in sorted(types.items()))
              + " | " + " | ".join(str(moves[m]) for m in MOVES) + " |")
        one += [answer for answer in found if asks_one(answer[1])]
        lost += [answer for answer in found if answer[4] == "right → wrong"]
    for title, rows in (("Questions asking for one value with items joined", one),
                        ("Answers the join turned wrong", lost)):
        print(f"\n{title}: {len(rows)}")
        for name, row, before, after, moved in rows:
            print(f"- {name}, {row['question_type']}: «{row['question']}» «{before}» → «{after}» ({moved})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
