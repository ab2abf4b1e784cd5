"""How ``cat``'s errors name options: as flags under a command, as keywords from Python."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import cat
from cat.cli.app import app
from cat.errors import CatError, command_line, python_spelling


def test_python_callers_read_keywords_and_the_command_line_reads_flags() -> None:
    text = "--cross-fit stores its errors in a pool: give --pool DIR"
    assert str(CatError(text)) == "cross_fit stores its errors in a pool: give pool DIR"
    with command_line():
        assert str(CatError(text)) == text
    assert str(CatError(text)) == python_spelling(text)  # the context ends with the block


def test_suggested_commands_and_negative_switches_keep_their_flags() -> None:
    suggestion = "fit with priors (cat calibrate --priors), or use --no-cross-fit; --tol"
    assert python_spelling(suggestion) == (
        "fit with priors (cat calibrate --priors), or use --no-cross-fit; tol"
    )
    assert python_spelling("a-b --x-y1 c--d") == "a-b x_y1 c--d"


def test_one_error_in_both_spellings(tmp_path: Path) -> None:
    """The same refusal from ``cat.calibrate`` and from ``cat calibrate``."""
    path = tmp_path / "r.csv"
    path.write_text("subject_id,i1,i2,i3\ns1,1,0,1\ns2,0,1,1\ns3,1,1,0\n")
    with pytest.raises(CatError) as caught:
        cat.calibrate(path, cross_fit=5)
    assert "cross_fit stores its errors in a pool: give pool DIR" in str(caught.value)
    out = str(tmp_path / "p.csv")
    result = CliRunner().invoke(app, ["calibrate", str(path), "--out", out, "--cross-fit", "5"])
    assert result.exit_code == 2
    assert "--cross-fit stores its errors in a pool: give --pool DIR" in result.output
