"""result-storage-twins: a twin of each public function that writes its CPU
results into storage the caller gives.

A result declared on a CPU device that comes back from a GPU is, in the
function as written, a new buffer of IREE's local allocator on every call:
the GPU copies the value into mdc's pinned staging buffer, a CPU dispatch
copies it into that new buffer (first touching every page), and a Python
caller copies it once more into a numpy array. That is three passes over
the bytes where the GPU's one DMA would do.

This pass gives each such function ``@F`` a twin ``@F$into`` that takes,
after ``@F``'s own arguments, one output argument (``iree.abi.output``) per
tensor result declared on a CPU device, and calls ``@F``. The twin's names
are recorded on the module (RESULT_STORAGE_TWINS_ATTR); stage-crossings
lowers a crossing from the staging owner into such an output straight into
the caller's storage, which the caller gives in the owner's pinned memory
(lowering/pinned_arguments.py), as with ``--pinned-arguments``: the GPU's
queue copies the value into it and nothing else touches it. runtime_shim
gives that storage out of a pool of page-aligned numpy memory it has
registered with the GPU, and returns the result as a numpy array over it,
which goes back to the pool when it is garbage collected (the manifest's
``"result_storage"`` entry names the twin).

Like host-entry-points it runs on the IR after IREE's input phase, so IREE
builds the twin's ABI (and its ``$async`` variant) like any other
function's. A function gets a twin when it declares a value on a device
the host stages to and a tensor result on a CPU device that shares the
host's memory, all its values are ranked tensors or scalars, and it has
no output argument of its own. The twins of host-entry-points get none.
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir

from .host_entry_points import TWIN_SUFFIX as HOST_TWIN_SUFFIX, options_for
from ..ir.ir_util import symbol_ref
from ..ir.module_facts import AFFINITY
from ..infra.outputs import Report
from ..infra.pass_base import CompileSettings, Fact, ModulePass
from .twins import Signature, add_twins, needs_twin
from ..ir import ir_adapter as irx

TWIN_SUFFIX = "$into"
# The module attribute naming the twins, an array of strings, which
# stage-crossings reads (storage_twins_of).
RESULT_STORAGE_TWINS_ATTR = "mdc.result_storage_twins"


@dataclasses.dataclass(frozen=True)
class ResultStorageOptions:
    """``cpus``: CPU devices whose memory the host shares (a result
    declared on one gets storage). ``staged_from_host``: devices the host
    stages to. Either empty: add no twins."""

    cpus: frozenset[str] = frozenset()
    staged_from_host: frozenset[str] = frozenset()

    @classmethod
    def of(cls, settings: CompileSettings) -> "ResultStorageOptions":
        if not settings.result_storage_twins:
            return cls()
        devices = list(settings.devices.values())
        host = options_for(settings.memory_model)
        if host is None:
            return cls()
        cpus = frozenset(d.name for d in devices if d.uses_host_memory and d.name not in host.staged_from_host)
        return cls(cpus, host.staged_from_host)


def twin_name(function: str) -> str:
    return function + TWIN_SUFFIX


def stored_results(sig: Signature, options: ResultStorageOptions) -> list[int]:
    """The indices of the results of ``sig`` that get storage in its twin:
    ranked tensors declared on a CPU device; empty when the function gets
    no twin (also when it has output arguments of its own)."""
    if not options.cpus or not needs_twin(sig, options.staged_from_host):
        return []
    if any(n == "iree.abi.output" for entries in sig.arg_attrs for n, _ in entries):
        # Its own output arguments are given where the caller placed them;
        # in a twin every output argument is pinned storage.
        return []
    return [i for i, (t, device) in enumerate(zip(sig.result_types, sig.result_devices()))
            if isinstance(t, ir.RankedTensorType) and device in options.cpus]


def _attr_text(entries: list[tuple[str, str]]) -> str:
    return "{" + ", ".join(f"{n} = {v}" for n, v in entries) + "}" if entries else ""


def twin_text(sig: Signature, results: list[int], op_name: str = irx.UTIL_FUNC) -> str:
    """The twin of ``sig`` as MLIR text: its arguments, then one output
    argument per result in ``results`` (on that result's device), and a
    call of ``sig``'s function returning what it returns."""
    params = [f"%arg{i}: {t} {_attr_text(entries)}".rstrip()
              for i, (t, entries) in enumerate(zip(sig.arg_types, sig.arg_attrs))]
    for i in results:
        device = [(n, v) for n, v in sig.result_attrs[i] if n == AFFINITY]
        params.append(f"%out{i}: {sig.result_types[i]} {_attr_text([('iree.abi.output', f'{i} : index'), *device])}")
    result_decl = ", ".join(f"{t} {_attr_text(e)}".rstrip() for t, e in zip(sig.result_types, sig.result_attrs))
    arg_types = ", ".join(str(t) for t in sig.arg_types)
    result_types = ", ".join(str(t) for t in sig.result_types)
    n = len(sig.result_types)
    call = irx.UTIL_CALL if op_name == irx.UTIL_FUNC else irx.FUNC_CALL
    ret = irx.UTIL_RETURN if op_name == irx.UTIL_FUNC else "return"
    lhs = "%r = " if n == 1 else f"%r:{n} = "
    returned = ", ".join("%r" if n == 1 else f"%r#{i}" for i in range(n))
    attrs = ", ".join(f"{name} = {v}" for name, v in sig.func_attrs)
    attr_text = f" attributes {{{attrs}}}" if attrs else ""
    call_args = ", ".join(f"%arg{i}" for i in range(len(sig.arg_types)))
    return (f"{op_name} public {symbol_ref(twin_name(sig.name))}({', '.join(params)}) -> ({result_decl}){attr_text} {{\n"
            f"  {lhs}{call} {symbol_ref(sig.name)}({call_args}) : ({arg_types}) -> ({result_types})\n"
            f"  {ret} {returned} : {result_types}\n}}")


def add_storage_twins(module, options: ResultStorageOptions) -> list[tuple[str, str, tuple[int, ...]]]:
    """Adds the twins and records their names on the module; returns
    (function, twin, stored result indices) in program order."""
    def twin_of(sig: Signature, op: ir.Operation):
        if sig.name.endswith((HOST_TWIN_SUFFIX, TWIN_SUFFIX)):
            return None
        results = stored_results(sig, options)
        if not results:
            return None
        name = twin_name(sig.name)
        return name, twin_text(sig, results, op.name), (sig.name, name, tuple(results))

    added = add_twins(module, twin_of, "result-storage twin", "--no-result-storage-twins")
    if added:
        module.operation.attributes[RESULT_STORAGE_TWINS_ATTR] = ir.ArrayAttr.get(
            [ir.StringAttr.get(twin) for _, twin, _ in added])
    return added


def storage_twins_of(module) -> frozenset[str]:
    """The names of the twins this pass added to ``module`` (none if it did
    not run)."""
    attrs = module.operation.attributes
    if RESULT_STORAGE_TWINS_ATTR not in attrs:
        return frozenset()
    return frozenset(ir.StringAttr(a).value for a in ir.ArrayAttr(attrs[RESULT_STORAGE_TWINS_ATTR]))


class ResultStorageTwins(ModulePass):
    name = "result-storage-twins"
    level = "input"
    summary = "adds @F$into, a twin of each public function that writes its CPU results into the caller's storage"

    Options = ResultStorageOptions
    # The twins of host-entry-points get none.
    needs = (Fact.HOST_TWINS,)
    provides = (Fact.STORAGE_TWINS,)

    def apply(self, module, options: ResultStorageOptions) -> Report | None:
        if not options.cpus:
            return None
        return Report(storage_twins=add_storage_twins(module, options))
