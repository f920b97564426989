"""The submission's own process: the contest harness's side of `local_eval/run.py --submission`.

    python local_eval/shim/child.py HARNESS_SRC READ_FD WRITE_FD

Run by local_eval/submission.py as the organizers' `run.py` runs a submission: from their harness
folder `src/` (the working directory and first on the import path, `models.py` and
`submit_interface.py` beside `submit/`), nothing of local_eval's importable as `submit`, the class
imported by `from submit import SubmitModelWithMemory`, each record written pair by pair as their
`DialogProcessor` writes it and timed as it times it. Nothing here imports local_eval or our `submit`:
besides the standard library it has only the vLLM stand-in beside it (`vllm/`), whose prompts it
sends to the parent, which answers them with the run's `--llm`. With the engine `vllm` (the run's
`--llm vllm:DIR`) the submission imports the interpreter's real vLLM instead and runs its model
itself, as on the contest machine; its `LLM.generate` is only counted (requests, tokens).

The parent and this process speak JSON lines over two pipes (stdout and stderr are the
submission's, to the run's log). Parent to child: `{"model_path", "reader_context", "engine"}`,
then `{"op": "record", "id", "question", "messages"}` per record, then `{"op": "end"}`. Child to
parent: `{"op": "ready"}` or `{"op": "failed", ...}` once built (`{"op": "no_engine", "error",
"python"}` when there is no vLLM to import); `{"op": "generate", "prompt", "max_tokens", "schema",
"logprobs"}`, answered by `{"text", "logprobs"}` or `{"error"}`; per record `{"op": "record",
"answer", "answer_time", "stats", "failure"}`. A failure is `{"call", "where", "error",
"traceback"}`: the call of theirs that raised, its deepest line inside the harness folder.
"""
import functools
import json
import os
import sys
import time
import traceback
from collections import Counter

SHIM = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.realpath(os.path.dirname(os.path.dirname(SHIM)))
ENGINE: Counter = Counter()  # the real vLLM's counters (engine `vllm`); the stand-in keeps its own


def isolate(src: str, stand_in: bool = True) -> None:
    """The import path of the organizers' harness: `src` first, the vLLM stand-in next (unless the
    real engine runs), the rest of the interpreter's own; this repository's folders and its editable
    install's finder gone, so `submit`, `models` and `submit_interface` can only be the harness folder's."""
    def ours(path: str) -> bool:  # this repository (not the interpreter it links to), or a `submit` elsewhere
        real = os.path.realpath(path or ".")
        if os.path.basename(real) in ("site-packages", "dist-packages"):
            return False
        return (real == REPO or real.startswith(REPO + os.sep)
                or os.path.isfile(os.path.join(real, "submit", "__init__.py")))
    sys.path[:] = [src] + [SHIM] * stand_in + [p for p in sys.path if p and not ours(p)]
    sys.meta_path[:] = [f for f in sys.meta_path if not type(f).__module__.startswith("__editable__")
                        and not getattr(f, "__module__", "").startswith("__editable__")]
    for name in [n for n in sys.modules if n.split(".")[0] in ("submit", "models", "submit_interface")]:
        del sys.modules[name]
    os.chdir(src)


class Channel:
    """JSON lines to and from the parent."""

    def __init__(self, read_fd: int, write_fd: int):
        self.reader = os.fdopen(read_fd, "r", encoding="utf-8")
        self.writer = os.fdopen(write_fd, "w", encoding="utf-8")

    def send(self, message: dict) -> None:
        self.writer.write(json.dumps(message, ensure_ascii=False) + "\n")
        self.writer.flush()

    def receive(self):
        line = self.reader.readline()
        return json.loads(line) if line else None

    def answer(self, prompt: str, max_tokens: int, schema, logprobs):
        """The vLLM stand-in's backend: the parent's `--llm`."""
        self.send({"op": "generate", "prompt": prompt, "max_tokens": max_tokens, "schema": schema,
                   "logprobs": logprobs})
        reply = self.receive()
        if reply is None:
            raise SystemExit("local_eval: the run ended while the submission waited for a reply")
        if "error" in reply:
            raise RuntimeError(f"local_eval: the --llm behind the vLLM stand-in failed: {reply['error']}")
        import vllm
        return vllm.Reply(reply["text"], top=reply.get("top") if logprobs else None)


def failure(call: str, error: BaseException, src: str) -> dict:
    """The call that raised and where: the deepest frame inside the harness folder, else the last."""
    frames = traceback.extract_tb(error.__traceback__)
    inside = [f for f in frames if os.path.abspath(f.filename).startswith(src + os.sep)]
    frame = (inside or frames or [None])[-1]
    return {"call": call, "where": f"{frame.filename}:{frame.lineno}" if frame else "",
            "error": f"{type(error).__name__}: {error}",
            "traceback": "".join(traceback.format_exception(type(error), error, error.__traceback__))}


def counters() -> dict:
    import vllm
    if not hasattr(vllm, "refused"):  # the real engine
        return dict(ENGINE)
    return {**vllm.stats, **{f"refused_{k}": v for k, v in vllm.refused.items()}}


def count_engine(vllm) -> None:
    """The real vLLM's `LLM.generate`, wrapped to count what the stand-in counts (requests, prompt and
    output tokens) from the outputs it returns; arguments, outputs and errors pass through untouched."""
    inner = vllm.LLM.generate

    @functools.wraps(inner)
    def generate(self, *args, **kwargs):
        outputs = inner(self, *args, **kwargs)
        ENGINE["requests"] += len(outputs)
        ENGINE["prompt_tokens"] += sum(len(o.prompt_token_ids or ()) for o in outputs)
        ENGINE["output_tokens"] += sum(len(c.token_ids) for o in outputs for c in o.outputs)
        return outputs
    vllm.LLM.generate = generate


def run_record(model, message: dict, src: str) -> dict:
    """One record as the organizers' DialogProcessor runs it: a write per two messages, the answer
    timed from before the first write, then clear_memory; the first exception ends the record."""
    from models import Message
    messages = [Message(**m) for m in message["messages"]]
    before, call, answer, failed = counters(), "write_to_memory", "", None
    start = time.perf_counter()
    try:
        batch = []
        for i, m in enumerate(messages):
            batch.append(m)
            if i % 2 == 1:
                model.write_to_memory(batch, message["id"])
                batch = []
        call = "answer_to_question"
        answer = model.answer_to_question(message["id"], message["question"])
        if not isinstance(answer, str):  # their run.py defines InvalidAnswerType for it; said here as an error
            raise TypeError(f"answer_to_question returned {type(answer).__name__}, not str")
        elapsed = time.perf_counter() - start
        call = "clear_memory"
        model.clear_memory(message["id"])
    except Exception as error:  # an answer already given stays given when clear_memory raises
        failed, answer = failure(call, error, src), answer if call == "clear_memory" else ""
        elapsed = elapsed if call == "clear_memory" else time.perf_counter() - start
        print(failed["traceback"], file=sys.stderr, flush=True)
    after = counters()
    stats = {k: v - before.get(k, 0) for k, v in after.items() if v - before.get(k, 0)}
    return {"op": "record", "answer": answer, "answer_time": elapsed, "stats": stats, "failure": failed}


def main(argv: list) -> int:
    src, channel = os.path.abspath(argv[0]), Channel(int(argv[1]), int(argv[2]))
    setup = channel.receive()
    real = setup.get("engine") == "vllm"
    isolate(src, stand_in=not real)
    try:
        import vllm
    except ImportError as error:  # the real engine is not in this interpreter: the run's to say
        channel.send({"op": "no_engine", "error": f"{type(error).__name__}: {error}", "python": sys.executable})
        return 1
    if real:
        count_engine(vllm)
    else:
        vllm.configure(channel.answer, reader_context=setup["reader_context"])
    call = "import"
    try:
        from submit import SubmitModelWithMemory
        call = "__init__"
        model = SubmitModelWithMemory(setup["model_path"])
    except BaseException as error:  # theirs, said by the parent in one line; Ctrl-C stays the parent's
        channel.send({"op": "failed", **failure(call, error, src), "stats": counters()})
        print(traceback.format_exc(), file=sys.stderr, flush=True)
        return 1
    import submit
    channel.send({"op": "ready", "submit": getattr(submit, "__file__", None)})
    while True:
        message = channel.receive()
        if message is None or message["op"] == "end":
            return 0
        channel.send(run_record(model, message, src))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
