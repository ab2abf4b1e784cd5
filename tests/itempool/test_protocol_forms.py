"""A protocol's forms (``itempool.protocol``): other ways the references were asked."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from itempool.problems import Problem
from itempool.protocol import PROTOCOL_FIELDS, PoolProtocol, check_protocol

RAW = {
    "endpoint": "completions",
    "template": "protocol/raw.jinja",
    "max_tokens": 2048,
    "stop": ["Question:"],
    "references": ["base-7b"],
    "note": "the raw prompt",
}


def _protocol(**forms: dict[str, object]) -> PoolProtocol:
    return PoolProtocol(
        name="bench",
        form="chat",
        style="cot",
        template="protocol/chat.jinja",
        max_tokens=4000,
        source="https://example.org/eval.py",
        note="the chat form",
        references=("api-model",),
        forms=forms,
    )


def test_a_form_is_the_protocol_with_its_fields_put_over_it() -> None:
    protocol = _protocol(raw=RAW)
    raw = protocol.in_form("raw")
    assert raw.form == "raw" and raw.name == "bench" and raw.forms == {}
    assert raw.endpoint == "completions" and raw.template == "protocol/raw.jinja"
    assert raw.max_tokens == 2048 and raw.stop == ("Question:",)
    # Kept from the main form: what the form does not set, the source among them; its
    # own note and references, not the main form's.
    assert raw.style == "cot" and raw.source == "https://example.org/eval.py"
    assert raw.references == ("base-7b",) and raw.note == "the raw prompt"
    assert protocol.in_form(None) is protocol and protocol.in_form("chat") is protocol
    assert protocol.form_names == ("chat", "raw")
    # The files to carry with the protocol: each form's, once.
    assert protocol.file_names() == ("protocol/chat.jinja", "protocol/raw.jinja")


def test_unknown_and_bad_forms_are_refused() -> None:
    with pytest.raises(ValueError, match="has no form 'local'; its forms: chat, raw"):
        _protocol(raw=RAW).in_form("local")
    with pytest.raises(ValidationError, match="form 'raw': mode loglikelihood goes with"):
        _protocol(raw={"mode": "loglikelihood"})
    with pytest.raises(ValidationError, match="form 'raw' must not set forms, name"):
        _protocol(raw={"name": "other", "forms": {}})
    with pytest.raises(ValidationError, match="form 'raw': endpoint"):
        _protocol(raw={"endpoint": "websocket"})
    with pytest.raises(ValidationError, match="this form's own name"):
        _protocol(chat={"max_tokens": 10})


def test_what_names_a_form_is_not_a_field_a_run_departs_from() -> None:
    assert "endpoint" in PROTOCOL_FIELDS
    assert not {"name", "form", "forms", "references", "source", "note"} & set(PROTOCOL_FIELDS)


def test_every_forms_files_are_read_with_the_pool(tmp_path: Path) -> None:
    (tmp_path / "protocol").mkdir()
    (tmp_path / "protocol" / "chat.jinja").write_text("{{ question }}", encoding="utf-8")
    problems: list[Problem] = []
    assert check_protocol(tmp_path, _protocol(raw=RAW), problems) is None
    assert [p.file for p in problems] == ["pool.json protocol form 'raw'"]
    assert "protocol/raw.jinja" in problems[0].message
    (tmp_path / "protocol" / "raw.jinja").write_text("Q: {{ question }}", encoding="utf-8")
    problems = []
    loaded = check_protocol(tmp_path, _protocol(raw=RAW), problems)
    assert loaded is not None and not problems
    assert loaded.template_text == "{{ question }}"
    raw = loaded.in_form("raw")
    assert raw.template_text == "Q: {{ question }}" and raw.spec.endpoint == "completions"
    with pytest.raises(ValueError, match="its forms: chat, raw"):
        loaded.in_form("local")
