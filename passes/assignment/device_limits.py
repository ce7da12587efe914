"""Work that stock IREE 3.13 does not run right on an accelerator of some
kind, which ``--place=auto`` therefore keeps on the host: each such unit is
pinned there before the search, and the report and a warning say why.

One rule so far, for a Vulkan accelerator. IREE 3.13's SPIR-V for its
default Vulkan target keeps 8- and 16-bit tensors in 32-bit words, and
(measured on lavapipe, the Vulkan device on a CPU-only machine):

* a matmul of f16, bf16, i8 or i16 does not compile ("failed to legalize
  operation 'vector.bitcast'"; stock iree-compile the same:
  test/lit/regress/iree_vulkan_narrow_matmul_fails.test);
* f16 read from or written to a tensor comes out wrong, while f16
  arithmetic on values read as f32 is right
  (test/e2e/test_vulkan.py, test_canary_stock_vulkan_f16_arithmetic);
* a dispatch writing 8- or 16-bit elements loses the bytes past the
  tensor's last whole 32-bit word (test_canary_stock_vulkan_narrow_tail).

So a unit that reads or writes a tensor of an element type narrower than
32 bits stays on the host (i1 excepted: a 6xi1 comparison is right there).
The rule is the default target's: a ``--iree-vulkan-target`` of the
user's is not looked at. When a canary above starts failing, narrow the
rule to what still fails.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

from iree.compiler import ir

from ..ir import ir_adapter as irx
from .work_graph import WorkGraph

# Canaries that show stock's failures, named in the warning.
VULKAN_CANARIES = ("test/lit/regress/iree_vulkan_narrow_matmul_fails.test",
                   "test/e2e/test_vulkan.py (test_canary_stock_vulkan_f16_arithmetic, "
                   "test_canary_stock_vulkan_narrow_tail)")
VULKAN_WHY = ("stock IREE 3.13's SPIR-V for the default Vulkan target keeps 8- and 16-bit tensors in 32-bit words: "
              "their matmuls do not compile, f16 is read and written wrong and the bytes past a tensor's last whole "
              "word are lost")


def _width(element_type) -> Optional[int]:
    for kind in (ir.IntegerType, ir.FloatType):
        if isinstance(element_type, kind):
            return element_type.width
    return None


def narrow_tensor_types(op) -> list[str]:
    """The element types narrower than 32 bits (i1 excepted) of the tensors
    ``op`` and the ops nested in it read or write, sorted."""
    found = set()
    for each in (op, *irx.walk(op)):
        for value in (*each.operands, *each.results):
            if isinstance(value.type, ir.RankedTensorType):
                element = ir.RankedTensorType(value.type).element_type
                width = _width(element)
                if width is not None and 1 < width < 32:
                    found.add(str(element))
    return sorted(found)


def vulkan_limit(op) -> Optional[str]:
    """Why a Vulkan accelerator cannot run ``op``'s unit right, or None."""
    narrow = narrow_tensor_types(op)
    return f"{'/'.join(narrow)} tensors, which stock IREE 3.13 does not run right on vulkan" if narrow else None


# Per accelerator kind: the rule (a unit's op -> why it cannot run right
# there, or None), why in general, and the canaries that show it.
LIMITS = {"vulkan": (vulkan_limit, VULKAN_WHY, VULKAN_CANARIES)}


def keep_on_host(graph: WorkGraph, units: dict, kind: str) -> tuple[WorkGraph, dict]:
    """``graph`` with every free unit an accelerator of ``kind`` cannot run
    right pinned to the host, and {unit id: why} of those (``units``: unit
    id -> its op, extract.FunctionParts.units)."""
    if kind not in LIMITS:
        return graph, {}
    limit = LIMITS[kind][0]
    kept = {u.id: why for u in graph.units if u.pinned is None and (why := limit(units[u.id])) is not None}
    if not kept:
        return graph, {}
    pinned = tuple(dataclasses.replace(u, pinned=graph.host) if u.id in kept else u for u in graph.units)
    return dataclasses.replace(graph, units=pinned), kept


def kept_warning(graph: WorkGraph, kind: str, kept: dict) -> str:
    """The one line that says which units ``keep_on_host`` kept and why."""
    labels = [f"{u.id} '{u.label}'" for u in graph.units if u.id in kept]
    listed = ", ".join(labels[:6]) + (f" and {len(labels) - 6} more" if len(labels) > 6 else "")
    _, why, canaries = LIMITS[kind]
    return (f"@{graph.function}: --place=auto keeps {len(kept)} unit(s) on '{graph.host}' that stock IREE does not "
            f"run right on '{graph.accelerator}' ({kind}): unit {listed}; {why} (canaries: {'; '.join(canaries)})")
