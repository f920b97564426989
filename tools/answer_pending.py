"""Answer the prompts a `collect:DIR` pass queued, with any LLM backend, into DIR/replies.jsonl.

    .venv/bin/python tools/answer_pending.py runs/batch --llm openai:http://gpu-host:8000/v1#GigaChat

The batch-mode step between two passes of `local_eval/run.py --llm collect:DIR`: every
prompt of DIR/pending.jsonl without a reply yet is sent (grouped by its settings, in
batches, the schema passed on for guided decoding) and each reply appended as a
{"key", "reply"} line as soon as its batch returns, so an interrupted job loses nothing
and a rerun goes on. `openai:` reads OPENAI_API_KEY. Any other job that writes the same
lines works as well. Exit codes: 0 done; 2 a bad spec or folder; 3 the LLM failed (a server
down), the replies received before it kept.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from local_eval.specs import make_llm
from local_eval.llms.store import answer_pending
from submit.memory.llm import BackendUnavailable


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("folder", help="the DIR of collect:DIR (holds pending.jsonl)")
    p.add_argument("--llm", required=True, help="LLM spec, e.g. openai:http://host:8000/v1#MODEL or vllm:PATH")
    p.add_argument("--batch", type=int, default=64, help="prompts per generate call")
    args = p.parse_args(argv)
    replies = Path(args.folder) / "replies.jsonl"
    try:
        written = answer_pending(args.folder, make_llm(args.llm), batch=max(1, args.batch))
    except BackendUnavailable as e:
        print(f"answer_pending.py: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # a server that is down, or went away: the batches it answered are kept
        print(f"answer_pending.py: stopped: --llm {args.llm} failed ({type(e).__name__}: {e}); the replies "
              f"received before it are in {replies}; run the same command again to go on", file=sys.stderr)
        return 3
    print(f"{written} replies appended to {replies}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
