"""IR read as strings in passes/, as issue 43 item 3 counts it: prints, per
module and in all, outside passes/ir/ir_adapter.py (the one place allowed
to read IR's printed forms) and passes/ir/op_names.py (the op names it
re-exports):

* ``opname``: comparisons against a literal op name (``op.name ==
  "stream.async.transfer"``, ``name in ("util.call", ...)``);
* ``regex``: regular expressions (``re.compile``, ``re.match``, ...);
* ``str``: ``str()`` of a type or an attribute (``str(v.type)``,
  ``str(op.attributes[...])``, ``str(get_attr(...))``, ``str(attr)``);
* ``parse``: ``Type.parse``/``Attribute.parse`` of a fixed text (a string
  literal, or a module constant holding one);
* ``oplit``: every string literal that is an op name, wherever it stands
  (op tables, ``startswith`` prefixes excluded; the names of attributes
  such as ``stream.affinity`` are not counted).

    python scripts/ir_strings.py            # totals
    python scripts/ir_strings.py --files    # and per module
    python scripts/ir_strings.py --lines    # and every finding
"""

from __future__ import annotations

import ast
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXEMPT = {os.path.join("passes", "ir", "ir_adapter.py"), os.path.join("passes", "ir", "op_names.py")}
DIALECTS = ("arith", "cf", "flow", "func", "hal", "linalg", "ml_program", "scf", "stream", "tensor", "util",
            "iree_codegen", "iree_tensor_ext", "builtin", "memref", "vm", "math")
OP_NAME = re.compile(r"^(%s)\.[a-z_][a-z0-9_.]*$" % "|".join(DIALECTS))
RE_CALLS = {"compile", "search", "match", "fullmatch", "findall", "finditer", "sub", "subn", "split"}
KINDS = ("opname", "regex", "str", "parse", "oplit")
# Attribute names and values that look like op names.
NOT_OPS = {"stream.affinity", "stream.affinity.default", "stream.topology", "hal.device.id"}


def _is_op_name(node) -> bool:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return bool(OP_NAME.match(node.value)) and node.value not in NOT_OPS
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_is_op_name(e) for e in node.elts)
    return False


def _typeish(node) -> bool:
    """A type or an attribute, as far as its spelling tells."""
    if isinstance(node, ast.Attribute):
        return node.attr in ("type", "value_type") or "attr" in node.attr.lower() or "type" in node.attr.lower()
    if isinstance(node, ast.Subscript):
        return isinstance(node.value, ast.Attribute) and node.value.attr == "attributes"
    if isinstance(node, ast.Call):
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
        return name in ("get_attr", "Type", "Attribute")
    if isinstance(node, ast.Name):
        low = node.id.lower()
        return "attr" in low or "type" in low or low in ("t", "ty", "a")
    return False


def findings(path: str) -> list[tuple[str, int, str]]:
    source = open(path).read()
    tree = ast.parse(source, path)
    constants = {t.id: n.value.value for n in tree.body if isinstance(n, ast.Assign)
                 and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
                 for t in n.targets if isinstance(t, ast.Name)}
    lines = source.splitlines()
    out = []
    in_fstring = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and id(node) not in in_fstring and _is_op_name(node):
            out.append(("oplit", node.lineno, lines[node.lineno - 1].strip()))
        kind = None
        if isinstance(node, ast.Compare) and any(
                isinstance(o, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)) for o in node.ops):
            if any(_is_op_name(n) for n in [node.left, *node.comparators]):
                kind = "opname"
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            f = node.func
            if isinstance(f.value, ast.Name) and f.value.id == "re" and f.attr in RE_CALLS:
                kind = "regex"
            elif f.attr == "parse" and node.args and (
                    (isinstance(f.value, ast.Attribute) and f.value.attr in ("Type", "Attribute"))
                    or (isinstance(f.value, ast.Name) and f.value.id in ("Type", "Attribute"))):
                arg = node.args[0]
                if (isinstance(arg, ast.Constant) and isinstance(arg.value, str)) or (
                        isinstance(arg, ast.Name) and arg.id in constants):
                    kind = "parse"
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "str"
              and len(node.args) == 1 and _typeish(node.args[0])):
            kind = "str"
        if kind:
            out.append((kind, node.lineno, lines[node.lineno - 1].strip()))
    return out


def main(argv: list[str]) -> int:
    totals = dict.fromkeys(KINDS, 0)
    per_file = {}
    for here, _, files in os.walk(os.path.join(ROOT, "passes")):
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            rel = os.path.relpath(os.path.join(here, name), ROOT)
            if rel in EXEMPT:
                continue
            found = findings(os.path.join(ROOT, rel))
            if found:
                per_file[rel] = found
            for kind, _, _ in found:
                totals[kind] += 1
    if "--files" in argv or "--lines" in argv:
        for rel in sorted(per_file, key=lambda r: -len(per_file[r])):
            counts = {k: sum(1 for f in per_file[rel] if f[0] == k) for k in KINDS}
            print(f"{rel}: " + " ".join(f"{k}={v}" for k, v in counts.items() if v))
            if "--lines" in argv:
                for kind, line, text in sorted(per_file[rel], key=lambda f: f[1]):
                    print(f"    {line:5d} {kind:6s} {text}")
    print(" ".join(f"{k}={v}" for k, v in totals.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
