"""The decline gate asked in other words: does another one-token question separate answerable from
no-answer prompts better than the contest's (`submit/prompts/gate.ru.yaml: ask`)?

`read` asks a local llama: model each of `ASKS` over answer prompts (the ask in place of the
prompt's last line, as the gate does), recording P(yes) per (prompt, ask); resumable, and the
asks after the first reuse the prompt's cached prefix (about 0.5 s each against 14 s for the
0.5B's first). `auc` prints each ask's AUC against the contest ask's recorded `gate` rows, and
the means of some: averaging asks is what a noisy yes-bias would call for, but each ask is one
more call per question and per calibration prompt (the calibration may make at most 64).

    .venv/bin/python bench/gate_asks.py read --prompts submit/calibration/ru.c4000.jsonl \
        --model qwen2.5-coder-0.5b --out bench/results/reading/q05_calibration_asks_c4000.jsonl
    .venv/bin/python bench/gate_asks.py auc bench/results/reading/q05_calibration_asks_c4000.jsonl \
        --gate-rows bench/results/reading/q05_calibration_c4000.jsonl
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from bench import readers
from local_eval import jsonl
from submit.memory import gate as contest_gate

# name -> (the ask, whether "да" means the material holds the answer)
ASKS = {
    "relation": ("Говорится ли в фактах и выдержках выше прямо о том, о чём спрашивает этот вопрос, — о том самом "
                 "человеке и о той самой вещи? Ответь одним словом: да или нет.", True),
    "strict": ("Можно ли ответить на этот вопрос только по фактам и выдержкам выше, ничего не додумывая? "
               "Ответь одним словом: да или нет.", True),
    "lacking": ("Не хватает ли в фактах и выдержках выше сведений, чтобы ответить на этот вопрос? "
                "Ответь одним словом: да или нет.", False),
}


def read(args) -> int:
    from local_eval.llms.llama import LlamaBackend
    from tqdm import tqdm
    rows = readers.rows_of(args.prompts, lambda r: "messages" in r)
    unknown = [r["id"] for r in rows if r.get("answerable") is None]
    if unknown:
        raise SystemExit(f"{len(unknown)} prompt(s) say not whether they are answerable (first: {unknown[0]}): "
                         "an AUC needs both kinds; build them with bench/prompts.py or tools/calibration.py")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = {(r["id"], r["ask"]) for r in readers.rows_of([out], lambda r: "ask" in r)}
    todo = [(row, name) for row in rows for name in ASKS if (row["id"], name) not in done]
    server = LlamaBackend(args.model).engine.server if todo else None
    for row, name in tqdm(todo, desc="asking", unit="call"):
        start = time.perf_counter()
        found = readers.read_gate(server, row, "ru", ASKS[name][0])
        jsonl.append_rows(out, [{"id": row["id"], "ask": name, "question": row["question"],
                                 "answerable": row["answerable"], "model": args.model, "p_yes": found["p_yes"],
                                 "seconds": round(time.perf_counter() - start, 1)}])
    print(f"{len(todo)} call(s) made: {out}")
    return 0


def auc(args) -> int:
    """Each ask's AUC (answerable over no-answer, its score read so that higher means "holds the
    answer"), the contest ask's from its `gate` rows, and the means over asks, on the prompts
    every ask has read."""
    scores: dict = {"contest ask": {r["id"]: r["p_yes"] for r in readers.rows_of([args.gate_rows])
                                    if r.get("way") == "gate"}}
    answerable = {}
    for r in readers.rows_of([args.asks]):
        holds = ASKS[r["ask"]][1]
        scores.setdefault(r["ask"], {})[r["id"]] = r["p_yes"] if holds else 1 - r["p_yes"]
        answerable[r["id"]] = bool(r["answerable"])
    ids = sorted(set(answerable).intersection(*scores.values()))
    names = list(scores)
    scores["mean of all"] = {i: sum(scores[n][i] for n in names) / len(names) for i in ids}
    for name in names[1:]:
        scores[f"mean of contest ask, {name}"] = {i: (scores["contest ask"][i] + scores[name][i]) / 2 for i in ids}
    print(f"{len(ids)} prompts ({sum(answerable[i] for i in ids)} answerable)\n\n| ask | AUC |\n|---|---:|")
    for name, found in scores.items():
        value = contest_gate.auc([found[i] for i in ids if answerable[i]], [found[i] for i in ids if not answerable[i]])
        print(f"| {name} | {'–' if value is None else f'{value:.3f}'} |")
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("read", help="ask a local model each ask over answer prompts, P(yes) per (prompt, ask)")
    r.add_argument("--prompts", action="append", required=True, help="answer prompts (JSONL; repeat for several)")
    r.add_argument("--model", default="qwen2.5-coder-0.5b", help="a llama: model (name or GGUF path)")
    r.add_argument("--out", required=True)
    a = sub.add_parser("auc", help="each ask's AUC, the contest ask's and the means")
    a.add_argument("asks", help="a `read` file")
    a.add_argument("--gate-rows", required=True, help="a bench/readers.py `read` file with the contest ask's gate rows")
    args = p.parse_args(argv)
    return {"read": read, "auc": auc}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
