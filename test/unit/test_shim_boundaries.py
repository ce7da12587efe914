"""A Function works with what its Module hands it (function.ModuleParts),
never with the Module's private fields, and writes no other object's
private state (issue 43 item 4): read from the source, no device needed."""

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
