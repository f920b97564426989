"""What each part of the answer stage's call-free checks adds, replayed: each sub-rule taken out in
turn (made never to fire), every reader's switches decided anew from its own calibration reading,
and its recorded cited replies decided again (`decide.decide`, the function the contest class
calls). No model is asked: the checks are call-free, the replies and the gate's P(yes) recorded.

    .venv/bin/python bench/ablate.py                      # every sub-rule, the default readings
    .venv/bin/python bench/ablate.py --rule no_number --rule 'check unquoted_number'
    .venv/bin/python bench/ablate.py --calibration-users  # the same readers on users 21-26
    .venv/bin/python bench/ablate.py --reading 'R.jsonl|users_dev:8000|C.jsonl@submit/calibration/ru.c8000.jsonl'

A reading is `READING|PROMPTS|CALIBRATION`: a `bench/readers.py read` of a set's prompts (its
`cite` rows, and its `gate` rows where the gate was read), the prompts it read (a file, or SET:CHARS),
and `READING@SET` of the same reader's calibration reading (`readers.py --switches`). Printed per
sub-rule and reading: right answers (the stored verdicts; an answer without one counts wrong and is
counted), `no_info` questions declined, answerable ones declined (the reader's own declines
included in both), which checks the calibration turned on, and the declines with every check on (no
calibration: `--gate off`); after the table, each reading's figures with no check and no gate. A
part whose removal changes no figure of any reader through its own calibration is one the
contest's stage does not need on these sets; the last column says what it does where a run turns
every check on.
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from bench import readers
from submit.memory import answer as answer_step
from submit.memory import decide

VERDICTS = "bench/stores/readers/verdicts.jsonl"
# The calibration users' verdicts, kept apart: a verdict also answers for its question without its
# gold (`readers.verdicts`), and another set asks some of their questions with another gold.
CALIBRATION_VERDICTS = "bench/stores/readers/verdicts_calibration_users.jsonl"
R = "bench/results/reading"
CALIBRATION_4K = "submit/calibration/ru.c4000.jsonl"
CALIBRATION_8K = "submit/calibration/ru.c8000.jsonl"
READINGS = [
    f"{R}/q15_users_dev_c4000.jsonl|users_dev:4000|{R}/q15_calibration_users_c4000.jsonl@{CALIBRATION_4K}",
    f"{R}/q05_users_dev_c4000.jsonl|users_dev:4000|{R}/q05_calibration_users_c4000.jsonl@{CALIBRATION_4K}",
    f"{R}/q15_users_dev_c8000.jsonl|users_dev:8000|{R}/q15_calibration_users_c8000.jsonl@{CALIBRATION_8K}",
    f"{R}/q05_users_dev_c8000.jsonl|users_dev:8000|{R}/q05_calibration_users_c8000.jsonl@{CALIBRATION_8K}",
    f"{R}/fluent_users_dev_c8000.jsonl|users_dev:8000|{R}/fluent_calibration_users_c8000.jsonl@{CALIBRATION_8K}",
    f"{R}/q15_ru_dev_c4000.jsonl|ru_dev:4000|{R}/q15_calibration_users_c4000.jsonl@{CALIBRATION_4K}",
    f"{R}/q15_ru_dev_c8000.jsonl|ru_dev:8000|{R}/q15_calibration_users_c8000.jsonl@{CALIBRATION_8K}",
    f"{R}/q05_ru_dev_c4000.jsonl|ru_dev:4000|{R}/q05_calibration_users_c4000.jsonl@{CALIBRATION_4K}",
    f"{R}/q05_ru_dev_c8000.jsonl|ru_dev:8000|{R}/q05_calibration_users_c8000.jsonl@{CALIBRATION_8K}",
    f"{R}/fluent_ru_dev_c8000.jsonl|ru_dev:8000|{R}/fluent_calibration_users_c8000.jsonl@{CALIBRATION_8K}",
]
# The same readers on the calibration users 21-26 themselves, where no rule was written (MEASURING.md):
# each reading is its own calibration, as in the contest. Their gold answers come from the calibration
# questions (`calibration_gold`), their verdicts (`CALIBRATION_VERDICTS`) from fresh judges who saw only
# each answer's question and gold.
CALIBRATION_READINGS = [
    f"{R}/{reader}_calibration_users_c{chars}.jsonl|{path}|{R}/{reader}_calibration_users_c{chars}.jsonl@{path}"
    for reader, chars, path in (("q15", 4000, CALIBRATION_4K), ("q05", 4000, CALIBRATION_4K),
                                ("q15", 8000, CALIBRATION_8K), ("q05", 8000, CALIBRATION_8K),
                                ("fluent", 8000, CALIBRATION_8K))
]


def _never(*_args, **_kwargs) -> bool:
    """A rule taken out: it never fires."""
    return False


def _without(name: str) -> dict:
    """`decide.CHECKS` less the check `name`: neither `decide` nor `decide.switch` sees it."""
    return {k: v for k, v in decide.CHECKS.items() if k != name}


# sub-rule -> (module, attribute, what stands in for it while it is out)
RULES = {
    "asks_name": (answer_step, "asks_name", _never),  # `empty`: a name asked, none given
    "offered": (answer_step, "offered", lambda question: set()),  # `empty`: one of the offered picked
    "kin": (answer_step, "_as_kin", set),  # kin words as one word (`empty`, `elsewhere`)
    "adds_nothing": (answer_step, "adds_nothing", _never),  # `empty`'s first half
    "no_number": (decide, "no_number", _never),  # `empty`'s second half
    "someone_elses": (answer_step, "someone_elses", _never),  # `elsewhere`'s parts
    "others_only": (decide, "others_only", _never),
    "another_owner": (decide, "another_owner", _never),
    "yes_or_no": (decide, "says_yes_or_no", _never),  # the exemption of a yes or no
    "spelled": (answer_step, "_spelled", set),  # Latin words in Russian letters (`mentions_any`)
    "headings": (decide, "_headings", lambda held, lines: []),  # `unquoted_number`: the session's date (LoCoMo)
    "holding": (decide, "holding", lambda answer, question, held: held),  # `others_only`: the value's lines
    "asks_the_past": (decide, "_asks_the_past", _never),  # `superseded`: a question about the past
    "superseded": (decide, "superseded", lambda question, answer, lines: None),  # an earlier version given
    **{f"check {name}": (decide, "CHECKS", None) for name in decide.CHECKS},  # a whole check
}


@dataclass(frozen=True)
class Reading:
    """A reading as `figures` reads it: its name, its reader's calibration (`READING@SET`), each
    cited reply with what no rule changes — the row, the reply read, its prompt's material lines,
    whether its dialogue answers it — and its gate rows' P(yes) by id: read once, not once a rule."""
    name: str
    calibration: str
    replies: tuple
    p_yes: dict


CALIBRATION_QUESTIONS = Path(__file__).resolve().parent.parent / "tools/calibration/questions_ru.jsonl"


def calibration_gold() -> dict:
    """The calibration questions' gold answers by id (`tools/calibration/questions_ru.jsonl`, which the
    shipped calibration sets are built from): a reading of those sets carries none of its own."""
    lines = CALIBRATION_QUESTIONS.read_text(encoding="utf-8").splitlines()
    return {row["id"]: row["ans"] for row in map(json.loads, filter(str.strip, lines))}


def with_gold(row: dict, gold: dict) -> dict:
    """The row with the calibration question's gold of its id (`calibration_gold`) where it has none."""
    return {**row, "gold": row.get("gold") or gold.get(row.get("id"), "")}


def known_verdicts(paths: Optional[str], calibration_users: bool) -> dict:
    """The verdicts of `paths`, or by default `VERDICTS`, with `CALIBRATION_VERDICTS` after it for a
    reading of the calibration users."""
    return readers.verdicts(paths or (f"{VERDICTS},{CALIBRATION_VERDICTS}" if calibration_users else VERDICTS))


def load(spec: str) -> Reading:
    """A `READING|PROMPTS|CALIBRATION` spec's reading (`--reading`); a row without its gold takes the
    calibration question's of its id where there is one (`calibration_gold`), so its verdicts are found."""
    answers, prompts, calibration = spec.split("|")
    material = readers.load_material([prompts])
    gold = calibration_gold()
    rows, replies = [with_gold(r, gold) for r in readers.rows_of([answers])], []
    for row in (r for r in rows if r.get("way") == "cite"):
        prompt = readers.prompt_of(material, row)
        if prompt is not None:
            lines = answer_step.material(prompt["messages"], row["question"])
            replies.append((row, readers.reply_of(row), lines, bool(prompt["answerable"])))
    return Reading(Path(answers).stem, calibration, tuple(replies), readers.gate_readings(rows))


def figures(reading: Reading, known: dict) -> dict:
    """One reading's figures through the stage as the code now stands."""
    switches = readers.calibrated_switches(reading.calibration)[0]["cite"]
    every, alone = decide.Switches(frozenset(decide.CHECKS)), decide.Switches(frozenset())
    out = {"right": 0, "no_info": 0, "no_info_declined": 0, "answerable": 0, "answerable_declined": 0, "unjudged": 0,
           "no_info_every": 0, "answerable_every": 0, "right_alone": 0, "unjudged_alone": 0, "no_info_alone": 0,
           "answerable_alone": 0}
    for row, reply, lines, answerable in reading.replies:
        verdict = decide.decide(row["question"], reply, lines, switches, reading.p_yes.get(row["id"]))
        right = readers.verdict_of(known, row, verdict.text)
        out["right"] += bool(right)
        out["unjudged"] += right is None
        kind = "answerable" if answerable else "no_info"
        out[kind] += 1
        out[f"{kind}_declined"] += verdict.declined
        out[f"{kind}_every"] += decide.decide(row["question"], reply, lines, every).declined
        own = decide.decide(row["question"], reply, lines, alone)  # no check, no gate: the reader's own declines
        right = readers.verdict_of(known, row, own.text)
        out["right_alone"] += bool(right)
        out["unjudged_alone"] += right is None
        out[f"{kind}_alone"] += own.declined
    out["on"] = ", ".join(sorted(switches.on)) or "nothing"
    out["n"] = out["no_info"] + out["answerable"]
    return out


def ablated(rule: str, readings: list, known: dict) -> list:
    """The figures of every reading with `rule` out (`None`: as the code stands)."""
    if rule is None:
        return [figures(r, known) for r in readings]
    module, attribute, stand_in = RULES[rule]
    saved = getattr(module, attribute)
    setattr(module, attribute, _without(rule.split(" ", 1)[1]) if stand_in is None else stand_in)
    try:
        return [figures(r, known) for r in readings]
    finally:
        setattr(module, attribute, saved)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rule", action="append", choices=sorted(RULES) + ["nothing"], help="a sub-rule to take out "
                   "(repeat; default: each in turn; `nothing`: the stage as it stands alone)")
    p.add_argument("--reading", action="append", help="READING|PROMPTS|CALIBRATION (repeat; default: the local "
                   "1.5B's and the 0.5B's (at 4k and at 8k) and the fluent stand-in's cited readings of the "
                   "dev users 27-32 and Russian dev)")
    p.add_argument("--calibration-users", action="store_true", help="the same readers' readings of the "
                   "calibration users 21-26 instead, each its own calibration: rules written on other sets, read "
                   "where none was written")
    p.add_argument("--verdicts", help=f"verdict files, comma-separated (default: {VERDICTS}; with "
                   f"--calibration-users, {CALIBRATION_VERDICTS} after it)")
    args = p.parse_args(argv)
    readings = [load(spec) for spec in args.reading or (CALIBRATION_READINGS if args.calibration_users else READINGS)]
    known = known_verdicts(args.verdicts, args.calibration_users)
    print("| taken out | reading | right | `no_info` declined | answerable declined | checks on | every check on: "
          "`no_info` / answerable declined |")
    print("|---|---|---|---|---|---|---|")
    base = ablated(None, readings, known)
    keys = ("right", "no_info_declined", "answerable_declined", "on", "no_info_every", "answerable_every")
    unjudged = 0
    for rule in [None] + [r for r in args.rule or list(RULES) if r != "nothing"]:
        found = base if rule is None else ablated(rule, readings, known)
        unjudged += sum(f["unjudged"] for f in found)
        for reading, now, was in zip(readings, found, base):
            moved = "" if rule is None or any(now[k] != was[k] for k in keys) else " (no change)"
            right = "—" if now["unjudged"] == now["n"] else f"{now['right']}/{now['n']}"
            print(f"| {rule or 'nothing'} | {reading.name} | {right} "
                  f"| {now['no_info_declined']}/{now['no_info']} | {now['answerable_declined']}/{now['answerable']} "
                  f"| {now['on']} "
                  f"| {now['no_info_every']}/{now['no_info']} / {now['answerable_every']}/{now['answerable']}{moved} |")
    print("\nThe reader alone (no check, no gate; its own declines and `superseded` only), as the code stands:")
    for reading, now in zip(readings, base):
        print(f"- {reading.name}: right {now['right_alone']}/{now['n']}, `no_info` declined "
              f"{now['no_info_alone']}/{now['no_info']}, answerable declined "
              f"{now['answerable_alone']}/{now['answerable']}"
              + (f" ({now['unjudged_alone']} without a verdict, counted wrong)" if now["unjudged_alone"] else ""))
    if unjudged:
        print(f"\n{unjudged} answer(s) above have no verdict (`bench/readers.py judge`): counted wrong.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
