"""Rules on memory: no device is handed memory it cannot use."""

from __future__ import annotations

from .facts import Buffer, CommandBuffer, Device, of_kind
from .hal_bits import prefers_origin
from .rule import Evidence, Findings, OwnershipRule, Site
from ..ir import ir_adapter as irx


class SharedAllocation(OwnershipRule):
    """No shared allocation spans a staged pair: a ``hal.allocator.select``
    (or ``hal.allocator.resolve_memory_properties``) over a set of devices
    that holds both devices of a staged pair."""

    name = "shared-allocation"
    guards = ("IREE selects one allocator for a value used on several devices and allocates one "
              "buffer for them all, memory that a staged pair does not have.")

    def applies(self, site: Site) -> bool:
        return site.op.name in (irx.HAL_ALLOCATOR_SELECT, irx.HAL_ALLOCATOR_RESOLVE_MEMORY_PROPERTIES)

    def check(self, site: Site, evidence: Evidence, findings: Findings) -> None:
        op, access = site.op, evidence.access
        if op.name == irx.HAL_ALLOCATOR_SELECT:
            devs = [d.name for v in op.opview.devices for d in of_kind(site.facts(v), Device)]
        else:
            devs = list(irx.affinity_of(op).devices)
        devs = list(dict.fromkeys(devs))
        for i, a in enumerate(devs):
            for b in devs[i + 1:]:
                if not access.staged(a, b):
                    continue
                notes = [access.pair_note(a, b),
                         "a buffer allocated for both is handed to a device that cannot address it"]
                topology = access.topology_note(a, b)
                if topology:
                    notes.append(topology)
                findings.refuse(
                    self, site, (a, b),
                    f"'{op.name}' makes one allocation serve {access.describe(a)} and "
                    f"{access.describe(b)}, which do not share memory",
                    notes,
                )


def check_buffers(rule, site: Site, evidence: Evidence, findings: Findings, users, what: str,
                  pooled_only: bool = False) -> None:
    """Reports each ``!hal.buffer`` operand of ``site`` that one of
    ``users`` cannot access (``pooled_only``: only queue-allocated ones)."""
    access, ownership = evidence.access, evidence.ownership
    for v in (v for v in site.op.operands if irx.is_type(v.type, irx.BUFFER)):
        for buf in of_kind(site.facts(v), Buffer):
            origin = ownership.op_name(buf.index)
            if pooled_only and origin != irx.HAL_DEVICE_QUEUE_ALLOCA:
                continue
            for user in users:
                if access.can_use(user, buf.owner, buf.host_visible):
                    continue
                kind = "a device-local buffer" if access.is_local(user) else "a buffer"
                notes = [access.pair_note(user, buf.owner)]
                if origin == irx.HAL_BUFFER_ASSERT:
                    notes.append(
                        f"the buffer is an argument imported on {buf.owner}"
                        + (f" at {buf.location}" if buf.location else "")
                        + f" (its hal.buffer.assert names {buf.owner}'s allocator)"
                    )
                elif buf.location:
                    notes.append(f"the buffer is allocated at {buf.location}")
                findings.refuse(
                    rule, site, (user, buf.owner),
                    f"{what} on {access.describe(user)} uses {kind} allocated by "
                    f"{access.describe(buf.owner)}, memory {user} cannot access",
                    notes,
                )


class QueueBuffer(OwnershipRule):
    """No queue operation (``hal.device.queue.*``) of device X uses a buffer
    X cannot access: from X's own allocator or one of a device sharing
    memory with X is fine, and a ``local`` device may use any host-visible
    buffer (pinned memory from a GPU allocator: mdc's staging)."""

    name = "queue-buffer"
    guards = ("IREE hands a device's queue a buffer allocated by a device it shares no memory "
              "with (a CPU buffer on a CUDA queue: CUDA_ERROR_INVALID_VALUE).")

    def applies(self, site: Site) -> bool:
        name = site.op.name
        return name.startswith(irx.HAL_DEVICE_QUEUE_PREFIX) and name != irx.HAL_DEVICE_QUEUE_DEALLOCA

    def check(self, site: Site, evidence: Evidence, findings: Findings) -> None:
        users = [d.name for d in of_kind(site.facts(site.op.operands[0]), Device)]
        if users:
            check_buffers(self, site, evidence, findings, users, f"'{site.op.name}'")


class PooledDealloca(OwnershipRule):
    """A ``hal.device.queue.dealloca`` touches no memory; it only returns
    queue-allocated (pooled) memory, so only those buffers must belong to
    the queue's device, and with flags(PreferOrigin) the runtime performs it
    on the device that allocated the buffer, whatever device the op names
    (on the H200 that runs correctly:
    test/lit/regress/loop_on_gpu_dealloca_on_default_device.mlir)."""

    name = "pooled-dealloca"
    guards = ("IREE puts a dealloca with no affinity on the default device, and without "
              "PreferOrigin that queue would return another device's pooled memory.")

    def applies(self, site: Site) -> bool:
        return site.op.name == irx.HAL_DEVICE_QUEUE_DEALLOCA

    def check(self, site: Site, evidence: Evidence, findings: Findings) -> None:
        users = [d.name for d in of_kind(site.facts(site.op.operands[0]), Device)]
        if users and not prefers_origin(site.op):
            check_buffers(self, site, evidence, findings, users, f"'{site.op.name}'", pooled_only=True)


class CommandBufferBuffer(OwnershipRule):
    """No op recorded into a command buffer of device X uses a buffer X
    cannot access (as queue-buffer says)."""

    name = "command-buffer-buffer"
    guards = ("IREE records into one device's command buffer a copy, fill or dispatch of a "
              "buffer allocated by a device it shares no memory with.")

    def applies(self, site: Site) -> bool:
        name = site.op.name
        return name.startswith(irx.HAL_COMMAND_BUFFER_PREFIX) and name != irx.HAL_COMMAND_BUFFER_CREATE

    def check(self, site: Site, evidence: Evidence, findings: Findings) -> None:
        op = site.op
        if not len(op.operands) or not irx.is_type(op.operands[0].type, irx.COMMAND_BUFFER):
            return
        users = [c.device for c in of_kind(site.facts(op.operands[0]), CommandBuffer)]
        if users and any(irx.is_type(v.type, irx.BUFFER) for v in op.operands):
            check_buffers(self, site, evidence, findings, users, f"'{op.name}' in a command buffer")
