"""cross-driver-waits: a device's queue never waits on a timepoint of a
device whose fences it cannot wait on; the host waits instead.

IREE's stream scheduling chains queue operations of different devices
through timepoints it makes itself, not only through the crossings mdc
lowers: at a loop's exit it frees a resource on one device with a
``stream.resource.dealloca`` that awaits a join of that device's work and
the loop's timepoint, and the next allocation of another device awaits that
dealloca (random programs seed 796349654 index 104: a GPU's queue alloca
waiting on the CPU's fence, which never runs; the device-isolation verifier
refuses it). docs/DESIGN.md section 2: a GPU queue told to wait on another
driver's semaphore never runs; a CPU queue may wait on a GPU's.

This pass runs on IREE's scheduled stream IR (level ``scheduled``), after
dealloca-affinity has put deallocas where they run. For each queue
operation (an execute, alloca, dealloca, file read or write, external
chain) it splits the timepoint the operation awaits, through joins, into the
timepoints its own queue may wait on and the others. The host waits on the
others (one fence, exported, with the host wait every lowering uses) right
before the operation, which then awaits only the first kind (an immediate
timepoint when none is left).

Who may wait on whom is the memory model's: a pair that shares memory
waits as IREE made it; in a staged pair only the CPU side, the one that does
not own the staging memory, waits on the other's queue. So the owner of a
pair forced staged with ``--link`` (the GPU's role on two CPUs) has the
host wait for it too, as a GPU would. A timepoint whose device is unknown
(a call's result, a function's argument, a global) stays, as the verifier
leaves it. A module without staged pairs is IREE's, byte for byte.
"""

from __future__ import annotations

from iree.compiler import ir
from iree.compiler.dialects import stream, util

from ..ir import ir_adapter as irx
from ..lowering import staging_template
from ..infra.diagnostics import MdcError
from ..ir.ir_util import get_attr, incoming_values, sources, top_level_ops, walk
from ..analysis.memory_model import MemoryModel
from ..ir.module_facts import affinity_devices, module_default_device
from ..infra.pass_base import Fact, ModulePass, NoOptions

# Queue operations: each awaits one timepoint on the device of its affinity
# (the module's default device where it has none: IREE's HAL conversion
# puts it there).
_QUEUE_OPS = (irx.STREAM_CMD_EXECUTE, irx.STREAM_RESOURCE_ALLOCA, irx.STREAM_RESOURCE_DEALLOCA,
              irx.STREAM_FILE_READ, irx.STREAM_FILE_WRITE, irx.STREAM_TIMEPOINT_CHAIN_EXTERNAL)


def can_wait(model: MemoryModel, waiter: str, origin: str) -> bool:
    """Whether ``waiter``'s queue may wait on a timepoint of ``origin``'s."""
    try:
        policy = model.policy(waiter, origin)
    except MdcError:
        return False  # two GPUs of different drivers and no local device
    if not policy.is_staged:
        return True
    return model.devices[waiter].uses_host_memory and policy.owner not in (None, waiter)


def _through_joins(op: ir.Operation, result: ir.Value) -> list[ir.Value] | None:
    """A join's timepoint is its parts'; an immediate one is nobody's."""
    if op.name == irx.STREAM_TIMEPOINT_JOIN:
        return list(op.operands)
    if op.name == irx.STREAM_TIMEPOINT_IMMEDIATE:
        return []
    return None


class _Waits:
    """The queue operations of one function and where their timepoints come from."""

    def __init__(self, function: ir.Operation, model: MemoryModel, default: str | None):
        self.model = model
        self.default = default
        self.incoming = incoming_values(function)

    def devices_of(self, op: ir.Operation) -> list[str]:
        """The devices ``op`` may run on."""
        names = affinity_devices(get_attr(op, "affinity"))
        return names or ([self.default] if self.default else [])

    def origins(self, timepoint: ir.Value) -> set[str] | None:
        """The devices whose queues signal ``timepoint``, followed through
        joins and block arguments; None where one is unknown."""
        signalled_by = sources(timepoint, self.incoming, _through_joins)
        if signalled_by is None:
            return None
        found: set[str] = set()
        for op in signalled_by:
            if op.name not in _QUEUE_OPS and op.name != irx.STREAM_TIMEPOINT_IMPORT:
                return None
            devices = self.devices_of(op)
            if not devices:
                return None
            found.update(devices)
        return found

    def waitable(self, waiters: list[str], timepoint: ir.Value) -> bool:
        origins = self.origins(timepoint)
        return origins is None or all(
            o not in self.model.devices or w not in self.model.devices or can_wait(self.model, w, o)
            for w in waiters for o in origins)

    def split(self, waiters: list[str], timepoint: ir.Value) -> tuple[list, list]:
        """(the parts of ``timepoint`` the waiters' queues may wait on, the
        parts only the host may), joins taken apart part by part: a part of
        unknown origin stays on the queue (as the verifier takes it), and
        does not keep a known cross-driver part of the same join there."""
        owner = timepoint.owner
        if not isinstance(owner, ir.Block) and owner.operation.name == irx.STREAM_TIMEPOINT_JOIN:
            kept, host = [], []
            for part in owner.operation.operands:
                k, h = self.split(waiters, part)
                kept += k
                host += h
            return (kept, host) if host else ([timepoint], [])
        return ([timepoint], []) if self.waitable(waiters, timepoint) else ([], [timepoint])


def _join(parts: list[ir.Value]) -> ir.Value:
    """One timepoint for ``parts``: itself, their join, or immediate."""
    timepoint = irx.timepoint_type()
    if not parts:
        return stream.TimepointImmediateOp(results=[timepoint]).results[0]
    if len(parts) == 1:
        return parts[0]
    return stream.TimepointJoinOp(parts, results=[timepoint]).results[0]


def _awaited_operand(op: ir.Operation) -> int | None:
    numbers = [i for i, v in enumerate(op.operands) if irx.is_type(v.type, irx.TIMEPOINT)]
    return numbers[0] if len(numbers) == 1 else None


def wait_on_host(module, model: MemoryModel) -> int:
    """Moves every cross-driver part of a queue operation's wait onto the
    host; returns how many operations changed."""
    default = module_default_device(module)
    host_await = None
    changed = 0
    for function in [op for op in top_level_ops(module) if op.name in (irx.UTIL_FUNC, irx.UTIL_INITIALIZER)]:
        waits = _Waits(function, model, default)
        for op in [o for o in walk(function) if o.name in _QUEUE_OPS]:
            number = _awaited_operand(op)
            waiters = waits.devices_of(op)
            if number is None or not waiters:
                continue
            kept, host = waits.split(waiters, op.operands[number])
            if not host:
                continue
            host_await = host_await or _add_host_await(module)
            with ir.InsertionPoint(op), op.location:
                fence = stream.TimepointExportOp([irx.fence_type()], _join(host)).results[0]
                util.CallOp([], host_await, [fence])
                op.operands[number] = _join(kept)
            changed += 1
    return changed


def _add_host_await(module) -> str:
    """Adds the host wait (once per pass run); returns its name."""
    name = irx.SymbolNames(module).unique("__mdc_host_await_other_driver")
    staging_template.instantiate(module, staging_template.helper("await"), {"await": name},
                                 message="mdc: waiting on the host for another driver's device failed")
    return name


class CrossDriverWaits(ModulePass):
    name = "cross-driver-waits"
    level = "scheduled"
    summary = "wait on the host where a queue would wait on a timepoint of a device it cannot wait on"

    requires = (MemoryModel,)
    # Who waits on a dealloca's timepoint is known once each runs where its
    # resource was allocated.
    needs = (Fact.DEALLOCAS_PLACED,)

    def apply(self, module, options: NoOptions, model: MemoryModel) -> None:
        if model.anything_staged:
            wait_on_host(module, model)
