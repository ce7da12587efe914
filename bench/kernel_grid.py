"""The matmul grid that ``bench kernels`` and ``bench tune`` share.

A point is one matmul y = x @ W as a model's linear layer brings it: x is
M x K, W is K x N ("nn") or N x K ("nt", torch.nn.Linear's out x in),
operands and result of one element type. ``program`` writes it the way
torch exports it (a ``linalg.generic`` contraction), optionally with a
``#iree_codegen.compilation_info`` on the op, and W either a function
argument or, as a model's weight is, an immutable global whose value is a
named parameter (``#flow.parameter.named<PARAMETER_SCOPE::NAME>``) that
the runtime provides when it loads the module.
"""

from __future__ import annotations

import dataclasses
import itertools

MS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 1024)
KNS = ((2048, 2048), (2048, 5632), (5632, 2048), (4096, 4096), (4096, 11008), (11008, 4096),
       (768, 3072), (1024, 4096))
DTYPES = ("f32", "f16", "bf16")
LAYOUTS = ("nn", "nt")
ELEMENT_BYTES = {"f32": 4, "f16": 2, "bf16": 2}
PARAMETER_SCOPE = "kernels"

# The shapes the tuner measures; ``bench kernels`` also measures the others,
# so every shipped row is checked on shapes it was not chosen on.
TUNE_KNS = ((2048, 2048), (2048, 5632), (5632, 2048), (4096, 11008))


@dataclasses.dataclass(frozen=True)
class Point:
    dtype: str
    layout: str
    m: int
    k: int
    n: int

    @property
    def key(self) -> str:
        return f"{self.dtype}_{self.layout}_{self.m}x{self.k}x{self.n}"

    @property
    def flops(self) -> int:
        return 2 * self.m * self.k * self.n

    @property
    def bytes(self) -> int:
        """What one call must read and write at least: x, W and y once."""
        return ELEMENT_BYTES[self.dtype] * (self.m * self.k + self.k * self.n + self.m * self.n)

    def repeat(self) -> int:
        """How many times a timing module repeats the dispatch: enough that
        the repeats take about 2 ms on an H100-class GPU, at most 32."""
        seconds = max(self.flops / 20e12, self.bytes / 2.5e12)
        return max(1, min(32, int(2e-3 / seconds)))


def grid(dtypes=DTYPES, layouts=LAYOUTS, ms=MS, kns=KNS) -> list[Point]:
    return [Point(dt, lay, m, k, n) for dt, lay, m, (k, n) in itertools.product(dtypes, layouts, ms, kns)]


def mlir_type(dtype: str) -> str:
    return dtype


def weight_name(p: Point) -> str:
    """The name of the point's weight as a parameter (and its global's)."""
    return "w_" + p.key


def function(name: str, p: Point, compilation_info: str | None = None, weight: str | None = None) -> str:
    """One ``func.func @name(x, W) -> y`` computing the point's matmul; with
    ``weight``, ``@name(x) -> y`` reading W from the global ``@weight``,
    declared before it, whose value is the parameter ``weight``."""
    dt = mlir_type(p.dtype)
    bmap = "(d1, d2)" if p.layout == "nt" else "(d2, d1)"
    wshape = f"{p.n}x{p.k}" if p.layout == "nt" else f"{p.k}x{p.n}"
    attrs = f" attrs = {{compilation_info = {compilation_info}}}" if compilation_info else ""
    x, w, y = f"tensor<{p.m}x{p.k}x{dt}>", f"tensor<{wshape}x{dt}>", f"tensor<{p.m}x{p.n}x{dt}>"
    head = f"""  func.func @{name}(%a: {x}, %b: {w}) -> {y} {{
"""
    if weight:
        head = f"""  util.global private @{weight} = #flow.parameter.named<"{PARAMETER_SCOPE}"::"{weight}"> : {w}
  func.func @{name}(%a: {x}) -> {y} {{
    %b = util.global.load @{weight} : {w}
"""
    return head + f"""    %z = arith.constant 0.0 : {dt}
    %e = tensor.empty() : {y}
    %c = linalg.fill ins(%z : {dt}) outs(%e : {y}) -> {y}
    %r = linalg.generic {{indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> {bmap}>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}} ins(%a, %b : {x}, {w}) outs(%c : {y}){attrs} {{
    ^bb0(%p: {dt}, %q: {dt}, %o: {dt}):
      %m = arith.mulf %p, %q : {dt}
      %s = arith.addf %o, %m : {dt}
      linalg.yield %s : {dt}
    }} -> {y}
    return %r : {y}
  }}
"""


TINY = """  func.func @tiny(%a: tensor<4xf32>) -> tensor<4xf32> {
    %r = arith.addf %a, %a : tensor<4xf32>
    return %r : tensor<4xf32>
  }
"""


def module(functions: list[str]) -> str:
    return "module {\n" + "".join(functions) + "}\n"
