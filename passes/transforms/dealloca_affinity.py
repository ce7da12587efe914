"""dealloca-affinity: a ``stream.resource.dealloca`` that another device
waits on goes on the device its resource was allocated on.

IREE 3.13's stream pipeline deallocates a loop-carried transient resource
with ``stream.resource.dealloca origin`` and no affinity, and its HAL
conversion puts an op without an affinity on the module's default device,
the first one declared. With a CPU declared first and all the work on a
GPU, that is a ``hal.device.queue.dealloca`` of a CUDA buffer on the CPU's
queue, whose fence the GPU's next allocation waits on: a GPU queue waiting
on another driver's semaphore, which never runs (the device-isolation
verifier rejects the module; random programs seed 20261202 index 57;
test/lit/regress/iree_dealloca_default_device.test keeps the stock
reproduction).

This pass runs on IREE's scheduled stream IR, after its stream pipeline
and before the HAL conversion (level ``scheduled``). It gives such a
dealloca the affinity of the allocation its resource comes from (followed
through block arguments, a loop's carried value, and awaits) only where an
op on a device other than the default one waits on the dealloca's
timepoint, which is what the verifier refuses. Elsewhere IREE's dealloca
stays: with ``PreferOrigin`` the runtime frees the buffer on the device
that allocated it, and a module whose last dealloca is so ran right on the
H200 (test/lit/regress/loop_on_gpu_dealloca_on_default_device.mlir). A
dealloca whose resource comes from allocations on different devices, or
from something else, is left as it is (the verifier still sees it). So a
module the verifier accepted before is IREE's own, byte for byte.
"""

from __future__ import annotations

from iree.compiler import ir

from ..ir import ir_adapter as irx
from ..ir.ir_util import branch_targets, incoming_values, sources, walk
from ..infra.pass_base import Fact, ModulePass, NoOptions

_ALLOCATIONS = (irx.STREAM_RESOURCE_ALLOCA, irx.STREAM_RESOURCE_ALLOC)


def _through_awaits(op: ir.Operation, result: ir.Value) -> list[ir.Value] | None:
    """An await's result is the resource it awaits."""
    if op.name == irx.STREAM_TIMEPOINT_AWAIT:
        return [op.opview.resource_operands[ir.OpResult(result).result_number]]
    return None


def origin_affinity(resource: ir.Value, incoming: dict) -> ir.Attribute | None:
    """The affinity of the allocation(s) ``resource`` comes from, when they
    all agree; else None (also where it comes from a function's argument,
    or from a region's, which this does not follow)."""
    made_by = sources(resource, incoming, _through_awaits)
    if made_by is None:
        return None
    found: list[ir.Attribute] = []
    for op in made_by:
        if op.name not in _ALLOCATIONS or "affinity" not in op.attributes:
            return None
        attr = op.attributes["affinity"]
        if attr not in found:
            found.append(attr)
    return found[0] if len(found) == 1 else None


def awaited_elsewhere(timepoint: ir.Value, default: ir.Attribute | None) -> bool:
    """Whether an op on a device other than ``default`` waits on
    ``timepoint``, followed through branches and joins."""
    seen: set = set()
    work = [timepoint]
    while work:
        value = work.pop()
        if value in seen:
            continue
        seen.add(value)
        for use in value.uses:
            user = use.owner
            if irx.is_branch(user):
                for block, values in branch_targets(user):
                    work.extend(block.arguments[i] for i, v in enumerate(values) if v == value)
            elif user.name == irx.STREAM_TIMEPOINT_JOIN:
                work.append(user.results[0])
            elif "affinity" in user.attributes and (default is None or user.attributes["affinity"] != default):
                return True
    return False


def place_deallocas(module) -> int:
    """Gives a dealloca without an affinity its resource's, where that is
    not the module's default device (where IREE puts it anyway) and a queue
    of another device waits on it; returns how many it placed."""
    attrs = module.operation.attributes
    default = attrs[irx.DEFAULT_AFFINITY] if irx.DEFAULT_AFFINITY in attrs else None
    placed = 0
    for function in [op for op in module.regions[0].blocks[0].operations]:
        function = function.operation
        if function.name != irx.UTIL_FUNC:
            continue
        deallocas = [op for op in walk(function)
                     if op.name == irx.STREAM_RESOURCE_DEALLOCA and "affinity" not in op.attributes
                     and awaited_elsewhere(op.results[0], default)]
        if not deallocas:
            continue
        incoming = incoming_values(function)
        for op in deallocas:
            affinity = origin_affinity(op.opview.operand, incoming)
            if affinity is not None and (default is None or affinity != default):
                op.attributes["affinity"] = affinity
                placed += 1
    return placed


class DeallocaAffinity(ModulePass):
    name = "dealloca-affinity"
    level = "scheduled"
    summary = "put an affinity-less stream.resource.dealloca another device waits on where its resource was allocated"

    provides = (Fact.DEALLOCAS_PLACED,)

    def apply(self, module, options: NoOptions) -> None:
        place_deallocas(module)
