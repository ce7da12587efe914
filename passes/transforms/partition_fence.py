"""partition-fence: no execution region spans a loop or a conditional.

IREE 3.13.0's partitioner (``iree-stream-schedule-execution``, the reference
partitioning) walks a block backwards and lets an op join a partition that
consumes one of its results, even when another of its users is a loop (or an
``scf.if``) that feeds that same partition. The region op runs between the
two, so the partition would have to run both before and after it; IREE then
rejects its own partitioning: "circular dependency: input operation uses
partition output". Stock IREE hits this on one device
(test/lit/regress/iree_circular_dependency.test). In modules with a staged
pair every op has a device after mdc's placement, so an op before a loop and
one after it share a device, and with it a partition, far more often
(test/lit/regress/staged_circular_dependency.mlir, found by the random
programs).

The partitioner never lets an op join a partition of ops that follow a
non-streamable op with side effects. This pass places one right after each
``scf.for``, ``scf.while``, ``scf.if`` and ``scf.index_switch`` that has
results, in a block with stream ops: a ``util.optimization_barrier`` of an
index constant, which IREE drops with its other compiler hints before the
VM. Ops before the region op can then only join partitions of ops before
it, and the cycle cannot form. What it costs: work before a loop and work
after it that does not depend on it no longer share one submission.

The partitioner also puts a ``stream.async.transfer`` into the partition of
the op that produced its source whenever the two can run together,
whatever side effects lie between them. Where the host stages that source
to another device between the two (a value sent both to a GPU, staged, and
to a device sharing its memory, not staged), the execution region lands at
the transfer, and the staging's reads of the source are moved after it,
past the host calls that copy it: the GPU read pinned memory before it was
written (wrong numbers, no error; test/lit/regress/
constant_to_staged_and_shared_device.mlir). So a transfer whose source the
host has already waited for by a ``stream.timepoint.barrier`` earlier in its
block takes the barrier's result as its source: the same bytes, from an op
that is not streamable, which no partition joins.

Modules whose devices all share memory are left to IREE, byte for byte.
"""

from __future__ import annotations

from iree.compiler import ir
from iree.compiler.dialects import arith, util

from ..ir import ir_adapter as irx
from ..ir.ir_util import walk
from ..analysis.memory_model import MemoryModel
from ..infra.pass_base import Fact, ModulePass, NoOptions

REGION_OPS = (irx.SCF_FOR, irx.SCF_WHILE, irx.SCF_IF, irx.SCF_INDEX_SWITCH)


def needs_fence(op: ir.Operation) -> bool:
    """A control-flow op whose results later ops in its block may read, in
    a block IREE partitions (one holding stream ops; not, for instance,
    the staging helpers transfer-insertion writes in HAL ops)."""
    if op.name not in REGION_OPS or len(op.results) == 0:
        return False
    return any(o.operation.name.startswith("stream.") for o in op.block.operations)


def fence_after(op: ir.Operation) -> ir.Operation:
    """Places the partition fence right after ``op``; returns it."""
    with ir.InsertionPoint.after(op), op.location:
        zero = arith.ConstantOp(ir.IndexType.get(), 0).result
        return util.OptimizationBarrierOp([zero.type], [zero]).operation


def fence_region_ops(module) -> int:
    """Fences every region op that needs it; returns how many."""
    ops = [op for op in walk(module) if needs_fence(op)]
    for op in ops:
        fence_after(op)
    return len(ops)


def read_through_barriers(block: ir.Block) -> int:
    """Gives each transfer in ``block`` whose source an earlier
    ``stream.timepoint.barrier`` of the block waits for that barrier's
    result as its source; returns how many."""
    waited: dict[ir.Value, ir.Value] = {}
    moved = 0
    for op in block.operations:
        op = op.operation
        if irx.is_transfer(op) and op.operands[0] in waited:
            op.operands[0] = waited[op.operands[0]]
            moved += 1
        elif op.name == irx.STREAM_TIMEPOINT_BARRIER and op.results[0].type == op.operands[0].type:
            waited[op.operands[0]] = op.results[0]
    return moved


def transfers_through_barriers(module) -> int:
    """read_through_barriers over every block of ``module``."""
    return sum(read_through_barriers(block) for op in walk(module)
               for region in op.regions for block in region.blocks)


class PartitionFence(ModulePass):
    """Keeps IREE's partitions from spanning loops and conditionals."""

    name = "partition-fence"
    level = "stream"
    summary = ("fence IREE's partitioning after loops and conditionals, and transfers of a value the host "
               "waited for, so no execution region spans one")

    requires = (MemoryModel,)
    # It gives a transfer the result of a barrier the staging put in, whose
    # uses host-fences redirects to its own wait: after both.
    needs = (Fact.STAGED_CROSSINGS, Fact.HOST_FENCES)
    provides = (Fact.PARTITION_FENCES,)

    def apply(self, module, options: NoOptions, model: MemoryModel) -> None:
        if not model.anything_staged:
            return
        fence_region_ops(module)
        transfers_through_barriers(module)
