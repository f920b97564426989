"""The house's import graph: no circle anywhere, and the contest package imports nothing of evaluation.

Read from the source with `ast` (nothing is imported), so a circle hidden behind a lazy
import inside a function counts too."""
import ast
from pathlib import Path

from conftest import ROOT

PACKAGES = ("submit", "local_eval", "bench", "tools")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, modules: set) -> set:
    """The project modules a file imports, relative imports resolved, anywhere in the file."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{a.name}" for a in node.names] + [base]
        else:
            continue
        for target in targets:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def graph() -> dict:
    files = [p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py") if "_site" not in p.parts]
    modules = {module_name(p) for p in files}
    return {module_name(p): imports_of(p, modules) for p in files}


def cycles(edges: dict) -> list:
    """Every strongly connected component of more than one module (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_no_import_circle_in_the_house():
    edges = graph()
    # a package's __init__ importing its own modules is how Python packages work, not a circle
    plain = {m: {t for t in ts if not (m.startswith(t + ".") and t in edges)} for m, ts in edges.items()}
    assert cycles(plain) == []


def test_the_contest_package_imports_nothing_of_evaluation():
    edges = graph()
    leaks = {m: sorted(t for t in ts if t.split(".")[0] in ("local_eval", "bench", "tools"))
             for m, ts in edges.items() if m.split(".")[0] == "submit"}
    assert {m: t for m, t in leaks.items() if t} == {}


def test_the_cycle_finder_finds_a_circle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_a_module_imported_from_a_folder_no_longer_on_the_path_is_caught(tmp_path):
    # what conftest's autouse check (imports_as_found) fails a test for, and restored_imports drops
    import sys
    from conftest import imported_as_found
    (tmp_path / "stand_in_x.py").write_text("VALUE = 1\n")
    sys.path.insert(0, str(tmp_path))
    try:
        import stand_in_x  # noqa: F401
        assert imported_as_found("stand_in_x")  # a fresh import gives this very file
    finally:
        sys.path.remove(str(tmp_path))
    try:
        assert not imported_as_found("stand_in_x")  # the folder is gone from the path: a stale module
        assert imported_as_found("json") and imported_as_found("submit")
    finally:
        del sys.modules["stand_in_x"]
