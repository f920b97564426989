"""README.md's commands run as written: every `local_eval/run.py` line of its shell blocks.

The blocks run in the README's order, each line as a new user would type it, in a copy of
the checkout with `../shared/data` beside it, so the run folders they make meet each other
as they would on the user's machine (two commands that share a default folder, a merge of
the shards made above). Two things differ, both outside what the commands say: every run
takes `--limit 1` (unless it names a limit or merges) and the checkout's embedding cache,
so the walk takes minutes, not hours. A README path that names a file we do not ship
(`PATH/LoCoMo_refined/...`) gets a stand-in in the release's schema, a server the test
cannot reach (`openai:http://gpu-host...`) the scripted LLM, as the README itself does for
its batch-mode numbers. Lines with other placeholders (`DIR`, `FILE`, `HOST`) are schemas,
not commands, and are left out. Without `../shared/data` the lines that read it are skipped.

The copy's own code runs (PYTHONPATH puts it before the editable install, so run folders land
in the copy), and the copy has no local model (`.models/` is not tracked): lines that leave
`--llm` out run the scripted LLM, as on a machine without the model, because the model would
first extract facts from a whole benchmark dialogue, an hour on two cores. The local model's
own path is tested by tests/test_local_model.py.
"""
import os
import re
import shlex
import subprocess
import sys

import pytest

from conftest import HANG_GUARD, ROOT, SHARED_DATA, copy_checkout, write_refined

README = ROOT / "README.md"
RUNNERS = ("local_eval/run.py", "tools/answer_pending.py")
PLACEHOLDER = re.compile(r"\b(PATH|DIR|FILE|HOST|MODEL|URL|SPEC|N|K)\b")
UNREACHABLE = re.compile(r"^openai:http://(gpu-host|host|HOST)\b")


def shell_blocks(text: str) -> list:
    """The lines of each fenced shell block (```, ```bash, ```sh), continuation lines joined."""
    blocks, current = [], None
    for line in text.splitlines():
        fence = re.match(r"\s*```(\w*)", line)
        if fence and current is None:
            current = [] if fence.group(1) in ("", "bash", "sh", "shell", "console") else False
        elif fence:
            if current:
                blocks.append(re.sub(r"\\\n\s*", " ", "\n".join(current)).splitlines())
            current = None
        elif current is not False and current is not None:
            current.append(line)
    return blocks


def commands(text: str) -> list:
    """Per block, the argv of each line that runs one of RUNNERS with the venv's python."""
    out = []
    for block in shell_blocks(text):
        lines = [line for line in block if line.strip().startswith(".venv/bin/python ")]
        argvs = [shlex.split(re.sub(r"\s#.*", "", line)) for line in lines]  # bash: a comment after a blank
        argvs = [a for a in argvs if a[1:2] and a[1] in RUNNERS]
        if argvs:
            out.append(argvs)
    return out


BLOCKS = commands(README.read_text(encoding="utf-8"))


def as_run(argv: list, stand_ins: dict) -> list:
    """The README's argv with our small limits and stand-ins (see the module docstring)."""
    args = [stand_ins.get((before, a), a) for before, a in zip(["", *argv], argv)]
    args[0] = sys.executable
    if args[1] == "local_eval/run.py":
        args += [] if {"--limit", "--merge"} & set(args) else ["--limit", "1"]
        args += [] if "--cache-dir" in args else ["--cache-dir", str(ROOT / ".cache")]
    for i, arg in enumerate(args[:-1]):
        if arg == "--llm" and UNREACHABLE.match(args[i + 1]):
            args[i + 1] = "scripted"
    return args


def why_not(argv: list, stand_ins: dict) -> str:
    """Why a README line cannot run here ('' when it can)."""
    if any("../shared/data" in a for a in argv) and not SHARED_DATA.is_dir():
        return "../shared/data is not beside the checkout"
    rest = [a for before, a in zip(["", *argv], argv) if (before, a) not in stand_ins and not UNREACHABLE.match(a)]
    schematic = [a for a in rest if PLACEHOLDER.search(a)]
    return f"a schema, not a command ({schematic[0]})" if schematic else ""


@pytest.fixture(scope="module")
def checkout(tmp_path_factory):
    """A copy of the checkout's files (tracked and new, nothing ignored) with ../shared beside it."""
    base = tmp_path_factory.mktemp("readme")
    repo = copy_checkout(base)
    if repo is None:
        pytest.skip("the README walk copies the checkout with git")
    refined = write_refined(base / "questions.jsonl")
    return repo, {("--refined", a): str(refined) for argv in sum(BLOCKS, []) for a in argv
                           if a.endswith("questions.jsonl") and not (ROOT / a).exists()}


def test_the_readme_has_run_commands():
    assert BLOCKS and any(argv[1] == "local_eval/run.py" for block in BLOCKS for argv in block)


def test_the_front_page_sets_up_tests_and_runs_the_main_job():
    """The front page keeps the two set-up commands and the main job, and stays a front page: the
    figures live on docs/results.md (tests/test_readme_figures.py), at most 120 lines, 12,000 characters."""
    text = README.read_text(encoding="utf-8")
    lines = [re.sub(r"\s#.*", "", line).strip() for block in shell_blocks(text) for line in block]
    for wanted in ("make install", "make test", ".venv/bin/python local_eval/run.py"):
        assert wanted in lines, f"README.md has no shell line `{wanted}`"
    assert len(text.splitlines()) <= 120, f"README.md has {len(text.splitlines())} lines, at most 120"
    assert len(text) <= 12000, f"README.md has {len(text)} characters, at most 12,000"


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_commands_run_as_written(block, checkout):
    repo, stand_ins = checkout
    env = {**os.environ, "TQDM_DISABLE": "1", "PYTHONPATH": str(repo)}
    ran = []
    for argv in block:
        reason = why_not(argv, stand_ins)
        if reason:
            continue
        proc = subprocess.run(as_run(argv, stand_ins), cwd=repo, capture_output=True, text=True, env=env,
                              timeout=HANG_GUARD)
        ok = (0, 4) if any(a.startswith("collect:") for a in argv) else (0,)  # a collect: pass leaves work
        assert proc.returncode in ok, f"README line failed ({proc.returncode}): {shlex.join(argv)}\n" \
                                      f"{proc.stdout[-1500:]}\n{proc.stderr[-1500:]}"
        ran.append(argv)
    if not ran:
        pytest.skip("no line of this block can run here: " + why_not(block[0], stand_ins))
