"""No circles: ``cat``'s subpackages form a one-way stack, and the packages below ``cat``
import nothing above them (issue 29; docs/development.md, "Architecture").

Every import counts, wherever it stands: at module level, inside a function (the CLI's
lazy imports) and under ``TYPE_CHECKING``. A type-only import is still a dependency: the
lower package cannot be read, type-checked or moved without the upper one. The files are
parsed (``ast``), never imported, so the test takes well under a second.

Run as a script to list the upward imports instead of failing on the first:

    python tests/cat/test_layers.py
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: ``cat``'s floors, lowest first. A module may import its own unit (a subpackage, or a
#: module at the top of ``cat``) and any unit on a lower floor; units that share a floor
#: import nothing of each other. ``cat/__init__.py`` (the lazy public API) may name
#: anything and sits above them all.
FLOORS: tuple[tuple[str, ...], ...] = (
    ("cat.errors",),  # CatError
    ("cat.arguments", "cat.provenance", "cat.results"),  # argument checks, versions, results
    ("cat.engine",),  # estimators, selection, constraints, exposure, stopping, simulation
    ("cat.designs",),  # the reference designs (mixture, low-rank, multidimensional)
    ("cat.prediction",),  # predictors, conformal intervals, cross-fit, replays
    ("cat.pools",),  # pool loading, import, calibration, recalibration, fit, diff, summary
    ("cat.assessment", "cat.validation"),  # cat assess (the session, examinees); cat validate
    ("cat.reports", "cat.comparison"),  # the HTML report; cat compare
    ("cat.leaderboards",),  # cat leaderboard (uses the report's pieces)
    ("cat.cli",),  # the command line: parsing and rendering only
    ("cat._entry",),  # the console script: our command line or the system cat
    ("cat.__main__",),  # python -m cat
)

#: Packages that must not be imported from these packages at all.
FORBIDDEN: dict[str, frozenset[str]] = {
    "cat": frozenset({"catdemo"}),
    "irt": frozenset({"cat", "synth", "itempool", "catdemo"}),
    "itempool": frozenset({"cat", "synth", "catdemo"}),
    "synth": frozenset({"cat", "catdemo"}),
}

_FLOOR = {unit: level for level, units in enumerate(FLOORS) for unit in units}


@dataclass(frozen=True)
class Import:
    """One imported module, where it is imported."""

    path: Path
    line: int
    importer: str  # the importing module, dotted
    target: str  # the imported module (or package), dotted

    def __str__(self) -> str:
        where = self.path.relative_to(ROOT) if self.path.is_relative_to(ROOT) else self.path
        return f"{where}:{self.line}: {self.importer} imports {self.target}"


def module_name(path: Path) -> str:
    """The dotted name of the module in ``path`` (a package is its ``__init__``'s folder)."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_in(path: Path, name: str | None = None) -> Iterator[Import]:
    """Every import in ``path`` (the module ``name``, by default from the path): module
    level, in functions and under ``TYPE_CHECKING``."""
    name = module_name(path) if name is None else name
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(path, node.lineno, name, alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolved against the importing package
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # ``from cat import engine`` imports cat.engine; ``from x import name``, x.
            for alias in node.names:
                yield Import(path, node.lineno, name, f"{base}.{alias.name}")


def unit_of(module: str) -> str | None:
    """The floor table's unit holding ``module`` (None: the package ``cat`` itself)."""
    parts = module.split(".")
    for size in (2, 1):
        if ".".join(parts[:size]) in _FLOOR:
            return ".".join(parts[:size])
    return None


def _files(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


def upward_imports() -> list[Import]:
    """The imports inside ``cat`` that reach a unit not below the importer's (the public
    API in ``cat/__init__.py`` excepted)."""
    found = []
    for path in _files("cat"):
        for imp in imports_in(path):
            if imp.importer == "cat" or imp.target.split(".")[0] != "cat":
                continue
            source, target = unit_of(imp.importer), unit_of(imp.target)
            if source is None:
                raise AssertionError(f"{path.relative_to(ROOT)} is in no floor of FLOORS")
            if target == source:
                continue
            if target is None or _FLOOR[target] >= _FLOOR[source]:
                found.append(imp)
    return found


def forbidden_imports() -> list[Import]:
    """Imports of a package that the importing package must never reach (``FORBIDDEN``)."""
    return [
        imp
        for package, banned in FORBIDDEN.items()
        for path in _files(package)
        for imp in imports_in(path)
        if imp.target.split(".")[0] in banned
    ]


def _table(imports: list[Import]) -> str:
    return "\n".join(f"  {imp}" for imp in imports)


def test_every_module_of_cat_has_a_floor() -> None:
    for path in _files("cat"):
        name = module_name(path)
        assert name == "cat" or unit_of(name) is not None, f"{path} is in no floor of FLOORS"


def test_cat_imports_only_downward() -> None:
    found = upward_imports()
    assert not found, (
        "imports that run upward in cat's stack (tests/cat/test_layers.py FLOORS):\n"
        + _table(found)
    )


def test_no_package_imports_what_stands_above_it() -> None:
    found = forbidden_imports()
    assert not found, "imports of a package above the importer:\n" + _table(found)


def test_the_scan_sees_function_level_relative_and_type_only_imports(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from cat.pools.loading import load_pool\n"
        "def f():\n"
        "    from ..designs import models\n"
        "    import catdemo.run\n",
        encoding="utf-8",
    )
    found = {(imp.line, imp.target) for imp in imports_in(probe, "cat.engine.probe")}
    assert {
        (3, "cat.pools.loading.load_pool"),
        (5, "cat.designs.models"),
        (6, "catdemo.run"),
    } <= found
    assert unit_of("cat.pools.loading.load_pool") == "cat.pools"
    assert unit_of("cat.errors.CatError") == "cat.errors"


if __name__ == "__main__":
    upward, forbidden = upward_imports(), forbidden_imports()
    statements = {(imp.path, imp.line) for imp in upward}
    pairs = sorted({(unit_of(imp.importer), unit_of(imp.target)) for imp in upward})
    print(
        f"{len(statements)} upward import statements inside cat "
        f"({len(upward)} names; {len(pairs)} pairs of units):\n{_table(upward)}"
    )
    print("  pairs: " + ", ".join(f"{a} -> {b}" for a, b in pairs))
    print(f"{len(forbidden)} imports of a package above the importer:\n{_table(forbidden)}")
    sys.exit(1 if upward or forbidden else 0)
