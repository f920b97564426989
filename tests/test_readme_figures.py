"""docs/results.md and README.md's "How good": every figure comes back from the command beside it.

docs/results.md holds every verified figure in tables of three columns, figure | value | command,
under the headings of their stage; README.md's "How good" block quotes some of them. The test
reads every table of docs/results.md and the block.

The convention, for whoever adds a row to docs/results.md. The figure cell says what is measured
and links its results file (a Markdown link, resolved from docs/, to a file or folder that exists);
caveats are footnotes. The command cell holds ONE command, in backticks, that prints the row's
figure: a replay (`replay:DIR`, a recorded fixture) where a model or a judge made it; then the
label of each line of its output that holds the figure, in backticks too: (lines `fixture`,
`q15_before`). A label names a table line with that cell (cells side by side for a label with
`\\|`, which a Markdown table needs even between backticks), or a text line that starts with it
(`ALL` in run.py's table); a table's header is no line of a row. Every number of the value cell
must appear in those lines (a cell without numbers, such as `none`, must appear whole), so a cell
says a figure the way its command prints it for that row, and a number another line prints
("28/28" for another reader) does not count. A row whose command needs what CI lacks ends its
command cell with an italic reason that starts with *needs* (*needs the local model*, *needs
Docker*, *needs an hour*) and links its recorded run in its figure cell; the test does not run it.
A row whose replay store went stale (the code changed a prompt after the store was recorded) says
*stale replay* there and links the run it was recorded from: the test runs it and expects the
miss, so whoever records the store again must drop the marker, and a store that goes stale
unmarked fails here first.

The front page's block, measure | ours | the organizers' baseline | plain RAG, has at most eight
rows and no cell over 120 characters. Each row's measure cell links the section of
docs/results.md it comes from (`docs/results.md#the-local-15b`), and every number of its other
three cells must stand in a value cell of that section (its subsections included), where the
section's command prints it: the block quotes figures, it never makes them.

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

from bench.rows import COLUMNS, NUMBER, command, figures, labels, links, printed, read, row_output, table_rows, tables
from conftest import HANG_GUARD, ROOT, SHARED_DATA, copy_checkout

README = ROOT / "README.md"
RESULTS = ROOT / "docs" / "results.md"
BLOCK_COLUMNS = ["measure", "ours", "the organizers' baseline", "plain RAG"]


def block_rows(text: str) -> list[dict]:
    """The rows of the front page's "How good" block."""
    section = text.split("## How good", 1)[1].split("\n## ", 1)[0]
    return [row for table in tables(section) for row in table["rows"]]


ROWS = table_rows(RESULTS.read_text(encoding="utf-8"))
RUN = [row for row in ROWS if "*needs" not in row["command"]]
BLOCK = block_rows(README.read_text(encoding="utf-8"))


def test_every_row_names_one_command_and_a_results_file():
    assert ROWS, "docs/results.md holds no figure | value | command table"
    for row in ROWS:
        assert command(row["command"]), f"a row without a command: {row}"
        files = [name for name in links(row["figure"]) if name]
        assert files, f"a row without its results file: {row}"
        for name in files:
            assert (RESULTS.parent / name).exists(), f"a row links a results file that is not there: {name}"
    for row in RUN:
        assert labels(row["command"]), f"a row that does not name the lines of its figure: {row}"


def test_every_table_of_the_results_page_is_checked():
    """A table of another shape would hold figures no command is asked for."""
    for table in tables(RESULTS.read_text(encoding="utf-8")):
        assert table["header"] == COLUMNS, f"a docs/results.md table with other columns: {table['header']}"


def test_the_front_page_block_quotes_the_results_page():
    assert BLOCK, 'README.md has no "How good" block'
    assert len(BLOCK) <= 8, f"the block has {len(BLOCK)} rows, at most 8"
    for row in BLOCK:
        columns = [c for c in row if c not in ("sections", "line")]
        assert columns == BLOCK_COLUMNS, f"the block's columns: {columns}"
        for column in BLOCK_COLUMNS:
            assert len(row[column]) <= 120, f"a cell over 120 characters: {row[column]}"
        anchors = [target.split("#", 1)[1] for target in re.findall(r"\]\(([^)\s]+)\)", row["measure"])
                   if target.split("#")[0] == "docs/results.md" and "#" in target]
        assert anchors, f"a row that links no section of docs/results.md: {row['measure']}"
        values = "\n".join(r["value"] for r in ROWS if anchors[0] in r["sections"])
        assert values, f"no figure of docs/results.md stands under #{anchors[0]}"
        for column in BLOCK_COLUMNS[1:]:
            quoted = NUMBER.findall(row[column].replace("`", "").replace("*", ""))
            missing = [f for f in quoted if not printed(f, values)]
            assert not missing, f"{missing} of the block's {column!r} cell stand in no value cell of " \
                                f"docs/results.md#{anchors[0]}: {row[column]}"


def test_the_block_parse_reads_sections():
    page = "# P\n\n## A b, c\n\n| figure | value | command |\n|---|---|---|\n| f | 1/2 | `x` |\n\n" \
           "### D 1.5B\n\n| figure | value | command |\n|---|---|---|\n| g | 3 | `y` |\n"
    rows = table_rows(page)
    assert [r["value"] for r in rows] == ["1/2", "3"]
    assert rows[0]["sections"] == ["p", "a-b-c"] and rows[1]["sections"] == ["p", "a-b-c", "d-15b"]
    assert links("f — [a.md](../a.md#x), [b](b.txt)") == ["../a.md", "b.txt"]


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
    """The results page's command line as a user types it, in the copy."""
    line = re.sub(r"^\.venv/bin/python ", shlex.quote(sys.executable) + " ", line)
    env = {**os.environ, "TQDM_DISABLE": "1", "PYTHONPATH": str(repo)}
    return subprocess.run(["bash", "-c", line], cwd=repo, capture_output=True, text=True, env=env,
                          timeout=HANG_GUARD)


_outputs: dict = {}  # one run per command: several rows may quote the same one


@pytest.mark.parametrize("row", RUN, ids=[f"{r['sections'][-1]}: {r['figure'][:40]}" for r in RUN])
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
    lines, missing = read(row, output)
    stale = "*stale replay*" in row["command"]
    if stale:
        assert proc.returncode or missing, f"the replay runs again: drop *stale replay* from its row: {line}"
        return
    assert proc.returncode == 0, f"exit {proc.returncode}: {line}\n{output[-2000:]}"
    assert not missing, f"{line} does not print {missing} in its lines {labels(row['command'])} (its cell: " \
                        f"{row['value']})\n{lines or output[-2000:]}"
    assert not left, f"{line} left files in the tree: {left}"
