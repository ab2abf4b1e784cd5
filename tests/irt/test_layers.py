"""No circles in ``irt``'s imports, and its rooms built so far (``irt.families``,
``irt.structures``) stand below the modules that fit, score and link (issue 42).

Every import counts, wherever it stands: at module level, inside a function and under
``TYPE_CHECKING``, as in ``tests/cat/test_layers.py``, whose parser this test shares.
The files are parsed, never imported.

Run as a script to print the import drawing's size and any circle:

    python tests/irt/test_layers.py
"""

from __future__ import annotations

from pathlib import Path

from tests.cat.test_layers import ROOT, imports_in, module_name

#: What the rooms may import besides themselves: the foundation every module of ``irt``
#: may use, the array functions numpy and torch share, and two helpers that have no
#: room yet.
BELOW_THE_ROOMS = frozenset(
    {
        "irt.errors",
        "irt.types",
        "irt.lazy",
        "irt.names",
        "irt.estimation.arrays",
        "irt.item_checks",
        "irt.quadrature",
    }
)

#: The rooms, lowest first: a room may import the ones before it.
ROOMS = ("irt.families", "irt.structures")


def _modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted((ROOT / "irt").rglob("*.py"))}


def import_drawing() -> dict[str, set[str]]:
    """Each module of ``irt`` → the modules of ``irt`` it imports (an imported name is
    resolved to the module that holds it)."""
    modules = _modules()

    def resolve(target: str) -> str:
        while target and target not in modules:
            target = target.rpartition(".")[0]
        return target

    arrows: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for imp in imports_in(path):
            target = resolve(imp.target) if imp.target.startswith("irt.") else ""
            if target and target != name:
                arrows[name].add(target)
    return arrows


def circles(arrows: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected sets of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(arrows.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            members = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                members.append(w)
                if w == v:
                    break
            if len(members) > 1:
                found.append(sorted(members))

    for v in sorted(arrows):
        if v not in index:
            visit(v)
    return found


def _room(module: str) -> str | None:
    return next((r for r in ROOMS if module == r or module.startswith(r + ".")), None)


def room_imports_out_of_place() -> list[str]:
    """Imports by a room's module of anything but its own room, a lower room or
    ``BELOW_THE_ROOMS``."""
    bad = []
    for name, targets in import_drawing().items():
        room = _room(name)
        if room is None:
            continue
        allowed = set(ROOMS[: ROOMS.index(room) + 1])
        for target in sorted(targets):
            if target in BELOW_THE_ROOMS or _room(target) in allowed:
                continue
            bad.append(f"{name} imports {target}")
    return bad


def test_irt_has_no_import_circles() -> None:
    found = circles(import_drawing())
    assert not found, "import circles in irt:\n" + "\n".join(", ".join(c) for c in found)


def test_the_rooms_import_only_downward() -> None:
    bad = room_imports_out_of_place()
    assert not bad, "imports that run up from irt's rooms:\n" + "\n".join(bad)


def test_the_circle_finder_finds_a_circle() -> None:
    arrows = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(arrows) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


if __name__ == "__main__":
    drawing = import_drawing()
    print(f"{len(drawing)} modules, {sum(len(t) for t in drawing.values())} arrows")
    for circle in circles(drawing):
        print("circle:", ", ".join(circle))
    for line in room_imports_out_of_place():
        print("upward:", line)
