"""What every lowering of a crossing emits with: the staging helpers the
module gets once (staging_library.mlir), crossing sites with their own pinned
buffers, the byte-copy dispatch, exports to and imports from buffer views,
barriers and host waits.

An Emitter belongs to one module and inserts at the current insertion point.
"""

from __future__ import annotations

from iree.compiler import ir
from iree.compiler.dialects import arith, stream, util

from ..ir import ir_adapter as irx
from ..ir import ir_util as iru
from . import staging_template
from ..analysis.crossings import describe
from ..ir.ir_adapter import SymbolNames
from ..ir.ir_util import affinity_attr, append_functions
from ..analysis.memory_model import MemoryModel

STAGE_FUNCTION = "__mdc_stage"
COPY_EXECUTABLE = "__mdc_copy_on_"  # + device: a byte copy as a dispatch
# With --staging=emplace, a crossing of at most this many bytes (known at
# compile time) from a CPU is read in place, in pinned memory, by the
# destination's dispatches (small_in_place.py), and one from the GPU is
# written into pinned memory by its producing kernel
# (emplace.write_into_pinned): no queue copy, allocation or host
# wait of its own. A kernel reading or writing host memory over PCIe is
# slower than the DMA for large values, not for small ones.
SMALL_CROSSING_BYTES = 64 << 10


# What marks the ops lowerings add, for later passes: every call of a
# staging helper and every byte-copy dispatch. loop-init-isolation asks for
# it (is_staging_call, is_copy_dispatch); strip-mdc-marks takes it off
# again at the end of mdc's stream passes, so IREE never sees it.
STAGED = "mdc.staged"


def staging_call(results, callee: str, operands) -> ir.Operation:
    """A ``util.call`` of the staging helper ``callee``, marked as staged."""
    call = util.CallOp(results, callee, operands)
    call.operation.attributes[STAGED] = ir.UnitAttr.get()
    return call


def is_staging_call(op: ir.Operation) -> bool:
    """``op`` calls one of the staging helpers lowerings add."""
    return op.name == irx.UTIL_CALL and STAGED in op.attributes


def is_copy_dispatch(op: ir.Operation) -> bool:
    """``op`` is a dispatch of a byte-copy executable lowerings add."""
    return op.name == irx.STREAM_TENSOR_DISPATCH and STAGED in op.attributes


class Emitter:
    """The module's staging helpers, made once each, and the ops every
    lowering emits."""

    def __init__(self, module, model: MemoryModel):
        self.module = module
        self.model = model
        self.symbols = SymbolNames(module)  # every symbol a lowering adds is named here
        self._functions: dict[tuple, str] = {}  # helper key -> function name

    def instantiate(self, helper: staging_template.Helper, names: dict[str, str], with_globals: bool = True) -> None:
        """Adds ``helper`` (staging_library.mlir) to the module, its library
        symbols renamed by ``names``: globals first in the module
        (initializers that stage values reach them, and IREE requires
        globals to precede their use; none with ``with_globals=False``, when
        the module has them already), functions at the end."""
        staging_template.instantiate(self.module, helper, names, with_globals)

    def device(self, name: str) -> ir.Value:
        return util.GlobalLoadOp(irx.device_type(), name, is_immutable=True).result

    def helper(self, kind: str) -> str:
        """The library's staging helper ``kind``, a function without a cache
        of its own, once per module."""
        key = (kind,)
        if key not in self._functions:
            name = self.symbols.unique(f"{STAGE_FUNCTION}_{kind}")
            self.instantiate(staging_template.helper(kind), {kind: name})
            self._functions[key] = name
        return self._functions[key]

    def site_function(self) -> str:
        """A new crossing site: a global holding its pinned buffer and a
        never-inlined function ``(%length, %owner) -> view`` that keeps it
        (only helpers touch the global; IREE's constant evaluation crashes on
        a !hal.buffer global used in the program's own functions)."""
        return self._new_site(read_in_place=False)[0]

    def released_site_functions(self, read_if_in_place: bool = False) -> tuple[str, str]:
        """A new crossing site whose pinned buffer the destination reads
        asynchronously: (``(%length, %owner) -> view``, which first waits
        on the host for the site's last reads, ``(%fence)``, which records
        the fence of the reads just issued; ``(%fence, %read)`` with
        ``read_if_in_place``, which records it only where the view ``%read``
        is of the site's buffer); staging_template.site_helper."""
        return self._new_site(read_in_place=True, read_if_in_place=read_if_in_place)

    def _new_site(self, read_in_place: bool, read_if_in_place: bool = False) -> tuple[str, str | None]:
        shared = self.helper("pinned_view")
        cache = self.symbols.unique(f"{STAGE_FUNCTION}_pinned_site")
        reads = self.symbols.unique(f"{cache}_read") if read_in_place else None
        name = self.symbols.unique(f"{cache}_view")
        record = self.symbols.unique(f"{cache}_record_read") if read_in_place else None
        site = staging_template.site_helper(read_in_place, read_if_in_place)
        made = [cache, reads, name, record] if read_in_place else [cache, name]
        self.instantiate(site, {**dict(zip(site.symbols, made)), "pinned_view": shared})
        return name, record

    def early_site_view(self, function: str, size: ir.Value, owner: str) -> ir.Value:
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
            if defining.operation.name in (irx.STREAM_TENSOR_SIZEOF, irx.ARITH_CONSTANT) and \
                    len(defining.operation.operands) == 0:
                # A static size (stream.tensor.sizeof of a static shape, a
                # constant): computed at the block's start instead.
                defining.operation.move_before(ops[0])
                ops = list(block.operations)
            at = ir.InsertionPoint(ops[ops.index(defining.operation) + 1])
        with at:
            return staging_call([irx.buffer_view_type()], function,
                               [size, self.device(owner)]).results[0]

    def _copy_executable(self, device: str) -> str:
        """The byte-copy executable (staging_template.copy_executable_text),
        one per device, so no executable is shared by two targets."""
        key = ("copy_executable", device)
        if key not in self._functions:
            name = self.symbols.unique(f"{COPY_EXECUTABLE}{device}")
            append_functions(self.module, staging_template.copy_executable_text(name))
            self._functions[key] = name
        return self._functions[key]

    def copy_dispatch(self, value, size, device, offset=None, length=None) -> ir.Value:
        """A copy of ``length`` bytes (default: all ``size``) of ``value`` from
        ``offset`` (default 0), made by a dispatch on ``device`` (a CPU runs
        it on all its workers)."""
        star = irx.resource_type()
        bytes_type = ir.TypeAttr.get(irx.bytes_tensor_type())
        where = affinity_attr(device)
        if offset is None:
            offset = arith.ConstantOp(ir.IndexType.get(), 0).result
        if length is None:
            length = size
        if value.type != star:
            value = stream.AsyncCastOp(star, value, size, size, affinity=where).result
        executable = self._copy_executable(device)
        entry = ir.ArrayAttr.get([ir.SymbolRefAttr.get([executable, f"{executable}_bytes"])])
        unused = ir.TypeAttr.get(irx.fixed_type(irx.UNUSED))
        dispatch = stream.TensorDispatchOp(
            [star], [length], entry, [value, size, offset, length], [size],
            ir.ArrayAttr.get([bytes_type, unused, unused, unused]), [size],
            [length], ir.ArrayAttr.get([bytes_type]), [length],
            tied_operands=ir.ArrayAttr.get([ir.IntegerAttr.get(ir.IndexType.get(), -1)]),
            affinity=where)
        dispatch.operation.attributes[STAGED] = ir.UnitAttr.get()
        return dispatch.results[0]

    @staticmethod
    def written(resource, size, device, lifetime: str = "external"):
        """``resource`` (of ``lifetime``) after a barrier, and the barrier's fence of ``device``."""
        resource, timepoint = barrier(resource, size, device, irx.resource_type(lifetime))
        return resource, export_fence(timepoint, device)

    def host_await(self, fence) -> None:
        """The host waits until ``fence`` is reached (the library's ``@await``)."""
        staging_call([], self.helper("await"), [fence])

    def awaited_view(self, fence, view) -> ir.Value:
        """``view`` once the host has waited for ``fence``: the view a device
        must import to read what was waited for
        (the library's ``@await_view``)."""
        return staging_call([view.type], self.helper("await_view"),
                           [fence, view]).results[0]

    def waited(self, resource, size, device, lifetime: str = "external"):
        """``resource`` (of ``lifetime``) after a barrier whose fence the host waits for."""
        resource, done = self.written(resource, size, device, lifetime)
        self.host_await(done)
        return resource

    def export(self, value, size, src):
        """``value`` as a buffer view of ``src``, and a fence of ``src`` for
        when its producer is done."""
        external = irx.resource_type("external")
        bytes_type = irx.bytes_tensor_type()
        exported = value
        if value.type != external:
            exported = stream.AsyncCastOp(external, value, size, size, affinity=affinity_attr(src)).result
        # The source queue's copy must wait for the value's producer. IREE
        # does not always wait on the host before an export (it does not for
        # a loop-carried value), so the copy waits on the value's own
        # timepoint, exported as a fence of the source device.
        exported, ready = self.written(exported, size, src)
        view = stream.TensorExportOp(
            irx.buffer_view_type(), exported, bytes_type, [size], size,
            affinity=affinity_attr(src),
        ).result
        return view, ready

    def imported(self, view, size, dst, result_type, carried):
        external = irx.resource_type("external")
        bytes_type = irx.bytes_tensor_type()
        imported = stream.TensorImportOp(
            external, view, bytes_type, [size], size, affinity=affinity_attr(dst)
        ).result
        if carried and irx.is_type(result_type, "!stream.resource<*>"):
            # A value that enters a loop's or branch's region arguments: a
            # fresh copy, so IREE's lifetime refinement does not see an
            # imported (external) value meet transient or constant ones on
            # the same region argument, which it cannot reconcile.
            return stream.AsyncCloneOp(
                result_type, imported, size, size, affinity=affinity_attr(dst)
            ).result
        return as_lifetime(imported, size, dst, result_type)


def as_lifetime(value: ir.Value, size: ir.Value, device: str, result_type: ir.Type) -> ir.Value:
    """``value`` (a resource on ``device``) as ``result_type``."""
    if value.type == result_type:
        return value
    where = affinity_attr(device)
    if irx.is_type(result_type, "!stream.resource<staging>") or irx.is_type(result_type, "!stream.resource<constant>"):
        # async.cast cannot produce staging resources; a transfer on one
        # device can, and IREE lowers it as usual. A cast from external
        # to constant sends IREE's usage refinement (iree-stream-refine-
        # usage) into unbounded memory growth
        # (test/lit/regress/constant_reduce_runaway_memory.mlir).
        return stream.AsyncTransferOp(result_type, value, size, size, source_affinity=where,
                                      target_affinity=where).result
    return stream.AsyncCastOp(result_type, value, size, size, affinity=where).result


def in_initializer(op: ir.Operation | None = None) -> bool:
    """Whether the current insertion point is in a ``util.initializer``.
    Staging there runs once, and the copying lowering is kept: IREE rejects
    the emplace one in hoisted-constant initializers ("immutable global
    ... initialized both by initial value and by store in initializer",
    random programs seed 4242 index 143)."""
    return iru.in_initializer(ir.InsertionPoint.current.block.owner if op is None else op)


def barrier(resource: ir.Value, size: ir.Value, device: str, result_type: ir.Type):
    """(``resource`` as ``result_type``, the timepoint at which it is ready)."""
    barrier = stream.TimepointBarrierOp(resource, size, affinity=affinity_attr(device),
                                        results=[result_type, irx.timepoint_type()])
    return barrier.results[0], barrier.results[1]


def export_fence(timepoint: ir.Value, device: str) -> ir.Value:
    """``timepoint`` as a ``!hal.fence`` of ``device``."""
    return stream.TimepointExportOp([irx.fence_type()], timepoint,
                                    affinity=affinity_attr(device)).results[0]


def is_small(value, size) -> bool:
    """``value``'s size is known at compile time and at most SMALL_CROSSING_BYTES."""
    _, nbytes = describe(value, size)
    return nbytes.isdigit() and int(nbytes) <= SMALL_CROSSING_BYTES


def is_dynamic(value, size) -> bool:
    """``value``'s size is known only at run time."""
    _, nbytes = describe(value, size)
    return not nbytes.isdigit()
