"""The submission and the judge of a run, built from its options.

`build_model(options)` is the one place where the options become a configured
`SubmitModelWithMemory` (the settings tree from `Options.config()`, the LLM from its spec);
`build_judge(options)` the `--judge` LLM. A start failure that is the user's to fix (an unknown
kind, a missing model or store, a broken embedding cache, a number out of range) comes back as
one-line `UsageError`. Called by run.py.
"""
from __future__ import annotations

import shutil
import sqlite3
import sys
from contextlib import contextmanager
from pathlib import Path

from . import specs
from .errors import UsageError

ROOT = Path(__file__).resolve().parent.parent
# The local models' calibrations on the shipped sets, made by `bench/readers.py keep` from recorded
# readings: a fresh clone's first run of a local reader takes its own (`--gate kept`).
SHIPPED_CALIBRATIONS = ROOT / "local_eval" / "calibrated"


@contextmanager
def startup_errors(options):
    """Backend start failures that are the user's to fix (a spec, a path, the cache file) as UsageError."""
    from submit.config import ConfigError
    from submit.memory.llm import BackendUnavailable
    try:
        yield
    except (BackendUnavailable, ConfigError) as e:
        raise UsageError(str(e)) from None
    except sqlite3.DatabaseError as e:  # raised when the cache file is opened, so it names that file
        cache = Path(options.cache_dir) / "embeddings.sqlite"
        raise UsageError(f"the embedding cache {cache} cannot be used ({e}); delete it, "
                         "or pass --cache-dir '' to run without it") from None


def build_model(options):
    """The configured submission: every kind the contest has, and the evaluation-only ones; with
    `--submission DIR`, that folder's class instead, its vLLM answered by the same LLM."""
    from submit import SubmitModelWithMemory
    with startup_errors(options):  # a number out of the tree's range is the user's too
        config = options.config()
        seed_calibrations(config.memory.calibration_cache)
        spec = specs.parse(options.llm)
        if options.submission:
            return other_submission(options, spec)
        llm = specs.build(spec)
        model_path = spec.arg if spec.kind in ("vllm", "hf") else ""
        return SubmitModelWithMemory(model_path=model_path, config=config, llm=llm)


def seed_calibrations(folder: str, shipped: Path = SHIPPED_CALIBRATIONS) -> None:
    """The shipped kept calibrations copied into the run's calibration cache where it lacks them
    (a file's name is its key: model, set, asks); one a run kept there itself is never replaced. A
    cache that cannot be written is said in one line, and the run goes on without them."""
    if not folder:
        return
    try:
        for found in sorted(shipped.glob("*.json")):
            target = Path(folder) / found.name
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(found, target)
    except OSError as error:
        print(f"local_eval: the shipped calibrations could not be copied into {folder} ({error}); a local "
              "reader runs every check uncalibrated", file=sys.stderr)


def other_submission(options, spec: specs.Spec):
    """`--submission DIR`: the folder's `SubmitModelWithMemory(model_path)`, unchanged, in a process of its
    own (started by run.py in the run folder), its vLLM stand-in answered by the spec's LLM; the model
    folder is the local model's (the `llama:` model of the spec, else the main one installed), the
    reader's context the model's unless --submission-ctx says otherwise. `--llm vllm:DIR`: the real
    vLLM instead, imported by the submission itself, DIR its model folder, as on the contest machine."""
    from . import submission
    from .llms import llama, pins
    package = submission.package_dir(options.submission)
    if spec.kind == "vllm":
        return real_engine(options, spec, package)
    llm = specs.build(spec)
    local = next((s for s in specs.walk(spec) if s.kind == "llama"), None)
    context = options.submission_ctx or llama.Options.of(dict(local.options) if local else {}).ctx
    if options.submission_model:
        folder = Path(options.submission_model).resolve()
        if not (folder / "config.json").is_file():
            raise UsageError(f"--submission-model {folder}: no config.json there; a model folder holds config.json "
                             "and the tokenizer's files")
    else:
        gguf = llama.model_path(local.arg if local else pins.MAIN)
        folder = submission.model_folder(gguf, Path(options.cache_dir or ROOT / ".cache"))
    return submission.Remote(package, llm, str(folder), context, keep_going=options.keep_going,
                             env=submission_env(options, folder))


def submission_env(options, folder: Path) -> dict:
    """The contest machine has a GPU, so our own class takes vLLM there (`auto`); here it is told to,
    with the submission's model folder. A submission that embeds may use the run's embedding cache
    (local_eval/systems/rag does). Other submissions ignore these."""
    env = {"GIGAMEMORY_LLM": f"vllm:{folder}"}
    if options.cache_dir:
        env["GIGAMEMORY_EMBED_CACHE"] = str(Path(options.cache_dir) / "embeddings.sqlite")
    return env


def real_engine(options, spec: specs.Spec, package: Path):
    """`--submission DIR --llm vllm:MODEL`: the submission's process imports the real vLLM and loads
    MODEL itself; the engine's own length and refusals hold, so the stand-in's options do not apply."""
    from . import submission
    for flag, given in (("--submission-ctx", options.submission_ctx), ("--submission-model", options.submission_model)):
        if given:
            raise UsageError(f"{flag} is for the vLLM stand-in; with --llm vllm:DIR the real engine loads DIR, "
                             "its own length and tokenizer: leave it out")
    folder = Path(spec.arg).resolve()
    if not (folder / "config.json").is_file():
        raise UsageError(f"--llm vllm:{spec.arg}: no config.json there; vLLM loads a model folder (config.json, "
                         "tokenizer and weights)")
    return submission.Remote(package, None, str(folder), 0, keep_going=options.keep_going,
                             env=submission_env(options, folder), engine="vllm")


@contextmanager
def running(model, out: Path):
    """The model started in the run folder for the records, and ended after them (another submission's
    process; our own class needs neither); a process that did not end cleanly is said in one line."""
    if not hasattr(model, "start"):
        yield
        return
    model.start(out)
    try:
        yield
    finally:
        ended = model.close()
        if ended:
            print(f"run.py: {ended}", file=sys.stderr)
            model.unclean = True


def build_judge(options):
    """The `--judge` LLM, None without one."""
    if not options.judge:
        return None
    with startup_errors(options):
        return specs.make_llm(options.judge)
