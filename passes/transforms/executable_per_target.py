"""executable-per-target: each executable is dispatched on devices of one target.

IREE 3.13.0 miscompiles a ``stream.executable`` that a module dispatches on
devices with different executable targets (a local CPU and a GPU). The HAL
phase gives it one variant per target, and after executable linking one
device's executable cache is created from the *other* device's variant: the
module fails to load ("HAL device `device_b` does not support any variant of
executable ...") or would run the wrong code. Stock iree-compile does the
same with two public functions computing one elementwise op, one on a local
device and one on a cuda device: flow's executable deduplication merged
them. On a CPU-only pair (local+local) the targets are equal and nothing
goes wrong, so only a GPU shows it; the verifier's executable check
(device_isolation_verifier.py) catches it at compile time.

This pass runs on stream-tensor IR once every op is placed and every
crossing staged (the staging adds dispatches too). For every executable
whose dispatch sites run on devices of more than one target, the
dispatches on the first target (in program order) keep the executable and
each further target gets its own copy, named after the original. Devices of
one target (two ``local`` devices, two GPUs of one kind) keep sharing. A
dispatch whose affinity names no single device (an optimal set, or none)
counts as its own target: IREE gives such a dispatch variants for all of
them, as before.
"""

from __future__ import annotations

from iree.compiler import ir

from ..ir import ir_adapter as irx
from ..ir.ir_util import get_attr, top_level_ops, walk
from ..ir.module_facts import affinity_devices, device_targets, module_default_device
from ..infra.pass_base import Fact, ModulePass, NoOptions

# Ops that name executables: each has an `entry_points` array of @exe::@fn.
DISPATCH_OPS = (irx.STREAM_TENSOR_DISPATCH, irx.STREAM_ASYNC_DISPATCH, irx.STREAM_CMD_DISPATCH)


def dispatch_target(op, targets: dict[str, str], default: str | None) -> str:
    """The target key of one dispatch site."""
    affinity = get_attr(op, "affinity")
    names = affinity_devices(affinity)
    if not names and default:
        names = [default]
    keys = sorted({targets.get(n, f"<{n}>") for n in names})
    return keys[0] if len(keys) == 1 else "<several: " + " | ".join(keys) + ">"


def executables_of(op) -> list[str]:
    """Root symbols of a dispatch op's entry points."""
    return [ir.SymbolRefAttr(a).value[0] for a in ir.ArrayAttr(op.attributes["entry_points"])]


def plan_copies(module) -> dict[str, list[tuple[str, list]]]:
    """For each executable dispatched on more than one target: the further
    targets in order of first use, each with its dispatch ops."""
    targets = device_targets(module)
    default = module_default_device(module)
    uses: dict[str, dict[str, list]] = {}
    for op in walk(module):
        if op.name not in DISPATCH_OPS or "entry_points" not in op.attributes:
            continue
        key = dispatch_target(op, targets, default)
        for exe in dict.fromkeys(executables_of(op)):
            uses.setdefault(exe, {}).setdefault(key, []).append(op)
    return {
        exe: list(by_target.items())[1:]
        for exe, by_target in uses.items()
        if len(by_target) > 1
    }


def retarget(op, old: str, new: str) -> None:
    """Point a dispatch op's entry points in executable ``old`` at ``new``."""
    points = []
    for a in ir.ArrayAttr(op.attributes["entry_points"]):
        path = ir.SymbolRefAttr(a).value
        if path[0] == old:
            path = [new] + path[1:]
        points.append(ir.SymbolRefAttr.get(path))
    op.attributes["entry_points"] = ir.ArrayAttr.get(points)


def split_executables(module) -> list[tuple[str, str]]:
    """Rewrites the module; returns the (original, copy) names made."""
    plan = plan_copies(module)
    if not plan:
        return []
    executables = {
        op.attributes["sym_name"].value: op
        for op in top_level_ops(module)
        if op.name == irx.STREAM_EXECUTABLE
    }
    symbols = irx.SymbolNames(module)
    made = []
    for exe, further in plan.items():
        original = executables.get(exe)
        if original is None:
            continue  # not a stream executable (e.g. an external hal.executable)
        for _key, sites in further:
            name = symbols.unique(f"{exe}_t")
            copy = original.clone(ip=ir.InsertionPoint(original))
            copy.attributes["sym_name"] = ir.StringAttr.get(name)
            for op in sites:
                retarget(op, exe, name)
            made.append((exe, name))
    return made


class ExecutablePerTarget(ModulePass):
    """Gives each device target its own copy of a shared executable."""

    name = "executable-per-target"
    level = "stream"
    summary = "copy executables dispatched on devices of different targets, one per target"

    # Placing ops and staging crossings decide where each dispatch runs
    # (and add dispatches of their own).
    needs = (Fact.PLACED_OPS, Fact.STAGED_CROSSINGS)
    provides = (Fact.EXECUTABLES_PER_TARGET,)

    def apply(self, module, options: NoOptions) -> None:
        split_executables(module)
