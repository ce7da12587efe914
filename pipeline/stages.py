"""The mdc compilation pipeline as a sequence of named stages.

    source --parse-->
           --IREE to the input phase, mdc's input-level passes--> input
           --IREE from input to the flow phase--> flow
           --verify-initialization-order, stream tensor pipeline--> stream-tensor
           --mdc's stream-level passes (registry order), the manifest--> mdc
           --stream async, cmd, optimization, cleanup, symbol-dce,
             mdc's scheduled-level passes--> stream
           --IREE from stream to hal, mdc's hal-level passes--> hal
           --IREE from hal to the end--> vm / vmfb bytes

Each stage takes the module the previous one produced; ``--compile-to``
stops after any of them. The mdc stage ends by writing the device manifest
into the module (unless the context asks for none), and a vmfb written with
a manifest is sealed (pipeline/manifest.py). Running IREE to its input phase
and on from there gives the same module as one run to flow. The stream-tensor and stream
stages together are exactly what IREE's
``iree-stream-transformation-pipeline`` runs at the stream phase, so with
no pass changing the IR the vmfb is byte-identical to ``iree-compile``'s.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Callable

from iree.compiler import ir

from mdc.passes.infra import registry
from mdc.passes.infra.diagnostics import MdcError
from mdc.passes.analysis.crossings import check_packed_crossings
from mdc.passes.ir.module_facts import device_targets, module_default_device, mutable_globals, state_by_function
from mdc.passes.analysis.sizes import source_types
from mdc.passes.analysis.tied_dims import tied_dims

from . import manifest, options
from .ireec import Compiler
from .module_record import ModuleRecord

STREAM_TENSOR_PIPELINE = ",".join(
    [
        "iree-util-verify-initialization-order",
        "iree-stream-tensor-transformation-pipeline",
    ]
)
STREAM_REST_PIPELINE = ",".join(
    [
        "iree-stream-async-transformation-pipeline",
        "iree-stream-cmd-transformation-pipeline",
        "iree-stream-optimization-pipeline",
        "iree-stream-cleanup-pipeline",
        "symbol-dce",
    ]
)


@dataclasses.dataclass
class Stage:
    name: str
    run: Callable  # (compiler, module, context) -> module


def _python_passes(level: str):
    def run(compiler: Compiler, module, ctx):
        with compiler.context, module.location:
            if level == "stream" and ctx.keep_devices:
                remove_device_keeper(module)
            if level == "stream":
                ctx.record.default_device = module_default_device(module)
            if level == "input":  # the program's own state, before mdc adds any
                ctx.record.program_state = mutable_globals(module)
                ctx.record.state_by_function = state_by_function(module)
                if ctx.manifest_devices is not None:
                    ctx.record.tied_dims = tied_dims(module)
            analyses = registry.run_passes(registry.passes_at(level), module, ctx.settings, ctx.report)
            if level == "input":  # the program's own tensor types, for reports
                ctx.record.source_types = source_types(module)
                keep_twin_host(compiler, module, ctx)
            if level == "stream":
                check_packed_crossings(module, ctx.report.crossings, device_targets(module))
            if level == "stream" and ctx.manifest_devices is not None:
                write_manifest(module, ctx, analyses.memory_model(level))
            module.verify()
        return module

    return run


def _python_passes_checked(level: str):
    run_passes = _python_passes(level)

    def run(compiler, module, ctx):
        try:
            return run_passes(compiler, module, ctx)
        except MdcError:
            raise
        except ir.MLIRError as e:  # the verifier rejects what the passes built
            raise MdcError(f"mdc's {level}-level passes produced invalid IR: {e}") from e
        # Anything else is a bug in a pass: the tool reports it as an
        # internal error (a RecursionError once read as "invalid IR").

    return run


def write_manifest(module, ctx: "PipelineContext", model) -> None:
    """The manifest step of the mdc stage: after mdc's stream-level passes,
    every public function gets the device manifest (the devices and IREE's
    default among them, what the memory model stages, the pinned arguments, host twins and result-storage
    twins the passes made, the signatures of functions IREE wrote no
    declaration for, where results declared on no device live, the
    program's own mutable globals, and the argument dimensions each public
    function requires equal). ``model``: the memory model of the module's
    devices (the passes' own, pass_manager.py)."""
    from mdc.passes.analysis.abi import pinned_arguments_of
    from mdc.passes.transforms.host_entry_points import HostEntryPointOptions
    from mdc.passes.analysis.stub_signatures import pin_wrapper_arguments, stub_signatures, undeclared_result_devices

    settings, record = ctx.settings, ctx.record
    functions = stub_signatures(module)
    pin_wrapper_arguments(module)
    manifest.attach(module, manifest.manifest_json(
        ctx.manifest_devices, model, pinned_arguments_of(module),
        dict(ctx.report.host_twins), HostEntryPointOptions.of(settings).host, functions,
        ctx.report.storage_twins, record.program_state, record.state_by_function,
        record.tied_dims, default=record.default_device, no_host_entry_points=not settings.host_entry_points,
        result_devices=undeclared_result_devices(module),
        argument_bounds=ctx.report.argument_bounds), functions)


def _check_default_device(module, ctx: "PipelineContext"):
    """IREE's flow phase sets the module's default device; mdc's
    input-level passes and the host twins assumed
    module_facts.iree_default_device's, so a difference (an IREE whose rule
    changed) stops the compile rather than yield a module whose caller
    places values elsewhere than it reads them."""
    iree, ours = module_default_device(module), ctx.settings.default
    if iree is not None and ours is not None and iree != ours:
        raise MdcError(f"IREE made '{iree}' the default device where mdc expected '{ours}' "
                       f"(its rule: --iree-hal-default-device, else the name that sorts first); "
                       f"give --iree-hal-default-device={iree} or ={ours}")
    return module


STAGES: list[Stage] = [
    Stage("input", lambda c, m, ctx: _python_passes_checked("input")(c, c.run_phases(m, "start", "input"), ctx)),
    Stage("flow", lambda c, m, ctx: _check_default_device(c.run_phases(m, "input", "flow"), ctx)),
    Stage("stream-tensor", lambda c, m, ctx: c.run_passes(m, STREAM_TENSOR_PIPELINE)),
    Stage("mdc", _python_passes_checked("stream")),
    Stage("stream", lambda c, m, ctx: _python_passes_checked("scheduled")(c, c.run_passes(m, STREAM_REST_PIPELINE),
                                                                         ctx)),
    Stage(
        "hal",
        lambda c, m, ctx: _python_passes_checked("hal")(c, c.run_phases(m, "stream", "hal"), ctx),
    ),
    Stage("vm", lambda c, m, ctx: c.run_phases(m, "hal", "vm")),
]

STAGE_NAMES = [s.name for s in STAGES]
if STAGE_NAMES != options.STAGE_NAMES:  # the command line offers options.STAGE_NAMES
    raise ImportError(f"pipeline stages {STAGE_NAMES} differ from options.STAGE_NAMES {options.STAGE_NAMES}")


@dataclasses.dataclass
class PipelineContext:
    settings: registry.CompileSettings
    # What the passes report (the placement, the crossings, the twins);
    # only passes write it.
    report: registry.Report = dataclasses.field(default_factory=registry.Report)
    # What the stages read from the module beside the passes (the
    # program's own state and types, IREE's default device).
    record: ModuleRecord = dataclasses.field(default_factory=ModuleRecord)
    # The devices the manifest lists (contract Devices, in --device
    # order); None: write no manifest and no seal.
    manifest_devices: list | None = None
    dump: Callable | None = None  # (stage_name, module) -> None
    # Devices the program never names that must still reach mdc's passes
    # (a local device to stage through between GPUs of different drivers).
    keep_devices: list[str] = dataclasses.field(default_factory=list)
    # When a list, run() appends (step, seconds) for each stage it runs
    # (driver.CompileResult.timings, mdc-compile --timings).
    timings: list | None = None


def _timed(ctx: PipelineContext, step: str, body: Callable):
    if ctx.timings is None:
        return body()
    start = time.perf_counter()
    try:
        return body()
    finally:
        ctx.timings.append((step, time.perf_counter() - start))


# IREE drops a --iree-hal-target-device the program never names (its global
# is unused, so symbol DCE takes it), and with it a local device mdc is to
# stage through, or the host a stream-level host twin takes its values on
# (keep_twin_host). A public function that takes and returns a value on each
# such device keeps their globals alive through IREE's phases up to mdc's
# stream-level passes, which delete it before they run; IREE's symbol-dce
# after them then drops whichever device no staging code uses.
DEVICE_KEEPER = "__mdc_keep_devices"


def add_device_keeper(compiler: Compiler, module, names: list[str], func: str = "func.func") -> None:
    """``func``: the keeper's op, ``func.func`` before IREE's input phase,
    ``util.func`` after it (as the program's own functions are then)."""
    # A transfer onto each device: IREE folds a value merely passed through
    # (and with it the last use of the device), not a move between devices.
    moves = "".join(
        f"  %v{i} = flow.tensor.transfer %x : tensor<1xi8> to #hal.device.promise<@{n}>\n"
        for i, n in enumerate(names)
    )
    values = ", ".join(f"%v{i}" for i in range(len(names)))
    # Every value declared on the devices kept (local ones), not left to
    # the default device, which may be a GPU: no host twin is made for it.
    declared = ", ".join(f"tensor<1xi8> {{iree.abi.affinity = #hal.device.promise<@{n}>}}" for n in names)
    types = ", ".join("tensor<1xi8>" for _ in names)
    ret = "return" if func == "func.func" else "util.return"
    text = (f"{func} public @{DEVICE_KEEPER}(%x: tensor<1xi8> {{iree.abi.affinity = "
            f"#hal.device.promise<@{names[0]}>}}) -> ({declared}) {{\n"
            f"{moves}  {ret} {values} : {types}\n}}")
    with compiler.context, module.location:
        keeper = ir.Operation.parse(text)
        ir.InsertionPoint(module.regions[0].blocks[0]).insert(keeper)


def twin_host_to_keep(module, settings) -> str | None:
    """The host of the host twins (host_entry_points.options_for: the
    first local --device), where stub-host-entry-points may yet twin a
    function on it and IREE would drop it first: the module (after mdc's
    input-level passes) has public functions in the buffer-view ABI, which
    host-entry-points leaves to that stream-level pass, and names the host
    nowhere, and the host is not the default device (whose global the
    module's ``stream.affinity.default`` keeps). So an export that names no
    device, compiled with the host sorting after a device it stages to, is
    all on that device and still gets ``@main$host``, as a tensor program's
    twin keeps its host by naming it. None otherwise."""
    from mdc.passes.analysis.stub_signatures import abi_functions
    from mdc.passes.ir.module_facts import referenced_devices
    from mdc.passes.transforms.host_entry_points import HostEntryPointOptions

    host = HostEntryPointOptions.of(settings).host
    if host is None or host == settings.default or not abi_functions(module):
        return None
    return None if host in referenced_devices(module) else host


def keep_twin_host(compiler: Compiler, module, ctx: "PipelineContext") -> None:
    """Keeps twin_host_to_keep's device alive up to mdc's stream-level
    passes, with the device keeper (a util.func: the module is past IREE's
    input phase)."""
    host = twin_host_to_keep(module, ctx.settings)
    # A keeper there already keeps the staging hop (options.staging_hops):
    # the first local device, where the program names none, so this host.
    if host is not None and not ctx.keep_devices:
        add_device_keeper(compiler, module, [host], func="util.func")
        ctx.keep_devices = [host]


def remove_device_keeper(module) -> None:
    for op in list(module.regions[0].blocks[0].operations):
        op = op.operation
        if "sym_name" in op.attributes and op.attributes["sym_name"].value in (DEVICE_KEEPER, f"_{DEVICE_KEEPER}"):
            op.erase()


def run(compiler: Compiler, module, ctx: PipelineContext, stop_after: str | None):
    """Runs stages on ``module`` (the program ``compiler`` parsed; the
    stages change it) up to ``stop_after`` (inclusive) and returns the
    module, or, with ``stop_after=None``, runs to the end and returns vmfb
    bytes (sealed when the module has a manifest)."""
    if ctx.dump:
        ctx.dump("source", module)
    if ctx.keep_devices:
        add_device_keeper(compiler, module, ctx.keep_devices)
    for stage in STAGES:
        if stop_after is None and stage.name == "vm":
            break
        module = _timed(ctx, stage.name, lambda: stage.run(compiler, module, ctx))
        if ctx.dump:
            ctx.dump(stage.name, module)
        if stage.name == stop_after:
            return module
    vmfb = _timed(ctx, "vm (to the vmfb)", lambda: compiler.emit_vmfb(module, "hal"))
    return vmfb if ctx.manifest_devices is None else _timed(ctx, "seal", lambda: manifest.seal(vmfb))
