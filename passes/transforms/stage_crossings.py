"""stage-crossings: find every crossing between devices whose memories are
incompatible and lower each with the first lowering that applies
(lowering/: pinned arguments, small in place, emplace, copy).

Crossings found (residence.py says where things live and run):

* explicit transfers ``stream.async.transfer from(A) -> to(B)``;
* transfers with no target, whose consumers run on B;
* any op running on B that consumes a value living on A with no transfer in
  between (an ABI result declared on B, a global stored on A and read on B).

Each crossing is planned (``plan_transfer``, ``plan_operand``: a
crossings.Crossing record, no IR changed) right before it is lowered, in the
order the IR holds them: a lowering inserts ops and replaces uses, and the
next crossing is planned on the IR as it is then, which is what the report
and the output have always been made from.

Assumes placed IR (place-unplaced-ops runs first inside transfer-insertion);
mdc-opt runs it alone by name. Modules whose device pairs all share memory
are left untouched.
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir
from iree.compiler.dialects import stream

from ..ir import ir_adapter as irx
from ..analysis.abi import PINNED_ARGUMENTS_ATTR, is_constant_zero, pinned_arguments_attr, update_into_argument
from ..analysis.crossings import Crossing, policy_at
from ..infra.diagnostics import format_location
from ..ir.ir_util import affinity_attr, get_attr, inside_executable, is_resource, walk
from ..lowering import Lowerings, Site, StagingOptions
from ..analysis.memory_model import MemoryModel
from ..infra.outputs import Report
from ..infra.pass_base import Fact, ModulePass
from ..analysis.residence import Residence
from ..analysis.sizes import measure

_REGION_ARGUMENT_USERS = {irx.SCF_YIELD, irx.SCF_FOR, irx.SCF_WHILE, irx.SCF_CONDITION, irx.SCF_IF, irx.CF_BR, irx.CF_COND_BR}


def stage_crossings(module, model: MemoryModel, residence: Residence, options: StagingOptions) -> list[Crossing]:
    """Lowers every staged crossing of placed ``module`` (``residence`` is
    its analysis); returns one Crossing per crossing, in order. The
    arguments given pinned are recorded on the module
    (abi.PINNED_ARGUMENTS_ATTR)."""
    lowerings = Lowerings(module, model, options)
    crossings: list[Crossing] = []
    # Only the moves are collected: a rewrite erases its move and may erase
    # other ops after it (the update and clone of an output argument), and a
    # Python reference to an erased op reads freed memory without an error
    # (its name came back as garbage once: a crash in nanobind's string
    # conversion in the bench's build).
    transfers = [op for op in walk(module) if irx.is_transfer(op) and not inside_executable(op)]
    for op in transfers:
        _rewrite_transfer(op, residence, model, lowerings, crossings)
    for op in [op for op in walk(module) if not inside_executable(op)]:
        _rewrite_implicit_crossings(op, residence, model, lowerings, crossings)
    lowerings.finish()
    if lowerings.pinned_arguments:
        module.attributes[PINNED_ARGUMENTS_ATTR] = pinned_arguments_attr(lowerings.pinned_arguments)
    return crossings


def plan_transfer(op, residence: Residence, model: MemoryModel) -> Crossing | None:
    """The crossing ``op`` (a ``stream.async.transfer``) makes when its pair
    is staged; None otherwise. Changes no IR."""
    src, dst = residence.transfer_source(op), residence.transfer_target(op)
    if src is None or dst is None:
        return None
    policy = policy_at(model, src, dst, op)
    if not policy.is_staged:
        return None
    size = measure(op.operands[0], op.operands[1])
    return Crossing(format_location(op.location), src, dst, policy, "transfer", size.encoding, size.bytes_text(),
                    size=size)


def _say_where_it_goes(op, residence: Residence) -> None:
    """A transfer left to IREE (a shared pair) gets its source and target
    written out."""
    src, dst = residence.transfer_source(op), residence.transfer_target(op)
    if src is None or dst is None:
        return
    if get_attr(op, "target_affinity") is None:
        # Say where it goes: left targetless, IREE runs it on the default
        # device, which may not be able to use the source's memory.
        op.attributes["target_affinity"] = affinity_attr(dst)
    if irx.affinity_of(op, "source_affinity").single != src:
        # And where it comes from: left sourceless, IREE may schedule the
        # copy in another device's partition and allocate the result for
        # both devices (test/lit/regress/constant_round_trip_result_on_b.mlir);
        # left with a wrong source (Residence.transfer_source), likewise
        # (random programs, seed 796039204 index 92).
        op.attributes["source_affinity"] = affinity_attr(src)


def _rewrite_transfer(op, residence, model, lowerings: Lowerings, crossings: list[Crossing]) -> None:
    planned = plan_transfer(op, residence, model)
    if planned is None:
        _say_where_it_goes(op, residence)
        return
    site = Site(op.operands[0], op.operands[1], planned.source, planned.target, planned.policy,
                op.results[0].type, carried=_flows_into_region_arguments(op.results[0]))
    # A move whose one use writes it into an output argument's storage goes
    # straight there where a lowering can; the storage is then the result.
    into_output = update_into_argument(op.results[0])
    staged = _stage_into_output(site, into_output, lowerings) if into_output is not None else None
    written = None
    if staged is not None:
        written = staged.value
    else:
        with ir.InsertionPoint(op), op.location:
            staged = lowerings.stage(site)
        op.results[0].replace_all_uses_with(staged.value)
        if into_output is not None:
            written = into_output.results[0]  # IREE's own update writes the staged value there
    caller_buffer = staged.caller_buffer or ("output storage" if into_output is not None else None)
    crossings.append(dataclasses.replace(planned, caller_buffer=caller_buffer))
    op.erase()
    if written is not None:
        _return_storage_uncloned(written)


def _stage_into_output(site: Site, into_output, lowerings: Lowerings):
    """``site`` lowered straight into the output storage ``into_output``
    writes it into, which is then gone (with the caller's storage import,
    when nothing else uses it); None, nothing emitted, where no lowering can."""
    storage = into_output.opview.target.owner
    with ir.InsertionPoint(into_output), into_output.location:
        staged = lowerings.stage_into_output(site, into_output)
    if staged is None:
        return None
    into_output.results[0].replace_all_uses_with(staged.value)
    into_output.erase()
    if storage.name == irx.STREAM_TENSOR_IMPORT and not list(storage.results[0].uses):
        storage.erase()  # the caller's pinned storage, now imported after the copy into it
    return staged


def _return_storage_uncloned(storage: ir.Value) -> None:
    """IREE returns an output argument's storage as a clone of a slice of
    it, which a CPU makes with a one-thread queue copy into a new buffer
    (a new buffer's page faults are what bound GPU->CPU moves). A staged
    value written into that storage is returned as the slice itself, as
    the output argument says it is: the caller's storage, with no copy."""
    for use in list(storage.uses):
        sliced = use.owner
        if sliced.name != irx.STREAM_ASYNC_SLICE or not is_constant_zero(sliced.opview.source_offset):
            continue
        users = list(sliced.results[0].uses)
        if len(users) != 1 or users[0].owner.name != irx.STREAM_ASYNC_CLONE:
            continue
        clone = users[0].owner
        with ir.InsertionPoint(clone), clone.location:
            same = stream.AsyncCastOp(clone.results[0].type, sliced.results[0], clone.opview.source_size,
                                      clone.opview.result_size, affinity=get_attr(clone, "affinity")).result
        clone.results[0].replace_all_uses_with(same)
        clone.erase()


def _operand_targets(op, residence: Residence) -> list[str | None]:
    """Where each operand of ``op`` is used (empty: nowhere that counts)."""
    if op.name == irx.SCF_YIELD:
        return residence.yield_targets(op)
    if irx.is_branch(op):
        return residence.branch_targets(op)
    device = residence.exec_device(op)
    if device is None or irx.is_transfer(op):
        return []
    return [device] * len(op.operands)


def plan_operand(op, index: int, device: str | None, residence: Residence, model: MemoryModel) -> Crossing | None:
    """The crossing operand ``index`` of ``op``, used on ``device``, makes
    when its value lives on a device of a staged pair with it; else None.
    Changes no IR."""
    value = op.operands[index]
    if device is None or not is_resource(value):
        return None
    home = residence.home(value)
    if home is None or home == device:
        return None
    policy = policy_at(model, home, device, op)
    if not policy.is_staged:
        return None
    size = measure(value)
    return Crossing(format_location(op.location), home, device, policy, "implicit", size.encoding, size.bytes_text(),
                    size=size)


def _rewrite_implicit_crossings(op, residence, model, lowerings: Lowerings, crossings: list[Crossing]) -> None:
    targets = _operand_targets(op, residence)
    for index in range(len(op.operands)):
        planned = plan_operand(op, index, targets[index] if index < len(targets) else None, residence, model)
        if planned is None:
            continue
        value = op.operands[index]
        with ir.InsertionPoint(op), op.location:
            size = stream.ResourceSizeOp(value).result
            staged = lowerings.stage(Site(value, size, planned.source, planned.target, planned.policy,
                                          _staged_type(value, op), carried=op.name in _REGION_ARGUMENT_USERS))
        op.operands[index] = staged.value
        crossings.append(dataclasses.replace(planned, caller_buffer=staged.caller_buffer))


def _staged_type(value: ir.Value, user: ir.Operation) -> ir.Type:
    """The type a staged copy of ``value`` takes where ``user`` reads it:
    the value's own, except that a global's ``variable`` lifetime is kept
    only for a store and for region arguments (whose types are fixed). A
    global read on another device (its load's clone) takes the copy as
    ``*``: cast back to ``variable`` there, IREE 3.13's stream usage
    refinement grows without bound (24 GB and a SIGKILL on a 4xf32 global
    stored on device_a and returned on device_b,
    test/lit/regress/global_read_on_gpu_side.mlir), as it does on a cast to
    ``constant`` (emitter.as_lifetime moves such a value with a transfer,
    which would cost a read a copy here)."""
    if user.name == irx.UTIL_GLOBAL_STORE or user.name in _REGION_ARGUMENT_USERS:
        return value.type
    if irx.is_type(value.type, "!stream.resource<variable>"):
        return irx.resource_type()
    return value.type


def _flows_into_region_arguments(value: ir.Value) -> bool:
    return any(use.owner.name in _REGION_ARGUMENT_USERS for use in value.uses)


class StageCrossings(ModulePass):
    """Lowers every staged crossing of placed IR."""

    name = "stage-crossings"
    level = "stream"
    summary = "lower each crossing between incompatible memories (pinned arguments, small in place, emplace, copy)"

    Options = StagingOptions

    requires = (MemoryModel, Residence)
    needs = (Fact.PLACED_OPS, Fact.PLAIN_CROSSINGS)
    provides = (Fact.STAGED_CROSSINGS, Fact.MDC_MARKS)

    def apply(self, module, options: StagingOptions, model: MemoryModel, residence: Residence) -> Report | None:
        if not model.needs_staging:
            return None
        return Report(crossings=stage_crossings(module, model, residence, options))
