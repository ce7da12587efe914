"""A Function works with what its Module hands it (function.ModuleParts),
never with the Module's private fields, and writes no other object's
private state, and only a device's mover moves a value between numpy and
the device (issue 43 item 4): read from the source, no device needed."""

from __future__ import annotations

import ast
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHIM = os.path.join(ROOT, "runtime_shim")


def _tree(name: str) -> ast.AST:
    with open(os.path.join(SHIM, name)) as f:
        return ast.parse(f.read(), name)


def _private(attr: str) -> bool:
    return attr.startswith("_") and not attr.startswith("__")


def _is_module(node: ast.AST) -> bool:
    """``module``, ``m`` or ``<x>.module``: a Module as function.py and
    stored_results.py name it."""
    return (isinstance(node, ast.Name) and node.id in ("module", "m")) or \
        (isinstance(node, ast.Attribute) and node.attr == "module")


def module_private_reads(tree: ast.AST) -> list[str]:
    return [f"line {n.lineno}: .{n.attr}" for n in ast.walk(tree)
            if isinstance(n, ast.Attribute) and _private(n.attr) and _is_module(n.value)]


def foreign_private_writes(tree: ast.AST) -> list[str]:
    targets = [t for n in ast.walk(tree) if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign))
               for t in (n.targets if isinstance(n, ast.Assign) else [n.target])]
    return [f"line {t.lineno}: .{t.attr}" for t in targets
            if isinstance(t, ast.Attribute) and _private(t.attr)
            and not (isinstance(t.value, ast.Name) and t.value.id == "self")]


def test_function_reads_no_private_field_of_its_module():
    for name in ("function.py", "stored_results.py"):
        assert module_private_reads(_tree(name)) == [], name


def test_function_writes_no_other_objects_private_state():
    assert foreign_private_writes(_tree("function.py")) == []


def test_the_checks_see_what_they_forbid():
    tree = ast.parse("m = self.module\nm._ledger.add(x)\nself.module._session.devices\n"
                     "resident._sole = True\nself._fine = 1\n")
    assert sorted(module_private_reads(tree)) == ["line 2: ._ledger", "line 3: ._session"]
    assert foreign_private_writes(tree) == ["line 4: ._sole"]


# The shim's own moves, which only a device's mover makes (movers.py).
MOVES = {("staging", "place"), ("staging", "read_back"), ("staging", "lend"),
         ("values", "to_device"), ("values", "to_host"), ("values", "to_pinned"),
         ("values", "place_shared"), ("values", "place_through_pinned"),
         ("values", "read_mapped"), ("values", "read_through_pinned")}


def move_calls(tree: ast.AST) -> list[str]:
    return [f"line {n.lineno}: {n.func.value.id}.{n.func.attr}" for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and isinstance(n.func.value, ast.Name) and (n.func.value.id, n.func.attr) in MOVES]


def test_only_a_devices_mover_decides_how_a_value_moves():
    """Whether a value goes through pinned host memory is decided once per
    device, at load, by its mover: no other module moves a value itself."""
    for name in sorted(os.listdir(SHIM)):
        if name.endswith(".py") and name != "movers.py":
            assert move_calls(_tree(name)) == [], name
    assert len(move_calls(_tree("movers.py"))) >= 7


def test_the_move_check_sees_what_it_forbids():
    tree = ast.parse("staging.place(pool, 1, d, x, k, None)\nvalues.to_host(d, v, False, 1)\n"
                     "values.wait(f, 1, 'x')\nself.staging.place()\n")
    assert move_calls(tree) == ["line 1: staging.place", "line 2: values.to_host"]
