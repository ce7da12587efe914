"""foreign-dealloca: no queue deallocation hands a device another driver's buffer.

IREE lowers the deallocation of a transient resource whose allocating device
it does not know statically (a loop-carried value: the loop's block argument
merges the buffers of several iterations) to a deallocation on the module's
*default* device with ``flags(PreferOrigin)``, waiting on and signalling
fences of that device::

    hal.device.queue.dealloca<%device_a> wait(%f_b) signal(%f_a) buffer(%buf) flags(PreferOrigin)

At run time IREE moves it to the device that allocated ``%buf``. When that
is a GPU and the default device a CPU (a loop on the GPU, in a program whose
first device is local), the GPU queue is handed a CPU semaphore to signal,
the cross-driver hazard of DESIGN.md section 2; stock IREE 3.13.0 does this
too. The verifier rejects it.

This pass runs on HAL-level IR, before the verifier. Each such deallocation
becomes a queue barrier on the same device with the same fences: everything
that waited on the deallocation still waits for the same work, and the
buffer returns to its pool when its last reference is released, as IREE
already does for the buffers of all earlier loop iterations. Deallocations
the verifier's analysis sees as safe are left alone, as are modules whose
device pairs all share memory.
"""

from __future__ import annotations

from iree.compiler import ir

from .registry import ModulePass, PassOptions, register


def replace_with_barrier(op: ir.Operation) -> None:
    device, affinity, wait, signal = list(op.operands)[:4]
    with ir.InsertionPoint(op), op.location:
        ir.Operation.create(
            "hal.device.queue.barrier",
            operands=[device, affinity, wait, signal],
            attributes={"flags": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 0)},
        )
    op.erase()


@register
class ForeignDealloca(ModulePass):
    """Turns deallocations of another driver's buffers into queue barriers."""

    name = "foreign-dealloca"
    level = "hal"
    summary = "replace queue deallocations of buffers from an incompatible device with barriers"

    def apply(self, module, options: PassOptions) -> None:
        # Imported here: importing the verifier registers it, and the
        # registry's order is the import order (this pass runs first).
        from .device_isolation_verifier import foreign_deallocas

        for op in foreign_deallocas(module, options.links):
            replace_with_barrier(op)
