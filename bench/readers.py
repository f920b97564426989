"""A reader over fixed answer prompts: the same prompts read by the real local model, or by anyone.

    .venv/bin/python bench/readers.py answer --prompts P.jsonl --out A.jsonl \
        --llm 'cache:bench/stores/readers/qwen1.5b+llama:qwen2.5-coder-1.5b'
    .venv/bin/python bench/readers.py judge A.jsonl [B.jsonl ...] --verdicts V.jsonl --pending J.jsonl
    .venv/bin/python bench/readers.py table A.jsonl [B.jsonl ...] --verdicts V.jsonl --out bench/results/readers.md

`answer` reads prompt files as `bench/fixture_prompts.py` writes them (`{"id", "question",
"gold", "question_type", "messages"}`: retrieval and facts held fixed) and asks the LLM each
prompt, then right after it the abstention check both ways (`submit/prompts/abstain.*.yaml`:
"before" the answer, "after" of the draft), which share the prompt's material, so a prefix
cache reads it once. One row per prompt is appended as it finishes (`--out`, resumable):
the answer and both verdicts, so one pass gives the reader's accuracy with the check off,
before and after. `judge` lists the (question, gold, answer) items no verdict covers yet,
for a judge reading only those (a stand-in under our GigaMemory rule,
`local_eval/prompts/judge_gigamemory.yaml`); `table` prints accuracy per question type and
mode from the verdicts (`{"question", "answer", "correct"}` lines).
"""
from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

from local_eval import jsonl
from submit.memory import answer as answer_step

MODES = ("off", "before", "after")


def read(path: Path) -> list[dict]:
    return jsonl.read_rows(Path(path), lambda row: "id" in row)[0]


def with_ask(messages: list, ask: str) -> list:
    """The prompt with its last line (the answer prompt's `ask`) replaced."""
    head = messages[-1]["content"].rsplit("\n", 1)[0]
    return messages[:-1] + [{**messages[-1], "content": f"{head}\n{ask}"}]


def peer(messages: list) -> bool:
    return "Каждая строка начинается с имени" in messages[0]["content"] or \
        "Each line starts with the name" in messages[0]["content"]


def read_prompt(llm, row: dict, ask: str = "", checks: bool = True) -> dict:
    """The answer (with `ask` as the prompt's last line, when given) and both checks for one
    prompt, with what they cost."""
    lang = answer_step.detect_lang(row["question"])
    start = time.perf_counter()
    draft = llm.generate([with_ask(row["messages"], ask) if ask else row["messages"]], max_tokens=100)[0]
    text = answer_step.clean_answer(draft.text) or answer_step.NO_INFO[lang]
    found = {}  # the checks asked, none without `checks`
    for mode in ("before", "after") if checks else ():
        if mode == "after" and text == answer_step.NO_INFO[lang]:
            found[mode] = None  # nothing to check: the reader declined itself
            continue
        ask = answer_step.abstain_ask(lang, mode, text, peer(row["messages"]))
        reply = llm.generate([with_ask(row["messages"], ask)], max_tokens=answer_step.ABSTAIN_MAX_TOKENS,
                             schema=answer_step.ABSTAIN_SCHEMA, purpose="abstain")[0]
        found[mode] = answer_step.material_holds(reply.text)
    return {"id": row["id"], "question": row["question"], "gold": row["gold"], "question_type": row["question_type"],
            "answer": text, **{f"found_{mode}": v for mode, v in found.items()}, "prompt_tokens": draft.prompt_tokens,
            "seconds": round(time.perf_counter() - start, 1)}


def modes(row: dict) -> list[str]:
    """The abstention modes a row can show: "off" always, the checks where it asked them."""
    return [mode for mode in MODES if mode == "off" or f"found_{mode}" in row]


def answer_for(row: dict, mode: str) -> str:
    """The reply the contest class gives with the check in `mode`: a clear no declines."""
    no_info = answer_step.NO_INFO[answer_step.detect_lang(row["question"])]
    declined = mode != "off" and row[f"found_{mode}"] is False
    return no_info if declined else row["answer"]


def answer(args) -> int:
    from local_eval.specs import make_llm
    from tqdm import tqdm
    prompts = [r for path in args.prompts for r in read(path)]
    done = {r["id"] for r in read(args.out)}  # a missing file reads as no rows
    todo = [r for r in prompts if r["id"] not in done]
    llm = make_llm(args.llm)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    for row in tqdm(todo, desc="prompts", unit="prompt"):
        row = read_prompt(llm, row, args.ask, not args.no_checks)
        jsonl.append_rows(Path(args.out), [{**row, "reader": args.llm, "ask": args.ask or None}])
    print(f"{len(prompts) - len(todo)} done before, {len(todo)} read now: {args.out}")
    return 0


def verdicts(path: str) -> dict:
    rows = jsonl.read_rows(Path(path), lambda row: {"question", "answer", "correct"} <= set(row))[0] if path else []
    return {(r["question"], r["answer"]): r["correct"] for r in rows}


def judge(args) -> int:
    """The items no verdict covers yet, one per (question, answer), for a judge to read."""
    known = verdicts(args.verdicts)
    items, seen = [], set()
    for path in args.answers:
        for row in read(path):
            for mode in modes(row):
                key = (row["question"], answer_for(row, mode))
                if key not in known and key not in seen:
                    seen.add(key)
                    items.append({"id": f"j{len(items) + 1:04d}", "question": key[0], "gold": row["gold"],
                                  "answer": key[1]})
    jsonl.write_rows(Path(args.pending), items)
    print(f"{len(items)} item(s) to judge: {args.pending}")
    return 0


def table(args) -> int:
    known = verdicts(args.verdicts)
    counts = defaultdict(lambda: [0, 0])  # (file, type, mode) -> [right, n]
    missing = 0
    for path in args.answers:
        for row in read(path):
            for mode in modes(row):
                verdict = known.get((row["question"], answer_for(row, mode)))
                missing += verdict is None
                for kind in (row["question_type"], "ALL"):
                    counts[(Path(path).stem, kind, mode)][0] += bool(verdict)
                    counts[(Path(path).stem, kind, mode)][1] += 1
    lines = render(counts, args)
    if missing:
        lines.append(f"\n{missing} answer(s) have no verdict yet (`bench/readers.py judge`): counted wrong.")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    return 0


def render(counts: dict, args) -> list[str]:
    files = list(dict.fromkeys(k[0] for k in counts))
    kinds = sorted({k[1] for k in counts} - {"ALL"}) + ["ALL"]
    command = " ".join([".venv/bin/python bench/readers.py table", *args.answers, "--verdicts", args.verdicts])
    lines = [f"# Readers on fixed answer prompts\n\n`{command}`\n",
             "| answers | abstention check | " + " | ".join(kinds) + " |",
             "|---|---|" + "---|" * len(kinds)]
    for name in files:
        every = counts[(name, "ALL", "off")][1]  # a mode shows where every row of the file asked its check
        for mode in [m for m in MODES if counts.get((name, "ALL", m), [0, 0])[1] == every]:
            cells = [counts.get((name, k, mode), [0, 0]) for k in kinds]
            lines.append(f"| {name} | {mode} | " + " | ".join(f"{r}/{n}" if n else "–" for r, n in cells) + " |")
    return lines


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    a = sub.add_parser("answer", help="ask the LLM every prompt, and the abstention check both ways")
    a.add_argument("--prompts", action="append", required=True, help="a prompt file (bench/fixture_prompts.py)")
    a.add_argument("--llm", required=True, help="LLM spec (local_eval's; e.g. cache:DIR+llama:qwen2.5-coder-1.5b)")
    a.add_argument("--out", required=True, help="answers JSONL (appended; a rerun reads only what is missing)")
    a.add_argument("--ask", default="", help="another last line for every prompt (a wording to try)")
    a.add_argument("--no-checks", action="store_true", help="the answer alone, no abstention check")
    j = sub.add_parser("judge", help="write the items no verdict covers yet")
    j.add_argument("answers", nargs="+")
    j.add_argument("--verdicts", default="", help="verdicts JSONL ({question, answer, correct})")
    j.add_argument("--pending", required=True, help="where to write the items to judge")
    t = sub.add_parser("table", help="accuracy per question type and abstention mode")
    t.add_argument("answers", nargs="+")
    t.add_argument("--verdicts", required=True)
    t.add_argument("--out", help="also write the table here")
    args = p.parse_args(argv)
    return {"answer": answer, "judge": judge, "table": table}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
