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
