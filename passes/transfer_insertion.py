"""transfer-insertion: stage every crossing between incompatible memories.

IREE 3.13 gives a value used on two devices one buffer, allocated on
``#hal.device.optimal<[A, B]>``; for a local CPU and a discrete GPU no such
memory exists and compilation fails (or, with a transparent-access topology,
the program hangs on the GPU). This pass runs on stream-tensor IR, before
IREE schedules or allocates anything, and rewrites each crossing between a
*staged* pair of the memory model into three explicit steps:

1. export on the source device: the bytes of the value as a
   ``!hal.buffer_view`` (``stream.async.cast`` to ``external``, then
   ``stream.tensor.export``; IREE inserts the host wait for the producer);
2. host staging (``@__mdc_stage``, stock HAL VM ops only): copy on the
   source queue into pinned host memory from the owner's allocator, wait on
   the host, copy on the destination queue into a buffer from the
   destination's allocator, wait on the host. Every queue only sees fences
   of its own device and buffers it can use;
3. import on the destination device, cast back to the original lifetime.

The bytes travel as ``tensor<?xi8>`` of the resource's size, so rank,
dynamic dimensions and element type need no special handling.

Crossings found (placement.py says where things live and run):

* explicit transfers ``stream.async.transfer from(A) -> to(B)``;
* transfers with no target, whose consumers run on B;
* any op running on B that consumes a value living on A with no transfer in
  between (an ABI result declared on B, a global stored on A and read on B).

Ops with no affinity are first placed (placement.py's rule). Modules whose
device pairs all share memory are left untouched.
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir
from iree.compiler.dialects import stream, util

from .diagnostics import MdcError, format_location
from .ir_util import affinity_attr, is_resource, unique_symbol, walk
from .memory_model import LinkPolicy, MemoryModel
from .placement import Placement
from .registry import ModulePass, PassOptions, register

STAGE_FUNCTION = "__mdc_stage"

# Stock HAL VM ops only. Arguments: the exported source view, a fence of
# the source device that signals when the value is ready (null: ready now),
# the source device, the destination device, and the device whose allocator
# owns the pinned staging memory.
_STAGE_TEMPLATE = """
util.func private @{name}(%src_view: !hal.buffer_view, %src_ready: !hal.fence, %src_device: !hal.device, %dst_device: !hal.device, %owner_device: !hal.device) -> !hal.buffer_view attributes {{inlining_policy = #util.inline.never}} {{
  %c0 = arith.constant 0 : index
  %any_queue = arith.constant -1 : i64
  %forever = arith.constant -1 : i32
  %no_wait = util.null : !hal.fence
  %length = hal.buffer_view.dim<%src_view : !hal.buffer_view>[0] : index
  %src = hal.buffer_view.buffer<%src_view : !hal.buffer_view> : !hal.buffer
  %owner_allocator = hal.device.allocator<%owner_device : !hal.device> : !hal.allocator
  %pinned_type = hal.memory_type<"HostLocal|DeviceVisible"> : i32
  %pinned_usage = hal.buffer_usage<"Transfer|Mapping"> : i32
  %staging = hal.allocator.allocate<%owner_allocator : !hal.allocator> affinity(%any_queue) type(%pinned_type) usage(%pinned_usage) : !hal.buffer{{%length}}
  %to_staging = hal.fence.create device(%src_device : !hal.device) flags("None") : !hal.fence
  hal.device.queue.copy<%src_device : !hal.device> affinity(%any_queue) wait(%src_ready) signal(%to_staging) source(%src : !hal.buffer)[%c0] target(%staging : !hal.buffer)[%c0] length(%length) flags("None")
  %status0 = hal.fence.await until([%to_staging]) timeout_millis(%forever) flags("None") : i32
  util.status.check_ok %status0, "mdc: copy into staging memory failed"
  %dst_allocator = hal.device.allocator<%dst_device : !hal.device> : !hal.allocator
  %dst_type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
  %dst_usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
  %dst = hal.allocator.allocate<%dst_allocator : !hal.allocator> affinity(%any_queue) type(%dst_type) usage(%dst_usage) : !hal.buffer{{%length}}
  %from_staging = hal.fence.create device(%dst_device : !hal.device) flags("None") : !hal.fence
  hal.device.queue.copy<%dst_device : !hal.device> affinity(%any_queue) wait(%no_wait) signal(%from_staging) source(%staging : !hal.buffer)[%c0] target(%dst : !hal.buffer)[%c0] length(%length) flags("None")
  %status1 = hal.fence.await until([%from_staging]) timeout_millis(%forever) flags("None") : i32
  util.status.check_ok %status1, "mdc: copy out of staging memory failed"
  %i8 = hal.element_type<i8> : i32
  %dense = hal.encoding_type<dense_row_major> : i32
  %view = hal.buffer_view.create buffer(%dst : !hal.buffer)[%c0, %length] shape([%length]) type(%i8) encoding(%dense) : !hal.buffer_view
  util.return %view : !hal.buffer_view
}}
"""


@dataclasses.dataclass
class Crossing:
    """One staged crossing, as recorded for reports."""

    location: str | None
    source: str
    target: str
    policy: LinkPolicy
    shape: str  # "transfer" | "implicit"
    encoding: str | None


class _Stager:
    """Emits export -> stage -> import chains into one module."""

    def __init__(self, module, model: MemoryModel):
        self.module = module
        self.model = model
        self._function: str | None = None

    def _stage_function(self) -> str:
        if self._function is None:
            name = unique_symbol(self.module, STAGE_FUNCTION)
            parsed = ir.Module.parse(_STAGE_TEMPLATE.format(name=name))
            func = parsed.body.operations[0]
            self.module.regions[0].blocks[0].append(func.operation)
            self._function = name
        return self._function

    def _device(self, name: str) -> ir.Value:
        return util.GlobalLoadOp(ir.Type.parse("!hal.device"), name, is_immutable=True).result

    def stage(self, value: ir.Value, size: ir.Value, src: str, dst: str,
              policy: LinkPolicy, result_type: ir.Type) -> ir.Value:
        """Emits, at the current insertion point, the staged copy of
        ``value`` (``size`` bytes, living on ``src``) onto ``dst``."""
        external = ir.Type.parse("!stream.resource<external>")
        bytes_type = ir.Type.parse("tensor<?xi8>")
        exported = value
        if value.type != external:
            exported = stream.AsyncCastOp(external, value, size, size, affinity=affinity_attr(src)).result
        # The source queue's copy must wait for the value's producer. IREE
        # does not always wait on the host before an export (it does not for
        # a loop-carried value), so the copy waits on the value's own
        # timepoint, exported as a fence of the source device.
        timepoint_type = ir.Type.parse("!stream.timepoint")
        barrier = stream.TimepointBarrierOp(
            exported, size, affinity=affinity_attr(src), results=[external, timepoint_type]
        )
        ready = stream.TimepointExportOp(
            [ir.Type.parse("!hal.fence")], barrier.results[1], affinity=affinity_attr(src)
        ).results[0]
        view = stream.TensorExportOp(
            ir.Type.parse("!hal.buffer_view"), barrier.results[0], bytes_type, [size], size,
            affinity=affinity_attr(src),
        ).result
        hops = [(src, dst, policy.owner)]
        if policy.mode == "staged-via-host":
            hops = [(src, policy.via, src), (policy.via, dst, dst)]
        function = self._stage_function()
        for hop_src, hop_dst, owner in hops:
            view = util.CallOp(
                [view.type], function,
                [view, ready, self._device(hop_src), self._device(hop_dst), self._device(owner)],
            ).results[0]
            # A hop returns after the host saw its last copy finish.
            ready = util.NullOp(ir.Type.parse("!hal.fence")).result
        imported = stream.TensorImportOp(
            external, view, bytes_type, [size], size, affinity=affinity_attr(dst)
        ).result
        if result_type == external:
            return imported
        return stream.AsyncCastOp(result_type, imported, size, size, affinity=affinity_attr(dst)).result


def _policy(model: MemoryModel, src: str, dst: str, op: ir.Operation) -> LinkPolicy:
    try:
        return model.policy(src, dst)
    except MdcError as e:
        raise MdcError(e.message, location=format_location(op.location), notes=e.notes) from None


def insert_transfers(module, model: MemoryModel) -> list[Crossing]:
    """Rewrites every staged crossing in ``module``; returns what it did."""
    if not model.staged_pairs() and not _has_cross_driver_gpus(model):
        return []
    placement = Placement(module)
    placement.analyze()
    placement.place_unplaced_ops()
    placement.analyze()
    stager = _Stager(module, model)
    crossings: list[Crossing] = []

    ops = [op for op in walk(module) if not _inside_executable(op)]
    for op in ops:
        if op.name == "stream.async.transfer":
            _rewrite_transfer(op, placement, model, stager, crossings)
    for op in [op for op in walk(module) if not _inside_executable(op)]:
        _rewrite_implicit_crossings(op, placement, model, stager, crossings)
    return crossings


def _has_cross_driver_gpus(model: MemoryModel) -> bool:
    drivers = {d.driver for d in model.devices.values() if not d.is_local}
    return len(drivers) > 1


def _inside_executable(op: ir.Operation) -> bool:
    parent = op.parent
    while parent is not None:
        if parent.name in ("stream.executable", "hal.executable", "flow.executable"):
            return True
        parent = parent.parent
    return False


def _rewrite_transfer(op, placement, model, stager, crossings) -> None:
    src = placement.transfer_source(op)
    dst = placement.transfer_target(op)
    if src is None or dst is None:
        return
    policy = _policy(model, src, dst, op)
    if not policy.is_staged:
        return
    with ir.InsertionPoint(op), op.location:
        staged = stager.stage(op.operands[0], op.operands[1], src, dst, policy, op.results[0].type)
    op.results[0].replace_all_uses_with(staged)
    crossings.append(Crossing(format_location(op.location), src, dst, policy, "transfer", None))
    op.erase()


def _rewrite_implicit_crossings(op, placement, model, stager, crossings) -> None:
    device = placement.exec_device(op)
    if device is None or op.name == "stream.async.transfer":
        return
    for index, value in enumerate(list(op.operands)):
        if not is_resource(value):
            continue
        home = placement.home(value)
        if home is None or home == device:
            continue
        policy = _policy(model, home, device, op)
        if not policy.is_staged:
            continue
        with ir.InsertionPoint(op), op.location:
            size = stream.ResourceSizeOp(value).result
            staged = stager.stage(value, size, home, device, policy, value.type)
        op.operands[index] = staged
        crossings.append(Crossing(format_location(op.location), home, device, policy, "implicit", None))


@register
class TransferInsertion(ModulePass):
    """Stages every crossing between devices whose memories are incompatible."""

    name = "transfer-insertion"
    level = "stream"
    summary = "lower cross-device moves between incompatible memories to export, host staging, import"

    def apply(self, module, options: PassOptions) -> None:
        model = MemoryModel.of(module, options.links)
        options.notes.extend(insert_transfers(module, model))
