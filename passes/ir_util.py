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
