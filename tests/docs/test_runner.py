"""The docs' example runner: what counts as an example, a match, a failure."""

from __future__ import annotations

from pathlib import Path

from tests.docs.runner import matches, page_folder, parse_examples, run_page, update_page

PAGE = """# A page

```text
cat assess --pool DIR   (a synopsis: not run)
```

```console
$ echo one \\
    two
one two
$ printf 'a\\nb\\n'
a
b
```

```python
x = 6 * 7
print(x)
```

```text title="output"
42
```

```python
print(x + 1)
```
"""


def test_parse_examples_finds_commands_code_and_outputs() -> None:
    examples = parse_examples(PAGE)
    assert [e.kind for e in examples] == ["console", "console", "python", "python"]
    assert examples[0].code == "echo one \\\n    two"
    assert examples[0].expected == ["one two"]
    assert examples[1].expected == ["a", "b"]
    assert examples[2].expected == ["42"]
    assert examples[3].expected is None  # no output block follows: printed, not compared
    assert examples[0].line == 8


def test_ellipsis_line_matches_any_lines() -> None:
    assert matches(["a", "...", "d"], ["a", "b", "c", "d"])
    assert matches(["a", "...", "d"], ["a", "d"])
    assert not matches(["a", "...", "d"], ["a", "b", "c"])


def test_ellipsis_in_a_line_matches_within_that_line_only() -> None:
    assert matches(["done in ... s"], ["done in 34 s"])
    assert not matches(["done in ... s"], ["done in 34", "s"])
    assert not matches(["θ 0.70"], ["θ 0.71"])


def test_trailing_spaces_and_blank_edges_do_not_count() -> None:
    assert matches(["", "x  ", ""], ["x"])
    assert not matches(["x"], ["x", "y"])


def test_a_table_a_little_wider_still_matches() -> None:
    shown = ["┏━━━━━━┳━━━━━━━━┓", "┃ time ┃ 9 ms   ┃", "┃ rmse ┃ 0.25   ┃"]
    wider = ["┏━━━━━━┳━━━━━━━━━┓", "┃ time ┃ 10 ms   ┃", "┃ rmse ┃ 0.25    ┃"]
    assert matches([line.replace("9 ms", "... ms") for line in shown], wider)
    assert not matches(shown, [line.replace("0.25", "0.26") for line in wider])
    assert not matches(["a b"], ["ab"])


def test_a_page_runs_and_its_outputs_are_checked(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(PAGE)
    outcomes = run_page(page, page_folder(tmp_path))
    assert [o.problem for o in outcomes] == [None, None, None, None]
    assert outcomes[3].printed == ["43"]  # names last for the page


def test_a_wrong_output_fails_and_update_writes_the_real_one(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(PAGE.replace("42", "41"))
    outcomes = run_page(page, page_folder(tmp_path))
    assert outcomes[2].problem == "printed something else"
    assert update_page(page, outcomes) == 1
    assert page.read_text() == PAGE


def test_exit_codes_and_shell_state(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "```console\n$ cd item_pools && export X=7\n$ echo $X; ls -d demo\n7\ndemo\n"
        "$ false\n$ cat assess --pool nosuch --model sim:0\nerror: ...\n```\n"
    )
    outcomes = run_page(page, page_folder(tmp_path))
    assert [o.problem for o in outcomes[:2]] == [None, None]
    assert outcomes[2].problem == "exit code 1 (the page shows no error)"
    assert outcomes[3].exit_code == 2 and outcomes[3].problem is None
