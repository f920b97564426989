"""The answer stage's size, as issue 59 counts it (decision, checks, calibration, lists): decide.py,
gate.py, items.py, calibrating.py, and answer.py's word rules from its `_MARKER` comment on (its
prompt, reply cleaning and shorten step are no part of the decision). Each file's lines split into
docstring, comment, blank and code lines.

    .venv/bin/python bench/stage_lines.py               # the working tree
    .venv/bin/python bench/stage_lines.py --at 739b146  # a commit, read with `git show`
"""
from __future__ import annotations

import argparse
import ast
import io
import subprocess
import sys
import tokenize

FILES = ("submit/memory/decide.py", "submit/memory/gate.py", "submit/memory/items.py", "submit/calibrating.py",
         "submit/memory/answer.py")
WORD_RULES_START = "# A session marker"  # answer.py from here on: the checks' word rules


def kinds(source: str) -> dict:
    """A module's lines by kind: `docstring` (a module's, class's or function's), `comment` (a line
    that is only a comment), `blank`, and `code` (the rest); `lines` in all."""
    lines = source.splitlines()
    docstring = set()
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body \
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            docstring.update(range(body[0].lineno, body[0].end_lineno + 1))
    comment = {token.start[0] for token in tokenize.generate_tokens(io.StringIO(source).readline)
               if token.type == tokenize.COMMENT and lines[token.start[0] - 1].lstrip().startswith("#")}
    blank = {n for n, line in enumerate(lines, 1) if not line.strip()}
    code = set(range(1, len(lines) + 1)) - docstring - comment - blank
    return {"lines": len(lines), "docstring": len(docstring), "comment": len(comment), "blank": len(blank),
            "code": len(code)}


def stage_source(path: str, at: str = "") -> str:
    """The stage's part of a file, from the working tree or the commit `at`."""
    source = subprocess.run(["git", "show", f"{at}:{path}"], capture_output=True, text=True, check=True).stdout \
        if at else open(path, encoding="utf-8").read()
    if path.endswith("/answer.py"):
        lines = source.splitlines(keepends=True)
        start = next(n for n, line in enumerate(lines) if line.startswith(WORD_RULES_START))
        source = "".join(lines[start:])
    return source


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--at", default="", help="a commit to count instead of the working tree")
    args = p.parse_args(argv)
    columns = ("lines", "docstring", "comment", "blank", "code")
    print("| file | " + " | ".join(columns) + " |\n|---|" + "---|" * len(columns))
    total = dict.fromkeys(columns, 0)
    for path in FILES:
        found = kinds(stage_source(path, args.at))
        total = {k: total[k] + found[k] for k in columns}
        name = f"{path} (from `{WORD_RULES_START}`)" if path.endswith("/answer.py") else path
        print(f"| {name} | " + " | ".join(str(found[k]) for k in columns) + " |")
    print("| the stage | " + " | ".join(f"**{total[k]}**" for k in columns) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
