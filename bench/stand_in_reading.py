"""A stand-in reader (a capable model under a committed brief) over fixed answer prompts, as `readers.py read` rows.

    .venv/bin/python bench/stand_in_reading.py export --prompts users_dev:8000 --out runs/literal/chats.jsonl
    .venv/bin/python bench/stand_in_reading.py take --prompts users_dev:8000 \\
        --model "stand-in (literal small-model reading)" runs/literal/replies.jsonl \\
        --out bench/results/reading/literal_users_dev_c8000.jsonl

`export` writes every chat the contest's answer stage would ask a reader of each prompt
(`bench/prompts.py` rows): the answer prompt as built (`plain`) and, for a question whose form
asks for several things, its two list asks (`list`, `list_late`, `submit/memory/items.py`), or
with `--stage bound` the one bound answer (`bound`, `bench/bound.py`), or with
`--stage cite --drafts READING` the cite call that follows each plain answer READING holds
(`cite`: the answer prompt, the reader's own plain answer, the ask for the lines it rests on), each
as `{"key", "messages"}` with `key` = `<prompt id>|<way>`, for a stand-in that sees one chat at a
time and nothing else (the brief it follows is committed beside its replies). `take` reads its
`{"key", "reply"}` lines and writes the rows `readers.py read` would have written for a local
model (`answer` read as the contest reads a reply, `items` as the contest keeps them), so every
table of `readers.py` (`table`, `declines`, `judge`) reads a stand-in like the local readers.
The gate and the second look need a model's log-probabilities or a second call after the first:
a stand-in's rows have neither, so its declines are the reader's own and the call-free rules'.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script
    sys.path.insert(0, str(ROOT))

from bench import bound  # noqa: E402
from bench.readers import LISTS, list_ask, some_prompts, with_ask  # noqa: E402
from local_eval import jsonl  # noqa: E402
from submit.memory import answer as answer_step  # noqa: E402
from submit.memory import decide  # noqa: E402
from submit.memory import items as list_step  # noqa: E402


STAGES = {"rules": ("plain",) + LISTS, "plain": ("plain",), "bound": ("bound",), "cite": ("cite",)}


def chats(row: dict, stage: str = "rules", draft: str = "") -> dict:
    """way -> the chat a reader is asked for this prompt row: by the stage of word rules, the
    plain answer and, for a question whose form asks for several things, the two list asks; by
    the bound stage (`bench/bound.py`), the one bound answer; by the cited stage, the
    plain answer alone ("plain"), then the lines that answer, `draft`, rests on ("cite"), asked
    only where it is not the reader's own "no information" (as the contest asks)."""
    lang = answer_step.detect_lang(row["question"])
    if stage == "bound":
        return {"bound": with_ask(row["messages"], bound.ask(lang))}
    if stage == "cite":
        return {"cite": decide.cite_chat(row["messages"], draft, lang)} if decide.asks_cite(draft) else {}
    out = {"plain": row["messages"]}
    if stage == "rules" and list_step.several(row["question"]):
        out.update({way: list_ask(row, way, lang) for way in LISTS})
    return out


def drafts(args) -> dict:
    """prompt id -> the reader's plain answer as it wrote it (`--drafts`: a reading with `plain`
    rows), which the cited stage's chats follow; {} for the other stages."""
    if args.stage != "cite":
        return {}
    if not args.drafts:
        raise SystemExit("--stage cite follows the reader's plain answers: name their reading with --drafts")
    rows = jsonl.read_rows(Path(args.drafts), lambda r: r.get("way") == "plain")[0]
    return {r["id"]: r.get("raw") or r["answer"] for r in rows}


def export(args) -> int:
    firsts = drafts(args)
    rows = [{"key": f"{row['id']}|{way}", "messages": chat} for row in some_prompts(args.prompts, "export")
            for way, chat in chats(row, args.stage, firsts.get(row["id"], "")).items()]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    jsonl.write_rows(Path(args.out), rows)
    print(f"{len(rows)} chat(s) in {args.out}")
    return 0


def reading_row(row: dict, way: str, reply: str, model: str, draft: str = "") -> dict:
    """The row `readers.py read` writes for this way, from a stand-in's reply (a cite row: with the
    plain answer `draft` it follows; `reply` "" where no cite was asked)."""
    lang = answer_step.detect_lang(row["question"])
    if way == "cite":
        read = decide.cited(draft, reply)
        found = {"answer": read.answer or answer_step.NO_INFO[lang], "draft": draft, "quotes": list(read.quotes)}
    elif way == "bound":
        read = bound.parse(reply)
        found = {"answer": read.answer or answer_step.NO_INFO[lang], "quotes": list(read.quotes),
                 "items": list(read.items)}
    elif way == "plain":
        found = {"answer": answer_step.clean_answer(reply) or answer_step.NO_INFO[lang]}
    else:
        found = {"items": list_step.kept_items(reply, chats(row)[way], row["question"], lang)}
    return {"id": row["id"], "set": row.get("set"), "way": way, "question": row["question"],
            "gold": row.get("gold", ""), "question_type": row["question_type"], "answerable": row.get("answerable"),
            "model": model, **found, "raw": reply}


def take(args) -> int:
    prompts = {row["id"]: row for row in some_prompts(args.prompts, "take")}
    replies = {}
    for path in args.replies:
        for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
            if line.strip():
                row = json.loads(line)
                if not isinstance(row.get("reply"), str) or "|" not in str(row.get("key", "")):
                    raise SystemExit(f"{path}:{number}: not a {{\"key\", \"reply\"}} line")
                replies[row["key"]] = row["reply"]  # a file may hold other sets' replies too
    firsts = drafts(args)
    wanted = [f"{i}|{way}" for i, row in prompts.items() for way in chats(row, args.stage, firsts.get(i, ""))]
    missing = [k for k in wanted if k not in replies]
    if missing:
        raise SystemExit(f"{len(missing)} chat(s) have no reply yet, e.g. {missing[:3]}")
    if args.stage == "cite":  # every prompt with a plain answer has a cite row; "" where none was asked
        missing = [i for i in prompts if i not in firsts]
        if missing:
            raise SystemExit(f"{len(missing)} prompt(s) have no plain answer in {args.drafts}, e.g. {missing[:3]}")
        wanted = [f"{i}|cite" for i in prompts]
    out = [reading_row(prompts[key.split("|")[0]], key.split("|")[1], replies.get(key, ""), args.model,
                       firsts.get(key.split("|")[0], "")) for key in wanted]
    ways = set(STAGES[args.stage])  # the other stage's rows already in the file stay
    kept = [r for r in jsonl.read_rows(Path(args.out), lambda r: "way" in r)[0] if r["way"] not in ways]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    jsonl.write_rows(Path(args.out), kept + out)
    print(f"{len(out)} row(s) in {args.out}")
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    e = sub.add_parser("export", help="the chats a reader is asked, for a stand-in")
    t = sub.add_parser("take", help="the stand-in's replies -> readers.py read rows")
    for s in (e, t):
        s.add_argument("--prompts", action="append", required=True, help="bench/prompts.py files or SET:CHARS")
        s.add_argument("--out", required=True)
        s.add_argument("--stage", choices=STAGES, default="rules", help="the chats of the stage of word rules "
                       "(the plain answer and the list asks), the plain answer alone, the bound answer "
                       "(bench/bound.py), or the cite calls that follow the plain answers (with --drafts)")
        s.add_argument("--drafts", default="", help="with --stage cite: the reading whose plain answers the cite "
                       "calls follow (the same reader's)")
    t.add_argument("--model", required=True, help="the reader's name in the rows (its brief's)")
    t.add_argument("replies", nargs="+")
    args = p.parse_args(argv)
    return export(args) if args.command == "export" else take(args)


if __name__ == "__main__":
    sys.exit(main())
