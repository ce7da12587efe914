"""stub-host-entry-points: host twins of public functions that already speak the buffer-view ABI.

host-entry-points (host_entry_points.py) gives a public function with a
value on a device the CPU cannot use a twin ``@F$host`` that takes and
returns every tensor on the host device. It works on tensor functions
before IREE's ABI, and a program whose input is already in the buffer-view
ABI (IREE's torch input conversion of an iree-turbine export: ``@main`` and
``@main$async``, stub_signatures.py) has none there. Where such a
function's results end is only known after IREE's affinity analysis, so
this pass builds their twins at the stream level, before transfer-insertion:

    @main$host(%bv...) -> %bv...
      each argument declared on D (not the host): imported on the host,
      moved to D (stream.async.transfer), exported on D
      %r = util.call @main(...)
      each result that ends on D: imported on D, moved to the host, exported there

Those moves are crossings like any other: transfer-insertion stages them.

A function IREE declared gets such a twin too where host-entry-points gave
it none (no value declared on a far device) but a result declared on no
device ends on one: a move to the GPU, or an op there, decides that only
in IREE's affinity analysis, and a result IREE left unplaced ends where
place-unplaced-ops puts it. The pipeline runs that pass first, so this one
reads the placed IR, as the manifest's result_devices does: a function the
manifest places a value of on a far device gets a twin (needs_twin). Its
arguments are taken where the declaration places them; the twin of a
coarse-fences one is sync and waits for it, as IREE's own sync wrappers do.

Of an undeclared program, only sync functions get twins; a coarse-fences
function that a sync wrapper calls with its own arguments shares the
wrapper's twin (a runner that calls the twin waits for it, which is all the
fences are for).
"""

from __future__ import annotations

from iree.compiler import ir

from mdc.contract.manifest import MODEL_COARSE_FENCES, MODEL_SYNC

from ..infra.diagnostics import MdcError
from ..ir import ir_adapter as irx
from .host_entry_points import TWIN_SUFFIX, HostEntryPointOptions, twin_name
from ..ir.ir_adapter import SymbolNames
from ..infra.outputs import Report
from ..infra.pass_base import Fact, ModulePass
from .result_storage_twins import TWIN_SUFFIX as STORAGE_TWIN_SUFFIX
from ..analysis.stub_signatures import (BUFFER_VIEW, FENCE, StubSignature, StubValue, abi_functions, declared_stub_signatures,
                              stub_signatures)

def _dense(value: StubValue) -> ir.RankedTensorType | None:
    """``value``'s type where it is a dense tensor a twin can move (ranked,
    no encoding, integer, float or index elements), else None."""
    t = value.ir_type
    if not isinstance(t, ir.RankedTensorType) or t.encoding is not None:
        return None
    return t if isinstance(t.element_type, (ir.IntegerType, ir.FloatType, ir.IndexType)) else None


def _affinity(device: str) -> str:
    return f"#hal.device.affinity<@{device}>"


def _dims(view: str, value_type: ir.RankedTensorType, tag: str) -> tuple[list[str], list[str], list[str]]:
    """(lines, every dimension, the dynamic ones) of a ``value_type`` tensor
    held by buffer view ``view``."""
    lines, every, dynamic = [], [], []
    for k in range(value_type.rank):
        if value_type.is_dynamic_dim(k):
            lines.append(f"%{tag}_d{k} = hal.buffer_view.dim<{view} : {BUFFER_VIEW}>[{k}] : index")
            dynamic.append(f"%{tag}_d{k}")
            every.append(f"%{tag}_d{k}")
        else:
            lines.append(f"%{tag}_c{k} = arith.constant {value_type.get_dim_size(k)} : index")
            every.append(f"%{tag}_c{k}")
    return lines, every, dynamic


def _move(view: str, value: StubValue, src: str, dst: str, tag: str, label: str) -> tuple[list[str], str]:
    """Lines taking tensor ``view`` in on ``src`` and giving it out on
    ``dst``, and the view given out."""
    dense = _dense(value)
    lines, every, dynamic = _dims(view, dense, tag)
    element = str(dense.element_type)
    t = f"{value.type}{{{', '.join(dynamic)}}}" if dynamic else value.type
    size = f"%{tag}_size"
    lines += [
        f"%{tag}_element = hal.element_type<{element}> : i32",
        f"%{tag}_encoding = hal.encoding_type<dense_row_major> : i32",
        f'hal.buffer_view.assert<{view} : {BUFFER_VIEW}> message("{label}") shape([{", ".join(every)}]) '
        f"type(%{tag}_element) encoding(%{tag}_encoding)",
        f"{size} = stream.tensor.sizeof on({_affinity(src)}) {t} : index",
        f"%{tag}_in = stream.tensor.import on({_affinity(src)}) {view} : {BUFFER_VIEW} -> {t} "
        f"in !stream.resource<external>{{{size}}}",
        f"%{tag}_any = stream.async.cast on({_affinity(src)}) %{tag}_in : "
        f"!stream.resource<external>{{{size}}} -> !stream.resource<*>{{{size}}}",
        f"%{tag}_moved = stream.async.transfer %{tag}_any : !stream.resource<*>{{{size}}} "
        f"from({_affinity(src)}) -> to({_affinity(dst)}) !stream.resource<*>{{{size}}}",
        f"%{tag}_out = stream.async.cast on({_affinity(dst)}) %{tag}_moved : "
        f"!stream.resource<*>{{{size}}} -> !stream.resource<external>{{{size}}}",
        f"%{tag} = stream.tensor.export on({_affinity(dst)}) %{tag}_out : {t} in "
        f"!stream.resource<external>{{{size}}} -> {BUFFER_VIEW}",
    ]
    return lines, f"%{tag}"


def _moves(value: StubValue, host: str) -> bool:
    return value.device not in (None, host) and _dense(value) is not None


def _fenced_call(lhs: str, name: str, call_args: list[str], arg_types: list[str], result_types: list[str]) -> list[str]:
    """A call of coarse-fences ``@name`` that waits for it, as IREE's own
    sync wrappers do: no wait fence, a new signal fence awaited."""
    return [
        "%no_wait = util.null : !hal.fence",
        "%forever = arith.constant -1 : i32",
        "%first = arith.constant 0 : index",
        "%device = hal.devices.get %first : !hal.device",
        '%done = hal.fence.create device(%device : !hal.device) flags("None") : !hal.fence',
        f'{lhs}util.call @"{name}"({", ".join([*call_args, "%no_wait", "%done"])}) : '
        f'({", ".join([*arg_types, FENCE, FENCE])}) -> ({", ".join(result_types)})',
        '%waited = hal.fence.await until([%done]) timeout_millis(%forever) flags("None") : i32',
    ]


def twin_text(op: ir.Operation, sig: StubSignature, host: str) -> str:
    """``@F$host`` of stub ``op`` as stream-level MLIR text: sync, also for
    a coarse-fences ``op`` (the twin waits for it)."""
    ftype = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
    arg_types = [str(t) for t in ftype.inputs][:len(sig.arguments)]
    result_types = [str(t) for t in ftype.results]
    body, call_args = [], []
    for i, value in enumerate(sig.arguments):
        if _moves(value, host):
            lines, moved = _move(f"%arg{i}", value, host, value.device, f"in{i}", f"input{i}")
            body += lines
            call_args.append(moved)
        else:
            call_args.append(f"%arg{i}")
    n = len(result_types)
    lhs = "" if n == 0 else ("%r = " if n == 1 else f"%r:{n} = ")
    if sig.model == MODEL_COARSE_FENCES:
        body += _fenced_call(lhs, sig.name, call_args, arg_types, result_types)
    else:
        body.append(f'{lhs}util.call @"{sig.name}"({", ".join(call_args)}) : '
                    f'({", ".join(arg_types)}) -> ({", ".join(result_types)})')
    returned = []
    for j, value in enumerate(sig.results):
        view = "%r" if n == 1 else f"%r#{j}"
        if _moves(value, host):
            lines, view = _move(view, value, value.device, host, f"out{j}", f"output{j}")
            body += lines
        returned.append(view)
    body.append(f"{irx.UTIL_RETURN} {', '.join(returned)} : {', '.join(result_types)}" if returned else irx.UTIL_RETURN)
    params = ", ".join(f"%arg{i}: {t}" for i, t in enumerate(arg_types))
    # Every op of the twin is at the function's own location: its moves are
    # reported there.
    where = f" {op.location}" if str(op.location).startswith("loc(") else ""
    indented = "\n".join(f"  {line}{where}" for line in body)
    return (f'util.func public @"{twin_name(sig.name)}"({params}) -> ({", ".join(result_types)}) '
            f"attributes {{iree.abi.stub}} {{\n{indented}\n}}{where}")


def _parse_beside(text: str, op: ir.Operation) -> ir.Operation:
    """Parses the twin next to a declaration of the function it calls (the
    parser verifies the call) and takes it out of that scratch module."""
    ftype = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
    name = ir.StringAttr(op.attributes["sym_name"]).value
    declaration = (f'util.func private @"{name}"({", ".join(str(t) for t in ftype.inputs)}) -> '
                   f'({", ".join(str(t) for t in ftype.results)})')
    scratch = ir.Module.parse(f"{declaration}\n{text}")
    twin = list(scratch.body.operations)[1].operation
    twin.detach_from_parent()
    return twin


def needs_twin(sig: StubSignature, options: HostEntryPointOptions) -> bool:
    """A value lives on a device the host cannot reach, and every such value
    is a dense tensor the twin can move (else no twin: one that passed a
    value through would be wrong)."""
    far = [v for v in sig.arguments + sig.results if v.device in options.staged_from_host]
    return bool(far) and all(_dense(v) is not None for v in far)


def add_stub_twins(module, options: HostEntryPointOptions) -> list[tuple[str, str]]:
    """Adds the twins; returns (function, twin) pairs, a coarse-fences
    function paired with its wrapper's twin. A declared function whose
    twin host-entry-points added already, or that is a twin, gets none."""
    functions = abi_functions(module)
    declared = declared_stub_signatures(module)
    signatures = {**stub_signatures(module), **declared}
    taken = SymbolNames(module)
    added: list[tuple[str, str]] = []
    for name, sig in signatures.items():
        if name.endswith((TWIN_SUFFIX, STORAGE_TWIN_SUFFIX)) or not needs_twin(sig, options):
            continue
        if sig.model != MODEL_SYNC and name not in declared:
            continue  # a turbine export's coarse-fences function shares its wrapper's twin
        twin = twin_name(name)
        if twin in taken and name in declared:
            continue
        if twin in taken:
            raise MdcError(
                f"the program defines '@{twin}', the name of the host entry point mdc adds for '@{name}'",
                location=functions[name].location,
                notes=["rename the function, or compile with --no-host-entry-points"])
        with functions[name].location:
            op = _parse_beside(twin_text(functions[name], sig, options.host), functions[name])
        ir.InsertionPoint(module.regions[0].blocks[0]).insert(op)
        taken.add(twin)
        added.append((name, twin))
        if sig.calls is not None:
            added.append((sig.calls, twin))
    return added


class StubHostEntryPoints(ModulePass):
    name = "stub-host-entry-points"
    level = "stream"
    summary = ("adds @F$host to public buffer-view functions without a declaration (iree-turbine's @main), "
               "or whose undeclared results end on a far device")

    Options = HostEntryPointOptions

    # A result IREE left unplaced ends where place-unplaced-ops puts it:
    # the twins are decided on the placed IR the manifest's result_devices
    # is read from.
    needs = (Fact.PLACED_OPS,)
    provides = (Fact.STUB_TWINS,)

    def apply(self, module, options: HostEntryPointOptions) -> Report | None:
        if options.host is None:
            return None
        return Report(host_twins=add_stub_twins(module, options))
