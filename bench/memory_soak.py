"""Memory soak: many dialogues through write / answer / clear; the process's RSS must stay flat.

    .venv/bin/python bench/memory_soak.py --dialogues 200 --pairs 200

Prints RSS (MiB) after every 20 dialogues and the growth from dialogue 20 to the end
(the first dialogues warm caches: lemma cache, imports, allocator pools).
"""
from __future__ import annotations

import argparse
import random
import resource
import sys

from models import Message

WORDS = "я живу работаю люблю кот собака город Томск Казань жена сын концерт машина книга спорт бег".split()


def rss_mib() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def dialogue(model, name: str, pairs: int, rng: random.Random) -> None:
    for i in range(pairs):
        user = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 30)))
        model.write_to_memory([Message("user", user, i // 10), Message("assistant", "Понятно. " * 20, i // 10)], name)
    model.answer_to_question(name, "Где я живу?")
    model.clear_memory(name)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dialogues", type=int, default=200)
    p.add_argument("--pairs", type=int, default=200)
    p.add_argument("--embedder", default="hash")
    args = p.parse_args(argv)
    from submit import SubmitModelWithMemory
    from submit.config import Config
    model = SubmitModelWithMemory("", config=Config(llm="scripted", embedder=args.embedder))
    rng, marks = random.Random(0), {}
    for n in range(1, args.dialogues + 1):
        dialogue(model, f"d{n}", args.pairs, rng)
        if n % 20 == 0:
            marks[n] = rss_mib()
            print(f"after {n:>4} dialogues: RSS {marks[n]:.1f} MiB", flush=True)
    first = min(marks)
    print(f"growth from dialogue {first} to {args.dialogues}: {marks[max(marks)] - marks[first]:+.1f} MiB; "
          f"memories held: {len(model.memories)}, traces held: {len(model.traces)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
