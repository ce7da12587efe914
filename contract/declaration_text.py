"""Reading IREE's ``iree.abi.declaration`` text, which both sides read: the
compiler for the devices a public function declares (passes/ir/module_facts.py),
the runtime shim for its whole signature (runtime_shim/manifest.py).

A declaration is MLIR-like text (``sync func @f(%input0: tensor<4xf32>
{iree.abi.affinity = #hal.device.promise<@device_a>}) -> (...)``); lists in
it nest ``<>``, ``()``, ``{}`` and ``[]``, may hold quoted strings, and an
arrow ``->`` is not a closing bracket.
"""

from __future__ import annotations

_OPEN, _CLOSE = "<({[", ">)}]"


def _depth_changes(text: str):
    """(index, character, change of nesting depth) for each character of
    ``text`` outside quoted strings."""
    quoted = False
    for i, c in enumerate(text):
        if c == '"':
            quoted = not quoted
        elif quoted:
            continue
        elif c in _OPEN:
            yield i, c, 1
        elif c in _CLOSE and text[i - 1:i + 1] != "->":
            yield i, c, -1
        else:
            yield i, c, 0


def split_top_level(text: str, sep: str = ",") -> list[str]:
    """``text`` split at each ``sep`` outside brackets and quotes; items
    stripped, empty ones dropped."""
    parts, depth, start = [], 0, 0
    for i, c, change in _depth_changes(text):
        depth += change
        if change == 0 and c == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def bracketed_list(text: str, start: int) -> tuple[list[str], int]:
    """The items of the bracketed list opening at ``text[start]``, split at
    its top-level commas, and the index just past its closing bracket
    (``len(text)`` when it has none)."""
    depth = 0
    for i, _, change in _depth_changes(text[start:]):
        depth += change
        if change < 0 and depth == 0:
            return split_top_level(text[start + 1:start + i]), start + i + 1
    return split_top_level(text[start + 1:]), len(text)
