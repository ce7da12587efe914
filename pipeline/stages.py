"""The mdc compilation pipeline as a sequence of named stages.

    source --parse--> input
           --IREE to the flow phase--> flow
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
    Stage("flow", lambda c, m, ctx: c.run_phases(m, "start", "flow")),
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


def run(compiler: Compiler, input_path: str, ctx: PipelineContext, stop_after: str | None):
    """Runs stages up to ``stop_after`` (inclusive) and returns the module,
    or, with ``stop_after=None``, runs to the end and returns vmfb bytes."""
    module = compiler.parse_file(input_path)
    if ctx.dump:
        ctx.dump("input", module)
    for stage in STAGES:
        if stop_after is None and stage.name == "vm":
            break
        module = stage.run(compiler, module, ctx)
        if ctx.dump:
            ctx.dump(stage.name, module)
        if stage.name == stop_after:
            return module
    return compiler.emit_vmfb(module, "hal")
