"""The contest path on real vLLM 0.9.2 (CPU build): the contest class over the contest sample,
every LLM call timed and read back from the engine, then the engine behaviours our backend
leans on, shown rather than inferred. Run in the rehearsal environment (docs/vllm_cpu.md):

    make vllm-rehearsal            # = the command below, on .vllm-cpu/
    GIGAMEMORY_LLM=vllm:.vllm-cpu/models/qwen2.5-coder-0.5b-instruct GIGAMEMORY_VLLM_MAX_MODEL_LEN=8192 \\
        .vllm-cpu/python bench/vllm_rehearsal.py --sessions 4 --out bench/results/vllm_cpu

Writes OUT.json (every call: purpose, batch size, seconds, the engine's token counts and finish
reasons, each reply) and OUT.md (the tables). `--compact-json off` builds the engine with the
whitespace the grammar allows (the state before the fix) for comparison; `--records` picks the
sample's records, `--sessions` how many of each dialogue's first sessions are written (the
sessions that hold the answer are kept too, so the question means something).
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

from local_eval import harness, jsonl, specs
from local_eval.tasks import gigamemory
from submit import SubmitModelWithMemory
from submit.config import Config, replaced
from submit.memory import facts, items, versions
from submit.memory.llm_backends import VLLMBackend

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "runs" / "vllm_rehearsal"  # `work`

DATA = ROOT.parent / "shared" / "data" / "gigamemory" / "format_example.jsonl"  # ../shared, as elsewhere
PURPOSES = {json.dumps(facts.FACTS_SCHEMA): "extract", json.dumps(versions.SCHEMA): "versions",
            json.dumps(versions.CHECK_SCHEMA): "versions_check", json.dumps(items.LIST_SCHEMA): "lists"}


def bounded_schemas() -> None:
    """Our schemas with bounds (`--bounded-schemas`): facts arrays and fields at the limits the
    parser cuts to anyway, version keys at a group's size; measures whether bounds stop a small
    model's repetition loops before max_tokens. Swaps the module attributes the calls read."""
    item = facts.FACTS_SCHEMA["properties"]["facts"]["items"]
    bounded_item = {**item, "properties": {k: {"type": "string", "maxLength": facts.LIMITS[k]}
                                           for k in item["properties"]}}
    facts.FACTS_SCHEMA = {**facts.FACTS_SCHEMA, "properties": {"facts": {
        "type": "array", "maxItems": facts.MAX_FACTS_PER_PAIR, "items": bounded_item}}}
    versions.SCHEMA = {**versions.SCHEMA, "properties": {"keys": {
        "type": "array", "maxItems": versions.MAX_GROUP, "items": {"type": "string", "maxLength": 60}}}}
    PURPOSES.update({json.dumps(facts.FACTS_SCHEMA): "extract", json.dumps(versions.SCHEMA): "versions"})


def purpose_of(params) -> str:
    guided = params.guided_decoding
    if guided is None and params.logprobs:  # the decline gate's one token, its calibration's too
        return "yes/no P(yes)"
    if guided is None:
        return "answer"
    return PURPOSES.get(json.dumps(guided.json), "other schema")


class Recorder:
    """Wraps the engine's own `generate` to keep what vLLM returned for every call."""

    def __init__(self, engine):
        self.engine, self.inner, self.calls = engine, engine.generate, []
        self.record = None  # the record being run, set by run_sample
        engine.generate = self.generate

    def generate(self, prompts, params, **kwargs):
        start = time.perf_counter()
        outputs = self.inner(prompts, params, **kwargs)
        seconds = time.perf_counter() - start
        self.calls.append({
            "record": self.record, "purpose": purpose_of(params), "batch": len(prompts), "returned": len(outputs),
            "seconds": round(seconds, 2), "max_tokens": params.max_tokens,
            "prompt_tokens": [len(o.prompt_token_ids) for o in outputs],
            "output_tokens": [len(o.outputs[0].token_ids) for o in outputs],
            "finish": [o.outputs[0].finish_reason for o in outputs],
            "replies": [o.outputs[0].text for o in outputs]})
        print(f"vllm: {self.calls[-1]['purpose']}, {len(prompts)} prompt(s): {seconds:.1f} s", flush=True)
        return outputs


def cut_sample(path: Path, records: int, sessions: int, out: Path) -> Path:
    """The first `records` records, each cut to its first `sessions` sessions plus the answer's
    (`ans_session_ids`), written to `out` in the contest's format; `out` returned."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()][:records]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps({**r, "sessions": [s for i, s in enumerate(r["sessions"]) if i < sessions
                                                         or s["id"] in (r.get("ans_session_ids") or ())]},
                                      ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return out


def work(out: str) -> Path:
    """The run's own files (the cut sample, a submission's run folder): under runs/, not beside the
    report, so no copy of the data lands in the repository."""
    return WORK / Path(out).name


def sample(path: Path, records: int, sessions: int, out: Path) -> list:
    """The cut sample's records (`cut_sample`), as the harness reads them."""
    return gigamemory.load(str(cut_sample(path, records, sessions, out)))


def contest_model(compact_json: bool) -> tuple:
    """The contest class from the environment, as the contest builds it; seconds to start."""
    # The contest's time budget and answer ceiling are sized for GigaChat on an A100; on two CPU
    # cores they would skip extraction and cut the answer, which is what this run must exercise.
    config = replaced(Config.from_env(), {"time_budget": False, "budget.answer_ceiling_s": 7 * 24 * 3600.0})
    start = time.perf_counter()
    folder = specs.parse(config.llm).arg  # GIGAMEMORY_LLM=vllm:DIR
    if compact_json:
        model = SubmitModelWithMemory(folder, config=config)
    else:  # the engine before the fix, through the same class
        llm = VLLMBackend(folder, max_model_len=config.vllm_max_model_len, compact_json=False)
        model = SubmitModelWithMemory("", config=config, llm=llm)
    return model, time.perf_counter() - start


def run_sample(model, records: list, recorder: Recorder) -> list:
    rows = []
    for record in records:
        recorder.record = record.id
        result = harness.run_record(model, record)
        stats = result.stats or {}
        rows.append({"id": record.id, "question_type": record.question_type, "question": record.question,
                     "gold": record.gold, "answer": result.answer, "answer_time": round(result.answer_time, 1),
                     "sessions": len(record.sessions), "pairs": len(harness.pairs(harness.flatten(record)[0])),
                     "ledger": stats.get("llm"), "extraction": stats.get("extraction"), "gate": stats.get("gate")})
    return rows


def behaviours(backend: VLLMBackend, recorder: Recorder) -> dict:
    """The two engine behaviours the backend leans on, and the fallback on a refused schema."""
    from vllm import SamplingParams, TokensPrompt
    chat = [{"role": "user", "content": "Ответь одним словом: какого цвета небо?"}]
    ok = TokensPrompt(prompt_token_ids=backend.encode(chat, 8))
    copies = backend.max_model_len // len(ok["prompt_token_ids"]) + 1
    too_long = TokensPrompt(prompt_token_ids=ok["prompt_token_ids"] * copies)
    out = {}
    for step in ("raw", "backend"):
        try:
            backend.engine.generate([ok, too_long], SamplingParams(max_tokens=8, temperature=0.0))
        except ValueError as error:
            out[f"{step}_error"] = str(error)[:200]
        if step == "raw":
            left = backend.engine.generate([ok], SamplingParams(max_tokens=8, temperature=0.0), use_tqdm=False)
            out["raw_next_call_returned"] = len(left)
        else:
            replies = backend.generate([chat], max_tokens=8)
            out["backend_returned"], out["backend_reply"] = len(replies), replies[0].text
    long_chat = [{"role": "user", "content": "Запомни текст.\n" + "Мой кот любит спать на подоконнике. " * 3000
                  + "\nКак зовут кота? Ответь кратко."}]
    before = len(backend.tokenizer.apply_chat_template(long_chat, add_generation_prompt=True))
    start = time.perf_counter()
    reply = backend.generate([long_chat], max_tokens=20)[0]
    out["long_prompt"] = {"tokens_before": before, "tokens_sent": reply.prompt_tokens,
                          "max_model_len": backend.max_model_len, "reply": reply.text,
                          "seconds": round(time.perf_counter() - start, 1)}
    refused = {"type": "object", "properties": {"day": {"type": "string", "format": "date"}}, "required": ["day"]}
    before = backend.stats["schema_refused"]
    reply = backend.generate([chat], max_tokens=12, schema=refused)[0]
    out["refused_schema"] = {"refusals": backend.stats["schema_refused"] - before, "reply": reply.text,
                             "retried_unguided": recorder.calls[-1]["purpose"] == "answer"}
    return out


def summarize(calls: list) -> list:
    """Per purpose, batch size and max_tokens (an answer's 100 apart from a second look's 40): calls,
    prompts, seconds per prompt, tokens, replies cut."""
    groups: dict = {}
    for call in calls:
        groups.setdefault((call["purpose"], call["batch"], call["max_tokens"]), []).append(call)
    rows = []
    for (purpose, batch, _), group in sorted(groups.items()):
        prompts = sum(c["batch"] for c in group)
        outputs = [t for c in group for t in c["output_tokens"]]
        rows.append({"purpose": purpose, "batch": batch, "calls": len(group), "prompts": prompts,
                     "s_per_prompt": round(sum(c["seconds"] for c in group) / prompts, 2),
                     "prompt_tokens_mean": round(statistics.mean(t for c in group for t in c["prompt_tokens"])),
                     "output_tokens_mean": round(statistics.mean(outputs)), "max_tokens": group[0]["max_tokens"],
                     "cut": sum(f == "length" for c in group for f in c["finish"])})
    return rows


def pipeline_counts(records: list) -> dict:
    """The pipeline's own parse counts (`memory_stats()["extraction"]`), summed over the records."""
    total: Counter = Counter()
    for row in records:
        total.update(row["extraction"] or {})
    return dict(total)


def markdown(result: dict) -> str:
    lines = [f"# vLLM 0.9.2 on CPU: the contest path ({result['label']})", "",
             f"`{result['command']}`", "",
             f"{result['environment']}; `GIGAMEMORY_LLM={result['model']}`, max_model_len {result['max_model_len']}, "
             f"compact JSON {'on' if result['compact_json'] else 'off'}, "
             f"VLLM_ENABLE_V1_MULTIPROCESSING={result['multiprocessing']}; 1-minute load average "
             f"{result['load_average'][0]} at the start, {result['load_average'][1]} at the end.", "",
             f"Start-up (the contest class: engine, then embedder): **{result['startup_s']:.0f} s**; "
             f"backend `{result['llm']}`, fallbacks {result['fallbacks'] or 'none'}, "
             f"schemas refused by xgrammar in the run: {result['schema_refused']}, replies cut: {result['cut']}.",
             "", "(`cut`: replies that stopped at max_tokens; a one-token P(yes) call always does.)",
             "", "| purpose | batch | calls | prompts | s/prompt | prompt tok | output tok | max_tokens | cut |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in result["by_batch"]:
        lines.append(f"| {r['purpose']} | {r['batch']} | {r['calls']} | {r['prompts']} | {r['s_per_prompt']} | "
                     f"{r['prompt_tokens_mean']} | {r['output_tokens_mean']} | {r['max_tokens']} | {r['cut']} |")
    c = pipeline_counts(result["records"])
    lines += ["", f"Our parsers, by the pipeline's own counts: {c.get('unparsable', 0)} of {c.get('candidates', 0)} "
              f"extraction replies unreadable ({c.get('facts', 0)} facts); {c.get('versions_unparsable', 0)} of "
              f"{c.get('versions_groups', 0)} versions replies unusable (not one key per record); "
              f"{c.get('versions_check_unparsable', 0)} of {c.get('versions_checked', 0)} checks unreadable.", "",
              "| record | type | sessions | pairs | answer s | LLM calls | answer | gold |",
              "|---|---|---:|---:|---:|---:|---|---|"]
    for r in result["records"]:
        calls = (r["ledger"] or {}).get("calls")
        lines.append(f"| {r['id']} | {r['question_type']} | {r['sessions']} | {r['pairs']} | {r['answer_time']} | "
                     f"{calls} | {r['answer'][:120]} | {r['gold'][:80]} |")
    for lang, calibration in sorted((result.get("calibrations") or {}).items()):
        gated = [r for r in result["records"] if (r.get("gate") or {}).get("p_yes") is not None]
        lines += ["", f"Decline gate ({lang}), calibrated by this run's own model on "
                  f"{calibration['calls']} shipped prompts (one token each, their calls in the table's "
                  f"`yes/no P(yes)` rows): {'on' if calibration['on'] else 'off'}, {calibration['why']}; "
                  f"AUC {calibration['auc']}, threshold {calibration['threshold']}. Per record, P(yes): "
                  + (", ".join(f"{r['id']} {r['gate']['p_yes']:.3f}" + (" (declined)" if r["gate"]["gated"] else "")
                               for r in gated) or "none asked") + "."]
    if result.get("behaviours"):
        lines += ["", "Engine behaviours on real vLLM:", "", "```json",
                  json.dumps(result["behaviours"], ensure_ascii=False, indent=1), "```"]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", default=str(DATA))
    p.add_argument("--records", type=int, default=4)
    p.add_argument("--sessions", type=int, default=4)
    p.add_argument("--compact-json", choices=("on", "off"), default="on")
    p.add_argument("--no-behaviours", action="store_true", help="skip the engine behaviour checks")
    p.add_argument("--bounded-schemas", action="store_true",
                   help="bound the facts and versions schemas (maxItems, maxLength) to measure the effect")
    p.add_argument("--out", default=str(ROOT / "bench" / "results" / "vllm_cpu"))
    p.add_argument("--render", metavar="OUT.json", help="only write OUT.md again from a finished run's OUT.json")
    p.add_argument("--submission", metavar="DIR", help="run this contest-format folder instead of the contest "
                   "class (e.g. local_eval/systems/baseline, the organizers' baseline), through local_eval/run.py "
                   "--submission with the real engine")
    args = p.parse_args(argv)
    if args.submission:
        return rehearse_submission(args, argv)
    if args.render:
        result = json.loads(Path(args.render).read_text(encoding="utf-8"))
        Path(args.render).with_suffix(".md").write_text(markdown(result), encoding="utf-8")
        return 0
    logging.basicConfig(level=logging.WARNING)
    compact = args.compact_json == "on"
    if args.bounded_schemas:
        bounded_schemas()
    load_before = os.getloadavg()[0]  # the machine is shared: timings mean little without the load
    model, startup = contest_model(compact)
    recorder = Recorder(model.llm.engine)
    rows = run_sample(model, sample(Path(args.data), args.records, args.sessions, work(args.out) / "sample.jsonl"),
                      recorder)
    backend = model.llm
    result = {
        "label": f"compact JSON {args.compact_json}" + (", bounded schemas" if args.bounded_schemas else ""),
        "command": " ".join(["bench/vllm_rehearsal.py", *(argv or sys.argv[1:])]),
        "environment": environment(), "model": os.environ.get("GIGAMEMORY_LLM", ""),
        "max_model_len": backend.max_model_len, "compact_json": compact,
        "multiprocessing": os.environ.get("VLLM_ENABLE_V1_MULTIPROCESSING", "1"),
        "load_average": [round(load_before, 1), round(os.getloadavg()[0], 1)], "startup_s": startup,
        "llm": backend.name, "fallbacks": dict(model.fallbacks),
        "schema_refused": backend.stats["schema_refused"], "cut": backend.stats["cut_json"],
        "by_batch": summarize(recorder.calls), "records": rows,
        "calibrations": {lang: c.as_dict() for lang, c in model.calibrations.items()}}
    if not args.no_behaviours:
        result["behaviours"] = behaviours(backend, recorder)
    result["calls"] = recorder.calls
    write_report(args.out, result, markdown)
    return 0


def write_report(out: str, result: dict, render) -> None:
    """OUT.json (the result) and OUT.md (`render` of it), the tables printed too."""
    text = render(result)
    Path(out + ".json").write_text(json.dumps(result, ensure_ascii=False, indent=1), encoding="utf-8")
    Path(out + ".md").write_text(text, encoding="utf-8")
    print(text)


CONTEST_LENGTH = 131072  # GigaChat's max_model_len on the contest machine (../shared/docs/VLLM.md)


def contest_length(model: Path) -> Path:
    """The model folder declaring the contest model's length: config.json's max_position_embeddings
    CONTEST_LENGTH, every other file linked. The organizers' baseline asks `truncate_prompt_tokens=
    131072`, which vLLM refuses above the engine's max_model_len (VLLM.md §3): with the 0.5B's own
    32768 every answer would be that error. The cut sample's prompts stay far below 32768."""
    folder = model.parent / f"{model.name}-{CONTEST_LENGTH}"
    folder.mkdir(exist_ok=True)
    for path in model.iterdir():
        if path.name != "config.json" and not (folder / path.name).exists():
            (folder / path.name).symlink_to(path.resolve())
    config = json.loads((model / "config.json").read_text(encoding="utf-8"))
    (folder / "config.json").write_text(json.dumps({**config, "max_position_embeddings": CONTEST_LENGTH}, indent=1),
                                        encoding="utf-8")
    return folder


def rehearse_submission(args, argv) -> int:
    """Another contest-format submission on the real engine, as the contest runs it: `local_eval/run.py
    --submission DIR --llm vllm:MODEL` over the cut sample, the submission importing vLLM itself;
    MODEL is GIGAMEMORY_LLM's folder at the contest's length (`contest_length`)."""
    from local_eval import run as run_py
    model = contest_length(Path(specs.parse(Config.from_env().llm).arg))
    data = cut_sample(Path(args.data), args.records, args.sessions, work(args.out) / "sample.jsonl")
    folder = work(args.out) / "run"
    load_before = os.getloadavg()[0]
    code = run_py.main(["--dataset", "gigamemory", "--data", str(data), "--submission", args.submission,
                        "--llm", f"vllm:{model}", "--out", str(folder), "--fresh"])
    if code not in (0, 4):
        return code
    latest = {r["id"]: r for r in jsonl.read_rows(folder / "results.jsonl", lambda r: "id" in r)[0]}
    sessions = {record.id: len(record.sessions) for record in gigamemory.load(str(data))}
    result = {"command": " ".join(["bench/vllm_rehearsal.py", *(argv or sys.argv[1:])]), "submission": args.submission,
              "environment": environment(), "model": str(model), "load_average": [round(load_before, 1),
                                                                                   round(os.getloadavg()[0], 1)],
              "records": [{**{k: r[k] for k in ("id", "question_type", "question", "gold", "answer", "answer_time",
                                                "lexical_correct")},
                           "sessions": sessions.get(r["id"]),
                           "llm": (r.get("stats") or {}).get("llm")} for r in latest.values()]}
    write_report(args.out, result, submission_markdown)
    return 0


def submission_markdown(result: dict) -> str:
    lines = [f"# vLLM 0.9.2 on CPU: `{result['submission']}` as the contest runs it", "",
             f"`{result['command']}`", "",
             f"{result['environment']}; the submission's own process imported the real vLLM and loaded "
             f"`{result['model']}` (the model folder with config.json's max_position_embeddings at the contest's "
             f"{CONTEST_LENGTH}: `contest_length`); 1-minute load average {result['load_average'][0]} at the start, "
             f"{result['load_average'][1]} at the end.", "",
             "| record | type | sessions | LLM calls | prompt tok | output tok | answer s | lexical | answer | gold |",
             "|---|---|---:|---:|---:|---:|---:|---|---|---|"]
    for r in result["records"]:
        llm = r["llm"] or {}
        lines.append(f"| {r['id']} | {r['question_type']} | {r['sessions']} | {llm.get('calls')} | "
                     f"{llm.get('prompt_tokens')} | {llm.get('output_tokens')} | {r['answer_time']:.1f} | "
                     f"{'right' if r['lexical_correct'] else 'wrong'} | {r['answer'][:120]} | {r['gold'][:80]} |")
    return "\n".join(lines) + "\n"


def environment() -> str:
    from importlib.metadata import PackageNotFoundError, version

    def installed(name: str) -> str:
        try:
            return version(name)
        except PackageNotFoundError:
            return "not installed"
    names = ("vllm-cpu", "torch", "xgrammar", "transformers")
    return (", ".join(f"{n} {installed(n)}" for n in names)
            + f", Python {sys.version.split()[0]}, {os.cpu_count()} cores")


if __name__ == "__main__":
    sys.exit(main())
