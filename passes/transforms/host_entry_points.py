"""host-entry-points: a twin of each public function with its values in host memory.

A public function may declare an argument or a result on a device whose
memory the host's CPU device cannot use (``iree.abi.affinity`` naming a
GPU). Its caller must then allocate that argument, and read that result,
through the GPU's own allocator and queue. Stock runners do not: IREE's
``iree-run-module`` allocates every input on the first ``--device`` and
copies every result back with that device's queue, so a module with
arguments on a GPU and results on the CPU (or the other way) fails there
("copy source buffer reference is not backed by the Vulkan HAL"). And the
3.13 Python runtime cannot open a Vulkan device beside another one at all
(docs/mdc-run.md, "Host entry points, and Vulkan beside another device").

A value declared on no device is on the module's default device (IREE's,
module_facts.iree_default_device), and counts as declared there.

This pass gives each such function ``@F`` a twin ``@F$host`` (IREE names
its own variants ``@F$async`` the same way) that takes and returns every
tensor on the host device, a CPU device of the program, and calls ``@F``
with ``flow.tensor.transfer``s to and from the declared devices. Those
transfers are crossings like any other: mdc's stream-level passes stage
them. Any runner that puts the host device first can call the twin, and
``mdc-run`` does where it cannot place values on the devices itself.

It runs on the IR after IREE's input phase (``util.func`` with tensor
types, before IREE wraps public functions in its ABI), so IREE builds the
twin's ABI, its ``$async`` variant in the async-external model and its
reflection like any other function's. A function with a non-tensor,
non-scalar argument or result (one that already speaks the buffer-view ABI)
gets no twin.
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir

from ..ir.ir_util import symbol_ref
from ..analysis.memory_model import MemoryModel
from ..ir.module_facts import AFFINITY
from ..infra.outputs import Report
from ..infra.pass_base import CompileSettings, Fact, ModulePass
from .twin_call_trees import give_twins_own_call_trees
from .twins import Signature, add_twins, needs_twin
from ..ir import ir_adapter as irx

TWIN_SUFFIX = "$host"


@dataclasses.dataclass(frozen=True)
class HostEntryPointOptions:
    """``host``: the CPU device twins take and return values on (None: add
    no twins). ``staged_from_host``: devices whose memory the host cannot
    use; a function gets a twin when it declares a value on one of them,
    or a value on none while ``default`` (the module's default device,
    where such a value lives) is one of them."""

    host: str | None = None
    staged_from_host: frozenset[str] = frozenset()
    default: str | None = None

    @classmethod
    def of(cls, settings: CompileSettings) -> "HostEntryPointOptions":
        """For the devices, --link overrides and default device of
        ``settings``; none when it asks for no twins."""
        if not settings.host_entry_points:
            return cls()
        return options_for(settings.memory_model, settings.default) or cls()


def options_for(model: MemoryModel, default: str | None = None) -> HostEntryPointOptions | None:
    """Twins for the devices of ``model`` (in --device order): the host is
    the first local device; None when there is none, or no device it must
    stage to."""
    devices = list(model.devices.values())
    host = next((d.name for d in devices if d.uses_host_memory), None)
    if host is None:
        return None
    staged = frozenset(d.name for d in devices if d.name != host and model.policy(host, d.name).is_staged)
    return HostEntryPointOptions(host, staged, default) if staged else None


def twin_name(function: str) -> str:
    return function + TWIN_SUFFIX


def _with_host_affinity(entries: list[tuple[str, str]], t: ir.Type, host: str) -> str:
    kept = [f"{n} = {v}" for n, v in entries if n != AFFINITY]
    if isinstance(t, ir.RankedTensorType):
        kept.insert(0, f"{AFFINITY} = #hal.device.promise<@{host}>")
    return "{" + ", ".join(kept) + "}" if kept else ""


def _move(value: str, t: ir.Type, device: str, tag: str) -> tuple[list[str], str]:
    """Lines moving tensor ``value`` to ``device``, and the moved value."""
    shape = ir.RankedTensorType(t)
    lines, dims = [], []
    for i in range(shape.rank):
        if shape.is_dynamic_dim(i):
            lines.append(f"%{tag}_i{i} = arith.constant {i} : index")
            lines.append(f"%{tag}_d{i} = tensor.dim {value}, %{tag}_i{i} : {t}")
            dims.append(f"%{tag}_d{i}")
    dims_text = "{" + ", ".join(dims) + "}" if dims else ""
    lines.append(f"%{tag} = flow.tensor.transfer {value} : {t}{dims_text} to #hal.device.promise<@{device}>")
    return lines, f"%{tag}"


def twin_text(sig: Signature, host: str, op_name: str = irx.UTIL_FUNC, default: str | None = None) -> str:
    """The twin of ``sig`` as MLIR text: values on ``host`` in its
    signature, moved to and from their declared devices (``default`` for
    a value declared on none) around a call."""
    body: list[str] = []
    params, call_args = [], []
    for i, (t, entries, device) in enumerate(zip(sig.arg_types, sig.arg_attrs, sig.arg_devices(default))):
        params.append(f"%arg{i}: {t} {_with_host_affinity(entries, t, host)}".rstrip())
        value = f"%arg{i}"
        if device is not None and device != host and isinstance(t, ir.RankedTensorType):
            lines, value = _move(value, t, device, f"in{i}")
            body += lines
        call_args.append(value)
    results = ", ".join(f"{t} {_with_host_affinity(e, t, host)}".rstrip()
                        for t, e in zip(sig.result_types, sig.result_attrs))
    n = len(sig.result_types)
    arg_types = ", ".join(str(t) for t in sig.arg_types)
    result_types = ", ".join(str(t) for t in sig.result_types)
    call = irx.UTIL_CALL if op_name == irx.UTIL_FUNC else irx.FUNC_CALL
    ret = irx.UTIL_RETURN if op_name == irx.UTIL_FUNC else "return"
    callee = symbol_ref(sig.name)
    lhs = "" if n == 0 else ("%r = " if n == 1 else f"%r:{n} = ")
    body.append(f"{lhs}{call} {callee}({', '.join(call_args)}) : ({arg_types}) -> ({result_types})")
    returned = []
    for i, (t, device) in enumerate(zip(sig.result_types, sig.result_devices(default))):
        value = "%r" if n == 1 else f"%r#{i}"
        if device is not None and device != host and isinstance(t, ir.RankedTensorType):
            lines, value = _move(value, t, host, f"out{i}")
            body += lines
        returned.append(value)
    body.append(f"{ret} {', '.join(returned)} : {result_types}" if returned else ret)
    attrs = "".join(f", {n} = {v}" for n, v in sig.func_attrs)
    attr_text = f" attributes {{{attrs[2:]}}}" if attrs else ""
    indented = "\n".join("  " + line for line in body)
    return (f"{op_name} public {symbol_ref(twin_name(sig.name))}({', '.join(params)}) -> ({results}){attr_text} {{\n"
            f"{indented}\n}}")


def add_host_twins(module, options: HostEntryPointOptions) -> list[tuple[str, str]]:
    """Adds the twins; returns (function, twin) pairs in program order."""
    def twin_of(sig: Signature, op: ir.Operation):
        if sig.name.endswith(TWIN_SUFFIX) or not needs_twin(sig, options.staged_from_host, options.default):
            return None
        name = twin_name(sig.name)
        return name, twin_text(sig, options.host, op.name, options.default), (sig.name, name)

    twins = add_twins(module, twin_of, "host entry point", "--no-host-entry-points")
    give_twins_own_call_trees(module, twins)
    return twins


class HostEntryPoints(ModulePass):
    name = "host-entry-points"
    level = "input"
    summary = "adds @F$host, a twin of each public function with every tensor in host memory"

    Options = HostEntryPointOptions
    # A value declared on no device is on the module's default device;
    # @generate gets a twin like any other function.
    needs = (Fact.DEFAULT_DEVICE, Fact.GENERATE_ENTRY)
    provides = (Fact.HOST_TWINS,)

    def apply(self, module, options: HostEntryPointOptions) -> Report | None:
        if options.host is None:
            return None
        return Report(host_twins=add_host_twins(module, options))
