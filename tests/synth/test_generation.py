"""Generation settings: validation, what a run records, and how two records differ."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from pydantic import ValidationError

from synth.errors import SynthError
from synth.generation import (
    GenerationRecord,
    GenerationSettings,
    changed_settings,
    parse_extra_body,
    settings_from_options,
)


def test_defaults_are_the_built_in_settings() -> None:
    settings = GenerationSettings()
    assert settings.default
    assert settings.record() == GenerationRecord()
    assert not GenerationSettings(temperature=0.5).default


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"temperature": -0.1}, "--temperature: Input should be greater than or equal to 0"),
        ({"max_tokens": 0}, "--max-tokens: Input should be greater than or equal to 1"),
        ({"few_shot": -1}, "--few-shot: Input should be greater than or equal to 0"),
        ({"stop": ["", "x"]}, "--stop: a stop sequence must not be empty"),
        ({"extra_body": '{"model": "x"}'}, "--extra-body: the extra body must not set 'model'"),
        ({"extra_body": '{"temperature": 1}'}, "(use --temperature)"),
        ({"extra_body": '{"stream": true}'}, "'stream' (it is not supported)"),
        ({"extra_body": "[1, 2]"}, "--extra-body: must be a JSON object ({...}), got list"),
        ({"extra_body": "{nope"}, "--extra-body: not valid JSON"),
    ],
)
def test_a_bad_option_is_one_message_naming_it(options: dict[str, object], message: str) -> None:
    with pytest.raises(SynthError) as caught:
        settings_from_options(**options)  # type: ignore[arg-type]
    assert message in str(caught.value)


def test_the_extra_body_is_read_inline_or_from_a_file(tmp_path: Path) -> None:
    body = tmp_path / "body.json"
    body.write_text('{"reasoning_effort": "low", "top_k": 5}')
    assert parse_extra_body(f"@{body}") == {"reasoning_effort": "low", "top_k": 5}
    assert parse_extra_body('{"a": [1]}') == {"a": [1]}
    with pytest.raises(SynthError, match="cannot read"):
        parse_extra_body(f"@{tmp_path / 'missing.json'}")


def test_a_template_is_recorded_by_its_path_and_hash(tmp_path: Path) -> None:
    template = tmp_path / "t.j2"
    template.write_text("Q: {{ question }}\n{{ instructions }}")
    settings = settings_from_options(prompt_template=template, stop=["\n\n"], few_shot=2)
    record = settings.record()
    assert record.prompt_template == str(template)
    expected = hashlib.sha256(template.read_bytes()).hexdigest()
    assert record.prompt_template_sha256 == expected
    assert record.stop == ["\n\n"] and record.few_shot == 2
    assert "Q: {{" not in record.model_dump_json()  # the text itself is not in the record


def test_a_template_with_a_syntax_error_names_its_line(tmp_path: Path) -> None:
    template = tmp_path / "t.j2"
    template.write_text("{{ question }}\n{% for x in choices %}\n")
    with pytest.raises(SynthError, match=r"prompt template .*t\.j2, line \d+"):
        settings_from_options(prompt_template=template)


def test_the_model_refuses_what_the_options_refuse() -> None:
    with pytest.raises(ValidationError):
        GenerationSettings(extra_body={"messages": []})
    with pytest.raises(ValidationError):
        GenerationSettings(nonsense=1)  # type: ignore[call-arg]
    assert GenerationSettings(stop="END").stop == ("END",)
    assert GenerationSettings(stop=[]).stop is None


def test_changed_settings_name_each_difference() -> None:
    now = GenerationSettings(temperature=0.7, extra_body={"reasoning_effort": "low"}).record()
    changed = changed_settings(None, now)
    assert changed == ["temperature 0.0 -> 0.7", 'extra_body null -> {"reasoning_effort": "low"}']
    assert changed_settings(now.model_dump(mode="json"), now) == []
    # a record written before a field existed reads it as its default
    assert changed_settings({"temperature": 0.7}, now) == [changed[1]]
