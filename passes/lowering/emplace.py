"""The emplace lowering (``--staging=emplace``, the default): a crossing
between a CPU and the device owning the staging memory has its CPU side done
by dispatches on that CPU, which run on all its workers (a local-task queue
copy runs on one thread). Each crossing site has its own pinned buffer, which
the CPU writes with the value's producing dispatch (or a byte-copy
dispatch, in pieces on the way to a GPU so the DMA of one piece overlaps
the copy of the next) and reads with a byte-copy dispatch; the GPU side
stays one queue copy. A value coming back into an output argument's storage
is copied straight there. Staging in initializers keeps the copy lowering.
"""

from __future__ import annotations

from iree.compiler import ir
from iree.compiler.dialects import arith, scf, stream, util

from ..ir import ir_adapter as irx
from . import staging_template
from ..ir.ir_util import affinity_attr
from ..analysis.memory_model import LinkPolicy, MemoryModel
from .base import Lowering, Site
from .emitter import Emitter, as_lifetime, in_initializer, is_dynamic, is_small, staging_call


def emplace_applies(model: MemoryModel, emplace: bool, policy: LinkPolicy, src: str, dst: str) -> bool:
    """--staging=emplace applies: a staged pair of a CPU and the device
    owning the staging memory (or two CPUs), whose CPU side reads or
    writes the pinned memory with its own dispatches."""
    if not emplace or policy.mode != "staged" or in_initializer():
        return False
    usable = lambda d: d == policy.owner or model.devices[d].uses_host_memory  # noqa: E731
    return usable(src) and usable(dst) and (model.devices[src].uses_host_memory or model.devices[dst].uses_host_memory)


class Emplace(Lowering):
    """--staging=emplace between a CPU and the staging memory's owner."""

    name = "emplace"
    caller_buffer_into_output = "output storage"

    def __init__(self, emit: Emitter, emplace: bool, pieces: int | None):
        self.emit = emit
        self.emplace = emplace
        self.pieces = pieces  # None: by size (_piece_count)

    def applies(self, site: Site) -> bool:
        return emplace_applies(self.emit.model, self.emplace, site.policy, site.src, site.dst)

    def lower(self, site: Site) -> ir.Value:
        """The CPU side by the CPU's dispatches into or out of the site's
        pinned buffer (in pieces on the way to a GPU), the GPU side one
        queue copy (a small value, or one of run-time size, from a GPU:
        written by its producer)."""
        value, size, src, dst, policy = site.value, site.size, site.src, site.dst, site.policy
        result_type, carried = site.result_type, site.carried
        view_type = irx.buffer_view_type()
        src_local = self.emit.model.devices[src].uses_host_memory
        if not src_local and _gpu_writes_pinned(value, size):
            pinned_view = self.emit.early_site_view(self.emit.site_function(), size, policy.owner)
        else:
            pinned_view = staging_call([view_type], self.emit.site_function(),
                                      [size, self.emit.device(policy.owner)]).results[0]
        if src_local and self._in_pieces(dst) and not self._is_only_use_of_dispatch(value):
            view = self._copy_in_pieces(value, size, src, dst, pinned_view)
            return self.emit.imported(view, size, dst, result_type, carried)
        view, ready = self._into_pinned(value, size, src, policy, pinned_view)
        if self.emit.model.devices[dst].uses_host_memory:
            return self._read_from_pinned(view, ready, size, dst, result_type)
        if ready is None:
            ready = util.NullOp(irx.fence_type()).result
        view = staging_call(
            [view_type], self.emit.helper("from_pinned"),
            [view, ready, self.emit.device(dst)]).results[0]
        return self.emit.imported(view, size, dst, result_type, carried)

    def applies_into_output(self, site: Site, update) -> bool:
        """A value coming back to CPU ``dst`` goes straight into the output
        storage ``update`` writes it into (abi.update_into_argument), by the
        CPU's copy dispatch out of pinned memory, not into a new buffer;
        not for a value a CPU sends on in pieces."""
        src, dst = site.src, site.dst
        if not (self.applies(site) and self.emit.model.devices[dst].uses_host_memory):
            return False
        return not (self.emit.model.devices[src].uses_host_memory and self._in_pieces(dst))

    def lower_into_output(self, site: Site, update) -> ir.Value:
        """Returns the storage, to stand for ``update``'s result."""
        value, size, src, dst, policy = site.value, site.size, site.src, site.dst, site.policy
        view, ready = self._into_pinned(value, size, src, policy)
        return self._read_from_pinned(view, ready, size, dst, None, into=update)

    def _into_pinned(self, value, size, src, policy, pinned_view=None):
        """``value`` of ``src`` written into a crossing site's pinned buffer
        (or ``pinned_view``): by a CPU's dispatch, or a GPU's queue copy
        that the host waits for. Returns the view and a fence for when it is
        written (None: already)."""
        if pinned_view is None:
            pinned_view = staging_call([irx.buffer_view_type()], self.emit.site_function(),
                                      [size, self.emit.device(policy.owner)]).results[0]
        if self.emit.model.devices[src].uses_host_memory or _gpu_writes_pinned(value, size):
            return self.write_into_pinned(value, size, src, pinned_view)
        src_view, src_ready = self.emit.export(value, size, src)
        written = staging_call(
            [pinned_view.type], self.emit.helper("copy_into_pinned"),
            [src_view, src_ready, pinned_view, self.emit.device(src)]).results[0]
        return written, None  # the helper waited on the host; its view is the one to import

    def write_into_pinned(self, value, size, src, pinned_view):
        """``src`` writes ``value`` into the pinned buffer ``pinned_view``
        within its own submission (a ``stream.async.update`` there): its
        producing dispatch when the crossing is its one use (IREE emplaces
        the producer into the update's target). Otherwise a CPU writes it
        with a copy dispatch (a local-task queue copy runs on one thread),
        and a GPU with the copy IREE records for the update (a DMA). Other
        uses must not read the pinned buffer, which the next crossing
        overwrites (random programs seed 4242, e.g. index 7). A GPU does
        this for a small value (emitter.is_small) and for one whose size is
        known only at run time (_gpu_writes_pinned): a queue copy after the
        producer would be a second submission waiting on the first (20 us
        or more on IREE 3.13's cuda; bench queue-latency), but IREE emplaces
        a producing kernel whatever its size, and a large kernel writing
        host memory over PCIe is slower than the DMA (256 MiB: 65.9 against
        60.8 ms per call, run 44), so a value known to be large keeps the
        queue copy. Returns the exported view and a fence of ``src`` for
        when it is written."""
        external = irx.resource_type("external")
        star = irx.resource_type()
        bytes_type = irx.bytes_tensor_type()
        where = affinity_attr(src)
        pinned = stream.TensorImportOp(external, pinned_view, bytes_type, [size], size, consume=True,
                                       affinity=where).result
        zero = arith.ConstantOp(ir.IndexType.get(), 0).result
        if self.emit.model.devices[src].uses_host_memory and not self._is_only_use_of_dispatch(value):
            value = self.emit.copy_dispatch(value, size, src)
        elif value.type != star:
            value = stream.AsyncCastOp(star, value, size, size, affinity=where).result
        pinned, ready = self.emit.written(stream.AsyncUpdateOp(pinned, size, zero, size, value, size,
                                                           affinity=where).result, size, src)
        view = stream.TensorExportOp(irx.buffer_view_type(), pinned, bytes_type, [size], size,
                                     affinity=where).result
        return view, ready

    def write_for_reading_in_place(self, value, size, src, dst, pinned_view, in_place_max):
        """CPU ``src`` writes ``value`` into the pinned buffer
        ``pinned_view`` as ``lower`` would for GPU ``dst`` (in pieces, or by
        its producing dispatch), and the helpers that send it on decide at
        run time: a value of at most ``in_place_max`` bytes (an index) is
        not copied, and the view returned is of the pinned buffer itself,
        for ``dst`` to read there; a larger one is copied into ``dst``'s
        memory as ``lower`` does. Returns the view for ``dst`` to import
        and an i1 that says whether it is read in place."""
        view_type = irx.buffer_view_type()
        if self._in_pieces(dst) and not self._is_only_use_of_dispatch(value):
            return self._copy_in_pieces(value, size, src, dst, pinned_view, in_place_max)
        view, ready = self.write_into_pinned(value, size, src, pinned_view)
        if ready is None:
            ready = util.NullOp(irx.fence_type()).result
        from_pinned = self.emit.helper("from_pinned_or_in_place")
        view, in_place = staging_call([view_type, ir.IntegerType.get_signless(1)], from_pinned,
                                      [view, ready, self.emit.device(dst), in_place_max]).results
        return view, in_place

    @staticmethod
    def _is_only_use_of_dispatch(value) -> bool:
        """``value`` is made by a dispatch and crossing is its one use."""
        produced = not isinstance(value.owner, ir.Block) and value.owner.name in (
            irx.STREAM_TENSOR_DISPATCH, irx.STREAM_ASYNC_DISPATCH)
        return produced and len(list(value.uses)) == 1

    def _in_pieces(self, dst: str) -> bool:
        """A value a CPU writes into pinned memory goes on to ``dst`` in
        pieces: with --staging-pieces above 1, or by default when ``dst`` is
        not a CPU (whose DMA is what the pieces overlap)."""
        if self.pieces is not None:
            return self.pieces > 1
        return not self.emit.model.devices[dst].uses_host_memory

    def _piece_count(self, size):
        """How many pieces ``_copy_in_pieces`` cuts ``size`` bytes into: the
        --staging-pieces given, else one per PIECE_BYTES, from 1 to
        MAX_PIECES (staging_template.py)."""
        index = ir.IndexType.get()
        if self.pieces is not None:
            return arith.ConstantOp(index, self.pieces).result
        per = arith.ConstantOp(index, staging_template.PIECE_BYTES).result
        wanted = arith.CeilDivUIOp(size, per).result
        at_most = arith.MinUIOp(wanted, arith.ConstantOp(index, staging_template.MAX_PIECES).result).result
        return arith.MaxUIOp(at_most, arith.ConstantOp(index, 1).result).result

    def _copy_in_pieces(self, value, size, src, dst, pinned_view, in_place_max=None):
        """CPU ``src`` copies ``value`` into the pinned buffer ``pinned_view``
        in pieces (``_piece_count``), and ``dst``'s queue copies each piece
        on as soon as the host sees it written, so the DMA of one piece
        overlaps the CPU's copy of the next (``in_place_max``: see
        write_for_reading_in_place, whose i1 is then returned with the
        view). The host starts every piece: a
        loop whose every iteration writes its piece into a fresh import of
        the view the previous iteration's helper returned, so IREE issues it
        after that helper and the CPU's queue never waits on its own earlier
        piece (that chain stalled under IREE 3.13's local-task;
        staging_template.PIECE_BYTES). Returns a view of the new ``dst``
        buffer, once every piece has arrived."""
        external = irx.resource_type("external")
        star = irx.resource_type()
        bytes_type = irx.bytes_tensor_type()
        view_type = irx.buffer_view_type()
        fence_type = irx.fence_type()
        index = ir.IndexType.get()
        where = affinity_attr(src)
        dst_device = self.emit.device(dst)
        in_place = in_place_max is not None
        tag = "_or_in_place" if in_place else ""
        helper = lambda kind: self.emit.helper(kind + tag)  # noqa: E731
        destination_operands, flag = [size, dst_device], []
        if in_place:
            destination_operands += [pinned_view, in_place_max]
            flag = [ir.IntegerType.get_signless(1)]
        dst_view, dst_ready, *read_in_place = staging_call(
            [view_type, fence_type, *flag], helper("pieces_destination"), destination_operands).results
        onto = helper("piece_onto")
        count = self._piece_count(size)
        align = arith.ConstantOp(index, staging_template.CHUNK_ALIGNMENT).result
        even = arith.CeilDivUIOp(size, count).result
        chunk = arith.MulIOp(arith.CeilDivUIOp(even, align).result, align).result
        # IREE 3.13 issues the piece copies below without waiting for a
        # value this loop captures (one an enclosing loop carries, whose
        # producer ran in the previous iteration: the CPU copied it before it
        # was written; gpu_kit loop_dynamic_large, 22 of 40 runs wrong on the
        # H200; IREE's own bug, test/lit/regress/iree_nested_loop_skips_wait.test).
        # So the host waits for it first, on the timepoint IREE gives the
        # value's barrier (an imported argument's is already reached, and the
        # wait folds away).
        if value.type != star:
            value = stream.AsyncCastOp(star, value, size, size, affinity=where).result
        value = self.emit.waited(value, size, src, "*")
        dones = util.ListCreateOp(irx.fixed_type(irx.LIST), initial_capacity=count).result
        util.ListResizeOp(dones, count)
        zero = arith.ConstantOp(index, 0).result
        one = arith.ConstantOp(index, 1).result
        loop = scf.ForOp(zero, count, one, [pinned_view])
        with ir.InsertionPoint(loop.body):
            i, view = loop.induction_variable, loop.inner_iter_args[0]
            start = arith.MinUIOp(arith.MulIOp(chunk, i).result, size).result
            end = arith.MinUIOp(arith.AddIOp(start, chunk).result, size).result
            length = arith.SubIOp(end, start).result
            pinned = stream.TensorImportOp(external, view, bytes_type, [size], size, consume=True,
                                           affinity=where).result
            copied = self.emit.copy_dispatch(value, size, src, offset=start, length=length)
            _, ready = self.emit.written(stream.AsyncUpdateOp(pinned, size, start, end, copied, length,
                                                          affinity=where).result, size, src)
            again, done = staging_call([view_type, fence_type], onto,
                                      [view, ready, start, length, dst_view, dst_ready, dst_device,
                                       *read_in_place]).results
            util.ListSetOp(dones, i, done)
            scf.YieldOp([again])
        arrived = staging_call([view_type], helper("pieces_arrived"), [dst_view, _after(dones, loop)]).results[0]
        return (arrived, read_in_place[0]) if in_place else arrived

    def _read_from_pinned(self, view, ready, size, dst, result_type, into=None):
        """CPU ``dst`` copies the value out of pinned memory with a copy
        dispatch, once ``ready`` (a fence; None: already) is reached; the host
        waits for the copy, so the pinned buffer may be reused after.
        ``into``: the ``stream.async.update`` that wrote the value into an
        output argument's storage (update_into_argument); the copy dispatch
        writes there instead (IREE emplaces it), and the storage is returned."""
        external = irx.resource_type("external")
        where = affinity_attr(dst)
        if ready is not None:
            view = self.emit.awaited_view(ready, view)
        imported = stream.TensorImportOp(external, view, irx.bytes_tensor_type(), [size], size,
                                         affinity=where).result
        copied = self.emit.copy_dispatch(imported, size, dst)
        if into is not None:
            storage = into.opview
            written = stream.AsyncUpdateOp(storage.target, storage.target_size, storage.target_offset,
                                           storage.target_end, copied, size, affinity=where).result
            return self.emit.waited(written, storage.target_size, dst, "external")
        return as_lifetime(self.emit.waited(copied, size, dst, "*"), size, dst, result_type)


def _after(dones, loop):
    """``dones``, the list ``loop`` fills, through a barrier that also
    takes the loop's result. The fills and the call that reads the list
    are tied only by side effects, which IREE 3.13's
    iree-stream-schedule-execution ignores when it re-sorts a block by its
    SSA uses: it put the call before the loop
    (test/lit/regress/staged_pieces_list_read_before_loop.mlir). Read so,
    the list is read after the loop in every order IREE picks."""
    return util.OptimizationBarrierOp([dones.type, loop.results[0].type], [dones, loop.results[0]]).results[0]


def _gpu_writes_pinned(value, size) -> bool:
    """A GPU writes ``value`` into the site's pinned buffer within its own
    submission (Emplace.write_into_pinned): a small one, or one whose size
    is known only at run time. The choice is made at compile time (the
    producer is fixed in stream IR), so a value of run-time size takes it
    at every size: on the H200 (``bench latency --dynamic-sizes``) the
    seed's round trip took 0.41x to 0.94x the time of the queue copy's
    lowering from 4 KiB to 16 MiB a value, and 1.01x at 256 MiB."""
    return is_small(value, size) or is_dynamic(value, size)
