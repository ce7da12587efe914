"""warn-cuda-maxsi-reduction: warns of a reduction IREE's CUDA code gets wrong.

IREE 3.13's CUDA code generation miscompiles a ``maxsi`` reduction of i32
initialised with INT_MIN (-2147483648) that reduces a dynamically shaped
input (a ``tensor<4x?x?xi32>`` reduced over its middle or its last
dimension): on an H200 it gives 0 for every output element whose maximum
is negative; the same reduction of a static ``tensor<4x3x3xi32>`` is right
(gpu_kit.py's stock canary, measured on the H200 on 2026-12-04). Stock iree-compile with every device the
GPU gives the same wrong answer (gpu_random, seed 4122026 program 43), so
mdc's crossings are not the cause, and no mdc rewrite is known to steer
IREE's codegen away from it. This pass tells the user instead: one warning
per such reduction in an executable that a dispatch on a cuda device runs,
at the reduction's source location. Only what was measured is claimed:
``minsi`` with INT_MAX, other widths and static shapes are not reported.

It is an analysis of stream-tensor IR; it never changes the IR. What it
finds goes into the Report's warnings, which mdc-compile and mdc-opt print.
"""

from __future__ import annotations

from iree.compiler import ir

from ...ir import ir_adapter as irx
from ...infra.diagnostics import format_location
from ...transforms.executable_per_target import DISPATCH_OPS, executables_of
from ...ir.ir_util import top_level_ops, walk
from ...ir.module_facts import declared_devices, module_default_device
from ...infra.outputs import Report
from ...infra.pass_base import ANALYSES, Fact, ModulePass, NoOptions

INT32_MIN = -(2 ** 31)
MESSAGE = ("linalg.generic on cuda device '{device}': an i32 maxsi reduction from INT_MIN of a dynamic "
           "shape, which IREE 3.13's CUDA code gets wrong (0 where the maximum is negative; docs/DESIGN.md "
           "section 8)")


def cuda_executables(module) -> dict[str, str]:
    """The executables dispatched on a cuda device: {executable: the first
    such device, in program order}."""
    drivers = {name: d.kind for name, d in declared_devices(module).items()}
    default = module_default_device(module)
    found: dict[str, str] = {}
    for op in walk(module):
        if op.name not in DISPATCH_OPS or "entry_points" not in op.attributes:
            continue
        device = irx.affinity_of(op).single or default
        if drivers.get(device) == "cuda":
            for exe in executables_of(op):
                found.setdefault(exe, device)
    return found


def _defining_op(value: ir.Value):
    return None if isinstance(value, ir.BlockArgument) else value.owner


def _is_int32_min_fill(value: ir.Value) -> bool:
    """``value`` is a linalg.fill of the constant INT32_MIN (an i32)."""
    fill = _defining_op(value)
    if fill is None or fill.name != irx.LINALG_FILL:
        return False
    constant = _defining_op(fill.operands[0])
    return (constant is not None and constant.name == irx.ARITH_CONSTANT and irx.is_type(fill.operands[0].type, "i32")
            and ir.IntegerAttr(constant.attributes["value"]).value == INT32_MIN)


def _inputs_and_outputs(generic) -> tuple[list, list]:
    """A linalg.generic's ins and outs (on tensors: one out per result)."""
    operands = list(generic.operands)
    n_inputs = len(operands) - len(generic.results)
    return operands[:n_inputs], operands[n_inputs:]


def _maxsi_outputs(generic) -> list[int]:
    """The output numbers whose yielded value is ``arith.maxsi`` of that
    output's accumulator (the block argument it comes in as)."""
    inputs, _ = _inputs_and_outputs(generic)
    block = generic.regions[0].blocks[0]
    yielded = block.operations[len(block.operations) - 1].operands
    found = []
    for k, value in enumerate(yielded):
        op = _defining_op(value)
        accumulator = block.arguments[len(inputs) + k]
        if op is not None and op.name == irx.ARITH_MAXSI and accumulator in list(op.operands):
            found.append(k)
    return found


def _reduces_dynamic_input(generic) -> bool:
    """Some dynamically shaped input has a reduction loop at one of its
    dimensions."""
    reductions = {i for i, it in enumerate(ir.ArrayAttr(generic.attributes["iterator_types"]))
                  if "reduction" in str(it)}
    maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(generic.attributes["indexing_maps"])]
    for value, amap in zip(_inputs_and_outputs(generic)[0], maps):
        if not isinstance(value.type, ir.RankedTensorType) or value.type.has_static_shape:
            continue
        dims = [r.position if isinstance(r, ir.AffineDimExpr) else None for r in amap.results]
        if any(d in reductions for d in dims):
            return True
    return False


def is_miscompiled_maxsi(op) -> bool:
    """``op`` is a linalg.generic of the kind IREE's CUDA code gets wrong."""
    if op.name != irx.LINALG_GENERIC:
        return False
    _, outputs = _inputs_and_outputs(op)
    return (any(_is_int32_min_fill(outputs[k]) for k in _maxsi_outputs(op))
            and _reduces_dynamic_input(op))


def maxsi_warnings(module) -> list[tuple[str | None, str]]:
    """(``file:line:col`` or None, message) for each such reduction, once
    per source location (a copy of an executable, a function's twins and
    the functions sharing an executable name the same one)."""
    on_cuda = cuda_executables(module)
    found: dict = {}
    for exe in top_level_ops(module):
        device = on_cuda.get(exe.attributes["sym_name"].value) if exe.name == irx.STREAM_EXECUTABLE else None
        if device is None:
            continue
        for op in walk(exe):
            if is_miscompiled_maxsi(op):
                where = format_location(op.location)
                found.setdefault(where or str(op.location), (where, MESSAGE.format(device=device)))
    return list(found.values())


class WarnCudaMaxsiReduction(ModulePass):
    """Warns of i32 maxsi reductions that IREE's CUDA code gets wrong."""

    name = "warn-cuda-maxsi-reduction"
    level = "stream"
    summary = "warn of i32 maxsi reductions of a dynamic shape on a cuda device"

    # It reads which executable each cuda dispatch runs; it changes nothing.
    needs = (Fact.PLACED_OPS, Fact.EXECUTABLES_PER_TARGET)
    preserves = ANALYSES

    def apply(self, module, options: NoOptions) -> Report:
        return Report(warnings=maxsi_warnings(module))
