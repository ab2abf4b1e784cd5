"""``cat pool import questions --protocol``: a pool made from a benchmark's questions keeps
how its reference results were asked, and ``cat pool info`` shows it."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner, Result

import cat
from cat.cli.app import app

runner = CliRunner()


def _questions(path: Path) -> Path:
    rows = [
        {
            "id": f"q{k}",
            "question": f"What is {k} plus {k}?",
            "options": [str(2 * k), "7"],
            "answer": "A",
        }
        for k in range(1, 5)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _import(tmp_path: Path, out: Path, *extra: str) -> Result:
    """``cat pool import questions`` of four questions into ``out``."""
    questions = str(_questions(tmp_path / "q.jsonl"))
    args = ["pool", "import", "questions", questions, "--out", str(out), "--language", "en"]
    return runner.invoke(app, [*args, *extra])


def test_a_protocol_file_and_its_template_go_into_the_pool(tmp_path: Path) -> None:
    template = (
        "{{ question }}\n{% for letter, text in choices %}{{ letter }}) {{ text }}\n{% endfor %}"
    )
    (tmp_path / "user.jinja").write_text(template, encoding="utf-8")
    protocol = {"name": "harness", "style": "cot", "template": "user.jinja", "max_tokens": 512}
    (tmp_path / "protocol.json").write_text(json.dumps(protocol), encoding="utf-8")
    out = tmp_path / "pool"
    result = _import(tmp_path, out, "--protocol", str(tmp_path / "protocol.json"))
    assert result.exit_code == 0, result.output
    assert "protocol harness from" in result.output
    pool = cat.load_pool(out)
    assert pool.protocol.recorded and pool.protocol.spec.style == "cot"
    assert pool.protocol.spec.max_tokens == 512 and pool.protocol.template_text == template
    info = runner.invoke(app, ["pool", "info", str(out)])
    assert info.exit_code == 0 and "Protocol: harness" in info.output


def test_every_forms_files_go_into_the_pool(tmp_path: Path) -> None:
    (tmp_path / "chat.jinja").write_text("{{ question }}", encoding="utf-8")
    (tmp_path / "raw.jinja").write_text("Question:\n{{ question }}\nAnswer:", encoding="utf-8")
    raw = {"endpoint": "completions", "template": "raw.jinja", "stop": ["Question:"]}
    protocol = {"name": "bench", "form": "chat", "template": "chat.jinja", "forms": {"raw": raw}}
    (tmp_path / "protocol.json").write_text(json.dumps(protocol), encoding="utf-8")
    out = tmp_path / "pool"
    result = _import(tmp_path, out, "--protocol", str(tmp_path / "protocol.json"))
    assert result.exit_code == 0, result.output
    pool = cat.load_pool(out)
    form = pool.protocol.in_form("raw")
    assert form.spec.endpoint == "completions" and form.spec.stop == ("Question:",)
    assert form.template_text == "Question:\n{{ question }}\nAnswer:"
    assert pool.protocol.template_text == "{{ question }}"
    info = runner.invoke(app, ["pool", "info", str(out)])
    assert info.exit_code == 0 and "Protocol: bench, raw form (--protocol-form raw)" in info.output


def test_a_bad_protocol_writes_no_pool(tmp_path: Path) -> None:
    (tmp_path / "protocol.json").write_text(json.dumps({"mode": "telepathy"}), encoding="utf-8")
    out = tmp_path / "pool"
    result = _import(tmp_path, out, "--protocol", str(tmp_path / "protocol.json"))
    assert result.exit_code == 2
    assert "protocol.json: mode" in result.output
    assert not (out / "pool.json").exists()


def test_a_protocol_naming_a_missing_file_is_a_pool_problem(tmp_path: Path) -> None:
    pool = tmp_path / "pool"
    assert _import(tmp_path, pool).exit_code == 0
    manifest = json.loads((pool / "pool.json").read_text(encoding="utf-8"))
    manifest["protocol"] = {"template": "protocol/gone.jinja"}
    (pool / "pool.json").write_text(json.dumps(manifest), encoding="utf-8")
    result = runner.invoke(app, ["pool", "validate", str(pool)])
    assert result.exit_code != 0
    assert "pool.json protocol: template protocol/gone.jinja" in result.output
