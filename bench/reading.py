"""How a small reader reads: answer prompts read in several ways, and the reader's own yes/no on each.

    .venv/bin/python bench/reading.py read --prompts runs/prompts/ru_dev.jsonl --way plain --way evidence \
        --model qwen2.5-coder-1.5b --out runs/reading/q15.jsonl
    .venv/bin/python bench/reading.py judge runs/reading/q15.jsonl --verdicts V.jsonl --pending J.jsonl
    .venv/bin/python bench/reading.py table runs/reading/q15.jsonl --verdicts V.jsonl [--gate p_yes<0.55]

Prompt files come from `bench/prompts.py`. For each prompt and each way (`WAYS`: the prompt as
the contest builds it, or with the answer asked as JSON whose first field is the evidence) the
model answers, and once per prompt it is asked instead whether the material holds the answer
(`SUFFICIENT`), one token, whose probability of "yes" the decline gate may use. Rows are appended
as they finish (resumable: a prompt and way already in `--out` is skipped), so every table made
from them replays without the model.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

from local_eval import jsonl
from submit.memory import answer as answer_step

ROOT = Path(__file__).resolve().parent.parent
SUFFICIENT = {"ru": "Есть ли в фактах и выдержках выше ответ на этот вопрос? Ответь одним словом: да или нет.",
              "en": "Does the material above answer this question? Answer with one word: yes or no."}
YES = ("да", "yes")
NO = ("нет", "no")
EVIDENCE_ASK = {
    "ru": 'Ответь в JSON: {"evidence": [строки фактов и выдержек выше, где есть ответ, дословно; все, если '
          'ответ — перечень; [] если таких нет], "answer": "ответ одним предложением"}',
    "en": 'Answer in JSON: {"evidence": [the lines of the material above that hold the answer, verbatim; all of them '
          'if the answer is a list; [] if there are none], "answer": "the answer in one sentence"}'}
EVIDENCE_SCHEMA = {"type": "object", "properties": {
    "evidence": {"type": "array", "items": {"type": "string"}}, "answer": {"type": "string"}},
    "required": ["evidence", "answer"]}


def with_ask(messages: list, ask: str) -> list:
    """The prompt with its last line (the answer prompt's `ask`) replaced."""
    head = messages[-1]["content"].rsplit("\n", 1)[0]
    return messages[:-1] + [{**messages[-1], "content": f"{head}\n{ask}"}]


def chat_body(messages: list, max_tokens: int, schema=None, top: int = 0) -> dict:
    from local_eval.llms.llama import request
    body = {**request(messages, max_tokens, schema), "cache_prompt": True}
    if top:
        body.update(logprobs=True, top_logprobs=top)
    return body


def ask(server, body: dict) -> dict:
    reply = server.handle_chat_completions(body)
    if not isinstance(reply, dict) or reply.get("error"):
        raise RuntimeError(f"llama: {reply}")
    return reply


def yes_probability(reply: dict) -> float:
    """P(yes) / (P(yes) + P(no)) over the first token's top alternatives (a token counts by the word it
    begins: "Д" and "да" are both yes); 0.5 when neither appears."""
    yes = no = 0.0
    for item in reply["choices"][0]["logprobs"]["content"][0]["top_logprobs"]:
        word = item["token"].strip().lower()
        p = math.exp(item["logprob"])
        if word and any(w.startswith(word) for w in YES):
            yes += p
        elif word and any(w.startswith(word) for w in NO):
            no += p
    return yes / (yes + no) if yes + no > 0 else 0.5


def read_plain(server, row: dict, lang: str) -> dict:
    reply = ask(server, chat_body(row["messages"], 100))
    text = answer_step.clean_answer(reply["choices"][0]["message"]["content"] or "")
    return {"answer": text or answer_step.NO_INFO[lang], "raw": None, "usage": reply.get("usage", {})}


def read_evidence(server, row: dict, lang: str) -> dict:
    reply = ask(server, chat_body(with_ask(row["messages"], EVIDENCE_ASK[lang]), 300, EVIDENCE_SCHEMA))
    raw = reply["choices"][0]["message"]["content"] or ""
    try:
        data = json.loads(raw)
        text = answer_step.clean_answer(str(data.get("answer", "")))
        evidence = [str(e) for e in data.get("evidence", [])]
    except ValueError:
        text, evidence = None, []
    return {"answer": text or answer_step.NO_INFO[lang], "evidence": evidence, "raw": raw,
            "usage": reply.get("usage", {})}


ASK_ALL = {"ru": "Ответ одним предложением (если подходит несколько пунктов — назови все):",
           "en": "Answer in one sentence (if several items fit, name them all):"}


def read_ask_all(server, row: dict, lang: str) -> dict:
    """The answer prompt whose last line also asks for every item (a list question's answer)."""
    return read_plain(server, {**row, "messages": with_ask(row["messages"], ASK_ALL[lang])}, lang)


WAYS = {"plain": read_plain, "evidence": read_evidence, "ask_all": read_ask_all}


def read(args) -> int:
    from local_eval.llms.llama import LlamaBackend
    from tqdm import tqdm
    rows = [r for path in args.prompts for r in jsonl.read_rows(Path(path), lambda r: "messages" in r)[0]]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = {(r["id"], r["way"]) for r in jsonl.read_rows(out, lambda r: "way" in r)[0]}
    server = LlamaBackend(args.model).engine.server
    todo = [(row, way) for row in rows for way in args.way + ([] if args.no_gate else ["gate"])
            if (row["id"], way) not in done]
    for row, way in tqdm(todo, desc="reading", unit="call"):
        lang = answer_step.detect_lang(row["question"])
        start = time.perf_counter()
        if way == "gate":
            reply = ask(server, chat_body(with_ask(row["messages"], SUFFICIENT[lang]), 1, top=20))
            found = {"p_yes": round(yes_probability(reply), 4), "usage": reply.get("usage", {})}
        else:
            found = WAYS[way](server, row, lang)
        jsonl.append_rows(out, [{"id": row["id"], "set": row.get("set"), "way": way, "question": row["question"],
                                 "gold": row["gold"], "question_type": row["question_type"],
                                 "answerable": row.get("answerable"), "model": args.model, **found,
                                 "seconds": round(time.perf_counter() - start, 1)}])
    print(f"{len(todo)} call(s) made: {out}")
    return 0


def answers(paths) -> list[dict]:
    return [r for path in paths for r in jsonl.read_rows(Path(path), lambda r: "way" in r)[0]]


def gated(rows: list[dict], gate: str) -> dict:
    """(id, set) -> True where the gate `SIGNAL<THRESHOLD` declines (the signal from the `gate` rows)."""
    if not gate:
        return {}
    signal, _, threshold = gate.partition("<")
    return {(r["id"], r.get("set")): r[signal] < float(threshold) for r in rows if r["way"] == "gate" and signal in r}


def final(row: dict, declined: dict) -> str:
    """The answer the contest class gives: the reader's, or "no information" where the gate declines."""
    lang = answer_step.detect_lang(row["question"])
    return answer_step.NO_INFO[lang] if declined.get((row["id"], row.get("set"))) else row["answer"]


def judge(args) -> int:
    from bench.readers import verdicts
    known, items, seen = verdicts(args.verdicts), [], set()
    rows = answers(args.answers)
    declined = gated(rows, args.gate)
    for row in rows:
        if row["way"] == "gate":
            continue
        for text in {row["answer"], final(row, declined)}:
            key = (row["question"], text)
            if key not in known and key not in seen:
                seen.add(key)
                items.append({"id": f"j{len(items) + 1:04d}", "question": key[0], "gold": row["gold"], "answer": text})
    jsonl.write_rows(Path(args.pending), items)
    print(f"{len(items)} item(s) to judge: {args.pending}")
    return 0


def table(args) -> int:
    from bench.readers import verdicts
    known = verdicts(args.verdicts)
    rows = answers(args.answers)
    declined = gated(rows, args.gate)
    counts: dict = {}
    missing = 0
    for row in rows:
        if row["way"] == "gate":
            continue
        for gate_on in (False, True) if declined else (False,):
            verdict = known.get((row["question"], final(row, declined) if gate_on else row["answer"]))
            missing += verdict is None
            name = (row.get("set"), row["model"], row["way"] + (f" + gate {args.gate}" if gate_on else ""))
            for kind in (row["question_type"], "ALL"):
                cell = counts.setdefault(name, {}).setdefault(kind, [0, 0])
                cell[0] += bool(verdict)
                cell[1] += 1
    kinds = sorted({k for c in counts.values() for k in c} - {"ALL"}) + ["ALL"]
    lines = ["| set | model | way | " + " | ".join(kinds) + " |", "|---|---|---|" + "---|" * len(kinds)]
    for (name, model, way), cells in counts.items():
        lines.append(f"| {name} | {model} | {way} | " + " | ".join(
            f"{cells[k][0]}/{cells[k][1]}" if k in cells else "–" for k in kinds) + " |")
    if missing:
        lines.append(f"\n{missing} answer(s) have no verdict yet: counted wrong.")
    print("\n".join(lines))
    return 0


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0].startswith("--"):  # the first version had no subcommands: `read` it is
        argv.insert(0, "read")
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("read", help="ask the model every prompt in every way, and the gate question")
    r.add_argument("--prompts", action="append", required=True)
    r.add_argument("--way", action="append", choices=tuple(WAYS), default=[],
                   help="ways to answer (none: only the gate question)")
    r.add_argument("--model", default="qwen2.5-coder-1.5b", help="a llama: model (name or GGUF path)")
    r.add_argument("--out", required=True)
    r.add_argument("--no-gate", action="store_true", help="do not ask the yes/no question")
    for name, helps in (("judge", "write the items no verdict covers yet"), ("table", "right answers per type")):
        s = sub.add_parser(name, help=helps)
        s.add_argument("answers", nargs="+")
        s.add_argument("--verdicts", required=True)
        s.add_argument("--gate", default="", help="SIGNAL<THRESHOLD: decline where the gate row's signal is below")
        if name == "judge":
            s.add_argument("--pending", required=True)
    args = p.parse_args(argv)
    return {"read": read, "judge": judge, "table": table}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
