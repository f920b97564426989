"""bench/rows.py: a results.md row's command run where it stands, its figures looked for in the lines
it names (the reading itself is tests/test_readme_figures.py's)."""
from bench import rows

PAGE = r"""# Results

## Readers

| figure | value | command |
|---|---|---|
| Russian dev — [a](a.md) | 19/28 / 4/5 | `.venv/bin/python -c "print('| r | cite | 19/28 | 4/5 |'); print('| other | 3/28 |')"` (lines `r \| cite`) *needs minutes cold, seconds warm* |
| A slow one — [a](a.md) | 1/2 | `.venv/bin/python -c "print('ALL 1/2')"` (line `ALL`) *needs the local model, 5 min* |
| A stale one — [a](a.md) | 3/4 | `.venv/bin/python -c "print('ALL 2/4')"` (line `ALL`) *stale replay* |
"""


def test_rows_carry_their_line_and_what_they_need():
    found = rows.table_rows(PAGE)
    assert [r["line"] for r in found] == [7, 8, 9] and found[0]["sections"] == ["results", "readers"]
    assert rows.needs(found[0]) == "needs minutes cold, seconds warm"
    assert rows.labels(found[0]["command"]) == ["r | cite"]


def test_a_row_is_checked_by_running_its_command(tmp_path, capsys):
    page = tmp_path / "results.md"
    page.write_text(PAGE, encoding="utf-8")
    assert rows.main(["--all", "--results", str(page)]) == 0  # the slow row left out
    out = capsys.readouterr().out
    assert "row 7: ok, 2 figures" in out and "row 8" not in out
    assert rows.main(["8", "--results", str(page)]) == 0  # asked for by its line: run
    # the figure printed on a line the row does not name counts for nothing
    page.write_text(PAGE.replace("19/28 / 4/5", "3/28 / 4/5"), encoding="utf-8")
    assert rows.main(["7", "--results", str(page)]) == 1
    assert "MISSING 3/28" in capsys.readouterr().out
    assert rows.main(["6", "--results", str(page)]) == 2  # no row there
    assert rows.main(["9", "--results", str(page)]) == 0  # a stale replay's miss is what its mark says
    page.write_text(PAGE.replace("ALL 2/4", "ALL 3/4"), encoding="utf-8")
    assert rows.main(["9", "--results", str(page)]) == 1  # printed again: the mark is to go
