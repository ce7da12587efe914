"""A program's own units as functions of their own, for ``mdc-profile
--program`` to compile and time (program.py): the work graph's units
(passes/assignment/extract.py) read as assign-devices reads them, each
written as a public ``func.func`` whose arguments are what the unit reads
(the values other units, the program's arguments and its weights make)
and whose results are the unit's.

What only gives the unit storage or shape (a ``tensor.empty``, a fill, a
constant, the index arithmetic of a dynamic size) is copied in with it,
as IREE would fuse it. An argument with a dynamic dimension takes the
dimension's bound (the ``--max-dim`` bound, or what the graph traced) and
is cast back to the dynamic type inside, so the unit is timed at the bound
(``at_bound``). A unit that reads a scalar argument of the program, or a
``view`` or transfer (which the model counts as free or pinned), is not
written: the model estimates it.

On the accelerator a unit is written twice (program.py): as ``uN``, one
copy, and as ``uN_copies``, several copies in one function (``copies``),
each reading arguments of its own (``own_arguments``: the function takes
that many sets, so that no copy reads a weight another copy left in the
GPU's cache; program_timing.py), the ops of every copy after the first
marked with the copy's number (a discardable attribute, so that IREE's
common subexpression elimination folds no copy into another). Both return as many sets of results (``returns``: ``uN``
returns its one set that many times), so that returning and wrapping
results costs the two calls alike. Their module is compiled with serial
partitioning (each dispatch waits for the one before), so the copies run
one after another, as a program's dependent units do, not side by side.
On cuda a call's fixed cost is hundreds of microseconds and varies from
one kind of call to another by more than a small kernel takes, so a
unit's time taken as its call's less an empty call's is lost in it
(measured on an H100: a 16x2048x2048 f32 matmul came out at the floor,
one dispatch); what one more copy adds to a call of the same function and
arguments is the unit's own time. The host runs each unit once, timed
as its call less an empty call (its call's fixed cost is small beside its
units).
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Optional

from iree.compiler import ir

from mdc.passes.assignment import bounds as bnd
from mdc.passes.ir import ir_adapter as irx

# The discardable attribute that tells copies of one unit apart (write_unit).
COPY_ATTRIBUTE = "mdc.unit_copy"
# numpy's names of the element types a timing run can make arguments of.
NUMPY_DTYPES = {"f32": "float32", "f16": "float16", "f64": "float64", "i64": "int64", "i32": "int32",
                "i16": "int16", "i8": "int8", "i1": "bool"}


@dataclasses.dataclass(frozen=True)
class UnitFunction:
    """One unit written as ``symbol``: its arguments' (shape, numpy dtype)
    and whether a dynamic shape was fixed at its bound."""

    symbol: str
    arguments: tuple[tuple[tuple[int, ...], str], ...]
    at_bound: bool


class _Skip(Exception):
    """A unit this module does not write (the model estimates it)."""


class _Slice:
    """The arguments and the ops to copy of one unit (see the module's doc)."""

    def __init__(self, sources: dict):
        self.sources = sources
        self.arguments: list = []
        self.ops: list = []

    def need(self, value) -> None:
        if value in self.arguments or any(value in op.results for op in self.ops):
            return
        kind = self.sources.get(value, ("", None))[0]
        if kind in ("unit", "argument", "weight"):
            self.arguments.append(value)
            return
        owner = value.owner
        if isinstance(owner, ir.Block):
            raise _Skip("it reads a scalar argument of the function")
        owner = owner.operation
        for read in irx.reads_from_outside(owner):
            self.need(read)
        if owner not in self.ops:
            self.ops.append(owner)


def _element(type_) -> str:
    text = str(ir.RankedTensorType(type_).element_type)
    if text not in NUMPY_DTYPES:
        raise _Skip(f"its arguments' element type {text} has no numpy type here")
    return NUMPY_DTYPES[text]


def write_unit(op, sources: dict, symbol: str, dims_of: Callable, block_of_module,
               copies: int = 1, returns: int = 1, own_arguments: bool = False) -> Optional[UnitFunction]:
    """``op`` (a unit of a function whose values come from ``sources``,
    extract.FunctionParts') written as ``symbol`` at the end of
    ``block_of_module``; ``dims_of(value)``, a value's shape at its bounds.
    ``copies`` > 1: the unit written that many times, over the same
    arguments or (``own_arguments``) each copy over a set of its own, the
    function's arguments being those sets one after another; the ops of
    each copy after the first marked with its number
    (COPY_ATTRIBUTE) so that no copy is folded into another. ``returns``
    (at least ``copies``): how many sets of results the function returns,
    every copy's, then the last copy's again (the module's doc says why). None where the unit is
    not written (the module's doc)."""
    piece = _Slice(sources)
    try:
        for read in irx.reads_from_outside(op):
            piece.need(read)
        results = [r for r in op.results if bnd.is_tensor(r)]
        if not results or any(not bnd.is_tensor(a) for a in piece.arguments):
            raise _Skip("it reads or makes no tensor")
        arguments = []
        for a in piece.arguments:
            shaped = ir.RankedTensorType(a.type)
            arguments.append((tuple(dims_of(a)), _element(a.type), shaped))
    except (_Skip, bnd.UnboundedDimension):
        return None
    at_bound = any(not shaped.has_static_shape for _, _, shaped in arguments) or \
        any(not ir.RankedTensorType(r.type).has_static_shape for r in results)
    static = [ir.RankedTensorType.get(list(shape), shaped.element_type) for shape, _, shaped in arguments]
    with op.location:
        ir.Context.current.dialects["tensor"]  # loaded for the casts below, if the program had none
        sets = copies if own_arguments else 1
        function_type = ir.FunctionType.get(static * sets, [r.type for r in results] * max(copies, returns))
        with ir.InsertionPoint(block_of_module):
            function = ir.Operation.create("util.func", regions=1, attributes={
                "sym_name": ir.StringAttr.get(symbol), "function_type": ir.TypeAttr.get(function_type)})
        block = function.regions[0].blocks.append(*(static * sets))
        given, width = list(block.arguments), len(static)
        returned = []
        with ir.InsertionPoint(block):
            for k in range(copies):
                inputs = given[k * width:(k + 1) * width] if own_arguments else given[:width]
                last = _copy(op, piece, inputs, arguments, results, k or None)
                returned += last
            returned += last * (returns - copies)
            ir.Operation.create(irx.UTIL_RETURN, operands=returned)
    return UnitFunction(symbol, tuple((shape, dtype) for shape, dtype, _ in arguments), at_bound)


def _copy(op, piece: _Slice, inputs: list, arguments: list, results: list, copy: Optional[int]) -> list:
    """One copy of the unit at the insertion point, reading ``inputs`` (the
    function's arguments), its cloned ops marked with COPY_ATTRIBUTE =
    ``copy`` (None: unmarked; the casts of dynamic arguments never are);
    its results."""
    mapping = {}
    for value, given, (_, _, shaped) in zip(piece.arguments, inputs, arguments):
        if shaped.has_static_shape:
            mapping[value] = given
        else:
            mapping[value] = ir.Operation.create("tensor.cast", results=[value.type], operands=[given]).results[0]
    for original in [*piece.ops, op]:
        clone = original.clone()
        for user in [clone.operation, *irx.walk(clone.operation)]:
            for i, value in enumerate(user.operands):
                if value in mapping:
                    user.operands[i] = mapping[value]
        if copy is not None:
            clone.operation.attributes[COPY_ATTRIBUTE] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), copy)
        mapping.update(zip(original.results, clone.operation.results))
    return [mapping[r] for r in results]
