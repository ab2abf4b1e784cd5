"""No code above ``irt`` tells the parameter classes apart (issue 29, "One parameter
interface"): it asks the ``irt.ParameterSet`` questions (``params.expected_score``,
``params.scored``, ``params.family``…) instead.

Fails on ``isinstance``/``issubclass`` with one of the seven parameter classes, on
``type(x) is/== Class`` and on ``case Class(...)`` in ``cat``, ``synth``, ``itempool`` and
``catdemo``, under any name the class was imported as. The files are parsed, not
imported. Run as a script to list every check instead of failing on the first:

    python tests/test_parameter_isinstance.py
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("cat", "synth", "itempool", "catdemo")

#: The parameter classes of ``irt``.
CLASSES = frozenset(
    {
        "ItemParams",
        "PolytomousParams",
        "ContinuousParams",
        "MixedParams",
        "MirtParams",
        "MirtPolytomousParams",
        "BifactorParams",
    }
)


def _aliases(tree: ast.Module) -> set[str]:
    """The names the parameter classes go by in a module: their own, and ``as`` names."""
    names = set(CLASSES)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            names.update(a.asname for a in node.names if a.name in CLASSES and a.asname)
    return names


def _named(node: ast.expr, names: set[str]) -> bool:
    """Whether ``node`` names a parameter class: ``X``, ``mod.X``, ``(X, Y)``, ``X | Y``."""
    if isinstance(node, ast.Name):
        return node.id in names
    if isinstance(node, ast.Attribute):
        return node.attr in names
    if isinstance(node, ast.Tuple):
        return any(_named(e, names) for e in node.elts)
    if isinstance(node, ast.BinOp):
        return _named(node.left, names) or _named(node.right, names)
    return False


def _is_type_call(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "type"


def checks(path: Path) -> Iterator[tuple[int, str]]:
    """(line, source) of each check on a parameter class in the file at ``path``."""
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text, filename=str(path))
    names = _aliases(tree)
    for node in ast.walk(tree):
        found = False
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in ("isinstance", "issubclass") and len(node.args) == 2:
                found = _named(node.args[1], names)
        elif isinstance(node, ast.Compare) and isinstance(
            node.ops[0], ast.Is | ast.IsNot | ast.Eq | ast.NotEq
        ):
            sides = [node.left, node.comparators[0]]
            found = any(map(_is_type_call, sides)) and any(_named(s, names) for s in sides)
        elif isinstance(node, ast.MatchClass):
            found = _named(node.cls, names)
        if found:
            yield node.lineno, ast.get_source_segment(text, node) or ""


def _sources() -> Iterator[tuple[str, Path]]:
    """(path relative to the repository, path) of every module of ``PACKAGES``."""
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            yield path.relative_to(ROOT).as_posix(), path


def offending() -> list[str]:
    """Every check, as ``path:line: source``."""
    return [f"{rel}:{line}: {source}" for rel, path in _sources() for line, source in checks(path)]


def test_no_parameter_class_checks_above_irt() -> None:
    found = offending()
    assert not found, "ask the irt.ParameterSet interface instead:\n" + "\n".join(found)


def test_the_scan_finds_each_form(tmp_path: Path) -> None:
    # The test above passes only if the scan would see a check: each form is found.
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from irt.mixed import MixedParams as MP\n"
        "import irt.models\n"
        "isinstance(p, irt.models.ItemParams)\n"
        "isinstance(p, (str, MP))\n"
        "isinstance(p, int | BifactorParams)\n"
        "type(p) is MirtParams\n"
        "match p:\n"
        "    case PolytomousParams():\n"
        "        pass\n"
        "isinstance(p, ParameterSet)\n"  # the protocol is what callers should use
        "p.family == 'mixed'\n",
        encoding="utf-8",
    )
    assert [line for line, _ in checks(sample)] == [3, 4, 5, 6, 8]


if __name__ == "__main__":
    listed = offending()
    print("\n".join(listed) or "no checks on parameter classes above irt")
    sys.exit(1 if listed else 0)
