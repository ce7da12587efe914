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
2. host staging (``@__mdc_stage_*``, stock HAL VM ops only; see
   staging_template.py): copy on the source queue, after the value's own
   timepoint, into pinned host memory from the owner's allocator, wait on
   the host, copy on the destination queue into a buffer from the
   destination's allocator, wait on the host. Every queue only sees fences
   of its own device and buffers it can use;
3. import on the destination device, cast back to the original lifetime.

The bytes travel as ``tensor<?xi8>`` of the resource's size, so rank,
dynamic dimensions and element type need no special handling.

With ``--staging=emplace`` a crossing between a CPU and the device owning
the staging memory has its CPU side done by dispatches on that CPU, which
run on all its workers (a local-task queue copy runs on one thread): each
crossing site has its own pinned buffer, which the CPU writes with the
value's producing dispatch (or a byte-copy dispatch) and reads with a
byte-copy dispatch; the GPU side stays one queue copy. Staging in
initializers keeps the copying lowering. A small crossing (at most
SMALL_CROSSING_BYTES, known at compile time) has no queue copy at all: the
GPU's dispatches read the value in the pinned buffer, and a GPU producer
writes it there (the site's next write waits on the host for the reads,
whose fence the site records; _Stager.finish).

With ``--pinned-arguments`` the caller gives every public-function argument
that a CPU passes on to the device owning the staging memory *in that
device's pinned memory* (runtime_shim places it there; the manifest lists
them). Such a crossing is the destination's queue copy straight from the
argument: no host copy and no staging buffer. No stock HAL VM op can tell
pinned memory from a CPU's own at run time, so this is a contract of the
compiled function, not a guess. The same holds for an output argument
(``iree.abi.output``) that a value coming back from that device is
written into: the device's queue copies it straight into the storage.

A value coming back to a CPU into an output argument in the CPU's memory
(no flag) is copied out of pinned memory straight into that storage by the
CPU's copy dispatch. Either way the result is the storage itself, not the
copy of it that IREE would make.

Crossings found (placement.py says where things live and run):

* explicit transfers ``stream.async.transfer from(A) -> to(B)``;
* transfers with no target, whose consumers run on B;
* any op running on B that consumes a value living on A with no transfer in
  between (an ABI result declared on B, a global stored on A and read on B).

Ops with no affinity are first placed (placement.py's rule). Modules whose
device pairs all share memory are left untouched.
"""

from __future__ import annotations

import functools

from iree.compiler import ir
from iree.compiler.dialects import arith, scf, stream, util

from .diagnostics import MdcError, format_location
from .ir_util import (affinity_attr, affinity_devices, declared_argument_devices, get_attr, is_resource,
                      module_default_device, single_device, top_level_ops, unique_symbol, walk)
from . import placement_graph, staging_template
from .crossings import Crossing, describe
from .abi import (PINNED_ARGUMENTS_ATTR, function_argument, function_argument_view, is_constant_zero,
                  pinned_arguments_attr, update_into_argument)
from .memory_model import LinkPolicy, MemoryModel
from .placement import Placement
from .pass_base import ModulePass, PassOptions

STAGE_FUNCTION = "__mdc_stage"
COPY_EXECUTABLE = "__mdc_copy_on_"  # + device: a byte copy as a dispatch
# With --staging=emplace, a crossing of at most this many bytes (known at
# compile time) from a CPU is read in place, in pinned memory, by the
# destination's dispatches (_Stager._read_pinned_in_place), and one from the
# GPU is written into pinned memory by its producing kernel
# (_Stager._write_into_pinned): no queue copy, allocation or host
# wait of its own. A kernel reading or writing host memory over PCIe is
# slower than the DMA for large values, not for small ones.
SMALL_CROSSING_BYTES = 64 << 10

class _Stager:
    """Emits export -> stage -> import chains into one module."""

    def __init__(self, module, model: MemoryModel, emplace: bool = False, pieces: int | None = None,
                 pinned_arguments: bool = False):
        self.module = module
        self.model = model
        self.emplace = emplace
        self.pieces = pieces  # None: by size (_piece_count)
        self.pinned_arguments = pinned_arguments
        # function name -> {argument index: device whose pinned memory holds it}
        self.pinned: dict[str, dict[int, str]] = {}
        self.caller_buffer: str | None = None  # of the last stage(), for its Crossing
        self._functions: dict[tuple, str] = {}  # helper key -> function name
        # (value on the destination, size, destination, record_read function)
        # of each site read in place, for finish().
        self._reads_in_place: list[tuple] = []
        self._caches: dict[str, str] = {}

    def _insert(self, text: str, with_globals: bool = True) -> None:
        """Adds the ops of ``text`` (staging_template output) to the module:
        globals first in the module (initializers that stage values reach
        them, and IREE requires globals to precede their use; dropped with
        ``with_globals=False``, when the module has them already), function
        definitions at the end; bodiless declarations, there only so the
        text verifies on its own, are dropped."""
        parsed = ir.Module.parse(text)  # alive until its ops are moved out
        body = self.module.regions[0].blocks[0]
        for op in [op.operation for op in parsed.body.operations]:
            if op.name == "util.global":
                if with_globals:
                    op.move_before(body.operations[0].operation)
            elif len(op.regions[0].blocks):
                body.append(op)

    def _stage_function(self, src: str, dst: str, owner: str) -> str:
        """The staging function for one direction and owner (see
        staging_template.py); local queues get chunked copies."""
        src_local = self.model.devices[src].is_local
        dst_local = self.model.devices[dst].is_local
        key = (owner, src_local, dst_local)
        if key not in self._functions:
            new_cache = owner not in self._caches
            if new_cache:
                self._caches[owner] = unique_symbol(self.module, f"{STAGE_FUNCTION}_pinned_{owner}")
            cache = self._caches[owner]
            kinds = f"{'local' if src_local else 'gpu'}_to_{'local' if dst_local else 'gpu'}"
            name = unique_symbol(self.module, f"{STAGE_FUNCTION}_{kinds}_via_{owner}")
            # Parsed with the cache's global so the function's reference verifies.
            self._insert(staging_template.cache_global_text(cache)
                         + staging_template.stage_function_text(name, cache, src_local, dst_local),
                         with_globals=new_cache)
            self._functions[key] = name
        return self._functions[key]

    def _device(self, name: str) -> ir.Value:
        return util.GlobalLoadOp(ir.Type.parse("!hal.device"), name, is_immutable=True).result

    def _helper(self, kind: str, text_of) -> str:
        """A staging helper function without a cache of its own, once per module."""
        key = (kind,)
        if key not in self._functions:
            name = unique_symbol(self.module, f"{STAGE_FUNCTION}_{kind}")
            self._insert(text_of(name))
            self._functions[key] = name
        return self._functions[key]

    def _site_function(self) -> str:
        """A new crossing site: a global holding its pinned buffer and a
        never-inlined function ``(%length, %owner) -> view`` that keeps it
        (only helpers touch the global; IREE's constant evaluation crashes on
        a !hal.buffer global used in the program's own functions)."""
        return self._new_site(read_in_place=False)[0]

    def _released_site_functions(self) -> tuple[str, str]:
        """A new crossing site whose pinned buffer the destination reads
        asynchronously: (``(%length, %owner) -> view``, which first waits
        on the host for the site's last reads, ``(%fence)``, which records
        the fence of the reads just issued); staging_template.
        site_view_function_text."""
        return self._new_site(read_in_place=True)

    def _new_site(self, read_in_place: bool) -> tuple[str, str | None]:
        shared = self._helper("pinned_view", staging_template.pinned_view_function_text)
        cache = unique_symbol(self.module, f"{STAGE_FUNCTION}_pinned_site")
        reads = unique_symbol(self.module, f"{cache}_read") if read_in_place else None
        name = unique_symbol(self.module, f"{cache}_view")
        record = unique_symbol(self.module, f"{cache}_record_read") if read_in_place else None
        self._insert(staging_template.site_view_function_text(name, cache, shared, reads, record))
        return name, record

    def _early_site_view(self, function: str, size: ir.Value, owner: str) -> ir.Value:
        """A call of a site's view function ``(%length, %owner) -> view``,
        placed as early in the current block as ``size`` allows: a call is
        a fence for IREE's partitioning, so one left at the crossing would
        split the producer's submission from what follows it (a GPU
        producer writes a small value straight into the view it returns)."""
        block = ir.InsertionPoint.current.block
        defining = size.owner
        at = ir.InsertionPoint.at_block_begin(block)
        if not isinstance(defining, ir.Block) and defining.operation.block == block:
            ops = list(block.operations)
            if defining.operation.name in ("stream.tensor.sizeof", "arith.constant") and \
                    len(defining.operation.operands) == 0:
                # A static size (stream.tensor.sizeof of a static shape, a
                # constant): computed at the block's start instead.
                defining.operation.move_before(ops[0])
                ops = list(block.operations)
            at = ir.InsertionPoint(ops[ops.index(defining.operation) + 1])
        with at:
            return util.CallOp([ir.Type.parse("!hal.buffer_view")], function,
                               [size, self._device(owner)]).results[0]

    def _copy_executable(self, device: str) -> str:
        """The byte-copy executable (staging_template.copy_executable_text),
        one per device, so no executable is shared by two targets."""
        key = ("copy_executable", device)
        if key not in self._functions:
            name = unique_symbol(self.module, f"{COPY_EXECUTABLE}{device}")
            self._insert(staging_template.copy_executable_text(name))
            self._functions[key] = name
        return self._functions[key]

    def _copy_dispatch(self, value, size, device, offset=None, length=None) -> ir.Value:
        """A copy of ``length`` bytes (default: all ``size``) of ``value`` from
        ``offset`` (default 0), made by a dispatch on ``device`` (a CPU runs
        it on all its workers)."""
        star = ir.Type.parse("!stream.resource<*>")
        bytes_type = ir.TypeAttr.get(ir.Type.parse("tensor<?xi8>"))
        where = affinity_attr(device)
        if offset is None:
            offset = arith.ConstantOp(ir.IndexType.get(), 0).result
        if length is None:
            length = size
        if value.type != star:
            value = stream.AsyncCastOp(star, value, size, size, affinity=where).result
        executable = self._copy_executable(device)
        entry = ir.ArrayAttr.get([ir.SymbolRefAttr.get([executable, f"{executable}_bytes"])])
        unused = ir.TypeAttr.get(ir.Type.parse("!util.unused"))
        return stream.TensorDispatchOp(
            [star], [length], entry, [value, size, offset, length], [size],
            ir.ArrayAttr.get([bytes_type, unused, unused, unused]), [size],
            [length], ir.ArrayAttr.get([bytes_type]), [length],
            tied_operands=ir.ArrayAttr.get([ir.IntegerAttr.get(ir.IndexType.get(), -1)]),
            affinity=where).results[0]

    def _write_into_pinned(self, value, size, src, pinned_view):
        """``src`` writes ``value`` into the pinned buffer ``pinned_view``
        within its own submission (a ``stream.async.update`` there): its
        producing dispatch when the crossing is its one use (IREE emplaces
        the producer into the update's target). Otherwise a CPU writes it
        with a copy dispatch (a local-task queue copy runs on one thread),
        and a GPU with the copy IREE records for the update (a DMA). Other
        uses must not read the pinned buffer, which the next crossing
        overwrites (random programs seed 4242, e.g. index 7). A GPU does
        this only for a small value (_is_small): a queue copy after the
        producer would be a second submission waiting on the first (20 us
        or more on IREE 3.13's cuda; bench queue-latency), but IREE emplaces
        a producing kernel whatever its size, and a large kernel writing
        host memory over PCIe is slower than the DMA (256 MiB: 65.9 against
        60.8 ms per call, run 44). Returns the exported view and a fence of
        ``src`` for when it is written."""
        external = ir.Type.parse("!stream.resource<external>")
        star = ir.Type.parse("!stream.resource<*>")
        bytes_type = ir.Type.parse("tensor<?xi8>")
        where = affinity_attr(src)
        pinned = stream.TensorImportOp(external, pinned_view, bytes_type, [size], size, consume=True,
                                       affinity=where).result
        zero = arith.ConstantOp(ir.IndexType.get(), 0).result
        if self.model.devices[src].is_local and not self._is_only_use_of_dispatch(value):
            value = self._copy_dispatch(value, size, src)
        elif value.type != star:
            value = stream.AsyncCastOp(star, value, size, size, affinity=where).result
        pinned, ready = self._written(stream.AsyncUpdateOp(pinned, size, zero, size, value, size,
                                                           affinity=where).result, size, src)
        view = stream.TensorExportOp(ir.Type.parse("!hal.buffer_view"), pinned, bytes_type, [size], size,
                                     affinity=where).result
        return view, ready

    @staticmethod
    def _is_only_use_of_dispatch(value) -> bool:
        """``value`` is made by a dispatch and crossing is its one use."""
        produced = not isinstance(value.owner, ir.Block) and value.owner.name in (
            "stream.tensor.dispatch", "stream.async.dispatch")
        return produced and len(list(value.uses)) == 1

    @staticmethod
    def _written(resource, size, device, lifetime: str = "external"):
        """``resource`` (of ``lifetime``) after a barrier, and the barrier's fence of ``device``."""
        resource, timepoint = _barrier(resource, size, device, ir.Type.parse(f"!stream.resource<{lifetime}>"))
        return resource, _export_fence(timepoint, device)

    def _host_await(self, fence) -> None:
        """The host waits until ``fence`` is reached (staging_template.await_function_text)."""
        util.CallOp([], self._helper("await", staging_template.await_function_text), [fence])

    def _waited(self, resource, size, device, lifetime: str = "external"):
        """``resource`` (of ``lifetime``) after a barrier whose fence the host waits for."""
        resource, done = self._written(resource, size, device, lifetime)
        self._host_await(done)
        return resource

    def _in_pieces(self, dst: str) -> bool:
        """A value a CPU writes into pinned memory goes on to ``dst`` in
        pieces: with --staging-pieces above 1, or by default when ``dst`` is
        not a CPU (whose DMA is what the pieces overlap)."""
        if self.pieces is not None:
            return self.pieces > 1
        return not self.model.devices[dst].is_local

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

    def _copy_in_pieces(self, value, size, src, dst, pinned_view):
        """CPU ``src`` copies ``value`` into the pinned buffer ``pinned_view``
        in pieces (``_piece_count``), and ``dst``'s queue copies each piece
        on as soon as the host sees it written, so the DMA of one piece
        overlaps the CPU's copy of the next. The host starts every piece: a
        loop whose every iteration writes its piece into a fresh import of
        the view the previous iteration's helper returned, so IREE issues it
        after that helper and the CPU's queue never waits on its own earlier
        piece (that chain stalled under IREE 3.13's local-task;
        staging_template.PIECE_BYTES). Returns a view of the new ``dst``
        buffer, once every piece has arrived."""
        external = ir.Type.parse("!stream.resource<external>")
        star = ir.Type.parse("!stream.resource<*>")
        bytes_type = ir.Type.parse("tensor<?xi8>")
        view_type = ir.Type.parse("!hal.buffer_view")
        fence_type = ir.Type.parse("!hal.fence")
        index = ir.IndexType.get()
        where = affinity_attr(src)
        dst_device = self._device(dst)
        dst_view, dst_ready = util.CallOp(
            [view_type, fence_type],
            self._helper("pieces_destination", staging_template.pieces_destination_function_text),
            [size, dst_device]).results
        onto = self._helper("piece_onto", staging_template.piece_onto_function_text)
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
        value = self._waited(value, size, src, "*")
        dones = util.ListCreateOp(ir.Type.parse("!util.list<?>"), initial_capacity=count).result
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
            copied = self._copy_dispatch(value, size, src, offset=start, length=length)
            _, ready = self._written(stream.AsyncUpdateOp(pinned, size, start, end, copied, length,
                                                          affinity=where).result, size, src)
            again, done = util.CallOp([view_type, fence_type], onto,
                                      [view, ready, start, length, dst_view, dst_ready, dst_device]).results
            util.ListSetOp(dones, i, done)
            scf.YieldOp([again])
        return util.CallOp([view_type], self._helper("pieces_arrived", staging_template.pieces_arrived_function_text),
                           [dst_view, dones]).results[0]

    def _read_from_pinned(self, view, ready, size, dst, result_type, into=None):
        """CPU ``dst`` copies the value out of pinned memory with a copy
        dispatch, once ``ready`` (a fence; None: already) is reached; the host
        waits for the copy, so the pinned buffer may be reused after.
        ``into``: the ``stream.async.update`` that wrote the value into an
        output argument's storage (update_into_argument); the copy dispatch
        writes there instead (IREE emplaces it), and the storage is returned."""
        external = ir.Type.parse("!stream.resource<external>")
        where = affinity_attr(dst)
        if ready is not None:
            self._host_await(ready)
        imported = stream.TensorImportOp(external, view, ir.Type.parse("tensor<?xi8>"), [size], size,
                                         affinity=where).result
        copied = self._copy_dispatch(imported, size, dst)
        if into is not None:
            storage = into.opview
            written = stream.AsyncUpdateOp(storage.target, storage.target_size, storage.target_offset,
                                           storage.target_end, copied, size, affinity=where).result
            return self._waited(written, storage.target_size, dst, "external")
        return _as_lifetime(self._waited(copied, size, dst, "*"), size, dst, result_type)

    def stage_into_output(self, transfer, update, src: str, dst: str, policy: LinkPolicy):
        """The value of ``transfer`` staged to CPU ``dst`` straight into the
        output storage ``update`` writes it into (update_into_argument):
        with --pinned-arguments by ``src``'s queue copy into the caller's
        pinned storage (_stage_into_pinned_output), else with
        --staging=emplace by the CPU's copy dispatch out of pinned memory,
        not into a new buffer. Returns the storage, to stand for
        ``update``'s result; None (nothing emitted) where neither applies."""
        value, size = transfer.operands[0], transfer.operands[1]
        if self._is_pinned_output(update, src, dst, policy):
            self.caller_buffer = "pinned output"
            return self._stage_into_pinned_output(value, size, update, src, dst)
        self.caller_buffer = "output storage"
        if not (self._is_direct(policy, src, dst) and self.model.devices[dst].is_local):
            return None
        if self.model.devices[src].is_local and self._in_pieces(dst):
            return None
        view, ready = self._into_pinned(value, size, src, policy)
        return self._read_from_pinned(view, ready, size, dst, None, into=update)

    def _is_direct(self, policy: LinkPolicy, src: str, dst: str) -> bool:
        """--staging=emplace applies: a staged pair of a CPU and the device
        owning the staging memory (or two CPUs), whose CPU side reads or
        writes the pinned memory with its own dispatches."""
        if not self.emplace or policy.mode != "staged" or _in_initializer():
            return False
        usable = lambda d: d == policy.owner or self.model.devices[d].is_local  # noqa: E731
        return usable(src) and usable(dst) and (self.model.devices[src].is_local
                                                or self.model.devices[dst].is_local)

    def _into_pinned(self, value, size, src, policy, pinned_view=None):
        """``value`` of ``src`` written into a crossing site's pinned buffer
        (or ``pinned_view``): by a CPU's dispatch, or a GPU's queue copy
        that the host waits for. Returns the view and a fence for when it is
        written (None: already)."""
        if pinned_view is None:
            pinned_view = util.CallOp([ir.Type.parse("!hal.buffer_view")], self._site_function(),
                                      [size, self._device(policy.owner)]).results[0]
        if self.model.devices[src].is_local or self._is_small(value, size):
            return self._write_into_pinned(value, size, src, pinned_view)
        src_view, src_ready = self._export(value, size, src)
        util.CallOp([], self._helper("copy_into_pinned", staging_template.copy_into_pinned_function_text),
                    [src_view, src_ready, pinned_view, self._device(src)])
        return pinned_view, None  # the helper waited on the host

    @staticmethod
    def _is_small(value, size) -> bool:
        """``value``'s size is known at compile time and at most SMALL_CROSSING_BYTES."""
        _, nbytes = describe(value, size)
        return nbytes.isdigit() and int(nbytes) <= SMALL_CROSSING_BYTES

    def _read_pinned_in_place(self, value, size, src, dst, policy, result_type):
        """A small ``value`` from CPU ``src``: the CPU writes it into the
        site's pinned buffer and the host waits for that (no queue may wait
        on another driver's fence); then ``dst`` reads it from there, in the
        submission of its consumers: no queue copy, allocation or host wait
        of its own. Nothing waits for those reads but the site's next write,
        which first waits on the host for the fence the site records
        (staging_template.site_view_function_text); ``finish`` emits
        the reads' fence once every crossing is rewritten."""
        view_type = ir.Type.parse("!hal.buffer_view")
        view_function, record_read = self._released_site_functions()
        pinned_view = util.CallOp([view_type], view_function, [size, self._device(policy.owner)]).results[0]
        view, ready = self._write_into_pinned(value, size, src, pinned_view)
        self._host_await(ready)
        imported = stream.TensorImportOp(ir.Type.parse("!stream.resource<external>"), view,
                                         ir.Type.parse("tensor<?xi8>"), [size], size,
                                         affinity=affinity_attr(dst)).result
        on_dst = stream.AsyncCastOp(result_type, imported, size, size, affinity=affinity_attr(dst)).result
        self._reads_in_place.append((on_dst, size, dst, record_read))
        return on_dst

    def finish(self) -> None:
        """Gives every site read in place (``_read_pinned_in_place``) the
        fence of its reads, emitted at the end of the block: the call that
        records it, right after a read, would cut IREE's partition there (a
        call does), splitting the read from what follows into two
        submissions, the second waiting on the first. Readers that are
        dispatches on the destination, in the same
        block, not writing into the value, read the pinned buffer itself,
        and the fence is their results' (or, for a result whose one use is
        an update, into which IREE emplaces it, the update's: the barrier
        must not be a second use that stops that). Any other use gets a
        copy first, a copy dispatch on the destination, and the fence is
        the copy's."""
        for on_dst, size, dst, record_read in self._reads_in_place:
            block = on_dst.owner.operation.block
            readers = [use.owner for use in on_dst.uses]
            if not readers:
                continue
            if all(_reads_without_writing(reader, on_dst, block, dst) for reader in readers):
                done = [_emplaced_result(reader.results[0]) for reader in readers]
            else:
                after = list(block.operations)
                with ir.InsertionPoint(after[after.index(on_dst.owner.operation) + 1]):
                    copied = self._copy_dispatch(on_dst, size, dst)
                on_dst.replace_all_uses_except(copied, copied.owner.operation)
                done = [copied]
            with ir.InsertionPoint(block.operations[len(block.operations) - 1]):
                timepoints = [_barrier(value, _size_of(value), dst, value.type)[1] for value in done]
                joined = timepoints[0]
                if len(timepoints) > 1:
                    joined = stream.TimepointJoinOp(timepoints, results=[ir.Type.parse("!stream.timepoint")]).result
                util.CallOp([], record_read, [_export_fence(joined, dst)])

    def _stage_direct(self, value, size, src, dst, policy, result_type, carried):
        view_type = ir.Type.parse("!hal.buffer_view")
        src_local, small = self.model.devices[src].is_local, self._is_small(value, size)
        if src_local and small and str(result_type) == "!stream.resource<*>":
            return self._read_pinned_in_place(value, size, src, dst, policy, result_type)
        if small and not src_local:
            pinned_view = self._early_site_view(self._site_function(), size, policy.owner)
        else:
            pinned_view = util.CallOp([view_type], self._site_function(),
                                      [size, self._device(policy.owner)]).results[0]
        if src_local and self._in_pieces(dst) and not self._is_only_use_of_dispatch(value):
            view = self._copy_in_pieces(value, size, src, dst, pinned_view)
            return self._import(view, size, dst, result_type, carried)
        view, ready = self._into_pinned(value, size, src, policy, pinned_view)
        if self.model.devices[dst].is_local:
            return self._read_from_pinned(view, ready, size, dst, result_type)
        if ready is None:
            ready = util.NullOp(ir.Type.parse("!hal.fence")).result
        view = util.CallOp(
            [view_type], self._helper("from_pinned", staging_template.stage_from_pinned_function_text),
            [view, ready, self._device(dst)]).results[0]
        return self._import(view, size, dst, result_type, carried)

    def _export(self, value, size, src):
        """``value`` as a buffer view of ``src``, and a fence of ``src`` for
        when its producer is done."""
        external = ir.Type.parse("!stream.resource<external>")
        bytes_type = ir.Type.parse("tensor<?xi8>")
        exported = value
        if value.type != external:
            exported = stream.AsyncCastOp(external, value, size, size, affinity=affinity_attr(src)).result
        # The source queue's copy must wait for the value's producer. IREE
        # does not always wait on the host before an export (it does not for
        # a loop-carried value), so the copy waits on the value's own
        # timepoint, exported as a fence of the source device.
        exported, ready = self._written(exported, size, src)
        view = stream.TensorExportOp(
            ir.Type.parse("!hal.buffer_view"), exported, bytes_type, [size], size,
            affinity=affinity_attr(src),
        ).result
        return view, ready

    def _is_pinned_argument(self, value, src: str, dst: str, policy: LinkPolicy) -> bool:
        """--pinned-arguments applies: ``value`` is a public function's
        argument, imported on CPU ``src``, going to ``dst``, the device whose
        pinned memory the caller gives it in. An argument is pinned by the
        first such device it goes to; on its way to another it is staged."""
        if not self.pinned_arguments or policy.mode != "staged" or policy.owner != dst:
            return False
        if not self.model.devices[src].is_local or _in_initializer():
            return False
        found = function_argument(value)
        return found is not None and self._pin(*found, dst)

    def _pin(self, function: str, index: int, device: str) -> bool:
        """Records argument ``index`` of ``function`` as given in
        ``device``'s pinned memory, unless it is recorded for another
        device already (the first one wins); whether it is ``device``'s."""
        return self.pinned.setdefault(function, {}).setdefault(index, device) == device

    def _stage_pinned_argument(self, value, size, src, dst, result_type, carried):
        """``dst``'s queue copies the argument ``value`` straight out of the
        caller's pinned buffer, once ``src`` is done with what precedes."""
        view, ready = self._export(value, size, src)
        view = util.CallOp(
            [view.type], self._helper("from_pinned", staging_template.stage_from_pinned_function_text),
            [view, ready, self._device(dst)]).results[0]
        return self._import(view, size, dst, result_type, carried)

    def _is_pinned_output(self, update, src: str, dst: str, policy: LinkPolicy) -> bool:
        """--pinned-arguments, coming back: ``update`` writes a value moved
        from ``src``, the staging owner, to CPU ``dst`` into an output
        argument (``iree.abi.output``), which the caller then gives in
        ``src``'s pinned memory."""
        if not self.pinned_arguments or policy.mode != "staged" or policy.owner != src:
            return False
        if not self.model.devices[dst].is_local or _in_initializer(update):
            return False
        return self._pin(*function_argument(update.opview.target), src)

    def _stage_into_pinned_output(self, value, size, update, src: str, dst: str) -> ir.Value:
        """``src``'s queue copies ``value`` straight into the pinned output
        argument that ``update`` writes it into, and the host waits; returns
        that argument imported anew on ``dst``, to stand for ``update``'s
        result."""
        storage = function_argument_view(update.opview.target)
        src_view, src_ready = self._export(value, size, src)
        into_output = functools.partial(staging_template.copy_into_pinned_function_text, output=True)
        util.CallOp([], self._helper("copy_into_output", into_output),
                    [src_view, src_ready, storage, self._device(src)])
        target_size = update.opview.target_size
        imported = stream.TensorImportOp(ir.Type.parse("!stream.resource<external>"), storage,
                                         ir.Type.parse("tensor<?xi8>"), [target_size], target_size,
                                         affinity=affinity_attr(dst)).result
        return _as_lifetime(imported, target_size, dst, update.results[0].type)

    def stage(self, value: ir.Value, size: ir.Value, src: str, dst: str,
              policy: LinkPolicy, result_type: ir.Type, carried: bool = False) -> ir.Value:
        """Emits, at the current insertion point, the staged copy of
        ``value`` (``size`` bytes, living on ``src``) onto ``dst``."""
        self.caller_buffer = None
        if self._is_pinned_argument(value, src, dst, policy):
            self.caller_buffer = "pinned argument"
            return self._stage_pinned_argument(value, size, src, dst, result_type, carried)
        if self._is_direct(policy, src, dst):
            return self._stage_direct(value, size, src, dst, policy, result_type, carried)
        view, ready = self._export(value, size, src)
        hops = [(src, dst, policy.owner)]
        if policy.mode == "staged-via-host":
            hops = [(src, policy.via, src), (policy.via, dst, dst)]
        for hop_src, hop_dst, owner in hops:
            view = util.CallOp(
                [view.type], self._stage_function(hop_src, hop_dst, owner),
                [view, ready, self._device(hop_src), self._device(hop_dst), self._device(owner)],
            ).results[0]
            # A hop returns after the host saw its last copy finish.
            ready = util.NullOp(ir.Type.parse("!hal.fence")).result
        return self._import(view, size, dst, result_type, carried)

    def _import(self, view, size, dst, result_type, carried):
        external = ir.Type.parse("!stream.resource<external>")
        bytes_type = ir.Type.parse("tensor<?xi8>")
        imported = stream.TensorImportOp(
            external, view, bytes_type, [size], size, affinity=affinity_attr(dst)
        ).result
        if carried and str(result_type) == "!stream.resource<*>":
            # A value that enters a loop's or branch's region arguments: a
            # fresh copy, so IREE's lifetime refinement does not see an
            # imported (external) value meet transient or constant ones on
            # the same region argument, which it cannot reconcile.
            return stream.AsyncCloneOp(
                result_type, imported, size, size, affinity=affinity_attr(dst)
            ).result
        return _as_lifetime(imported, size, dst, result_type)


def _as_lifetime(value: ir.Value, size: ir.Value, device: str, result_type: ir.Type) -> ir.Value:
    """``value`` (a resource on ``device``) as ``result_type``."""
    if value.type == result_type:
        return value
    where = affinity_attr(device)
    if str(result_type) in ("!stream.resource<staging>", "!stream.resource<constant>"):
        # async.cast cannot produce staging resources; a transfer on one
        # device can, and IREE lowers it as usual. A cast from external
        # to constant sends IREE's usage refinement (iree-stream-refine-
        # usage) into unbounded memory growth
        # (test/lit/regress/constant_reduce_runaway_memory.mlir).
        return stream.AsyncTransferOp(result_type, value, size, size, source_affinity=where,
                                      target_affinity=where).result
    return stream.AsyncCastOp(result_type, value, size, size, affinity=where).result


_AFFINITY_ATTRS = ("affinity", "source_affinity", "target_affinity")


def _check_devices_declared(module, model: MemoryModel) -> None:
    """Every device an op's affinity names is one the module declares
    (fuzzer, seed 796041255 case 124: an undeclared @nv was a KeyError in
    the memory model, or passed unnoticed)."""
    for op in walk(module):
        if _inside_executable(op):
            continue
        for attr_name in _AFFINITY_ATTRS:
            for name in affinity_devices(get_attr(op, attr_name)):
                if name not in model.devices:
                    raise MdcError(
                        f"'{op.name}' runs on device '{name}', which the module does not declare",
                        location=format_location(op.location),
                        notes=[f"declared devices: {', '.join(sorted(model.devices)) or 'none'}"],
                    )


def _in_initializer(op: ir.Operation | None = None) -> bool:
    """Whether the current insertion point is in a ``util.initializer``.
    Staging there runs once, and the copying lowering is kept: IREE rejects
    the direct one in hoisted-constant initializers ("immutable global
    ... initialized both by initial value and by store in initializer",
    random programs seed 4242 index 143)."""
    op = ir.InsertionPoint.current.block.owner if op is None else op
    while op is not None:
        if op.name == "util.initializer":
            return True
        op = op.parent
    return False


def _policy(model: MemoryModel, src: str, dst: str, op: ir.Operation) -> LinkPolicy:
    try:
        return model.policy(src, dst)
    except MdcError as e:
        raise MdcError(e.message, location=format_location(op.location), notes=e.notes) from None


def insert_transfers(module, model: MemoryModel, emplace: bool = False, pieces: int | None = None,
                     pinned_arguments: bool = False) -> tuple[placement_graph.PlacementGraph, list[Crossing]]:
    """Rewrites every staged crossing in ``module``; returns what it did: a
    placement_graph.PlacementGraph and one Crossing per staged crossing.
    ``pieces``: see _Stager._piece_count. ``pinned_arguments``: the caller
    gives arguments in pinned memory (see the module docstring); the
    arguments this applied to are recorded on the module as
    PINNED_ARGUMENTS_ATTR."""
    _check_devices_declared(module, model)
    if not model.staged_pairs() and not _has_cross_driver_gpus(model):
        # Nothing to rewrite; still say where things run, for reports.
        placement = Placement(module)
        placement.analyze()
        return placement_graph.snapshot(module, placement, model, describe), []
    _import_arguments_where_declared(module, model)
    placement = Placement(module)
    placement.analyze()
    placement.place_unplaced_ops()
    placement.analyze()
    graph = placement_graph.snapshot(module, placement, model, describe)
    stager = _Stager(module, model, emplace, pieces, pinned_arguments)
    crossings: list[Crossing] = []

    # Only the moves are collected: a rewrite erases its move and may erase
    # other ops after it (the update and clone of an output argument), and a
    # Python reference to an erased op reads freed memory without an error
    # (its name came back as garbage once: a crash in nanobind's string
    # conversion in the bench's build).
    transfers = [op for op in walk(module) if op.name == "stream.async.transfer" and not _inside_executable(op)]
    for op in transfers:
        _rewrite_transfer(op, placement, model, stager, crossings)
    for op in [op for op in walk(module) if not _inside_executable(op)]:
        _rewrite_implicit_crossings(op, placement, model, stager, crossings)
    stager.finish()
    if stager.pinned:
        module.attributes[PINNED_ARGUMENTS_ATTR] = pinned_arguments_attr(stager.pinned)
    return graph, crossings


def _import_arguments_where_declared(module, model: MemoryModel) -> None:
    """Every import of a public function's argument runs on the device the
    argument is declared on (its ``iree.abi.affinity``, else the module's
    default device, where the caller places it), followed by a move to the
    device IREE imported it on, which is then staged like any other.

    IREE gives an argument declared without an affinity the affinity of its
    consumers, and clones its import once per consumer device: a
    ``flow.tensor.transfer`` of it to device_b becomes an import on
    device_b and a clone there, and the move is gone (the caller's buffer,
    in device_a's memory, is then read by device_b;
    test/lit/regress/argument_moved_from_default_device.mlir)."""
    default = module_default_device(module)
    for function in top_level_ops(module):
        if function.name != "util.func" or not function.regions[0].blocks:
            continue
        visibility = get_attr(function, "sym_visibility")
        if visibility is not None and str(visibility) != '"public"':
            continue
        declared = declared_argument_devices(function)
        if declared is None:
            continue
        entry = function.regions[0].blocks[0]
        for op in walk(function):
            if op.name != "stream.tensor.import" or not isinstance(op.operands[0].owner, ir.Block) \
                    or op.operands[0].owner != entry:
                continue
            index = ir.BlockArgument(op.operands[0]).arg_number
            home = (declared[index] if index < len(declared) else None) or default
            imported_on = single_device(get_attr(op, "affinity"))
            if home is None or imported_on is None or imported_on == home or home not in model.devices:
                continue
            if not _policy(model, home, imported_on, op).is_staged:
                continue
            op.attributes["affinity"] = affinity_attr(home)
            result = op.results[0]
            size = op.opview.result_size
            with ir.InsertionPoint.after(op), op.location:
                moved = stream.AsyncTransferOp(result.type, result, size, size,
                                               source_affinity=affinity_attr(home),
                                               target_affinity=affinity_attr(imported_on)).result
            result.replace_all_uses_except(moved, moved.owner.operation)


def _reads_without_writing(op, value: ir.Value, block, device: str) -> bool:
    """``op`` is a dispatch on ``device`` in ``block`` that only reads
    ``value`` (no result of it is tied to it, i.e. written in place)."""
    if op.name != "stream.tensor.dispatch" or op.operation.block != block:
        return False
    if single_device(get_attr(op.operation, "affinity")) != device:
        return False
    tied = get_attr(op.operation, "tied_operands")
    ties = [] if tied is None else [ir.IntegerAttr(t).value for t in tied]
    operands = list(op.opview.mixed_operands)  # what a tie's index counts
    return not any(0 <= t < len(operands) and operands[t] == value for t in ties)


def _barrier(resource: ir.Value, size: ir.Value, device: str, result_type: ir.Type):
    """(``resource`` as ``result_type``, the timepoint at which it is ready)."""
    barrier = stream.TimepointBarrierOp(resource, size, affinity=affinity_attr(device),
                                        results=[result_type, ir.Type.parse("!stream.timepoint")])
    return barrier.results[0], barrier.results[1]


def _export_fence(timepoint: ir.Value, device: str) -> ir.Value:
    """``timepoint`` as a ``!hal.fence`` of ``device``."""
    return stream.TimepointExportOp([ir.Type.parse("!hal.fence")], timepoint,
                                    affinity=affinity_attr(device)).results[0]


def _emplaced_result(value: ir.Value) -> ir.Value:
    """``value``, or the result of the update that is its one use (IREE
    emplaces a dispatch into such an update's target, and the update's
    result is then ready when the dispatch is done)."""
    uses = list(value.uses)
    if len(uses) != 1 or uses[0].owner.name != "stream.async.update":
        return value
    update = uses[0].owner
    if update.opview.update != value or update.operation.block != value.owner.operation.block:
        return value  # (an update in a nested region: the barrier must stay in this block)
    return update.results[0]


def _size_of(value: ir.Value) -> ir.Value:
    """The resource size of a dispatch's result or an update's result."""
    op = value.owner
    if op.name == "stream.async.update":
        return op.opview.target_size
    return list(op.opview.result_sizes)[list(op.results).index(value)]


_REGION_ARGUMENT_USERS = {"scf.yield", "scf.for", "scf.while", "scf.condition", "scf.if", "cf.br", "cf.cond_br"}


def _flows_into_region_arguments(value: ir.Value) -> bool:
    return any(use.owner.name in _REGION_ARGUMENT_USERS for use in value.uses)


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
        if get_attr(op, "target_affinity") is None:
            # Say where it goes: left targetless, IREE runs it on the default
            # device, which may not be able to use the source's memory.
            op.attributes["target_affinity"] = affinity_attr(dst)
        if single_device(get_attr(op, "source_affinity")) != src:
            # And where it comes from: left sourceless, IREE may schedule the
            # copy in another device's partition and allocate the result for
            # both devices (test/lit/regress/constant_round_trip_result_on_b.mlir);
            # left with a wrong source (Placement.transfer_source), likewise
            # (random programs, seed 796039204 index 92).
            op.attributes["source_affinity"] = affinity_attr(src)
        return
    encoding, nbytes = describe(op.operands[0], op.operands[1])
    # A move whose one use writes it into an output argument's storage goes
    # straight there where the stager can; the storage is then the result.
    into_output = update_into_argument(op.results[0])
    written = None
    if into_output is not None:
        storage = into_output.opview.target.owner
        with ir.InsertionPoint(into_output), into_output.location:
            written = stager.stage_into_output(op, into_output, src, dst, policy)
    if written is not None:
        into_output.results[0].replace_all_uses_with(written)
        into_output.erase()
        if storage.name == "stream.tensor.import" and not list(storage.results[0].uses):
            storage.erase()  # the caller's pinned storage, now imported after the copy into it
    else:
        with ir.InsertionPoint(op), op.location:
            staged = stager.stage(op.operands[0], op.operands[1], src, dst, policy, op.results[0].type,
                                  carried=_flows_into_region_arguments(op.results[0]))
        op.results[0].replace_all_uses_with(staged)
        if into_output is not None:
            written = into_output.results[0]  # IREE's own update writes the staged value there
    caller_buffer = stager.caller_buffer or ("output storage" if into_output is not None else None)
    crossings.append(Crossing(format_location(op.location), src, dst, policy, "transfer", encoding, nbytes,
                              caller_buffer))
    op.erase()
    if written is not None:
        _return_storage_uncloned(written)


def _return_storage_uncloned(storage: ir.Value) -> None:
    """IREE returns an output argument's storage as a clone of a slice of
    it, which a CPU makes with a one-thread queue copy into a new buffer
    (a new buffer's page faults are what bound GPU->CPU moves). A staged
    value written into that storage is returned as the slice itself, as
    the output argument says it is: the caller's storage, with no copy."""
    for use in list(storage.uses):
        sliced = use.owner
        if sliced.name != "stream.async.slice" or not is_constant_zero(sliced.opview.source_offset):
            continue
        users = list(sliced.results[0].uses)
        if len(users) != 1 or users[0].owner.name != "stream.async.clone":
            continue
        clone = users[0].owner
        with ir.InsertionPoint(clone), clone.location:
            same = stream.AsyncCastOp(clone.results[0].type, sliced.results[0], clone.opview.source_size,
                                      clone.opview.result_size, affinity=get_attr(clone, "affinity")).result
        clone.results[0].replace_all_uses_with(same)
        clone.erase()


def _rewrite_implicit_crossings(op, placement, model, stager, crossings) -> None:
    if op.name == "scf.yield":
        targets = placement.yield_targets(op)
    elif op.name in ("cf.br", "cf.cond_br"):
        targets = placement.branch_targets(op)
    else:
        device = placement.exec_device(op)
        if device is None or op.name == "stream.async.transfer":
            return
        targets = [device] * len(op.operands)
    for index, value in enumerate(list(op.operands)):
        device = targets[index] if index < len(targets) else None
        if device is None or not is_resource(value):
            continue
        home = placement.home(value)
        if home is None or home == device:
            continue
        policy = _policy(model, home, device, op)
        if not policy.is_staged:
            continue
        encoding, nbytes = describe(value)
        with ir.InsertionPoint(op), op.location:
            size = stream.ResourceSizeOp(value).result
            staged = stager.stage(value, size, home, device, policy, value.type,
                                  carried=op.name in _REGION_ARGUMENT_USERS)
        op.operands[index] = staged
        crossings.append(Crossing(format_location(op.location), home, device, policy, "implicit",
                                  encoding, nbytes, stager.caller_buffer))


class TransferInsertion(ModulePass):
    """Stages every crossing between devices whose memories are incompatible."""

    name = "transfer-insertion"
    level = "stream"
    summary = "lower cross-device moves between incompatible memories to export, host staging, import"

    def apply(self, module, options: PassOptions) -> None:
        model = MemoryModel.of(module, options.links)
        graph, crossings = insert_transfers(module, model, options.staging == "emplace",
                                            options.staging_pieces, options.pinned_arguments)
        options.report.graph = graph
        options.report.crossings.extend(crossings)
