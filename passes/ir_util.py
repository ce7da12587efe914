"""Small helpers over IREE IR from Python: walking, affinities, types.

IREE attributes have no Python classes, so affinities are read from their
printed form (``#hal.device.affinity<@device_a>``) and built by parsing.
"""

from __future__ import annotations

import re
from typing import Iterator

from iree.compiler import ir

_SYMBOL = re.compile(r"@([A-Za-z0-9_$.\-]+)")


def walk(op) -> Iterator[ir.Operation]:
    """Every operation nested in ``op``, in program (pre-)order."""
    for region in op.regions:
        for block in region.blocks:
            for child in block.operations:
                child = child.operation
                yield child
                yield from walk(child)


def top_level_ops(module) -> list[ir.Operation]:
    return [op.operation for op in module.regions[0].blocks[0].operations]


def affinity_devices(attr) -> list[str]:
    """Device symbols named by an affinity attribute (empty if none)."""
    if attr is None:
        return []
    return _SYMBOL.findall(str(attr))


def single_device(attr) -> str | None:
    """The device of an affinity naming exactly one device, else None."""
    names = affinity_devices(attr)
    return names[0] if len(set(names)) == 1 else None


def get_attr(op: ir.Operation, name: str):
    attrs = op.attributes
    return attrs[name] if name in attrs else None


def affinity_attr(device: str) -> ir.Attribute:
    return ir.Attribute.parse(f"#hal.device.affinity<@{device}>")


def is_resource(value: ir.Value) -> bool:
    return str(value.type).startswith("!stream.resource<")


def module_default_device(module) -> str | None:
    return single_device(get_attr(module, "stream.affinity.default"))


def unique_symbol(module, base: str) -> str:
    taken = {
        op.attributes["sym_name"].value
        for op in top_level_ops(module)
        if "sym_name" in op.attributes
    }
    name, n = base, 0
    while name in taken:
        n += 1
        name = f"{base}_{n}"
    return name


_DECLARED_AFFINITY = re.compile(r"iree\.abi\.affinity\s*=\s*#hal\.device\.(?:promise|affinity)<@([A-Za-z0-9_$.\-]+)>")


def _declaration(function) -> str | None:
    """The ``iree.abi.declaration`` IREE keeps in a public function's
    ``iree.reflection`` (the one place the ABI's affinities survive past
    IREE's input conversion), or None."""
    if "iree.reflection" not in function.attributes:
        return None
    reflection = ir.DictAttr(function.attributes["iree.reflection"])
    if "iree.abi.declaration" not in reflection:
        return None
    return ir.StringAttr(reflection["iree.abi.declaration"]).value


def _declared_list(text: str, start: int) -> tuple[list[str], int]:
    """The items of the parenthesized list opening at ``text[start]``, split
    at its top-level commas, and the index just past its closing parenthesis."""
    depth, quoted, items, begin = 0, False, [], start + 1
    for i in range(start, len(text)):
        c = text[i]
        if c == '"':
            quoted = not quoted
        elif quoted:
            continue
        elif c in "<({[":
            depth += 1
        elif c in ">)}]" and text[i - 1:i + 1] != "->":
            depth -= 1
            if depth == 0:  # the list's closing parenthesis
                items.append(text[begin:i])
                return [item for item in items if item.strip()], i + 1
        elif c == "," and depth == 1:
            items.append(text[begin:i])
            begin = i + 1
    return [item for item in items if item.strip()], len(text)


def _devices_of(items: list[str]) -> list[str | None]:
    return [m.group(1) if (m := _DECLARED_AFFINITY.search(item)) else None for item in items]


def declared_argument_devices(function) -> list[str | None] | None:
    """The device each argument of public ``function`` is declared on
    (``iree.abi.affinity``), None for an argument declared without one, in
    the order of the source function's arguments; read off its
    ``iree.abi.declaration``. None when the function has no declaration."""
    text = _declaration(function)
    start = text.find("(") if text is not None else -1
    if start < 0:
        return None
    return _devices_of(_declared_list(text, start)[0])


def declared_result_devices(function) -> list[str | None] | None:
    """Like declared_argument_devices, for the function's results (the
    list after ``->``; a single result may stand without parentheses)."""
    text = _declaration(function)
    start = text.find("(") if text is not None else -1
    if start < 0:
        return None
    _, end = _declared_list(text, start)
    rest = text[end:].lstrip()
    if not rest.startswith("->"):
        return []
    rest = rest[2:].lstrip()
    if rest.startswith("("):
        return _devices_of(_declared_list(rest, 0)[0])
    return _devices_of([rest]) if rest else []


def inside_executable(op: ir.Operation) -> bool:
    """``op`` is inside an executable (a kernel's body, not the program)."""
    parent = op.parent
    while parent is not None:
        if parent.name in ("stream.executable", "hal.executable", "flow.executable"):
            return True
        parent = parent.parent
    return False
