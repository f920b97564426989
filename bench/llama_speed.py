"""Speed of the local models on this machine: load time, prompt and output tokens per second.

    nice -n 10 .venv/bin/python bench/llama_speed.py                    # every installed pinned model
    nice -n 10 .venv/bin/python bench/llama_speed.py --models qwen2.5-coder-0.5b --threads 1,2

Each model reads the same Russian answer prompt (the demo's first dialogue as excerpts,
~670 tokens, no prompt cache: the prompt rate) and answers it, then one extraction prompt
with its schema (~70 output tokens: the output rate); the figures are the server's own timings.
The machine's load average is
printed beside each row: on a shared 2-core machine the rates move with it.
Writes bench/results/llama_speed.md.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from local_eval.llms import pins
from local_eval.llms.llama import LlamaBackend, request
from submit import prompts
from submit.memory.facts import FACTS_SCHEMA

ROOT = Path(__file__).resolve().parent.parent

OUT = ROOT / "bench" / "results" / "llama_speed.md"


def demo_text() -> str:
    row = json.loads((ROOT / "local_eval" / "data" / "demo" / "dialogues.jsonl").read_text("utf-8").splitlines()[0])
    return "\n".join(f"{m['role']}: {m['content']}" for s in row["sessions"] for m in s["messages"])


def measure(name: str, threads: int) -> dict:
    start = time.perf_counter()
    llm = LlamaBackend(name, {"ctx": "4096", "threads": str(threads)})
    load = time.perf_counter() - start
    answer = prompts.render("answer", "ru", question="Кем я работаю?", context=demo_text(), facts=[],
                            question_date=None, ask=prompts.text("answer", "ru", "ask"), people=[])
    extract = prompts.render("extract", "ru", message="Я работаю сварщиком на заводе в Туле, а по выходным "
                             "рыбачу на Оке.", before="")
    free = llm.engine.server.handle_chat_completions({**request(answer, 64, None), "cache_prompt": False})
    timed = time.perf_counter()
    schema = llm.engine.server.handle_chat_completions({**request(extract, 256, FACTS_SCHEMA), "cache_prompt": False})
    extract_s = time.perf_counter() - timed
    llm.close()
    t, e = free["timings"], schema["timings"]
    return {"model": name, "threads": threads, "load_s": round(load, 1), "prompt_n": t["prompt_n"],
            "prompt_tps": round(t["prompt_per_second"], 1), "output_n": e["predicted_n"],
            "output_tps": round(e["predicted_per_second"], 1), "extract_s": round(extract_s, 1),
            "answer": free["choices"][0]["message"]["content"], "load_avg": round(os.getloadavg()[0], 1)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default=",".join(n for n in pins.PINS if pins.installed(n)))
    p.add_argument("--threads", default="2")
    p.add_argument("--out", default=str(OUT))
    args = p.parse_args(argv)
    rows = [measure(name, int(k)) for name in args.models.split(",") if name for k in args.threads.split(",")]
    header = ("| model | threads | load s | prompt tokens | prompt tok/s | output tokens | output tok/s "
              "| one extraction s | load avg | its answer to «Кем я работаю?» |")
    lines = [header, "|---" * (header.count("|") - 1) + "|"]
    for r in rows:
        lines.append(f"| {r['model']} | {r['threads']} | {r['load_s']} | {r['prompt_n']} | {r['prompt_tps']} "
                     f"| {r['output_n']} | {r['output_tps']} | {r['extract_s']} | {r['load_avg']} "
                     f"| {r['answer'][:80]} |")
    table = "\n".join(lines)
    print(table)
    command = "nice -n 10 .venv/bin/python bench/llama_speed.py " + " ".join(argv or sys.argv[1:])
    Path(args.out).write_text(f"# Local model speed (xllamacpp, CPU)\n\n`{command.strip()}`\n\n"
                              f"{os.cpu_count()} CPUs, shared; load avg = the 1-minute load when the row finished.\n\n"
                              f"{table}\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
