"""Rules on fences: no GPU queue waits on a semaphore it cannot wait on.

Both judge only modules with a staged pair (as all ownership rules do); in
such a module a CPU queue may wait on anything.
"""

from __future__ import annotations

from .facts import CALLER, Device, Fence, of_kind
from .rule import Evidence, Findings, OwnershipRule, Site
from ..ir import ir_adapter as irx


def _waits(site: Site, evidence: Evidence):
    """(GPU user, fence) for each fence a queue op's device waits on."""
    op = site.op
    view = op.opview
    users = [d.name for d in of_kind(site.facts(op.operands[0]), Device)]
    wait = getattr(view, "wait_fence", None) if users else None
    if wait is None:
        return
    for user in users:
        if not evidence.access.is_gpu(user):
            continue
        for fence in of_kind(site.facts(wait), Fence):
            yield user, fence


class _QueueWaitRule(OwnershipRule):
    def applies(self, site: Site) -> bool:
        return site.op.name.startswith(irx.HAL_DEVICE_QUEUE_PREFIX)


class ForeignFence(_QueueWaitRule):
    """No GPU queue operation waits on a fence created on a device of
    another driver, directly or through ``hal.fence.join``."""

    name = "foreign-fence"
    guards = ("IREE lets a GPU queue wait on a fence created on another driver's device, a "
              "semaphore that queue cannot wait on: it never runs (a real GPU hangs).")

    def check(self, site: Site, evidence: Evidence, findings: Findings) -> None:
        access = evidence.access
        for user, fence in _waits(site, evidence):
            if fence.origin == CALLER:
                continue
            other = access.kind(fence.origin)
            if other is None or other == access.kind(user):
                continue
            notes = ["a GPU queue told to wait on another driver's semaphore never runs; "
                     "wait on the host at such boundaries"]
            if fence.location:
                notes.append(f"the fence is created at {fence.location}")
            findings.refuse(
                self, site, (user, fence.origin),
                f"'{site.op.name}' on {access.describe(user)} waits on a fence created on "
                f"{access.describe(fence.origin)}, a device of another driver",
                notes,
            )


class CallerFence(_QueueWaitRule):
    """No GPU queue operation waits on the caller's fence (a ``!hal.fence``
    argument of a public function, async-external)."""

    name = "caller-fence"
    guards = ("With async-external, IREE lets a GPU queue wait on the fence the caller passed "
              "in, which may be another driver's semaphore.")

    def check(self, site: Site, evidence: Evidence, findings: Findings) -> None:
        for user, fence in _waits(site, evidence):
            if fence.origin != CALLER:
                continue
            findings.refuse(
                self, site, (user, CALLER),
                f"'{site.op.name}' on {evidence.access.describe(user)} waits on the caller's fence, "
                "which may belong to another driver's device",
                [
                    "in a program whose devices do not all share memory, await the caller's "
                    "fence on the host (mdc's host-fences pass) before any GPU queue work",
                    "a GPU queue told to wait on another driver's semaphore never runs",
                ],
            )
