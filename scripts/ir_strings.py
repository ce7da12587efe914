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

A finding in a scope KEPT names (a function, or a module-level name) is
one that needs the text, for the reason given there: it is counted apart,
as kept, and listed with ``--lines``. Everything else is to be read with
the bindings' typed readers or the adapter's functions.

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


_TWIN_TEXT = ("types printed into a twin's MLIR text, which is parsed, not built: its ops are located in that "
              "text, and a host function's locations reach the vmfb (twins.parse_beside)")
# (module, scope) -> why the printed form is needed there.
KEPT = {
    ("passes/transforms/twins.py", "signature_of"): (
        "a signature's attribute entries, kept as the text a twin's signature repeats; the device one is a "
        "#hal.device.affinity, which no Python class reads (module_facts.declared_device, through the adapter)"),
    ("passes/transforms/twins.py", "parse_beside"): _TWIN_TEXT,
    ("passes/transforms/host_entry_points.py", "twin_text"): _TWIN_TEXT,
    ("passes/transforms/result_storage_twins.py", "twin_text"): _TWIN_TEXT,
    ("passes/transforms/stub_host_entry_points.py", "twin_text"): _TWIN_TEXT,
    ("passes/transforms/generate_entry_point.py", "_element"): (
        "an element type's name, printed into @generate's MLIR text (parsed, as a twin is) and matched "
        "against the convention's names"),
    ("passes/transforms/generate_entry_point.py", "_call"): _TWIN_TEXT,
    ("passes/transforms/generate_entry_point.py", "_plain_declaration"): _TWIN_TEXT,
    ("passes/transforms/stub_host_entry_points.py", "_parse_beside"): _TWIN_TEXT,
    ("passes/transforms/stub_host_entry_points.py", "_move"): (
        "the element type's name, printed into the twin's hal.element_type<...> (text, as the twin is)"),
    ("passes/analysis/stub_signatures.py", "StubValue.of"): "the type as the manifest records it (its printed form)",
    ("passes/analysis/sizes.py", "_size_of"): "the type as the reports print it (the sizes are read typed)",
    ("passes/assignment/op_costs.py", "_dtype"): (
        "the element type's name, the key of the machine profile's rates ('f32', 'bf16')"),
    ("passes/analysis/residence_graph.py", "_label"): (
        "a regex over a symbol name (IREE names a dispatch function <function>_dispatch_<N>_<what>), not IR text"),
    ("passes/transforms/memoized_selects_in_order.py", "MEMOIZED_GLOBAL"): (
        "a regex over symbol names (IREE's names for the globals of a memoized select), not IR text"),
    ("passes/lowering/staging_template.py", "_DEFAULT_WAIT"): (
        "a regex over mdc's own staging library text, before it is parsed, not over the program's IR"),
}


def _scopes(tree) -> list[tuple[int, int, str]]:
    """(first line, last line, name) of every function (``Class.method``)
    and module-level assignment."""
    out = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = prefix + child.name
                if not isinstance(child, ast.ClassDef):
                    out.append((child.lineno, child.end_lineno, name))
                visit(child, name + ".")
    visit(tree, "")
    for node in tree.body:
        if isinstance(node, ast.Assign):
            out += [(node.lineno, node.end_lineno, t.id) for t in node.targets if isinstance(t, ast.Name)]
    return out


def _kept(rel: str, scopes, line: int) -> str | None:
    """Why a finding at ``line`` is kept: KEPT's word for the innermost
    scope holding it that KEPT names, else None."""
    holding = sorted((end - start, name) for start, end, name in scopes if start <= line <= end)
    return next((KEPT[(rel, name)] for _, name in holding if (rel, name) in KEPT), None)


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


def findings(path: str) -> list[tuple[str, int, str, str | None]]:
    """(kind, line, text, why it is kept or None) of each finding."""
    source = open(path).read()
    tree = ast.parse(source, path)
    constants = {t.id: n.value.value for n in tree.body if isinstance(n, ast.Assign)
                 and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
                 for t in n.targets if isinstance(t, ast.Name)}
    lines = source.splitlines()
    rel = os.path.relpath(path, ROOT).replace(os.sep, "/")
    scopes = _scopes(tree)
    out = []
    in_fstring = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and id(node) not in in_fstring and _is_op_name(node):
            out.append(("oplit", node.lineno, lines[node.lineno - 1].strip(), _kept(rel, scopes, node.lineno)))
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
            out.append((kind, node.lineno, lines[node.lineno - 1].strip(), _kept(rel, scopes, node.lineno)))
    return out


def main(argv: list[str]) -> int:
    totals = dict.fromkeys(KINDS, 0)
    kept = dict.fromkeys(KINDS, 0)
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
            for kind, _, _, why in found:
                (kept if why else totals)[kind] += 1
    if "--files" in argv or "--lines" in argv:
        for rel in sorted(per_file, key=lambda r: -len(per_file[r])):
            counts = {k: sum(1 for f in per_file[rel] if f[0] == k and not f[3]) for k in KINDS}
            kept_here = sum(1 for f in per_file[rel] if f[3])
            print(f"{rel}: " + " ".join([f"{k}={v}" for k, v in counts.items() if v]
                                        + ([f"kept={kept_here}"] if kept_here else [])))
            if "--lines" in argv:
                for kind, line, text, why in sorted(per_file[rel], key=lambda f: f[1]):
                    print(f"    {line:5d} {kind:6s} {'kept  ' if why else ''}{text}")
                    if why:
                        print(f"{'':18s}({why})")
    print(" ".join(f"{k}={v}" for k, v in totals.items()))
    print("kept (the text is needed; see KEPT): " + " ".join(f"{k}={v}" for k, v in kept.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
