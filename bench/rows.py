"""The rows of docs/results.md, read as tests/test_readme_figures.py reads them (that test's docstring
holds the convention: one command a row, the labels of the output lines that carry its figure), and
a runner for what the test leaves out: a row marked *needs …* (minutes cold, a model, Docker). Each
row's command runs as written from the repository root; every number of its value cell must stand
in the output lines it names.

    .venv/bin/python bench/rows.py --list               # the rows: line, figures, what each needs
    .venv/bin/python bench/rows.py 93 95                # those rows (their line numbers in results.md)
    .venv/bin/python bench/rows.py --grep 'dev users'   # the rows whose figure cell holds the words
    .venv/bin/python bench/rows.py --all                # every row but those that need Docker, the
                                                        # network, the vLLM build, the local model or
                                                        # tens of minutes (--slow: those too)

A line a row: `ok`, or the figures missing and the lines read. Exit 1 where a row's command fails or
a figure is missing (or, for a row marked *stale replay*, where it prints its figures again). The
commands run in this checkout, not a copy: one that writes its results file writes it again
(`git diff bench/results` shows what moved; timings always do).
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

RESULTS = Path("docs/results.md")
NUMBER = re.compile(r"\d+(?:[.,]\d+)*(?:/\d+)?%?")
COLUMNS = ["figure", "value", "command"]
NEEDS = re.compile(r"\*(needs [^*]*)\*")
SLOW = re.compile(r"tens of minutes|Docker|network|vLLM|local model")  # what --all leaves out


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, blanks as dashes."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def tables(text: str) -> list[dict]:
    """Every table of a Markdown page: its header, its rows (dicts by the header's column names, with
    the anchors of the headings it stands under, its own and those above it, and its line number)."""
    found, heads, current = [], [], None
    for number, line in enumerate(text.splitlines() + [""], 1):
        heading = re.match(r"(#+)\s+(.*)", line)
        if heading:
            level = len(heading.group(1))
            heads = [h for h in heads if h[0] < level] + [(level, slug(heading.group(2)))]
        if line.startswith("|"):
            if current is None:
                current = {"header": [c.strip() for c in split_cells(line)], "lines": [],
                           "sections": [anchor for _, anchor in heads]}
                found.append(current)
            else:
                current["lines"].append((number, line))
        else:
            current = None
    for table in found:
        table["rows"] = [dict(zip(table["header"], (c.strip() for c in split_cells(line))),
                              sections=table["sections"], line=number)
                         for number, line in table["lines"][1:]]
    return found


def table_rows(text: str) -> list[dict]:
    """The rows of every figure | value | command table of the page, each with its sections."""
    return [row for table in tables(text) if table["header"] == COLUMNS for row in table["rows"]]


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


def links(cell: str) -> list[str]:
    """The paths a cell links to (Markdown links; an anchor after `#` left off)."""
    return [target.split("#")[0] for target in re.findall(r"\]\(([^)\s]+)\)", cell)]


def needs(row: dict) -> str:
    """What the row says its command needs («needs minutes cold, seconds warm»), or ""."""
    found = NEEDS.search(row["command"])
    return found.group(1) if found else ""


def read(row: dict, output: str) -> tuple[str, list]:
    """The lines of a command's `output` that `row` names (all of it where it names none, as a row
    marked *needs …* may), and the figures of its value cell missing from them."""
    named = labels(row["command"])
    lines = row_output(output, named) if named else output
    return lines, [f for f in figures(row["value"]) if not printed(f, lines)]


def run(line: str) -> subprocess.CompletedProcess:
    """A row's command run as written, with bash, from the current folder."""
    return subprocess.run(["bash", "-c", line], capture_output=True, text=True)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("lines", nargs="*", type=int, help="results.md line numbers of the rows to check")
    p.add_argument("--grep", default="", help="the rows whose figure cell holds these words")
    p.add_argument("--all", action="store_true", help="every row but the slow ones")
    p.add_argument("--slow", action="store_true", help="with --all or --grep: the rows that need Docker, the "
                   "network, the vLLM build, the local model or tens of minutes too")
    p.add_argument("--list", action="store_true", help="list the rows; run nothing")
    p.add_argument("--results", default=str(RESULTS), help=f"the results page (default: {RESULTS})")
    args = p.parse_args(argv)
    found = table_rows(Path(args.results).read_text(encoding="utf-8"))
    if args.list:
        for row in found:
            print(f"{row['line']:4d}  {len(figures(row['value'])):2d} figures  {row['figure'][:90]}"
                  + (f"  [{needs(row)}]" if needs(row) else ""))
        return 0
    unknown = set(args.lines) - {row["line"] for row in found}
    if unknown:
        print(f"no row at line(s) {sorted(unknown)} of {args.results} (--list shows them)")
        return 2
    chosen = [row for row in found if row["line"] in args.lines
              or ((args.all or (args.grep and args.grep in row["figure"]))
                  and (args.slow or not SLOW.search(needs(row))))]
    if not chosen:
        print("no row chosen: give line numbers, --grep WORDS or --all (--list shows the rows)")
        return 2
    failed, done = 0, {}  # one run per command: several rows may quote the same one
    for row in chosen:
        line = command(row["command"])
        if line not in done:
            done[line] = run(line)
        status, output = done[line].returncode, done[line].stdout + done[line].stderr
        lines, missing = read(row, output)
        lines = lines or done[line].stderr[-800:]
        title = row["figure"][:80]
        if "*stale replay*" in row["command"]:  # its store is to be recorded again: a miss is expected
            failed += not (status or missing)
            said = "a miss, as its *stale replay* mark says" if status or missing else \
                "prints its figures again: drop its *stale replay* mark"
            print(f"row {row['line']}: {said} ({title})")
        elif status or missing:
            failed += 1
            said = f"exit {status}" if status else f"MISSING {', '.join(missing)} of {row['value']!r}"
            print(f"row {row['line']}: {said} ({title})")
            for printed_line in lines.splitlines()[:8] or ["(none of the lines it names was printed)"]:
                print(f"    {printed_line[:200]}")
        else:
            print(f"row {row['line']}: ok, {len(figures(row['value']))} figures ({title})")
        sys.stdout.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
