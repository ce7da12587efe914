"""host-fences: the caller's fences never reach a device queue across drivers.

In IREE's async-external execution model a public function takes a wait and
a signal fence from its caller. IREE imports the wait fence as a timepoint
on the argument's device, and chains the result's timepoint into the signal
fence on the result's device. Both are queue operations on the caller's
fence, and that fence may come from another driver's device: a CUDA queue
told to wait on a local-task semaphore never runs (docs/DESIGN.md section 2).

In a module with a staged device pair, or with a GPU beside a device of
another driver that the command line gives and the program never names
(nothing is staged, but mdc-run and load open both devices, and the
caller's fences may be the other's), this pass moves both onto the host:

* ``stream.timepoint.import`` of a caller fence becomes a host
  ``hal.fence.await`` followed by an immediate timepoint;
* ``stream.timepoint.chain_external`` into a caller fence becomes a host
  wait on the device's own timepoint (exported as that device's fence)
  followed by a host ``hal.fence.signal``.

Other modules keep IREE's behaviour untouched.
"""

from __future__ import annotations

from typing import Mapping

from iree.compiler import ir
from iree.compiler.dialects import hal, stream, util

from ..ir import ir_adapter as irx
from ..lowering import staging_template
from ..ir.ir_util import append_functions, get_attr, walk
from ..analysis.memory_model import Device, MemoryModel
from ..infra.pass_base import DeviceOptions, Fact, ModulePass


# Host waits live in never-inlined helpers: the wait for the caller's fence
# is the one every lowering uses (staging_library.mlir's @await: a
# null fence, which a synchronous wrapper passes, is no wait). The relay
# hands a failure on to the caller's fence instead of aborting: where IREE
# can prove the program's own fence is already signalled it folds the wait
# into a constant OK status, and a status check on a constant is rejected
# (vm.cond_fail), while this branch simply folds away. The relay stays text
# here, not in staging_library.mlir nor built: its ops are located at their
# line and column in this text (``loc("-":L:C)``), and a host function's
# locations reach the vmfb (the VM module's debug database), so moving it
# to the library's lines, or building it, changes every vmfb that has it.
_RELAY = """
util.func private @{relay_name}(%own: !hal.fence, %caller: !hal.fence) attributes {{inlining_policy = #util.inline.never}} {{
  %forever = arith.constant -1 : i32
  %ok = arith.constant 0 : i32
  %status = hal.fence.await until([%own]) timeout_millis(%forever) flags("None") : i32
  %failed = arith.cmpi ne, %status, %ok : i32
  scf.if %failed {{
    hal.fence.fail<%caller : !hal.fence> status(%status)
  }} else {{
    hal.fence.signal<%caller : !hal.fence>
  }}
  util.return
}}
"""


def _add_helpers(module) -> tuple[str, str]:
    """Adds the two helpers (once per pass run); returns their names."""
    symbols = irx.SymbolNames(module)
    await_name = symbols.unique("__mdc_host_await")
    relay_name = symbols.unique("__mdc_host_relay")
    staging_template.instantiate(module, staging_template.helper("await"), {"await": await_name},
                                 message="mdc: waiting on a fence on the host failed")
    append_functions(module, _RELAY.format(relay_name=relay_name))
    return await_name, relay_name


def isolate_caller_fences(module) -> int:
    """Rewrites caller-fence imports and chains; returns how many."""
    helpers = None
    rewritten = 0
    for op in list(walk(module)):
        if op.name == irx.STREAM_TIMEPOINT_IMPORT and _is_function_argument(op.operands[0]):
            helpers = helpers or _add_helpers(module)
            with ir.InsertionPoint(op), op.location:
                util.CallOp([], helpers[0], [op.operands[0]])
                ready = stream.TimepointImmediateOp(results=[op.results[0].type]).results[0]
            op.results[0].replace_all_uses_with(ready)
            op.erase()
            rewritten += 1
        elif op.name == irx.STREAM_TIMEPOINT_CHAIN_EXTERNAL and all(
            _is_function_argument(v) for v in list(op.operands)[1:]
        ):
            timepoint = op.operands[0]
            barrier = timepoint.owner
            with ir.InsertionPoint(op), op.location:
                if not isinstance(barrier, ir.Block) and barrier.operation.name == irx.STREAM_TIMEPOINT_BARRIER:
                    # Wait for the results themselves: IREE folds this wait
                    # away when the timepoint turns out to be immediate.
                    barrier = barrier.operation
                    resource, size = barrier.results[0], barrier.operands[1]
                    # Right after the barrier, so the awaited value dominates
                    # every use of the barrier's result.
                    with ir.InsertionPoint(_next_op(barrier)):
                        ready = stream.TimepointAwaitOp(
                            [resource.type], [resource], [size], timepoint
                        ).results[0]
                    for use in list(resource.uses):
                        if use.owner != ready.owner:
                            use.owner.operands[use.operand_number] = ready
                    for fence in list(op.operands)[1:]:
                        hal.FenceSignalOp(fence)
                else:
                    helpers = helpers or _add_helpers(module)
                    own = stream.TimepointExportOp(
                        [irx.fence_type()], timepoint, affinity=get_attr(op, "affinity")
                    ).results[0]
                    for fence in list(op.operands)[1:]:
                        util.CallOp([], helpers[1], [own, fence])
            op.erase()
            rewritten += 1
    return rewritten


def _next_op(op: ir.Operation) -> ir.Operation:
    block_ops = list(op.block.operations)
    index = [o.operation for o in block_ops].index(op)
    return block_ops[index + 1].operation


def _is_function_argument(value: ir.Value) -> bool:
    owner = value.owner
    if not isinstance(owner, ir.Block) or not irx.is_type(value.type, irx.FENCE):
        return False
    parent = owner.owner
    return parent is not None and parent.operation.name == irx.UTIL_FUNC


class HostFences(ModulePass):
    """Keeps the caller's wait/signal fences off device queues in modules
    with staged pairs, or with a GPU beside another driver's device."""

    name = "host-fences"
    level = "stream"
    summary = "await and signal the caller's fences on the host when devices are staged"

    requires = (MemoryModel,)
    # It waits on the host for the timepoints of the values the function
    # returns as the staging left them. After loop-init-isolation too: the
    # two touch different ops, and that is the order the vmfbs are built in.
    needs = (Fact.STAGED_CROSSINGS, Fact.LOOP_INITS_ISOLATED)
    provides = (Fact.HOST_FENCES,)

    Options = DeviceOptions

    def apply(self, module, options: DeviceOptions, model: MemoryModel) -> None:
        if model.anything_staged or callers_fences_may_be_foreign(model, options.devices):
            isolate_caller_fences(module)


def callers_fences_may_be_foreign(model: MemoryModel, given: Mapping[str, Device]) -> bool:
    """A GPU the module declares beside a device of another driver that the
    command line gives and IREE dropped (one the program never names):
    nothing is staged, but the manifest lists both, so mdc-run and load
    open both, and the caller's fences may be the other driver's."""
    gpus = {d.kind for d in model.devices.values() if not d.uses_host_memory}
    return bool(gpus) and any(d.kind not in gpus for d in given.values())
