"""Every example in the docs runs and prints what the page shows (``tests.docs.runner``).

A page whose example fails names the page and line, the code, what the page shows and
what was printed; ``python -m tests.docs.runner --update PAGE`` writes the new output.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.runner import ROOT, page_folder, parse_examples, report, run_page

PAGES = sorted(
    [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")],
    key=lambda p: str(p.relative_to(ROOT)),
)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_page_examples_print_what_the_page_shows(page: Path, tmp_path: Path) -> None:
    if not parse_examples(page.read_text(encoding="utf-8")):
        pytest.skip("no examples on this page")
    outcomes = run_page(page, page_folder(tmp_path))
    problems = report(page.relative_to(ROOT), outcomes)
    assert not problems, problems
