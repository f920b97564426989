"""Run our harness replica on an unpacked submission, the way the contest calls it.

    python tools/rehearse.py --unpacked DIR [--data FILE.jsonl] [--out DIR]

DIR holds the zip's contents under DIR/submit. The model is built as the contest builds
it, `SubmitModelWithMemory(model_path)`, with the configuration from the environment
(GIGAMEMORY_LLM etc.). Used by tools/check_zip.py here and by the Docker rehearsal.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODEL_PATH = "/app/models/GigaChat-20B-A3B-instruct-v1.5-bf16"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--unpacked", required=True, help="folder holding submit/ (the unpacked zip)")
    p.add_argument("--data", action="append", help="GigaMemory jsonl files (default: the demo)")
    p.add_argument("--model-path", default=MODEL_PATH)
    p.add_argument("--out", default="rehearsal")
    args = p.parse_args(argv)
    sys.path[:0] = [args.unpacked, str(ROOT / "local_eval"), str(ROOT)]
    start = time.time()
    from submit import SubmitModelWithMemory
    print(f"import (with offline install): {time.time() - start:.1f} s", flush=True)
    from local_eval import harness, tasks
    model = SubmitModelWithMemory(args.model_path)
    print(f"built in {time.time() - start:.1f} s: llm={model.llm.name} embedder={model.embedder.name}", flush=True)
    records = tasks.load("demo") + [r for path in args.data or () for r in tasks.load("gigamemory", path)]
    results = [harness.run_record(model, r) for r in records]
    harness.write_outputs(results, Path(args.out))
    bad = [r.id for r in results if not (isinstance(r.answer, str) and r.answer.strip())]
    print(f"{len(results)} records, {sum(r.answer_time for r in results):.1f} s answering; "
          f"fallbacks: {dict(model.fallbacks)}; wrote {args.out}/submit.csv")
    for r in results[:5]:
        print(f"  {r.id}: {r.answer}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
