"""README.md's "Where we stand": every figure comes back from the command beside it.

The convention, for whoever adds a row. The command cell holds ONE command, in backticks, that
prints the row's figure: a replay (`replay:DIR`, a recorded fixture) where a model or a judge
made it; then the label of each line of its output that holds the figure, in backticks too:
(lines `fixture`, `q15_before`). A label names a table line with that cell (cells side by
side for a label with `\\|`, which a Markdown table needs even between backticks), or a text
line that starts with it (`ALL` in run.py's table); a table's header is no line of a row. Every
number of the value cell must appear in those lines (a cell without numbers, such as `none`,
must appear whole), so a cell says a figure the way its command prints it for that row, and a
number another line prints ("28/28" for another reader) does not count. A row whose command
needs what CI lacks ends its command cell with an italic reason that
starts with *needs* (*needs the local model*, *needs Docker*, *needs an hour*) and links its
recorded run in the results cell; the test does not run it. A row whose replay store went stale
(the code changed a prompt after the store was recorded) says *stale replay* there and links
the run it was recorded from: the test runs it and expects the miss, so whoever records the
store again must drop the marker, and a store that goes stale unmarked fails here first.

Each command runs as written, with bash, in a copy of the checkout beside ../shared (as
tests/test_readme.py does): `.venv/bin/python` is this interpreter, PYTHONPATH the copy, and
the copy's `.cache` and `.models` the checkout's (the embedding cache; `make install`'s models,
whose tokenizer a `--submission` replay counts with). It must exit 0, print its figures, and
leave the copy's files as they were, new files only where git ignores them. Without
../shared/data the rows that read it are skipped.
"""
import hashlib
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import HANG_GUARD, ROOT, SHARED_DATA, copy_checkout

README = ROOT / "README.md"
NUMBER = re.compile(r"\d+(?:[.,]\d+)*(?:/\d+)?%?")


def table_rows(text: str) -> list[dict]:
    """The rows of the "Where we stand" table, each a dict by the header's column names."""
    section = text.split("## Where we stand", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("|")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    return [dict(zip(header, (c.strip() for c in split_cells(line)))) for line in lines[2:]]


def split_cells(line: str) -> list[str]:
    """A table line's cells; a `|` inside backticks stays in its cell."""
    cells, current, quoted = [], "", False
    for char in line.strip()[1:-1]:
        if char == "`":
            quoted = not quoted
        if char == "|" and not quoted:
            cells.append(current)
            current = ""
        else:
            current += char
    return cells + [current]


def command(cell: str) -> str:
    """The row's command: the first backticked text of its cell."""
    found = re.search(r"`([^`]+)`", cell)
    return found.group(1) if found else ""


def labels(cell: str) -> list[str]:
    """The labels of the output lines that hold the row's figure: the cell's other backticked texts
    (a `|` in a label is written `\\|`, which a Markdown table needs even between backticks)."""
    return [label.replace("\\|", "|") for label in re.findall(r"`([^`]+)`", cell)[1:]]


def labelled(line: str, label: str) -> bool:
    """Whether `line` is the label's: a table line with the label's cells side by side, or a text
    line that starts with the label."""
    cells = [c.strip() for c in split_cells(line)] if line.strip().startswith("|") else []
    parts = [p.strip() for p in label.split("|")]
    if any(cells[i:i + len(parts)] == parts for i in range(len(cells))):
        return True
    return re.match(rf"{re.escape(label)}(\s|$)", line.strip()) is not None


def row_output(output: str, names: list) -> str:
    """The lines of `output` that carry one of the labels `names` (a table's header line is no row)."""
    lines = output.splitlines()
    header = {i for i, line in enumerate(lines[1:]) if re.match(r"\|\s*:?-{3}", line.strip())}
    return "\n".join(line for i, line in enumerate(lines)
                     if i not in header and any(labelled(line, name) for name in names))


def figures(value: str) -> list[str]:
    """What the output must hold: the cell's numbers, or the whole cell when it has none."""
    plain = value.replace("`", "").replace("*", "")
    return NUMBER.findall(plain) or [plain]


def printed(figure: str, output: str) -> bool:
    """The figure in the output as a whole number (`0.91` is not inside `0.917`)."""
    return re.search(rf"(?<![\d./]){re.escape(figure)}(?![\d/]|[.,]\d)", output) is not None


ROWS = [row for row in table_rows(README.read_text(encoding="utf-8"))]
RUN = [row for row in ROWS if "*needs" not in row["command"]]


def test_every_row_names_one_command_and_a_results_file():
    for row in ROWS:
        assert command(row["command"]), f"a row without a command: {row}"
        assert row["results"], f"a row without its results file: {row}"
    for row in RUN:
        assert labels(row["command"]), f"a row that does not name the lines of its figure: {row}"


def test_the_figure_check_reads_cells_as_printed():
    assert figures("0.917 / 0.921") == ["0.917", "0.921"]
    assert figures("none") == ["none"]
    assert printed("0.91", "ev 0.917 and 0.91.") and not printed("0.91", "ev 0.917")
    assert not printed("4/12", "14/12") and printed("28/28", "| 28/28 |")
    assert labels("`run.py x` (lines `a`, `b \\| c`) *needs a model*") == ["a", "b | c"]
    output = "| set | ALL |\n|---|---|\n| a_before | 28/28 |\n| a | 27/28 |\n| b | c | 1/5 |\nALL 12 0.333\nALLx 0.5"
    assert row_output(output, ["a"]) == "| a | 27/28 |"  # not the 28/28 of the line beside it
    assert row_output(output, ["b | c"]) == "| b | c | 1/5 |" and row_output(output, ["c | b"]) == ""
    assert row_output(output, ["ALL"]) == "ALL 12 0.333"  # a text line, and not a table's column header


@pytest.fixture(scope="module")
def checkout(tmp_path_factory):
    repo = copy_checkout(tmp_path_factory.mktemp("figures"))
    if repo is None:
        pytest.skip("the figures test copies the checkout with git")
    (ROOT / ".cache").mkdir(exist_ok=True)  # a fresh clone has none yet, and a link to nothing blocks makedirs
    (repo / ".cache").symlink_to(ROOT / ".cache")
    if (ROOT / ".models").is_dir():  # `make install`'s models: a replay through --submission reads their tokenizer
        (repo / ".models").symlink_to(ROOT / ".models")
    return repo


def snapshot(repo) -> dict:
    """Every file of the copy (the embedding cache aside) and a hash of its bytes."""
    files = [Path(top, name) for top, dirs, names in os.walk(repo) for name in names]  # links not followed
    return {str(p.relative_to(repo)): hashlib.sha1(p.read_bytes()).hexdigest() for p in files if p.is_file()}


def changed(before: dict, after: dict) -> list[str]:
    """Files the command rewrote, or made where git would not ignore them."""
    rewritten = [name for name in before if after.get(name) != before[name]]
    new = sorted(set(after) - set(before))
    ignored = subprocess.run(["git", "check-ignore", "--no-index", "--stdin"], cwd=ROOT, input="\n".join(new),
                             capture_output=True, text=True).stdout.split() if new else []
    return rewritten + [name for name in new if name not in ignored]


def run(line: str, repo) -> subprocess.CompletedProcess:
    """The README's command line as a user types it, in the copy."""
    line = re.sub(r"^\.venv/bin/python ", shlex.quote(sys.executable) + " ", line)
    env = {**os.environ, "TQDM_DISABLE": "1", "PYTHONPATH": str(repo)}
    return subprocess.run(["bash", "-c", line], cwd=repo, capture_output=True, text=True, env=env,
                          timeout=HANG_GUARD)


_outputs: dict = {}  # one run per command: several rows may quote the same one


@pytest.mark.parametrize("row", RUN, ids=[f"{r['benchmark'] or '…'}: {r['figure'][:40]}" for r in RUN])
def test_the_figure_comes_from_its_command(row, checkout):
    line = command(row["command"])
    if "../shared/data" in line and not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not beside the checkout")
    if line not in _outputs:
        before = snapshot(checkout)
        proc = run(line, checkout)
        _outputs[line] = (proc, changed(before, snapshot(checkout)))
    proc, left = _outputs[line]
    output = proc.stdout + proc.stderr
    lines = row_output(output, labels(row["command"]))
    missing = [f for f in figures(row["value"]) if not printed(f, lines)]
    stale = "*stale replay*" in row["command"]
    if stale:
        assert proc.returncode or missing, f"the replay runs again: drop *stale replay* from its row: {line}"
        return
    assert proc.returncode == 0, f"exit {proc.returncode}: {line}\n{output[-2000:]}"
    assert not missing, f"{line} does not print {missing} in its lines {labels(row['command'])} (its cell: " \
                        f"{row['value']})\n{lines or output[-2000:]}"
    assert not left, f"{line} left files in the tree: {left}"
