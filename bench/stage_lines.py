"""The answer stage's size, as issue 59 counts it (decision, checks, calibration, lists): decide.py,
gate.py, items.py, calibrating.py, and answer.py's word rules from its `_MARKER` comment on (its
prompt, reply cleaning and shorten step are no part of the decision). Each file's lines split into
docstring, comment, blank and code lines. With `--parts`: for each part `bench/ablate.py` can take
out, the stage's code that would go with it, found by following names from what the rest of
`submit/` uses: the part's own definitions and every one only it reaches (a shared helper stays).

    .venv/bin/python bench/stage_lines.py               # the working tree
    .venv/bin/python bench/stage_lines.py --at 739b146  # a commit, read with `git show`
    .venv/bin/python bench/stage_lines.py --parts       # what each part of the checks holds
"""
from __future__ import annotations

import argparse
import ast
import io
import subprocess
import sys
import tokenize
from pathlib import Path

FILES = ("submit/memory/decide.py", "submit/memory/gate.py", "submit/memory/items.py", "submit/calibrating.py",
         "submit/memory/answer.py")
WORD_RULES_START = "# A session marker"  # answer.py from here on: the checks' word rules


def kinds(source: str) -> dict:
    """A module's lines by kind: `docstring` (a module's, class's or function's), `comment` (a line
    that is only a comment), `blank`, and `code` (the rest); `lines` in all."""
    return {kind: len(found) for kind, found in line_kinds(source).items()}


def line_kinds(source: str) -> dict:
    """`kinds`, as the sets of line numbers (from 1); `lines` all of them."""
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
    every = set(range(1, len(lines) + 1))
    return {"lines": every, "docstring": docstring, "comment": comment, "blank": blank,
            "code": every - docstring - comment - blank}


def stage_source(path: str, at: str = "") -> str:
    """The stage's part of a file, from the working tree or the commit `at`."""
    source = subprocess.run(["git", "show", f"{at}:{path}"], capture_output=True, text=True, check=True).stdout \
        if at else open(path, encoding="utf-8").read()
    if path.endswith("/answer.py"):
        lines = source.splitlines(keepends=True)
        start = next(n for n, line in enumerate(lines) if line.startswith(WORD_RULES_START))
        source = "".join(lines[start:])
    return source


# ---------------------------------------------------------------- what goes with a part


def _module(path: str) -> str:
    return Path(path).stem


def definitions(paths=FILES) -> dict:
    """The stage's top-level definitions, (module, name) -> (the AST node, its code lines), answer.py's
    from `WORD_RULES_START` on (its earlier ones use the stage: `graph` counts them among the roots)."""
    found = {}
    for path in paths:
        source = open(path, encoding="utf-8").read()
        start = len(source.splitlines()) - len(stage_source(path).splitlines()) + 1
        code = line_kinds(source)["code"]
        for node in ast.parse(source).body:
            if node.lineno < start:
                continue
            first = node.decorator_list[0].lineno if getattr(node, "decorator_list", None) else node.lineno
            for name in _names_defined(node):
                found[(_module(path), name)] = (node, set(range(first, node.end_lineno + 1)) & code)
    return found


def _names_defined(node) -> list:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) \
        else []
    return [t.id for t in targets if isinstance(t, ast.Name)]


def _imports(tree) -> tuple:
    """A module's imports from the stage's modules: alias -> module, and name -> (module, name)."""
    stage = {_module(p) for p in FILES}
    aliases, names = {}, {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        source = (node.module or "").rsplit(".", 1)[-1]
        for alias in node.names:
            if alias.name in stage:  # `from . import answer as answer_step`
                aliases[alias.asname or alias.name] = alias.name
            elif source in stage:  # `from .gate import with_ask`
                names[alias.asname or alias.name] = (source, alias.name)
    return aliases, names


def uses(node, module: str, imports: tuple, defined: dict) -> set:
    """The stage definitions a node names: bare names of its module or imported, and `alias.name`
    (`imports`: its module's, `_imports`)."""
    aliases, names = imports
    out = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            key = (module, sub.id) if (module, sub.id) in defined else names.get(sub.id)
        elif isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id in aliases:
            key = (aliases[sub.value.id], sub.attr)
        else:
            continue
        if key in defined:
            out.add(key)
    return out


def graph(defined: dict) -> tuple:
    """-> (each definition's uses, the definitions the rest of `submit/` uses: the roots)."""
    trees = {path: ast.parse(open(path, encoding="utf-8").read()) for path in Path("submit").rglob("*.py")}
    imports = {path: _imports(tree) for path, tree in trees.items()}  # once a module, read by each of its nodes
    edges = {key: uses(node, key[0], imports[_path_of(key[0])], defined) for key, (node, _) in defined.items()}
    roots = set()
    for path, tree in trees.items():
        module = path.stem
        for node in tree.body:
            names = _names_defined(node)
            if names and (module, names[0]) in defined:
                continue  # a stage definition: its uses are edges, not roots
            roots |= uses(node, module, imports[path], defined)
    return edges, roots


def _path_of(module: str) -> Path:
    return Path(next(p for p in FILES if _module(p) == module))


def _module_of(module) -> str:
    """A stage module's name as `definitions` keys it («decide» for `submit.memory.decide`)."""
    return module.__name__.rsplit(".", 1)[-1]


def reached(edges: dict, roots: set, cut: set = frozenset(), cut_edges: set = frozenset()) -> set:
    """The definitions reachable from `roots`, less those `cut` and the edges `cut_edges` (from, to)."""
    seen, todo = set(), [r for r in roots if r not in cut]
    while todo:
        key = todo.pop()
        if key in seen:
            continue
        seen.add(key)
        todo += [k for k in edges.get(key, ()) if k not in cut and (key, k) not in cut_edges]
    return seen


def parts_table() -> list:
    """Per `bench/ablate.py` part, and per larger part: the definitions that would go with it and their
    code lines; then what stays with all of them out. A class is one definition: the methods it has
    for a part (`Calibrator`'s for the gate and the speaker decline) stay with it."""
    from bench.ablate import RULES
    defined = definitions()
    edges, roots = graph(defined)
    every = reached(edges, roots)
    rows = []
    for part, (module, attribute, _) in RULES.items():
        module = _module_of(module)
        if part.startswith("check "):
            kept = reached(edges, roots, cut_edges={((module, "CHECKS"), (module, part.split(" ", 1)[1]))})
        else:
            kept = reached(edges, roots, cut={(module, attribute)})
        gone = sorted(every - kept)
        rows.append((part, sum(len(defined[k][1]) for k in gone), [name for _, name in gone]))
    whole = {  # the stage's larger parts, each as the definitions taken out with it
        "every part above at once": ({(_module_of(m), a) for p, (m, a, _) in RULES.items()
                                      if not p.startswith("check ")} | {("decide", "CHECKS")}),
        "the list asks (items.py)": {k for k in defined if k[0] == "items"},
        "the speaker decline (its gate.py part)": {("gate", "speaker_margin"), ("gate", "speaker_calibration")},
        "the P(yes) gate (its gate.py part)": {("gate", "read"), ("gate", "speaks_for"), ("gate", "ask")},
    }
    for part, cut in whole.items():
        gone = sorted(every - reached(edges, roots, cut=cut))
        rows.append((part, sum(len(defined[k][1]) for k in gone), [name for _, name in gone]))
    left = sorted(reached(edges, roots, cut=set().union(*whole.values())))
    rows.append(("(what stays with all of these out)", sum(len(defined[k][1]) for k in left), [n for _, n in left]))
    unused = sorted(set(defined) - every)
    rows.append(("(reached by nothing)", sum(len(defined[k][1]) for k in unused), [n for _, n in unused]))
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--at", default="", help="a commit to count instead of the working tree")
    p.add_argument("--parts", action="store_true", help="the code each part of the checks holds (working tree)")
    args = p.parse_args(argv)
    if args.parts:
        print("| part | code lines that go with it | definitions |\n|---|---|---|")
        for part, lines, names in parts_table():
            print(f"| {part} | {lines} | {', '.join(f'`{n}`' for n in names)} |")
        return 0
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
