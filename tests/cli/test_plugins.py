"""Commands added from outside ``cat``: ``cat demo`` comes from ``catdemo`` through an
entry point of the group ``cat.commands``, which ``cat.cli.plugins`` reads without
``importlib.metadata``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from cat._entry import OWN_COMMANDS, is_own_call, own_commands, suggest_command
from cat.cli.plugins import GROUP, load_command, plugin_commands
from catdemo.command import demo


def test_the_demo_is_an_added_command_not_one_of_cats_own() -> None:
    assert plugin_commands()["demo"] == "catdemo.command:demo"
    assert load_command(plugin_commands()["demo"]) is demo
    assert "demo" not in OWN_COMMANDS and "demo" in own_commands()


def test_an_added_command_is_routed_like_an_own_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert is_own_call(["demo"], stdin_is_tty=False)
    assert suggest_command(["dmeo"]) == "demo"
    (tmp_path / "demo").write_text("notes\n", encoding="utf-8")
    assert not is_own_call(["demo"], stdin_is_tty=True)


def _distribution(site: Path, folder: str, text: str) -> None:
    (site / folder).mkdir(parents=True)
    (site / folder / "entry_points.txt").write_text(text, encoding="utf-8")


def test_entry_points_are_read_as_importlib_metadata_finds_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    _distribution(
        first,
        "cat_tools-1.0.dist-info",
        f"[console_scripts]\nhello = not:this\n\n[{GROUP}]\n# a comment\n"
        "hello = tools.cli:hello [extra]\nbye=tools.cli:bye\n",
    )
    # The same distribution again further down the path: shadowed, as for imports.
    _distribution(second, "Cat.Tools-0.9.dist-info", f"[{GROUP}]\nold = tools.old:old\n")
    _distribution(second, "other.egg-info", f"[{GROUP}]\nhello = other:hello\nmore = other:more\n")
    (second / "no_entry_points-2.0.dist-info").mkdir()
    monkeypatch.setattr(sys, "path", [str(first), str(tmp_path / "missing"), str(second)])
    found = plugin_commands.__wrapped__()
    assert found == {"hello": "tools.cli:hello", "bye": "tools.cli:bye", "more": "other:more"}


def test_a_target_that_is_not_a_function_is_refused() -> None:
    with pytest.raises(TypeError, match="not a function"):
        load_command("cat.cli.plugins:GROUP")
