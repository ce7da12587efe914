"""The small-in-place lowering (``--staging=emplace``, a value from a CPU
of at most emitter.SMALL_CROSSING_BYTES): no queue copy at all. The CPU
writes the value into the site's pinned buffer and the GPU's dispatches read
it there; the site's next write waits on the host for those reads, whose
fence the site records (``finish``).

A value whose size is known at compile time is lowered so for good. One
whose size is known only at run time, going to the device that owns the
staging memory (a GPU), is written as the emplace lowering writes it, and
the helpers choose on each call (Emplace.write_for_reading_in_place): at
most SMALL_CROSSING_BYTES is read in place, more is copied into the GPU's
memory, and the site records its readers' fence only when they read in
place. Where the readers could not read in place (``finish``), the choice
is taken away: the size limit becomes 0.
"""

from __future__ import annotations

from iree.compiler import ir
from iree.compiler.dialects import arith, stream, util

from ..ir import ir_adapter as irx
from ..ir.ir_util import affinity_attr, get_attr
from .base import Lowering, Site
from .emitter import SMALL_CROSSING_BYTES, Emitter, barrier, export_fence, is_dynamic, is_small, staging_call
from .emplace import Emplace


class SmallInPlace(Lowering):
    """A small value from a CPU, read in pinned memory by its consumers."""

    name = "small in place"

    def __init__(self, emit: Emitter, emplace: Emplace):
        self.emit = emit
        self.emplace = emplace  # whose applies() this needs, and whose write into pinned memory it uses
        # (value on the destination, size, destination, record_read function,
        # and for a dynamic size: (the size limit's constant, the i1 that
        # says whether it is read in place))
        # of each site read in place, for finish().
        self._reads_in_place: list[tuple] = []

    def applies(self, site: Site) -> bool:
        if not (self.emplace.applies(site) and self.emit.model.devices[site.src].uses_host_memory
                and irx.is_type(site.result_type, "!stream.resource<*>")):
            return False
        if is_small(site.value, site.size):
            return True
        # A dynamic size, to the GPU owning the staging memory, and not into
        # a region argument (which gets a copy: Emitter.imported).
        # A CPU destination (a staged CPU pair) keeps the emplace lowering,
        # whose copy out of pinned memory is a CPU dispatch, not the queue
        # copy the helpers make above the limit.
        return (is_dynamic(site.value, site.size) and site.dst == site.policy.owner and not site.carried
                and not self.emit.model.devices[site.dst].uses_host_memory)

    def lower(self, site: Site) -> ir.Value:
        """A small ``value`` from CPU ``src``: the CPU writes it into the
        site's pinned buffer and the host waits for that (no queue may wait
        on another driver's fence); then ``dst`` reads it from there, in the
        submission of its consumers: no queue copy, allocation or host wait
        of its own. Nothing waits for those reads but the site's next write,
        which first waits on the host for the fence the site records
        (staging_template.site_helper); ``finish`` emits
        the reads' fence once every crossing is rewritten."""
        value, size, src, dst, policy, result_type = (site.value, site.size, site.src, site.dst, site.policy,
                                                      site.result_type)
        view_type = irx.buffer_view_type()
        dynamic = not is_small(value, size)
        view_function, record_read = self.emit.released_site_functions(read_if_in_place=dynamic)
        pinned_view = staging_call([view_type], view_function, [size, self.emit.device(policy.owner)]).results[0]
        chosen = None
        if dynamic:
            limit = arith.ConstantOp(ir.IndexType.get(), SMALL_CROSSING_BYTES)
            view, in_place = self.emplace.write_for_reading_in_place(value, size, src, dst, pinned_view,
                                                                     limit.result)
            chosen = (limit, in_place)
        else:
            view, ready = self.emplace.write_into_pinned(value, size, src, pinned_view)
            view = self.emit.awaited_view(ready, view)
        imported = stream.TensorImportOp(irx.resource_type("external"), view,
                                         irx.bytes_tensor_type(), [size], size,
                                         affinity=affinity_attr(dst)).result
        on_dst = stream.AsyncCastOp(result_type, imported, size, size, affinity=affinity_attr(dst)).result
        self._reads_in_place.append((on_dst, size, dst, record_read, chosen))
        return on_dst

    def finish(self) -> None:
        """Gives every site read in place (``lower``) the
        fence of its reads, emitted at the end of the block: the call that
        records it, right after a read, would cut IREE's partition there (a
        call does), splitting the read from what follows into two
        submissions, the second waiting on the first. Readers that are
        dispatches on the destination, in the same
        block, not writing into the value, read the pinned buffer itself,
        and the fence is their results' (or, for a result whose one use is
        an update, into which IREE emplaces it, the update's: the barrier
        must not be a second use that stops that). A data-tiling encode
        read (_encode_readers) stands for the dispatches that read its
        result. Any other use gets a copy first, a copy dispatch on the
        destination, and the fence is the copy's."""
        for on_dst, size, dst, record_read, chosen in self._reads_in_place:
            block = on_dst.owner.operation.block
            if not list(on_dst.uses):
                continue
            readers = _encode_readers(on_dst, block, dst)
            if readers is not None and all(_reads_without_writing(r, v, block, dst) for r, v in readers):
                done = [_emplaced_result(reader.results[0]) for reader, _ in readers]
            elif chosen is not None:
                # A dynamic size whose readers cannot read in place: always
                # copied into the destination's memory, which the host waits
                # for; nothing to record.
                limit, _ = chosen
                limit.operation.attributes["value"] = ir.IntegerAttr.get(ir.IndexType.get(), 0)
                continue
            else:
                after = list(block.operations)
                with ir.InsertionPoint(after[after.index(on_dst.owner.operation) + 1]):
                    copied = self.emit.copy_dispatch(on_dst, size, dst)
                on_dst.replace_all_uses_except(copied, copied.owner.operation)
                done = [copied]
            with ir.InsertionPoint(block.operations[len(block.operations) - 1]):
                timepoints = [barrier(value, _size_of(value), dst, value.type)[1] for value in done]
                joined = timepoints[0]
                if len(timepoints) > 1:
                    joined = stream.TimepointJoinOp(timepoints, results=[irx.timepoint_type()]).result
                read = [] if chosen is None else [chosen[1]]
                staging_call([], record_read, [export_fence(joined, dst)] + read)


def _encode_readers(value: ir.Value, block, device: str):
    """(reader, the value it reads) for each use of ``value``, a data-tiling
    encode of it (``stream.tensor.encode``, which data tiling puts before a
    matmul's operands) on ``device`` in ``block`` replaced by the readers
    of the encode's result: IREE turns the encode into a dispatch that
    reads ``value`` (a CPU's packing) or, where the device's target resolves
    the encoding to the plain layout (cuda, vulkan), drops it, and the
    readers after it read ``value`` itself. Either way ``value`` is read
    when they are done. None where an encode's result has no reader."""
    out = []
    for use in value.uses:
        reader = use.owner
        if reader.name != irx.STREAM_TENSOR_ENCODE or reader.operation.block != block \
                or irx.affinity_of(reader.operation).single != device:
            out.append((reader, value))
            continue
        encoded = reader.results[0]
        after = [u.owner for u in encoded.uses]
        if not after:
            return None
        out += [(op, encoded) for op in after]
    return out


def _reads_without_writing(op, value: ir.Value, block, device: str) -> bool:
    """``op`` is a dispatch on ``device`` in ``block`` that only reads
    ``value`` (no result of it is tied to it, i.e. written in place)."""
    if op.name != irx.STREAM_TENSOR_DISPATCH or op.operation.block != block:
        return False
    if irx.affinity_of(op.operation).single != device:
        return False
    tied = get_attr(op.operation, "tied_operands")
    ties = [] if tied is None else [ir.IntegerAttr(t).value for t in tied]
    operands = list(op.opview.mixed_operands)  # what a tie's index counts
    return not any(0 <= t < len(operands) and operands[t] == value for t in ties)


def _emplaced_result(value: ir.Value) -> ir.Value:
    """``value``, or the result of the update that is its one use (IREE
    emplaces a dispatch into such an update's target, and the update's
    result is then ready when the dispatch is done)."""
    uses = list(value.uses)
    if len(uses) != 1 or uses[0].owner.name != irx.STREAM_ASYNC_UPDATE:
        return value
    update = uses[0].owner
    if update.opview.update != value or update.operation.block != value.owner.operation.block:
        return value  # (an update in a nested region: the barrier must stay in this block)
    return update.results[0]


def _size_of(value: ir.Value) -> ir.Value:
    """The resource size of a dispatch's result or an update's result."""
    op = value.owner
    if op.name == irx.STREAM_ASYNC_UPDATE:
        return op.opview.target_size
    return list(op.opview.result_sizes)[list(op.results).index(value)]
