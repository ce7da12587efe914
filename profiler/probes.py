"""The probe programs mdc-profile runs and how each is compiled: plain
MLIR text for one device, one function per thing measured. Pure text and
numbers, no IREE import, so that they can be read and tested alone.

Every probe but ``tiny`` and ``chain`` is sized by a ``ProbeSizes``: small
enough on a CPU to keep ``--quick`` under ~20 s on a 2-core machine, large
enough on a GPU that the kernel, not the call, dominates.
"""

from __future__ import annotations

import dataclasses

# Device URI driver -> IREE device kind (as mdc-compile's --device=NAME=KIND[N] names it).
DRIVER_KINDS = {"local-task": "local", "local-sync": "local", "cuda": "cuda", "vulkan": "vulkan", "hip": "hip"}

# Flags iree-compile needs for one device of each kind: the host's own CPU,
# sm_80 for cuda (as bench/ builds its kits), IREE's default Vulkan target
# (as test/e2e builds for lavapipe), an MI300 for hip (IREE 3.13 names
# its flag --iree-rocm-target, as mdc-compile passes it).
COMPILE_FLAGS = {
    "local": ("--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
              "--iree-llvmcpu-target-cpu=host"),
    "cuda": ("--iree-hal-target-device=cuda", "--iree-cuda-target=sm_80"),
    "vulkan": ("--iree-hal-target-device=vulkan",),
    "hip": ("--iree-hal-target-device=hip", "--iree-rocm-target=gfx942"),
}

# The CPU that probes built on one machine for another (--build-probes)
# target: LLVM's generic x86-64 (SSE2 only), since the building machine's
# CPU need not be the measuring machine's. Their CPU numbers are those of
# generic code, slower than mdc-compile's default (host) code.
PREBUILT_TARGET_CPU = "generic"

# Dispatches in @chain, against @tiny's one: with 32, two H100s measured
# 0.5 and 5.4 us a dispatch on cuda, the difference of two call times
# within a call's jitter; 128 makes it four times the signal.
CHAIN_LENGTH = 128
# The matvec probe's layers: 16 weights of 1, 4 and 16 MiB (SMALL, MEDIUM,
# LARGE), 16 to 256 MiB in all, more than a GPU's L2 cache holds, each read
# once a call, as a model's layers are (one 256 MiB weight read by one
# dispatch measured 400 GB/s on an H100, where a stack of 16 MiB layers
# streams at ~1 TB/s).
MATVEC_LAYERS = 16


def compile_flags(kind: str, target_cpu: str = "host") -> tuple[str, ...]:
    """COMPILE_FLAGS[kind], with ``target_cpu`` for a local device's CPU."""
    cpu_flag = "--iree-llvmcpu-target-cpu="
    return tuple(cpu_flag + target_cpu if flag.startswith(cpu_flag) else flag for flag in COMPILE_FLAGS[kind])


def kind_of_uri(uri: str) -> str | None:
    """The IREE kind of a runtime device URI (``cuda://1`` -> ``cuda``), or
    None for a driver mdc-profile does not know."""
    return DRIVER_KINDS.get(uri.split(":", 1)[0].strip())


@dataclasses.dataclass(frozen=True)
class ProbeSizes:
    """``matmul``: N of the N x N x N matmuls; ``matvec``: K of the
    MATVEC_LAYERS 1 x K by K x K matmuls in a row, each with a weight of its
    own (memory bound, as a batch-1 layer stack is); ``elements``: f32 elements of the
    elementwise probe; ``rows``, ``columns``: the reduction's and the
    transpose's f32 matrix; ``table_rows``, ``gathered``: the gather's
    table (``columns`` wide) and the rows it reads; ``transfer``: bytes of
    the large crossing (the small one is 4 bytes)."""

    matmul: int
    matvec: int
    elements: int
    rows: int
    columns: int
    table_rows: int
    gathered: int
    transfer: int


SMALL = ProbeSizes(matmul=256, matvec=512, elements=1 << 21, rows=512, columns=1024,
                   table_rows=4096, gathered=1024, transfer=8 << 20)
MEDIUM = ProbeSizes(matmul=512, matvec=1024, elements=1 << 23, rows=2048, columns=2048,
                    table_rows=16384, gathered=4096, transfer=64 << 20)
LARGE = ProbeSizes(matmul=2048, matvec=2048, elements=1 << 26, rows=8192, columns=4096,
                   table_rows=16384, gathered=16384, transfer=256 << 20)


def sizes_for(kind: str, quick: bool) -> ProbeSizes:
    """A CPU-backed kind (local; vulkan, which is lavapipe where there is
    no GPU) gets SMALL quick and MEDIUM in full; cuda and hip one step up."""
    step = (0 if quick else 1) + (1 if kind in ("cuda", "hip") else 0)
    return (SMALL, MEDIUM, LARGE)[step]


@dataclasses.dataclass(frozen=True)
class Work:
    """What one call of a probe function does: arithmetic operations and
    bytes read plus written."""

    flops: int
    bytes: int


def work_of(sizes: ProbeSizes) -> dict[str, Work]:
    """Each sized probe function's work per call."""
    n, k, e = sizes.matmul, sizes.matvec, sizes.elements
    r, c, g = sizes.rows, sizes.columns, sizes.gathered
    return {
        "matmul_f32": Work(2 * n ** 3, 3 * n * n * 4),
        "matmul_f16": Work(2 * n ** 3, 3 * n * n * 2),
        "matvec_f32": Work(2 * k * k * MATVEC_LAYERS, (k * k + 2 * k) * 4 * MATVEC_LAYERS),
        "elementwise": Work(2 * e, 2 * e * 4),
        "reduction": Work(r * c, (r * c + r) * 4),
        "gather": Work(0, 2 * g * c * 4 + g * 8),
        "copy": Work(0, 2 * r * c * 4),
    }


# Kinds whose target cannot compile the f16 matmul (IREE's default Vulkan
# target has no 16-bit storage; IREE 3.13's ROCm backend fails to
# distribute an f16-accumulating matmul for gfx942): their f16 rate is
# their f32 rate.
NO_F16_MATMUL = ("vulkan", "hip")


def program(sizes: ProbeSizes, f16: bool = True) -> str:
    """The probe module: @identity (a call and no dispatch), @tiny (one
    dispatch), @chain (CHAIN_LENGTH dependent dispatches), and the sized functions of work_of
    (@matmul_f16 only with ``f16``)."""
    return "\n".join(["module {", _identity(), _tiny(), _chain(), _matmul("f32", sizes.matmul),
                      *([_matmul("f16", sizes.matmul)] if f16 else []), _matvec(sizes.matvec),
                      _elementwise(sizes.elements),
                      _reduction(sizes.rows, sizes.columns), _gather(sizes.table_rows, sizes.columns, sizes.gathered),
                      _copy(sizes.rows, sizes.columns), "}", ""])


def fixed_cost_functions() -> list[str]:
    """@identity, @tiny and @chain: what the fixed costs of a call and of a
    dispatch are measured with, for a module of other functions beside them
    (mdc-profile --program's)."""
    return [_identity(), _tiny(), _chain()]


def _identity() -> str:
    return """  func.func @identity(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }"""


def _tiny() -> str:
    return f"""  func.func @tiny(%x: {_STEP}, %w: {_STEP}) -> {_STEP} {{
{_STEP_FILL}
    %y = linalg.matmul ins(%x, %w : {_STEP}, {_STEP}) outs(%f : {_STEP}) -> {_STEP}
    return %y : {_STEP}
  }}"""


def _chain() -> str:
    # Each matmul reads the one before: IREE fuses no two of them, so the
    # chain is CHAIN_LENGTH dispatches in one command buffer, one submission
    # (a util.optimization_barrier between steps would instead split the
    # call into one submission and one wait a step, and time those).
    lines = [f"  func.func @chain(%x0: {_STEP}, %w: {_STEP}) -> {_STEP} {{", _STEP_FILL]
    for i in range(CHAIN_LENGTH):
        lines.append(f"    %x{i + 1} = linalg.matmul ins(%x{i}, %w : {_STEP}, {_STEP}) outs(%f : {_STEP}) -> {_STEP}")
    lines += [f"    return %x{CHAIN_LENGTH} : {_STEP}", "  }"]
    return "\n".join(lines)


# @tiny's and @chain's step: a 4 x 4 matmul, a dispatch with next to no work.
STEP_SHAPE = (4, 4)
_STEP = "tensor<4x4xf32>"
_STEP_FILL = f"""    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : {_STEP}
    %f = linalg.fill ins(%zero : f32) outs(%e : {_STEP}) -> {_STEP}"""


def _matmul(dtype: str, n: int) -> str:
    t = f"tensor<{n}x{n}x{dtype}>"
    return f"""  func.func @matmul_{dtype}(%a: {t}, %b: {t}) -> {t} {{
    %zero = arith.constant 0.0 : {dtype}
    %e = tensor.empty() : {t}
    %f = linalg.fill ins(%zero : {dtype}) outs(%e : {t}) -> {t}
    %r = linalg.matmul ins(%a, %b : {t}, {t}) outs(%f : {t}) -> {t}
    return %r : {t}
  }}"""


def _matvec(k: int) -> str:
    row, weight = f"tensor<1x{k}xf32>", f"tensor<{k}x{k}xf32>"
    weights = ", ".join(f"%w{i}: {weight}" for i in range(MATVEC_LAYERS))
    lines = [f"  func.func @matvec_f32(%x0: {row}, {weights}) -> {row} {{",
             "    %zero = arith.constant 0.0 : f32",
             f"    %e = tensor.empty() : {row}",
             f"    %f = linalg.fill ins(%zero : f32) outs(%e : {row}) -> {row}"]
    for i in range(MATVEC_LAYERS):
        lines.append(f"    %x{i + 1} = linalg.matmul ins(%x{i}, %w{i} : {row}, {weight}) outs(%f : {row}) -> {row}")
    lines += [f"    return %x{MATVEC_LAYERS} : {row}", "  }"]
    return "\n".join(lines)


def _elementwise(n: int) -> str:
    t = f"tensor<{n}xf32>"
    return f"""  func.func @elementwise(%x: {t}) -> {t} {{
    %e = tensor.empty() : {t}
    %r = linalg.generic {{indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                         iterator_types = ["parallel"]}} ins(%x : {t}) outs(%e : {t}) {{
    ^bb0(%a: f32, %o: f32):
      %two = arith.constant 2.0 : f32
      %m = arith.mulf %a, %two : f32
      %s = arith.addf %m, %two : f32
      linalg.yield %s : f32
    }} -> {t}
    return %r : {t}
  }}"""


def _reduction(rows: int, columns: int) -> str:
    return f"""  func.func @reduction(%x: tensor<{rows}x{columns}xf32>) -> tensor<{rows}xf32> {{
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<{rows}xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<{rows}xf32>) -> tensor<{rows}xf32>
    %r = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                         iterator_types = ["parallel", "reduction"]}}
        ins(%x : tensor<{rows}x{columns}xf32>) outs(%f : tensor<{rows}xf32>) {{
    ^bb0(%a: f32, %acc: f32):
      %s = arith.addf %a, %acc : f32
      linalg.yield %s : f32
    }} -> tensor<{rows}xf32>
    return %r : tensor<{rows}xf32>
  }}"""


def _gather(table_rows: int, columns: int, gathered: int) -> str:
    table, out = f"tensor<{table_rows}x{columns}xf32>", f"tensor<{gathered}x{columns}xf32>"
    return f"""  func.func @gather(%table: {table}, %ids: tensor<{gathered}xi64>) -> {out} {{
    %e = tensor.empty() : {out}
    %r = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                         iterator_types = ["parallel", "parallel"]}} ins(%ids : tensor<{gathered}xi64>) outs(%e : {out}) {{
    ^bb0(%id: i64, %o: f32):
      %row = arith.index_cast %id : i64 to index
      %col = linalg.index 1 : index
      %v = tensor.extract %table[%row, %col] : {table}
      linalg.yield %v : f32
    }} -> {out}
    return %r : {out}
  }}"""


def _copy(rows: int, columns: int) -> str:
    # A transpose: a copy that IREE cannot fold away.
    src, dst = f"tensor<{rows}x{columns}xf32>", f"tensor<{columns}x{rows}xf32>"
    return f"""  func.func @copy(%x: {src}) -> {dst} {{
    %e = tensor.empty() : {dst}
    %r = linalg.transpose ins(%x : {src}) outs(%e : {dst}) permutation = [1, 0]
    return %r : {dst}
  }}"""
