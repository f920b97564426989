"""The cite ask in other words: does the reader quote lines of the material, or its own answer?

The cited stage (`submit/memory/decide.py`) follows the reader's plain answer, in the same chat,
with an ask for the lines it rests on; its checks read those lines. `read` asks a local llama:
model each of `ASKS` after its recorded plain answers (the `plain` rows of a `bench/readers.py read`
file) to the prompts given, one row per (prompt, ask), resumable; the asks after the first reuse
the prompt's cached prefix. `table` replays the rows: per ask and kind of question, the replies
with a quote that stands in the material (`decide.quoted`) and those that quote the reader's own
answer back.

    .venv/bin/python bench/cite_asks.py read --prompts submit/calibration/ru.c4000.jsonl \
        --plain bench/results/reading/q15_calibration_users_c4000.jsonl --model qwen2.5-coder-1.5b \
        --ids 21-u-04,21-u-12,23-u-03,22-u-08,25-u-05,23-u-09,21-u-06,26-u-09,23-u-02,21-u-01 \
        --out bench/results/reading/q15_calibration_cite_asks_c4000.jsonl
    .venv/bin/python bench/cite_asks.py table bench/results/reading/q15_calibration_cite_asks_c4000.jsonl \
        --prompts submit/calibration/ru.c4000.jsonl
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bench import readers
from local_eval import jsonl
from submit import prompts
from submit.memory import answer as answer_step
from submit.memory import decide

# name -> (the ask, its schema); "contest" is the cited stage's own (`submit/prompts/answer.ru.yaml: cite`)
_MARKED = {"type": "array", "items": {"type": "string", "pattern": "^(\\[сессия [0-9]+\\]|Пользователь:) .*$"}}
ASKS = {
    "first": ('Выпиши дословно строки фактов и выдержек выше, на которых стоит твой ответ. Ответь в JSON: '
              '{"quotes": [строки фактов и выдержек выше, где есть ответ, дословно]}', decide.CITE_SCHEMA),
    "contest": (prompts.text("answer", "ru", "cite"), decide.CITE_SCHEMA),
    "pattern": (prompts.text("answer", "ru", "cite"),
                {"type": "object", "properties": {"quotes": _MARKED}, "required": ["quotes"]}),
}


def read(args) -> int:
    from local_eval.llms.llama import LlamaBackend
    rows = {r["id"]: r for r in readers.prompt_rows(args.prompts)}
    plain = {r["id"]: r.get("raw") or r["answer"] for r in readers.rows_of([args.plain]) if r.get("way") == "plain"}
    out = Path(args.out)
    done = {(r["id"], r["ask"]) for r in readers.rows_of([out])} if out.exists() else set()
    server = LlamaBackend(args.model).engine.server
    for i in args.ids.split(","):
        for name in args.asks.split(","):
            if (i, name) in done:
                continue
            text, schema = ASKS[name]
            chat = rows[i]["messages"] + [{"role": "assistant", "content": plain[i]}, {"role": "user", "content": text}]
            reply = readers.ask(server, readers.chat_body(chat, decide.CITE_MAX_TOKENS, schema))
            row = {"id": i, "ask": name, "model": args.model, "answerable": rows[i]["answerable"], "draft": plain[i],
                   "raw": reply["choices"][0]["message"]["content"] or ""}
            jsonl.append_rows(out, [row])
            print(json.dumps(row, ensure_ascii=False)[:200], flush=True)
    return 0


def table(args) -> int:
    rows = {r["id"]: r for r in readers.prompt_rows(args.prompts)}
    print("| ask | questions | replies | a quote in the material | its own answer quoted |")
    print("|---|---|---|---|---|")
    counts: dict = {}  # (ask, answerable) -> [replies, a quote in the material, its own answer quoted]
    for r in readers.rows_of(args.files):
        reply = decide.cited(r["draft"], r["raw"])
        lines = answer_step.material(rows[r["id"]]["messages"], rows[r["id"]]["question"])
        own = (reply.answer or "").strip(" .")
        found = counts.setdefault((r["ask"], r["answerable"]), [0, 0, 0])
        found[0] += 1
        found[1] += bool(decide.quoted(reply, lines))
        found[2] += any(q.strip(" .") == own for q in reply.quotes)
    for name in ASKS:
        for answerable in (True, False):
            if (name, answerable) in counts:
                replies, held, selfs = counts[name, answerable]
                print(f"| {name} | {'answerable' if answerable else 'no answer'} | {replies} | {held} | {selfs} |")
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("read", help="ask the local model each ask after its recorded plain answers")
    r.add_argument("--prompts", action="append", required=True, help="the prompts the plain answers were read from")
    r.add_argument("--plain", required=True, help="a `bench/readers.py read` file with their `plain` rows")
    r.add_argument("--ids", required=True, help="prompt ids, comma-separated")
    r.add_argument("--asks", default=",".join(ASKS), help=f"asks, comma-separated (of {', '.join(ASKS)})")
    r.add_argument("--model", default="qwen2.5-coder-1.5b", help="a llama: model (name or GGUF path)")
    r.add_argument("--out", required=True, help="rows JSONL (appended; a rerun asks only what is missing)")
    t = sub.add_parser("table", help="per ask: replies quoting the material, and quoting the reader's own answer")
    t.add_argument("files", nargs="+")
    t.add_argument("--prompts", action="append", required=True, help="the prompts the rows were read from")
    args = p.parse_args(argv)
    return {"read": read, "table": table}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
