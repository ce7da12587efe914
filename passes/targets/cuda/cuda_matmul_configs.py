"""cuda-matmul-configs: measured CUDA code-generation configs for matmuls.

IREE 3.13's default CUDA code for many matmul shapes is far from torch's
kernel: f32 at M = 16 (a linear layer at batch 16) runs one warp per
workgroup, 50x to 297x torch's kernel on an H100, and bf16 with M >= 16
does not compile at all ("failed to distribute"). A
``#iree_codegen.compilation_info`` on the op (a lowering config and a
translation info) makes IREE use other tiles, shared memory and tensor
cores: f32 at M = 16 comes to 1x to 4x torch. iree-compile 3.13 ignores
``--iree-codegen-tuning-spec-path``, so the attribute on the op is the one
way stock 3.13 takes such a config (docs/DESIGN.md, "CUDA matmul
configs"). The configs come from matmul_table.json, which ``python -m bench
tune`` measures and writes (docs/PERFORMANCE.md, "Kernels for every
shape").

The attribute is CUDA code generation's alone: IREE's CPU code generation
fails on it, and its tiles mean nothing to Vulkan's. So it is set only
inside executables that every dispatch runs on a cuda device; this pass
runs after executable-per-target,
which gives an executable dispatched on several targets one copy per
target. An executable also dispatched on a CPU, a Vulkan device or on an
affinity naming no single device is left as it is.

Each matmul with static shapes whose element type, layout and sizes a
row of the table covers (``config_for``) gets that row's config: ``linalg.matmul`` (with or
without transposing indexing maps) and the ``linalg.generic`` contraction
torch.nn.Linear exports become ((m, k) x (k, n) or (n, k) -> (m, n), a
multiply and an add). Any other op, shape or element type keeps IREE's
default, as does an op that already has a ``compilation_info`` or
``lowering_config``. ``--no-cuda-matmul-configs`` turns the pass off.
"""

from __future__ import annotations

import dataclasses
import json
import os

from iree.compiler import ir

from ...transforms.executable_per_target import DISPATCH_OPS, executables_of
from ...ir.ir_util import get_attr, top_level_ops, walk
from ...ir.module_facts import affinity_devices, declared_devices, module_default_device
from ...infra.pass_base import ANALYSES, CompileSettings, Fact, ModulePass
from ...ir import ir_adapter as irx

_ATTR = "compilation_info"
_SKIP_ATTRS = (_ATTR, "lowering_config")
_PIPELINE = "#iree_gpu.pipeline<TileAndFuse>"


TABLE_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "matmul_table.json")


@dataclasses.dataclass(frozen=True)
class MatmulConfig:
    """One row of the table: the matmuls it covers (element type; layout,
    "nn" for a K x N weight and "nt" for N x K; M within [m_min, m_max];
    M, N and K multiples of the config's tiles) and the
    ``#iree_codegen.compilation_info`` it sets, as bench/tune.py measured
    it. ``measured``: per tuned shape, its kernel time beside IREE's
    default's and torch's in the same run, and the card."""

    dtype: str
    layout: str
    m_min: int
    m_max: int
    m_multiple: int
    n_multiple: int
    k_multiple: int
    candidate: str
    attribute: str | None  # None: the tuner measured the bucket and kept IREE's default
    measured: dict = dataclasses.field(default_factory=dict, compare=False, hash=False)

    def covers(self, dtype: str, layout: str, m: int, n: int, k: int) -> bool:
        return (dtype == self.dtype and layout == self.layout and self.m_min <= m <= self.m_max
                and m % self.m_multiple == 0 and n % self.n_multiple == 0 and k % self.k_multiple == 0)

    def attribute_text(self) -> str:
        """The ``#iree_codegen.compilation_info`` this row sets."""
        return self.attribute


def load_table(path: str = TABLE_PATH) -> tuple[MatmulConfig, ...]:
    """The rows of the shipped table (passes/targets/cuda/matmul_table.json,
    written by ``python -m bench tune pick``)."""
    with open(path) as f:
        data = json.load(f)
    if data.get("format") != 1:
        raise ValueError(f"{path}: format {data.get('format')!r}, expected 1")
    return tuple(MatmulConfig(**row) for row in data["rows"])


CONFIGS = load_table()


# How far below M a bucket's row may come from where the row of M's own
# bucket does not tile M (a smaller M's config, unmeasured at this M).
FALLBACK_SPAN = 4


def config_for(dtype: str, layout: str, m: int, n: int, k: int, table=None) -> MatmulConfig | None:
    """The row of ``table`` (default: the shipped one) for the matmul: the
    row whose M bucket holds ``m``, if its tiles divide the shape; else the
    row of the nearest bucket below, within a factor FALLBACK_SPAN of
    ``m``, whose tiles do (a smaller M's tiles still tile this M exactly:
    M = 12 takes M = 4's config, where M = 16's tiles do not divide it);
    None where no row fits, or where the row of M's bucket keeps IREE's
    default (the tuner measured it and nothing beat the default)."""
    rows = [c for c in (CONFIGS if table is None else table) if c.dtype == dtype and c.layout == layout
            and c.m_min <= m and (m <= c.m_max or c.m_max * FALLBACK_SPAN >= m)]
    own = next((c for c in rows if c.m_min <= m <= c.m_max), None)
    if own is not None and own.attribute is None:
        return None  # measured: nothing beat IREE's default here
    rows.sort(key=lambda c: (c is not own, -c.m_max))
    return next((c for c in rows if c.attribute is not None and m % c.m_multiple == 0 and n % c.n_multiple == 0
                 and k % c.k_multiple == 0), None)


# -- which ops are matmuls ----------------------------------------------------------

# The element types a row can name, by their bindings' type class.
_ELEMENT_TYPES = ((ir.F32Type, "f32"), (ir.F16Type, "f16"), (ir.BF16Type, "bf16"))


def _element_name(t: ir.Type) -> str | None:
    return next((name for cls, name in _ELEMENT_TYPES if t.typeid == cls.static_typeid), None)


def _maps(op) -> list[str] | None:
    attr = get_attr(op, "indexing_maps")
    if attr is None:
        return None
    return [str(ir.AffineMapAttr(a).value) for a in ir.ArrayAttr(attr)]


# The contraction's operand maps, by layout: B as (k, n) or as (n, k).
_NN = ["(d0, d1, d2) -> (d0, d2)", "(d0, d1, d2) -> (d2, d1)", "(d0, d1, d2) -> (d0, d1)"]
_NT = ["(d0, d1, d2) -> (d0, d2)", "(d0, d1, d2) -> (d1, d2)", "(d0, d1, d2) -> (d0, d1)"]


def _is_mul_add_body(op) -> bool:
    """The generic's body is ``out + a * b`` in floats, and nothing else."""
    block = op.regions[0].blocks[0]
    names = [o.name for o in block.operations]
    if names != [irx.ARITH_MULF, irx.ARITH_ADDF, irx.LINALG_YIELD]:
        return False
    mul, add = block.operations[0], block.operations[1]
    a, b, out = block.arguments
    return (_same(mul.operands, [a, b]) and _same(add.operands, [out, mul.results[0]])
            and block.operations[2].operands[0] == add.results[0])


def _same(operands, values) -> bool:
    """``operands`` are ``values`` in either order."""
    ops = list(operands)
    return len(ops) == 2 and (ops == values or ops == values[::-1])


def _layout(op) -> str | None:
    """"nn" or "nt" for a matmul this pass knows, else None."""
    if op.name not in (irx.LINALG_MATMUL, irx.LINALG_GENERIC) or len(op.results) != 1:
        return None
    maps = _maps(op)
    if op.name == irx.LINALG_MATMUL:
        if maps is None:
            return "nn"
        return "nn" if maps == _NN else "nt" if maps == _NT else None
    iterators = irx.iterator_types(op)
    if len(op.operands) != 3 or iterators != ["parallel", "parallel", "reduction"] or not _is_mul_add_body(op):
        return None
    return "nn" if maps == _NN else "nt" if maps == _NT else None


def matmul_shape(op) -> tuple[str, str, int, int, int] | None:
    """(element type, layout, M, N, K) of a static matmul this pass knows
    whose operands and result share one element type, else None."""
    layout = _layout(op)
    if layout is None:
        return None
    types = [v.type for v in op.operands if isinstance(v.type, ir.RankedTensorType)]
    if len(types) != 3 or not all(t.has_static_shape for t in types):
        return None
    elements = {_element_name(t.element_type) for t in types}
    if len(elements) != 1 or None in elements:
        return None
    (m, k), b = types[0].shape, types[1].shape
    n = b[1] if layout == "nn" else b[0]
    if list(types[2].shape) != [m, n] or (b[0] if layout == "nn" else b[1]) != k:
        return None
    return next(iter(elements)), layout, m, n, k


# -- where they run ----------------------------------------------------------------------


def cuda_only_executables(module) -> set[str]:
    """The executables that every dispatch runs on one declared cuda
    device (an affinity naming several devices, or none where the module
    has no default, counts as not cuda)."""
    drivers = {name: d.kind for name, d in declared_devices(module).items()}
    default = module_default_device(module)
    on: dict[str, set] = {}
    for op in walk(module):
        if op.name not in DISPATCH_OPS or "entry_points" not in op.attributes:
            continue
        names = affinity_devices(get_attr(op, "affinity")) or ([default] if default else [])
        driver = drivers.get(names[0]) if len(names) == 1 else None
        for exe in executables_of(op):
            on.setdefault(exe, set()).add(driver)
    return {exe for exe, found in on.items() if found == {"cuda"}}


def set_configs(module, table=None) -> list[tuple[str, str]]:
    """Sets each covered matmul's config in the cuda-only executables;
    returns (executable, op name) for each op set."""
    cuda = cuda_only_executables(module)
    done = []
    for exe in top_level_ops(module):
        if exe.name != irx.STREAM_EXECUTABLE or exe.attributes["sym_name"].value not in cuda:
            continue
        for op in walk(exe):
            if any(a in op.attributes for a in _SKIP_ATTRS):
                continue
            shape = matmul_shape(op)
            row = config_for(*shape, table=table) if shape else None
            if row is not None:
                op.attributes[_ATTR] = ir.Attribute.parse(row.attribute_text())
                done.append((exe.attributes["sym_name"].value, op.name))
    return done


@dataclasses.dataclass(frozen=True)
class CudaMatmulConfigsOptions:
    """``enabled``: whether to set configs (``--no-cuda-matmul-configs``
    turns it off; CompileSettings.cuda_matmul_configs)."""

    enabled: bool = True

    @classmethod
    def of(cls, settings: CompileSettings) -> "CudaMatmulConfigsOptions":
        return cls(settings.cuda_matmul_configs)


class CudaMatmulConfigs(ModulePass):
    """Sets measured CUDA configs on matmuls that only a cuda device runs."""

    name = "cuda-matmul-configs"
    level = "stream"
    summary = "set measured CUDA codegen configs on matmuls in executables only cuda devices run"
    Options = CudaMatmulConfigsOptions

    # Once each executable runs on devices of one target, a config meant for
    # CUDA code cannot reach an executable a CPU also runs. It sets
    # attributes inside executables only: where work runs is unchanged.
    needs = (Fact.PLACED_OPS, Fact.EXECUTABLES_PER_TARGET)
    preserves = ANALYSES

    def apply(self, module, options: CudaMatmulConfigsOptions) -> None:
        if options.enabled:
            set_configs(module)
