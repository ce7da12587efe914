"""The matmul grid that ``bench kernels`` and ``bench tune`` share.

A point is one matmul y = x @ W as a model's linear layer brings it: x is
M x K, W is K x N ("nn") or N x K ("nt", torch.nn.Linear's out x in).
Its ``dtype`` is "f32", "f16" or "bf16" (operands, accumulator and result
of that type), or "f16f32" or "bf16f32" (MIXED: f16 or bf16 operands and
result, accumulated in f32, as torch's f16 and bf16 matmuls are).
``function`` writes one of a single type as a ``linalg.generic``
contraction, and a mixed one as torch's export is at IREE's stream level
(docs/DESIGN.md section 9): ``linalg.matmul`` (``linalg.batch_matmul``) of
f16 operands into an f32 ``linalg.fill``, then the elementwise truncation
to f16, which IREE fuses into the matmul's dispatch. Either optionally
has a ``#iree_codegen.compilation_info`` on the contraction, and W either a function
argument or, as a model's weight is, an immutable global whose value is a
named parameter (``#flow.parameter.named<PARAMETER_SCOPE::NAME>``) that
the runtime provides when it loads the module.

A batch point (``batch`` B > 0) is B such matmuls, as attention brings
them: x is B x M x K and W is B x K x N ("nn", P x V) or B x N x K ("nt",
Q x K^T); ``function`` writes it as ``linalg.batch_matmul``, the form IREE
3.13's stream IR holds torch's in (docs/DESIGN.md section 9). A dynamic
point (``dynamic``) is a matmul compiled with M dynamic (x is ? x K) and
timed at M = ``m``.
"""

from __future__ import annotations

import dataclasses
import itertools

MS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 1024)
KNS = ((2048, 2048), (2048, 5632), (5632, 2048), (4096, 4096), (4096, 11008), (11008, 4096),
       (768, 3072), (1024, 4096))
DTYPES = ("f32", "f16", "bf16")
# f16 and bf16 operands accumulating in f32 (torch's): the point's dtype ->
# its operands' and result's element type.
MIXED = {"f16f32": "f16", "bf16f32": "bf16"}
LAYOUTS = ("nn", "nt")
ELEMENT_BYTES = {"f32": 4, "f16": 2, "bf16": 2, "f16f32": 2, "bf16f32": 2}
PARAMETER_SCOPE = "kernels"

# The shapes the tuner measures; ``bench kernels`` also measures the others,
# so every shipped row is checked on shapes it was not chosen on.
TUNE_KNS = ((2048, 2048), (2048, 5632), (5632, 2048), (4096, 11008))


# Attention's batch matmuls (``--ops batch``): B = batch x heads, query
# length S in the M buckets, head dim D, key length T. Q x K^T is (M = S,
# K = D, N = T), "nt"; P x V is (M = S, K = T, N = D), "nn".
ATTENTION_BATCH = 32
ATTENTION_MS = (1, 16, 128, 1024)
HEAD_DIMS = (64, 128)
KEY_LENGTHS = (128, 1024, 4096)
# The Ms a dynamic-M config is timed at (``--ops dynamic``): multiples of
# its tiles and not, from a decode step to a prefill.
DYNAMIC_MS = (1, 7, 16, 100, 1024)


@dataclasses.dataclass(frozen=True)
class Point:
    dtype: str
    layout: str
    m: int
    k: int
    n: int
    batch: int = 0  # 0: one matmul; B: linalg.batch_matmul of B
    dynamic: bool = False  # compiled with M dynamic, timed at m

    @property
    def op(self) -> str:
        """The kind of op, as the table's rows name it."""
        return "batch_matmul" if self.batch else "matmul"

    @property
    def key(self) -> str:
        return (f"{self.dtype}_{self.layout}_{self.m}x{self.k}x{self.n}" + (f"_b{self.batch}" if self.batch else "")
                + ("_dyn" if self.dynamic else ""))

    @property
    def flops(self) -> int:
        return 2 * max(self.batch, 1) * self.m * self.k * self.n

    @property
    def bytes(self) -> int:
        """What one call must read and write at least: x, W and y once."""
        return ELEMENT_BYTES[self.dtype] * max(self.batch, 1) * (self.m * self.k + self.k * self.n + self.m * self.n)

    def as_dict(self) -> dict:
        """The point as a kit's entries and results name it (batch and
        dynamic only where set, so a plain matmul's reads as before)."""
        out = dict(dtype=self.dtype, layout=self.layout, m=self.m, k=self.k, n=self.n)
        out.update({"batch": self.batch} if self.batch else {}, **({"dynamic": True} if self.dynamic else {}))
        return out

    def repeat(self) -> int:
        """How many times a timing module repeats the dispatch: enough that
        the repeats take about 2 ms on an H100-class GPU, at most 32."""
        seconds = max(self.flops / 20e12, self.bytes / 2.5e12)
        return max(1, min(32, int(2e-3 / seconds)))


def grid(dtypes=DTYPES, layouts=LAYOUTS, ms=MS, kns=KNS) -> list[Point]:
    return [Point(dt, lay, m, k, n) for dt, lay, m, (k, n) in itertools.product(dtypes, layouts, ms, kns)]


def attention_grid(dtypes=("f32", "f16"), ms=ATTENTION_MS, head_dims=HEAD_DIMS, key_lengths=KEY_LENGTHS,
                   batch=ATTENTION_BATCH) -> list[Point]:
    """Q x K^T ("nt") and P x V ("nn") at every (S, D, T)."""
    out = []
    for dt, s, d, t in itertools.product(dtypes, ms, head_dims, key_lengths):
        out += [Point(dt, "nt", s, d, t, batch), Point(dt, "nn", s, t, d, batch)]
    return out


def dynamic_grid(dtypes=("f32", "f16"), layouts=LAYOUTS, ms=DYNAMIC_MS, kns=KNS) -> list[Point]:
    """Matmuls of dynamic M, each (K, N) timed at every M of ``ms``."""
    return [Point(dt, lay, m, k, n, dynamic=True) for dt, lay, m, (k, n) in itertools.product(dtypes, layouts, ms, kns)]


def mlir_type(dtype: str) -> str:
    """The element type of the point's operands and result."""
    return MIXED.get(dtype, dtype)


def accumulator(dtype: str) -> str:
    """The element type the point's contraction accumulates in."""
    return "f32" if dtype in MIXED else dtype


def weight_name(p: Point) -> str:
    """The name of the point's weight as a parameter (and its global's)."""
    return "w_" + p.key


_BATCH_NT = ("indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> "
             "(d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>] ")


def function(name: str, p: Point, compilation_info: str | None = None, weight: str | None = None) -> str:
    """One ``func.func @name(x, W) -> y`` computing the point's matmul; with
    ``weight``, ``@name(x) -> y`` reading W from the global ``@weight``,
    declared before it, whose value is the parameter ``weight``."""
    dt, acc = mlir_type(p.dtype), accumulator(p.dtype)
    bmap = "(d1, d2)" if p.layout == "nt" else "(d2, d1)"
    wshape = f"{p.n}x{p.k}" if p.layout == "nt" else f"{p.k}x{p.n}"
    m, pre = ("?" if p.dynamic else p.m), (f"{p.batch}x" if p.batch else "")
    x, w, y = f"tensor<{pre}{m}x{p.k}x{dt}>", f"tensor<{pre}{wshape}x{dt}>", f"tensor<{pre}{m}x{p.n}x{acc}>"
    result = f"tensor<{pre}{m}x{p.n}x{dt}>"  # y's, but for a mixed point's truncation
    assert not (p.dynamic and p.batch), "a dynamic M is a plain matmul's here"
    empty = f"""%c0 = arith.constant 0 : index
    %dm = tensor.dim %a, %c0 : {x}
    %e = tensor.empty(%dm) : {y}""" if p.dynamic else f"%e = tensor.empty() : {y}"
    head = f"""  func.func @{name}(%a: {x}, %b: {w}) -> {result} {{
"""
    if weight:
        head = f"""  util.global private @{weight} = #flow.parameter.named<"{PARAMETER_SCOPE}"::"{weight}"> : {w}
  func.func @{name}(%a: {x}) -> {result} {{
    %b = util.global.load @{weight} : {w}
"""
    head += f"""    %z = arith.constant 0.0 : {acc}
    {empty}
    %c = linalg.fill ins(%z : {acc}) outs(%e : {y}) -> {y}
"""
    if p.dtype in MIXED:
        return head + _mixed_tail(p, x, w, y, result, compilation_info)
    if p.batch:
        maps, info = (_BATCH_NT if p.layout == "nt" else ""), (f"{{compilation_info = {compilation_info}}} "
                                                              if compilation_info else "")
        return head + f"""    %r = linalg.batch_matmul {maps}{info}ins(%a, %b : {x}, {w}) outs(%c : {y}) -> {y}
    return %r : {y}
  }}
"""
    attrs = f" attrs = {{compilation_info = {compilation_info}}}" if compilation_info else ""
    maps = f"affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> {bmap}>, affine_map<(d0, d1, d2) -> (d0, d1)>"
    return head + mul_add_generic(maps, '"parallel", "parallel", "reduction"', x, w, y, dt, attrs)


_NT = ("indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, "
       "affine_map<(d0, d1, d2) -> (d0, d1)>] ")


def _mixed_tail(p: Point, x: str, w: str, y: str, out: str, compilation_info: str | None) -> str:
    """A mixed point's contraction as torch's is at the stream level: the
    named op of f16 (bf16) operands into the f32 ``%c``, then its
    truncation to f16 (bf16), and the return."""
    dt, rank = mlir_type(p.dtype), 3 if p.batch else 2
    op, maps = ("linalg.batch_matmul", _BATCH_NT) if p.batch else ("linalg.matmul", _NT)
    info = f"{{compilation_info = {compilation_info}}} " if compilation_info else ""
    dims = ", ".join(f"d{i}" for i in range(rank))
    same = f"affine_map<({dims}) -> ({dims})>"
    empty = ("%e2 = tensor.empty(%dm) : " if p.dynamic else "%e2 = tensor.empty() : ") + out
    return f"""    %r = {op} {maps if p.layout == "nt" else ""}{info}ins(%a, %b : {x}, {w}) outs(%c : {y}) -> {y}
    {empty}
    %t = linalg.generic {{indexing_maps = [{same}, {same}], iterator_types = [{", ".join(['"parallel"'] * rank)}]}} ins(%r : {y}) outs(%e2 : {out}) {{
    ^bb0(%v: f32, %o: {dt}):
      %u = arith.truncf %v : f32 to {dt}
      linalg.yield %u : {dt}
    }} -> {out}
    return %t : {out}
  }}
"""


def mul_add_generic(maps: str, iterators: str, x: str, w: str, y: str, dt: str, attrs: str = "") -> str:
    """The end of a function body: ``%r = %c + %a * %b`` as a
    ``linalg.generic`` of those indexing maps and iterator types (the
    contraction torch exports), then its return."""
    return f"""    %r = linalg.generic {{indexing_maps = [{maps}], iterator_types = [{iterators}]}} ins(%a, %b : {x}, {w}) outs(%c : {y}){attrs} {{
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
