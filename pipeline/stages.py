"""The mdc compilation pipeline as a sequence of named stages.

    source --parse--> input
           --mdc's input-level passes, IREE to the flow phase--> flow
           --verify-initialization-order, stream tensor pipeline--> stream-tensor
           --mdc's stream-level passes (registry order)--> mdc
           --stream async, cmd, optimization, cleanup, symbol-dce--> stream
           --IREE from stream to hal, mdc's hal-level passes--> hal
           --IREE from hal to the end--> vm / vmfb bytes

Each stage takes the module the previous one produced; ``--compile-to``
stops after any of them. Stage 3 and 5 together are exactly what IREE's
``iree-stream-transformation-pipeline`` runs at the stream phase, so with
no pass changing the IR the vmfb is byte-identical to ``iree-compile``'s.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

from iree.compiler import ir

from passes import registry
from passes.diagnostics import MdcError

from .ireec import Compiler

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
            for pass_cls in registry.passes_at(level):
                pass_cls().apply(module, ctx.pass_options)
            for hook in ctx.after_level.get(level, []):
                hook(module)
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


STAGES: list[Stage] = [
    Stage("flow", lambda c, m, ctx: c.run_phases(_python_passes_checked("input")(c, m, ctx), "start", "flow")),
    Stage("stream-tensor", lambda c, m, ctx: c.run_passes(m, STREAM_TENSOR_PIPELINE)),
    Stage("mdc", _python_passes_checked("stream")),
    Stage("stream", lambda c, m, ctx: c.run_passes(m, STREAM_REST_PIPELINE)),
    Stage(
        "hal",
        lambda c, m, ctx: _python_passes_checked("hal")(c, c.run_phases(m, "stream", "hal"), ctx),
    ),
    Stage("vm", lambda c, m, ctx: c.run_phases(m, "hal", "vm")),
]

STAGE_NAMES = [s.name for s in STAGES]


@dataclasses.dataclass
class PipelineContext:
    pass_options: registry.PassOptions
    # Extra callables run on the module right after a level's passes
    # (e.g. the manifest writer after the stream level).
    after_level: dict = dataclasses.field(default_factory=dict)
    dump: Callable | None = None  # (stage_name, module) -> None
    # Devices the program never names that must still reach mdc's passes
    # (a local device to stage through between GPUs of different drivers).
    keep_devices: list[str] = dataclasses.field(default_factory=list)


# IREE drops a --iree-hal-target-device the program never names (its global
# is unused, so symbol DCE takes it), and with it a local device mdc is to
# stage through. A public function that takes and returns a value on each
# such device keeps their globals alive through IREE's phases up to mdc's
# stream-level passes, which delete it before they run; IREE's symbol-dce
# after them then drops whichever device no staging code uses.
DEVICE_KEEPER = "__mdc_keep_devices"


def add_device_keeper(compiler: Compiler, module, names: list[str]) -> None:
    # A transfer onto each device: IREE folds a value merely passed through
    # (and with it the last use of the device), not a move between devices.
    moves = "".join(
        f"  %v{i} = flow.tensor.transfer %x : tensor<1xi8> to #hal.device.promise<@{n}>\n"
        for i, n in enumerate(names)
    )
    values = ", ".join(f"%v{i}" for i in range(len(names)))
    types = ", ".join("tensor<1xi8>" for _ in names)
    text = (f"func.func public @{DEVICE_KEEPER}(%x: tensor<1xi8>) -> ({types}) {{\n"
            f"{moves}  return {values} : {types}\n}}")
    with compiler.context, module.location:
        keeper = ir.Operation.parse(text)
        ir.InsertionPoint(module.regions[0].blocks[0]).insert(keeper)


def remove_device_keeper(module) -> None:
    for op in list(module.regions[0].blocks[0].operations):
        op = op.operation
        if "sym_name" in op.attributes and op.attributes["sym_name"].value in (DEVICE_KEEPER, f"_{DEVICE_KEEPER}"):
            op.erase()


def run(compiler: Compiler, input_path: str, ctx: PipelineContext, stop_after: str | None):
    """Runs stages up to ``stop_after`` (inclusive) and returns the module,
    or, with ``stop_after=None``, runs to the end and returns vmfb bytes."""
    module = compiler.parse_file(input_path)
    if ctx.dump:
        ctx.dump("input", module)
    if ctx.keep_devices:
        add_device_keeper(compiler, module, ctx.keep_devices)
    for stage in STAGES:
        if stop_after is None and stage.name == "vm":
            break
        module = stage.run(compiler, module, ctx)
        if ctx.dump:
            ctx.dump(stage.name, module)
        if stage.name == stop_after:
            return module
    return compiler.emit_vmfb(module, "hal")
