"""state-initial-values: each mutable global whose initial value another
mutable global shares gets a buffer of its own.

Stock IREE 3.13 gives mutable globals of one type and one initial value
(every zeroed KV cache) one buffer: stream conversion makes each initial
value a splat (or constant) in an initializer of its own, IREE combines the
initializers and CSE merges the equal ops into one value stored into every
global, and an update in place of one global then writes the buffer all of
them hold (docs/DESIGN.md section 8; the canary is
test/lit/regress/iree_mutable_globals_share_initial_value.test).

So each such global loses its initial value and gets, right after it, a
``util.initializer`` that fills it with an element IREE cannot see through:
an integer constant of the element's bits behind a
``util.optimization_barrier``, truncated and bitcast to the element type.
No two barriers are merged, so no two fills are, and each global's buffer
is its own. The bits are the value's own: a float constant would not do,
as IREE's VM makes the float constant -0.0 the constant +0.0 and has no
f16 or narrower scalars (*measured*). A value that is not a splat is
inserted over a fill of zero at an offset of 0 behind a barrier (an
insert of the whole tensor at a static 0 folds to the value, which CSE
merges again; so does a splat inserted so, whence the fill for splats).
The initializer takes the global's ``stream.affinity``, so the value is
made where the global lives. A barrier on the tensor itself, or a
``flow.tensor.clone``, does not help: IREE drops the clone, and the
barrier passes the one buffer through (*measured*).

Runs at the input level after assign-devices (whose global affinities it
copies), before IREE's flow and stream phases merge anything. Left as they
are: immutable globals, a mutable global whose (type, value) no other
mutable global shares, globals of elements other than signless integers,
index and floats of at most 64 bits, and splats of a float whose bits
IREE's Python API does not show (a non-zero f8; bf16 is read through f32).
A program without the pattern is unchanged.
"""
from __future__ import annotations

import math
import struct

from iree.compiler import ir

from ..ir import ir_adapter as irx
from ..infra.pass_base import Fact, ModulePass, NoOptions

GLOBAL_AFFINITY = "stream.affinity"

# The initializer's body: {scalar} makes %b, the fill's element, from a
# constant behind a barrier; a value that is not a fill's is parsed with a
# placeholder (dense<0>) that the pass replaces by the value itself.
_FILL = """{scalar}
  %e = tensor.empty() : {type}
  %f = linalg.fill ins(%b : {elt}) outs(%e : {type}) -> {type}
"""
_STORE = "  util.global.store %f, {sym} : {type}\n"
_INSERT = """  %v = arith.constant dense<{zero}> : {type}
  %c0 = arith.constant 0 : index
  %o = util.optimization_barrier %c0 : index
  %u = tensor.insert_slice %v into %f{slice} : {type} into {type}
  util.global.store %u, {sym} : {type}
"""


def _width(elt) -> int | None:
    if isinstance(elt, ir.IndexType):
        return 64
    if isinstance(elt, ir.FloatType):
        return ir.FloatType(elt).width
    if isinstance(elt, ir.IntegerType) and ir.IntegerType(elt).is_signless:
        return ir.IntegerType(elt).width
    return None


def _candidate(op) -> tuple | None:
    """(type, initial value) of a mutable global of static tensor type of
    signless integer, index or float elements of at most 64 bits, with a
    dense initial value whose splat bits (if a splat) are known; else None."""
    if op.name != irx.UTIL_GLOBAL or "is_mutable" not in op.attributes:
        return None
    initial = irx.get_attr(op, "initial_value")
    if initial is None or not isinstance(initial, (ir.DenseElementsAttr, ir.DenseResourceElementsAttr)):
        return None
    type_ = ir.TypeAttr(op.attributes["type"]).value
    if not isinstance(type_, ir.RankedTensorType) or not type_.has_static_shape or 0 in type_.shape:
        return None
    width = _width(type_.element_type)
    if width is None or width > 64:
        return None
    if isinstance(initial, ir.DenseElementsAttr) and initial.is_splat and _fill_value(initial) is None:
        return None  # a float splat of bits not shown: a splat inserted over a fill would be merged again
    return type_, initial


def shared_groups(module) -> list[list]:
    """The mutable globals (ops) whose (type, initial value) another one
    shares, grouped, in program order."""
    groups: list[tuple[tuple, list]] = []
    for op in irx.top_level_ops(module):
        key = _candidate(op)
        if key is None:
            continue
        for seen, members in groups:
            if seen[0] == key[0] and seen[1] == key[1]:
                members.append(op)
                break
        else:
            groups.append((key, [op]))
    return [members for _, members in groups if len(members) > 1]


def _signed(bits: int, width: int) -> int:
    return bits - (1 << width) if bits >> (width - 1) & 1 else bits


def _fill_value(initial) -> int | None:
    """The bits whose fill gives the value's bytes, as a signed integer of
    the element's width: a splat of an integer, or of a float of bits IREE's
    Python API shows (0 of any float, any f16, f32 or f64); else None."""
    if not isinstance(initial, ir.DenseElementsAttr) or not initial.is_splat:
        return None
    scalar = initial.get_splat_value()
    if isinstance(scalar, ir.IntegerAttr):
        return ir.IntegerAttr(scalar).value
    width = ir.FloatType(scalar.type).width
    value = ir.FloatAttr(scalar).value
    if value == 0.0 and math.copysign(1.0, value) > 0:
        return 0
    one = ir.DenseElementsAttr.get_splat(ir.RankedTensorType.get([1], scalar.type), scalar)
    try:
        raw = bytes(memoryview(one))
    except (BufferError, RuntimeError, ValueError, TypeError):  # bf16, f8, ...: no buffer
        if not isinstance(scalar.type, ir.BF16Type) or math.isnan(value):
            return None
        raw = (int.from_bytes(struct.pack("<f", value), "little") >> 16).to_bytes(2, "little")  # exact in f32
    return _signed(int.from_bytes(raw[: width // 8], "little"), width)


def _scalar(elt, value: int) -> str:
    """Lines making %b, of type ``elt`` and of the bits ``value``, behind a
    barrier, from an integer constant: IREE's VM makes the float constant
    -0.0 the constant +0.0 (*measured*), and has no scalars narrower than
    32 bits (those are made as an i32 truncated)."""
    width = _width(elt)
    wide = "i64" if width > 32 else "i32"
    steps = [f"arith.constant {value} : {wide}", f"util.optimization_barrier %v0 : {wide}"]
    if width < 32:
        steps.append(f"arith.trunci %v{len(steps) - 1} : i32 to i{width}")
    if isinstance(elt, ir.FloatType):
        steps.append(f"arith.bitcast %v{len(steps) - 1} : i{width} to {elt}")
    elif isinstance(elt, ir.IndexType):
        steps.append(f"arith.index_cast %v{len(steps) - 1} : i64 to index")
    names = [f"%v{i}" for i in range(len(steps) - 1)] + ["%b"]
    return "\n".join(f"  {name} = {step}" for name, step in zip(names, steps))


def _initializer_text(op, type_, fill: int | None) -> str:
    shape = list(type_.shape)
    offsets = ["%o", *("0" for _ in shape[1:])]
    slice_ = f"[{', '.join(offsets)}] [{', '.join(map(str, shape))}] [{', '.join('1' for _ in shape)}]"
    sym = irx.symbol_ref(irx.symbol_name(op))
    fields = dict(scalar=_scalar(type_.element_type, 0 if fill is None else fill), elt=type_.element_type,
                  type=type_, sym=sym, slice=slice_,
                  zero="0.0" if isinstance(type_.element_type, ir.FloatType) else "0")
    body = _FILL.format(**fields) + (_STORE if fill is not None else _INSERT).format(**fields)
    # A stand-in global of the same name, so that the store verifies.
    return f"util.global private mutable {sym} : {type_}\nutil.initializer {{\n{body}  util.return\n}}\n"


def own_initializer(op) -> None:
    """Moves ``op``'s initial value into an initializer right after it."""
    type_, initial = _candidate(op)
    fill = _fill_value(initial)
    parsed = ir.Module.parse(_initializer_text(op, type_, fill))
    template = irx.top_level_ops(parsed.operation)[1]
    with ir.InsertionPoint.after(op):
        init = template.clone()
    if fill is None:  # the placeholder dense<0> is the value's
        placeholder = [inner for inner in irx.walk(init) if inner.name == irx.ARITH_CONSTANT
                       and isinstance(inner.attributes["value"], ir.DenseElementsAttr)]
        placeholder[0].attributes["value"] = initial
    if GLOBAL_AFFINITY in op.attributes:
        init.attributes[GLOBAL_AFFINITY] = op.attributes[GLOBAL_AFFINITY]
    del op.attributes["initial_value"]


class StateInitialValues(ModulePass):
    """Gives mutable globals of one shared initial value a buffer each."""

    name = "state-initial-values"
    level = "input"
    summary = ("give each mutable global whose initial value another mutable global shares its own buffer "
               "(an initializer filling it behind an optimization barrier): stock IREE gives them one")

    # After assign-devices, whose global affinities the initializers take.
    needs = (Fact.DEVICES_ASSIGNED,)

    def apply(self, module, options: NoOptions) -> None:
        for group in shared_groups(module):
            for op in group:
                own_initializer(op)
