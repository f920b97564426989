"""bench/stage_lines.py: the stage's lines by kind, as issue 59's line target counts them."""
from bench import stage_lines

SNIPPET = '''"""A module."""
import re  # a trailing comment is code

# a comment line


def f(x):
    """Two lines
    of docstring."""
    return x
'''


def test_a_modules_lines_split_into_docstring_comment_blank_and_code():
    assert stage_lines.kinds(SNIPPET) == {"lines": 10, "docstring": 3, "comment": 1, "blank": 3, "code": 3}


def test_answer_py_counts_from_its_word_rules_on(capsys):
    assert stage_lines.stage_source("submit/memory/answer.py").startswith(stage_lines.WORD_RULES_START)
    assert stage_lines.main([]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("| the stage | **")


def test_a_part_takes_out_its_own_definitions_and_leaves_the_shared_ones(capsys):
    """`--parts`: the kin words go with `_as_kin` alone; `empty` takes its two halves and their
    word lists but not `mentions_any`, which the other checks and the lists use; nothing in the
    stage is reached by nothing."""
    rows = {part: (lines, names) for part, lines, names in stage_lines.parts_table()}
    assert rows["kin"][1] == ["_KIN", "_as_kin"] and rows["kin"][0] > 0
    assert {"empty", "adds_nothing", "no_number", "asks_name"} <= set(rows["check empty"][1])
    assert "mentions_any" not in rows["check empty"][1] + rows["every part above at once"][1]
    assert {"decide", "switch", "Calibrator", "calibrate"} <= set(rows["(what stays with all of these out)"][1])
    assert rows["(reached by nothing)"] == (0, [])
    assert stage_lines.main(["--parts"]) == 0
    assert "| every part above at once | " in capsys.readouterr().out


def test_a_name_is_followed_through_an_alias_and_an_imported_name():
    defined = {("answer", "f"): (None, set()), ("decide", "g"): (None, set())}
    tree = stage_lines.ast.parse("from . import answer as a\nfrom .decide import g\nx = a.f(g(1))\n")
    imports = stage_lines._imports(tree)
    assert stage_lines.uses(tree.body[2], "items", imports, defined) == {("answer", "f"), ("decide", "g")}
