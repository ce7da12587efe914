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

Each matmul a row of the table covers (``config_for``: kind, element
type, layout, M bucket, and M, N and K multiples of its tiles) gets that
row's config. The matmuls (matmul_ops.py) are ``linalg.matmul`` and
``linalg.batch_matmul``, with or without indexing maps that read B
transposed, and the ``linalg.generic`` contractions of the same maps with
a multiply-add body, of one element type or of f16 or bf16 operands
accumulating in f32 (torch's f16 and bf16 matmuls; their rows are keyed
"f16f32" and "bf16f32"), N, K and the batch static. A
dynamic M takes only a row measured for any M (``m_dynamic``). Any other
op, shape or element type keeps IREE's default, as does an op that
already has a ``compilation_info`` or ``lowering_config``.
``--no-cuda-matmul-configs`` turns the pass off;
``--cuda-matmul-table=FILE`` reads another table than the shipped one.
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir

from ...transforms.executable_per_target import DISPATCH_OPS, executables_of
from ...ir.ir_util import get_attr, top_level_ops, walk
from ...ir.module_facts import affinity_devices, declared_devices, module_default_device
from ...infra.pass_base import ANALYSES, CompileSettings, Fact, ModulePass
from ...ir import ir_adapter as irx
# The table and the ops, re-exported: the pass's callers and tests name them here.
from .matmul_ops import BATCH_MATMUL, MATMUL, MatmulShape, matmul_shape  # noqa: F401
from .matmul_table import (CONFIGS, FALLBACK_SPAN, TABLE_PATH, MatmulConfig, TableError,  # noqa: F401
                           config_for, load_table, table_at)

_ATTR = "compilation_info"
_SKIP_ATTRS = (_ATTR, "lowering_config")


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


def row_for(op, table=None) -> MatmulConfig | None:
    """The row of ``table`` (default: the shipped one) for ``op``, or None."""
    s = matmul_shape(op)
    return None if s is None else config_for(s.dtype, s.layout, s.m, s.n, s.k, table=table, op=s.op)


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
            row = row_for(op, table)
            if row is not None:
                op.attributes[_ATTR] = ir.Attribute.parse(row.attribute_text())
                done.append((exe.attributes["sym_name"].value, op.name))
    return done


@dataclasses.dataclass(frozen=True)
class CudaMatmulConfigsOptions:
    """``enabled``: whether to set configs (``--no-cuda-matmul-configs``
    turns it off; CompileSettings.cuda_matmul_configs). ``table``: the
    table's path (``--cuda-matmul-table``; None: the shipped one)."""

    enabled: bool = True
    table: str | None = None

    @classmethod
    def of(cls, settings: CompileSettings) -> "CudaMatmulConfigsOptions":
        return cls(settings.cuda_matmul_configs, settings.cuda_matmul_table)


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
            set_configs(module, table_at(options.table))
