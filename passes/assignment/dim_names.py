"""``--max-dim`` checked against the program: every name it gives must be a
dynamic dimension of a placed function, as bounds.py names them
(``argI.dJ``: dimension J of argument I; ``uU.rR.dJ``: of result R of
unit U), and the bounds of the arguments' dimensions are what the runtime
checks a call against (the manifest's ``max_dims``).

A name that is no dimension of any placed function (``arg7.d0`` of a
function of two arguments), or one that is static wherever it is (a
bound that would change nothing), is a command-line mistake: UsageError
(status 2), naming the flag, what the program has instead and, for a
static dimension, where it is.
"""

from __future__ import annotations

import re
from typing import Mapping

from iree.compiler import ir

from ..infra.diagnostics import UsageError, format_location
from ..ir import ir_adapter as irx
from .bounds import is_tensor
from .extract import FunctionParts

_NAME = re.compile(r"^(?:arg(\d+)|u(\d+)\.r(\d+))\.d(\d+)$")


def _dims(parts: FunctionParts) -> dict:
    """Each dimension name of ``parts``' function -> (its value, its
    dimension number): the arguments' and every unit's results'."""
    found = {}
    for value, n in parts.boundary.arguments.items():
        if is_tensor(value):
            found.update({f"arg{n}.d{j}": (value, j) for j in range(ir.RankedTensorType(value.type).rank)})
    for uid, op in parts.units.items():
        for value in op.results:
            if is_tensor(value):
                found.update({f"u{uid}.r{value.result_number}.d{j}": (value, j)
                              for j in range(ir.RankedTensorType(value.type).rank)})
    return found


def _is_dynamic(value, j: int) -> bool:
    return ir.RankedTensorType(value.type).is_dynamic_dim(j)


def check_max_dims(functions: list, max_dims: Mapping[str, int]) -> None:
    """UsageError unless each name of ``max_dims`` is a dynamic dimension of
    one of ``functions`` (their FunctionParts, in program order)."""
    dims = [(parts, _dims(parts)) for parts in functions]
    for name, bound in max_dims.items():
        if any(name in found and _is_dynamic(*found[name]) for _, found in dims):
            continue
        flag = f"--max-dim={name}={bound}"
        static = next(((parts, found[name]) for parts, found in dims if name in found), None)
        if static is not None:
            parts, (value, j) = static
            owner = parts.function if isinstance(value.owner, ir.Block) else value.owner
            raise UsageError(f"{flag}: {name} of @{irx.symbol_name(parts.function)} is static ({value.type}, dimension {j} "
                             f"is {ir.RankedTensorType(value.type).get_dim_size(j)}): only a dynamic dimension "
                             "takes a bound", location=format_location(owner.location))
        raise UsageError(f"{flag}: the program has no dimension {name}: "
                         + "; ".join(_what_there_is(parts, name) for parts, _ in dims))


def _what_there_is(parts: FunctionParts, name: str) -> str:
    """What ``parts``' function has of the kind ``name`` names: its tensor
    arguments and their types, or its units."""
    function = f"@{irx.symbol_name(parts.function)}"
    if name.startswith("arg"):
        arguments = sorted((n, value.type) for value, n in parts.boundary.arguments.items() if is_tensor(value))
        listed = ", ".join(f"arg{n}: {t}" for n, t in arguments[:8]) + (", ..." if len(arguments) > 8 else "")
        return f"{function} has {len(arguments)} tensor argument(s)" + (f" ({listed})" if listed else "")
    units = len(parts.units)
    return f"{function} has {units} unit(s)" + (f", u0 to u{units - 1} (the report's unit ids)" if units else "")


def argument_bounds(functions: list, max_dims: Mapping[str, int]) -> dict:
    """{function name: [(argument, dimension, bound), ...]}: the bounds
    ``max_dims`` gives the dynamic dimensions of each function's tensor
    arguments, for the runtime to check a call against; functions with
    none are left out."""
    found: dict = {}
    for parts in functions:
        for name, (value, j) in _dims(parts).items():
            match = _NAME.match(name)
            if match.group(1) is not None and name in max_dims and _is_dynamic(value, j):
                found.setdefault(irx.symbol_name(parts.function), []).append((int(match.group(1)), j, max_dims[name]))
    return {function: sorted(bounds) for function, bounds in found.items()}
