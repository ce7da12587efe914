"""loop-init-isolation: a loop's initial values never start inside a packed allocation.

IREE 3.13.0 can start an ``scf.for``/``scf.while`` from the wrong bytes. When
the op producing a loop's initial value also produces other results that
outlive it, IREE's allocation packs them into one buffer and hands the loop
a subrange at a non-zero offset; ``iree-stream-propagate-subranges`` then
carries that offset as a loop argument, and a later ``iree-util-apply-
patterns`` drops it (the back edge yields offset 0), so the first iteration
reads offset 0: another result's bytes. Stock IREE miscompiles such
programs on one device too (test/lit/regress/iree_loop_init_packed_offset.test,
iree_loop_init_two_dynamic_dims.test). Staging makes it common: every
value a loop stages is external, and so are the values exported beside it.

This pass runs on stream-tensor IR after transfer-insertion, in modules with
a staged pair (others are left to IREE, byte for byte). In each loop whose
back edge carries a value transfer-insertion staged (an imported, so
external, buffer), each resource the loop starts from goes through
``stream.tensor.export``, a ``util.optimization_barrier`` on the buffer
view, and ``stream.tensor.import`` on its own device: to IREE's allocation
it is then a buffer of its own, offset 0. Nothing is copied; IREE waits on
the host for the value before the export, as for any exported value.
Loops that carry no staged value keep IREE's behaviour, bug included: an
imported init against transient yields is a lifetime mismatch IREE cannot
reconcile.
"""

from __future__ import annotations

from iree.compiler import ir
from iree.compiler.dialects import stream, util

from ..ir import ir_adapter as irx
from ..ir.ir_util import affinity_attr, walk
from ..analysis.memory_model import MemoryModel
from ..analysis.residence import Residence
from ..infra.pass_base import Fact, ModulePass, NoOptions
from ..lowering.emitter import is_copy_dispatch, is_staging_call



def loop_inits(op: ir.Operation) -> list[int]:
    """Operand indices of a loop op's initial values (none for other ops)."""
    if op.name == irx.SCF_FOR:
        return list(range(3, len(op.operands)))
    if op.name == irx.SCF_WHILE:
        return list(range(len(op.operands)))
    return []


def isolate(value: ir.Value, device: str) -> ir.Value:
    """``value`` as a resource of its own, at the current insertion point."""
    where = affinity_attr(device)
    external = irx.resource_type("external")
    encoding = ir.TypeAttr.get(irx.bytes_tensor_type())
    size = stream.ResourceSizeOp(value).result
    cast = stream.AsyncCastOp(external, value, size, size, affinity=where).result
    view = stream.TensorExportOp(irx.buffer_view_type(), cast, encoding, [size], size,
                                 affinity=where).result
    # Without the barrier IREE folds import(export(x)) back into x.
    view = util.OptimizationBarrierOp([view.type], [view]).results[0]
    imported = stream.TensorImportOp(external, view, encoding, [size], size, affinity=where).result
    # A copy, as transfer-insertion makes of values it stages into region
    # arguments (IREE elides it where the lifetimes allow).
    return stream.AsyncCloneOp(value.type, imported, size, size, affinity=where).result


def yielded(op: ir.Operation, index: int) -> ir.Value | None:
    """What the back edge carries into the loop argument of init ``index``."""
    if op.name == irx.SCF_FOR:
        region, position = op.regions[0], index - 3
    else:  # scf.while: the `do` region's yield feeds the `before` arguments
        region, position = op.regions[1], index
    blocks = list(region.blocks)
    if not blocks:
        return None
    terminator = list(blocks[-1].operations)[-1].operation
    return terminator.operands[position] if position < len(terminator.operands) else None


def comes_from_staging(value: ir.Value | None, depth: int = 0) -> bool:
    """True if ``value`` is what transfer-insertion's staging call returned,
    imported, through casts, copies and transfers."""
    while value is not None and depth < 32:
        owner = value.owner
        if isinstance(owner, ir.Block):
            return False
        owner = owner.operation
        if owner.name == irx.STREAM_TENSOR_IMPORT:
            # Staged: the view comes from mdc's staging call (an argument
            # imported by the ABI is not).
            view = owner.operands[0].owner
            if isinstance(view, ir.Block):
                return False
            view = view.operation
            return is_staging_call(view)
        if owner.name == irx.STREAM_TENSOR_DISPATCH:
            # --staging=emplace: a CPU copies the value out of the pinned
            # buffer with mdc's copy dispatch (its only other use, the copy
            # into the pinned buffer, is never yielded).
            return is_copy_dispatch(owner)
        if owner.name not in (irx.STREAM_ASYNC_CAST, irx.STREAM_ASYNC_CLONE, irx.STREAM_ASYNC_TRANSFER,
                              irx.STREAM_TIMEPOINT_BARRIER):
            return False
        value, depth = owner.operands[0], depth + 1
    return False


def isolate_loop_inits(module, residence: Residence) -> int:
    """Rewrites the unrefined resource inits of loops whose back edge
    carries a staged value; returns how many."""
    done = 0
    for op in [op for op in walk(module) if irx.is_loop(op)]:
        for index in loop_inits(op):
            value = op.operands[index]
            if not irx.is_type(value.type, "!stream.resource<*>"):
                continue
            # Only loops that carry staged (imported, so external) values:
            # there the init becomes external too, and IREE reconciles the
            # two. An imported init against transient yields it cannot
            # reconcile (test/lit/regress/iree_loop_lifetime.test).
            if not comes_from_staging(yielded(op, index)):
                continue
            device = residence.home(value)
            if device is None:
                continue
            with ir.InsertionPoint(op), op.location:
                op.operands[index] = isolate(value, device)
            done += 1
    return done


class LoopInitIsolation(ModulePass):
    """Gives every loop's initial resources a buffer of their own."""

    name = "loop-init-isolation"
    level = "stream"
    summary = "route loop initial values through export/import so IREE cannot start a loop at a packed offset"

    requires = (MemoryModel, Residence)
    # It finds the loops that carry staged values by the staging's marks.
    needs = (Fact.MDC_MARKS, Fact.STAGED_CROSSINGS)
    provides = (Fact.LOOP_INITS_ISOLATED,)

    def apply(self, module, options: NoOptions, model: MemoryModel, residence: Residence) -> None:
        if not model.anything_staged:
            return
        isolate_loop_inits(module, residence)
