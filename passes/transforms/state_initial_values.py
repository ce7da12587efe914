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
``util.initializer`` that makes the same value from a scalar that IREE
cannot see through (``util.optimization_barrier``): a ``linalg.fill`` of the
splat's element, or for a value that is not a splat a fill of zero with the
value inserted over it at an offset of 0 behind a barrier (an insert at a
static offset 0 of the whole tensor folds to the value itself). No two barriers are merged, so no two fills are,
and each global's buffer is its own; the bytes are the initial value's
(the element is the splat's own attribute, -0.0 stays -0.0). The
initializer takes the global's ``stream.affinity``, so the value is made
where the global lives. A barrier on the tensor itself, or a
``flow.tensor.clone``, does not help: IREE drops the clone and the barrier
passes the one buffer through (*measured*).

Runs at the input level after assign-devices (whose global affinities it
copies), before IREE's flow and stream phases merge anything. Immutable
globals, a mutable global whose value no other mutable global of its type
shares, and globals of elements a fill cannot make (complex) are left as
they are: a program without the pattern is unchanged.
"""

from __future__ import annotations

from iree.compiler import ir

from ..ir import ir_adapter as irx
from ..infra.pass_base import Fact, ModulePass, NoOptions

GLOBAL_AFFINITY = "stream.affinity"

# The initializer, parsed with a placeholder scalar (and value) that the
# pass replaces by the global's own attributes.
_SPLAT = """
  %s = arith.constant {zero} : {elt}
  %b = util.optimization_barrier %s : {elt}
  %e = tensor.empty() : {type}
  %f = linalg.fill ins(%b : {elt}) outs(%e : {type}) -> {type}
  util.global.store %f, {sym} : {type}
"""
_DENSE = """
  %s = arith.constant {zero} : {elt}
  %b = util.optimization_barrier %s : {elt}
  %e = tensor.empty() : {type}
  %f = linalg.fill ins(%b : {elt}) outs(%e : {type}) -> {type}
  %v = arith.constant dense<{zero}> : {type}
  %c0 = arith.constant 0 : index
  %o = util.optimization_barrier %c0 : index
  %u = tensor.insert_slice %v into %f{slice} : {type} into {type}
  util.global.store %u, {sym} : {type}
"""


def _candidate(op) -> tuple | None:
    """(type, initial value) of a mutable global of static tensor type
    whose elements a fill can make, with a dense initial value; else None."""
    if op.name != irx.UTIL_GLOBAL or "is_mutable" not in op.attributes:
        return None
    initial = irx.get_attr(op, "initial_value")
    if initial is None or not isinstance(initial, (ir.DenseElementsAttr, ir.DenseResourceElementsAttr)):
        return None
    type_ = ir.TypeAttr(op.attributes["type"]).value
    if not isinstance(type_, ir.RankedTensorType) or not type_.has_static_shape or 0 in type_.shape:
        return None
    elt = type_.element_type
    if not (isinstance(elt, (ir.FloatType, ir.IntegerType)) or ir.IndexType.isinstance(elt)):
        return None
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


def _initializer_text(op, type_, splat: bool) -> str:
    elt = type_.element_type
    shape = list(type_.shape)
    offsets = ["%o", *("0" for _ in shape[1:])]
    slice_ = f"[{', '.join(offsets)}] [{', '.join(map(str, shape))}] [{', '.join('1' for _ in shape)}]"
    body = (_SPLAT if splat else _DENSE).format(
        zero="0.0" if isinstance(elt, ir.FloatType) else "0", elt=elt, type=type_, sym=irx.symbol_ref(irx.symbol_name(op)), slice=slice_)
    # A stand-in global of the same name, so that the store verifies.
    return (f"util.global private mutable {irx.symbol_ref(irx.symbol_name(op))} : {type_}\n"
            f"util.initializer {{{body}  util.return\n}}\n")


def own_initializer(op) -> None:
    """Moves ``op``'s initial value into an initializer right after it."""
    type_, initial = _candidate(op)
    splat = isinstance(initial, ir.DenseElementsAttr) and initial.is_splat
    parsed = ir.Module.parse(_initializer_text(op, type_, splat))
    template = irx.top_level_ops(parsed.operation)[1]
    with ir.InsertionPoint.after(op):
        init = template.clone()
    constants = [inner for inner in irx.walk(init) if inner.name == irx.ARITH_CONSTANT]
    if splat:  # the splat's own element: its bits, -0.0 and NaN payloads included
        constants[0].attributes["value"] = initial.get_splat_value()
    else:  # the placeholder dense<0> is the value's
        constants[1].attributes["value"] = initial
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
