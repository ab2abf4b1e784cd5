"""A pool in any language: its code is checked, Chinese pools get the Chinese prompts and
any other the English ones (its question in its own language), and Chinese and Japanese
open answers are compared character by character."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from cat.cli.app import app
from cat.errors import CatError
from cat.pools.importer import import_questions
from itempool import PoolItem, QuestionSet, read_questions
from itempool.languages import is_language_code, prompt_language, text_language
from synth import prompts
from synth.errors import SynthError
from synth.names import Style
from synth.scoring import score_reply

runner = CliRunner()


def test_codes_and_what_they_decide() -> None:
    for code in ("en", "zh", "fr", "pt-BR", "zh-Hant", "yue"):
        assert is_language_code(code)
    for code in ("", "EN", "french", "en_US", "fr!", "e"):
        assert not is_language_code(code)
    assert [prompt_language(c) for c in ("zh", "zh-Hant", "ja", "fr")] == ["zh", "zh", "en", "en"]
    assert [text_language(c) for c in ("zh", "ja", "ko", "de")] == ["zh", "zh", "en", "en"]
    with pytest.raises(ValidationError):
        QuestionSet(name="x", language="French", items=())


def _french_csv(folder: Path) -> Path:
    path = folder / "fr.csv"
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["question", "A", "B", "C", "D", "answer"])
        writer.writerow(
            ["Quelle est la capitale de la France ?", "Lyon", "Paris", "Nice", "Lille", "B"]
        )
        writer.writerow(["Combien font 2 + 3 ?", "4", "5", "6", "7", "B"])
    return path


def test_a_french_pool_is_asked_with_english_instructions(tmp_path: Path) -> None:
    import_questions(_french_csv(tmp_path), {}, tmp_path / "fr", "fr", "fr")
    questions = read_questions(tmp_path / "fr")
    assert questions.language == "fr"
    item = questions.items[0]
    messages = prompts.generation(item, questions.language, Style.DIRECT)
    english = prompts.generation(item, "en", Style.DIRECT)
    assert messages == english and "Quelle est la capitale" in messages[-1][1]
    assert prompts.system_message("zh-Hant") == prompts.SYSTEM["zh"]
    with pytest.raises(SynthError, match="not a language code"):
        prompts.generation(item, "French", Style.DIRECT)


def test_japanese_open_answers_are_compared_by_character() -> None:
    item = PoolItem(id="ja1", type="open", question="日本の首都は？", references=["東京都です"])
    # Without spaces, word tokens would make the whole reply one token and score 0.
    near = score_reply("東京です", item, language="ja")
    assert near.credit > 0.5
    assert score_reply("東京です", item, language="de").credit == 0.0


def test_the_command_takes_any_code_and_refuses_what_is_not_one(tmp_path: Path) -> None:
    source = _french_csv(tmp_path)
    args = ["pool", "import", "questions", str(source), "--out", str(tmp_path / "p")]
    done = runner.invoke(app, [*args, "--language", "fr"])
    assert done.exit_code == 0, done.output
    assert json.loads((tmp_path / "p" / "pool.json").read_text())["language"] == "fr"
    bad = runner.invoke(app, [*args[:-1], str(tmp_path / "q"), "--language", "French"])
    assert bad.exit_code == 2 and "'French' is not a language code" in bad.output
    assert not (tmp_path / "q").exists()
    with pytest.raises(CatError, match="must be a language code"):
        import_questions(source, {}, tmp_path / "r", "r", "fr_FR")
