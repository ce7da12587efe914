"""The tuner's search space: candidate CUDA configs for one matmul.

Each candidate is a ``#iree_codegen.compilation_info`` that stock
iree-compile 3.13 takes on a ``linalg`` contraction, and the divisibility
it needs (M, N and K multiples of its tiles), so that a row chosen from it
can be applied to shapes the tuner never saw. Three families:

* ``simt``: IREE's ``TileAndFuse`` pipeline with scalar FMA: a workgroup
  tile (wm x wn), a per-thread tile (tm x tn) and a K step; optionally the
  operands staged through shared memory (``promote_operands``);
* ``mma``: ``TileAndFuse`` with an NVIDIA tensor-core intrinsic (f16
  with an f16 accumulator; for f16 and bf16 accumulating in f32, "f16f32"
  and "bf16f32", the intrinsics with an f32 accumulator, as IREE's own
  configuration of those picks); ``subgroup`` counts intrinsic tiles per
  warp, the K step counts intrinsic K steps;
* ``partial``: the ``VectorDistribute`` reduction that IREE itself picks
  for M <= 4: warps split K, each lane reading ``v`` contiguous elements.

A batch point's candidates are the same with a batch loop first (its
workgroup tile 1, a batch at a time; for M = 1, IREE's own choice for
attention's decode step, the ``partial`` family). A dynamic point's are
``dynamic_candidates``: SIMT and ``partial`` only, since a tensor-core
config does not compile for a dynamic M in 3.13
(test/lit/regress/iree_cuda_mma_dynamic_m_fails.test); its row must be
right at every M, so the tiles of M are not asked to divide it. A mixed
point (f16 or bf16 operands accumulating in f32, as torch's are) has the
SIMT and ``partial`` families and the tensor-core tiles with the f32
accumulator's intrinsic, IREE's own choices for it among them.
"""

from __future__ import annotations

import dataclasses
import functools

from .kernel_grid import Point

_TF = "#iree_gpu.pipeline<TileAndFuse>"
_VD = "#iree_gpu.pipeline<VectorDistribute>"


@dataclasses.dataclass(frozen=True)
class Candidate:
    name: str
    attribute: str
    m_multiple: int
    n_multiple: int
    k_multiple: int

    def fits(self, p: Point) -> bool:
        return ((p.dynamic or p.m % self.m_multiple == 0) and p.n % self.n_multiple == 0
                and p.k % self.k_multiple == 0)


def _list(values, batch: bool, lead: int = 0) -> str:
    """A lowering config's per-loop list, with the batch loop's ``lead`` first for a batch op."""
    return "[" + ", ".join(str(v) for v in ([lead] if batch else []) + list(values)) + "]"


def _info(lowering: str, pipeline: str, threads: int, options: str = "") -> str:
    return (f"#iree_codegen.compilation_info<lowering_config = #iree_gpu.lowering_config<{{{lowering}}}>, "
            f"translation_info = #iree_codegen.translation_info<pipeline = {pipeline} "
            f"workgroup_size = [{threads}, 1, 1] subgroup_size = 32{options}>>")


def simt(wm: int, wn: int, tm: int, tn: int, rk: int, promote: str = "[0, 1]", batch: bool = False) -> Candidate | None:
    threads = (wm // tm) * (wn // tn)
    if wm % tm or wn % tn or threads % 32 or threads > 1024:
        return None
    prom = f"promote_operands = {promote}, " if promote else ""
    low = (f"{prom}reduction = {_list([0, 0, rk], batch)}, thread = {_list([tm, tn, 0], batch, 1)}, "
           f"workgroup = {_list([wm, wn, 0], batch, 1)}")
    tag = {"[0, 1]": "s", "[0]": "a", "": "g"}[promote]
    return Candidate(f"simt{tag}_{wm}x{wn}_t{tm}x{tn}_k{rk}", _info(low, _TF, threads), wm, wn, rk)


# NV_WMMA_F16_16x16x16_F16 is left out: iree-compile 3.13 fails on it inside
# TileAndFuse ("tensor.expand_shape op expected dimension 2 ... to be static").
# The f16 accumulator's intrinsic does not compile on a matmul accumulating
# in f32, so the mixed dtypes take the f32 accumulator's.
MMA_SHAPES = {"NV_MMA_SYNC_F16_16x8x16_F16": (16, 8, 16), "NV_MMA_SYNC_F32_16x8x16_F16": (16, 8, 16),
              "NV_MMA_SYNC_F32_16x8x16_BF16": (16, 8, 16)}
# The intrinsic of each dtype that has one (f32 has none on sm_80; bf16
# none with a bf16 accumulator).
MMA_KINDS = {"f16": "NV_MMA_SYNC_F16_16x8x16_F16", "f16f32": "NV_MMA_SYNC_F32_16x8x16_F16",
             "bf16f32": "NV_MMA_SYNC_F32_16x8x16_BF16"}


def mma(kind: str, wm: int, wn: int, sm: int, sn: int, rk: int, stages: int = 2,
        batch: bool = False) -> Candidate | None:
    im, inn, ik = MMA_SHAPES[kind]
    if wm % (im * sm) or wn % (inn * sn):
        return None
    threads = 32 * (wm // (im * sm)) * (wn // (inn * sn))
    if threads > 512:
        return None
    low = (f"mma_kind = #iree_gpu.mma_layout<{kind}>, promote_operands = [0, 1], "
           f"reduction = {_list([0, 0, rk], batch)}, "
           f"subgroup = {_list([sm, sn, 0], batch)}, workgroup = {_list([wm, wn, 0], batch, 1)}")
    opts = f", {{gpu_pipeline_options = #iree_gpu.pipeline_options<prefetch_num_stages = {stages}>}}"
    short = "mma" if "MMA_SYNC" in kind else "wmma"
    return Candidate(f"{short}_{wm}x{wn}_s{sm}x{sn}_k{rk}_p{stages}", _info(low, _TF, threads, opts),
                     wm, wn, rk * ik)


def partial(wm: int, wn: int, warps: int, v: int, batch: bool = False) -> Candidate:
    chunk = 32 * warps * v
    dims = _list(range(4 if batch else 3), False)
    low = (f"lane_basis = [{_list([1, 1, 32], batch, 1)}, {dims}], partial_reduction = {_list([0, 0, chunk], batch)}, "
           f"subgroup_basis = [{_list([1, 1, warps], batch, 1)}, {dims}], thread = {_list([0, 0, v], batch)}, "
           f"workgroup = {_list([wm, wn, 0], batch, 1)}")
    return Candidate(f"partial_{wm}x{wn}_w{warps}_v{v}", _info(low, _VD, 32 * warps), wm, wn, chunk)


def _simt_for(m: int, batch: bool = False) -> list:
    s = functools.partial(simt, batch=batch)
    if m <= 4:
        return [s(m, 64, m, 2, 64, ""), s(m, 128, m, 4, 64, ""), s(m, 128, m, 1, 64, ""),
                s(m, 256, m, 2, 64, ""), s(m, 128, m, 2, 128, "[0]"), s(m, 64, m, 1, 256, "[0]")]
    if m == 8:
        return [s(8, 32, 1, 1, 32), s(8, 64, 1, 2, 32), s(8, 128, 1, 4, 32), s(8, 64, 1, 1, 64),
                s(8, 128, 2, 2, 32), s(8, 64, 1, 2, 64)]
    if m == 16:
        return [s(16, 32, 1, 2, 32), s(16, 64, 1, 4, 32), s(16, 64, 2, 2, 32), s(16, 128, 2, 4, 32),
                s(16, 32, 1, 1, 64), s(16, 64, 1, 2, 32), s(16, 64, 2, 2, 64)]
    if m == 32:
        return [s(32, 16, 1, 2, 64), s(32, 32, 1, 4, 32), s(32, 64, 2, 4, 32), s(32, 64, 1, 4, 32),
                s(32, 128, 2, 8, 32), s(32, 64, 2, 2, 32), s(32, 32, 1, 2, 64)]
    if m == 64:
        return [s(64, 64, 4, 4, 16), s(64, 64, 2, 4, 32), s(32, 64, 2, 4, 32), s(64, 128, 4, 8, 16),
                s(64, 64, 4, 4, 32), s(64, 32, 2, 4, 32), s(64, 128, 4, 4, 16)]
    return [s(128, 128, 8, 8, 16), s(128, 64, 8, 4, 16), s(64, 128, 4, 8, 16), s(64, 64, 4, 4, 16),
            s(128, 128, 4, 8, 16), s(128, 128, 8, 8, 8), s(64, 64, 4, 4, 32), s(128, 64, 4, 4, 16)]


_F16MMA = MMA_KINDS["f16"]


def _mma_for(m: int, batch: bool = False, kind: str = _F16MMA) -> list:
    q = functools.partial(mma, kind, batch=batch)
    if m < 16:
        return []
    if m == 16:
        return [q(16, 32, 1, 1, 4), q(16, 64, 1, 2, 4), q(16, 128, 1, 4, 4), q(16, 64, 1, 1, 2), q(16, 64, 1, 2, 8)]
    if m == 32:
        return [q(32, 16, 1, 1, 4), q(32, 64, 1, 2, 4), q(32, 64, 2, 2, 4), q(32, 128, 1, 4, 4), q(32, 64, 1, 2, 8)]
    return [q(64, 64, 2, 2, 4), q(64, 128, 2, 4, 4), q(128, 128, 4, 4, 2), q(128, 128, 2, 4, 2), q(128, 64, 4, 2, 4),
            q(64, 64, 2, 2, 4, 3)]


def _mixed_for(m: int, kind: str) -> list:
    """A mixed dtype's tensor-core tiles beyond the f16 ones: IREE's own
    choices for f16 and bf16 accumulating in f32 (read from its
    configuration: K steps of 8 intrinsics; 16 x 32 at M = 16, 64 x 32 at
    M = 64, 64 x 64 above) and their neighbours."""
    if m < 16:
        return []
    if m < 64:
        return [mma(kind, m, 32, 1, 2, 8), mma(kind, m, 64, 1, 2, 8), mma(kind, m, 64, 1, 4, 8)]
    return [mma(kind, 64, 32, 2, 2, 8), mma(kind, 64, 64, 2, 4, 8), mma(kind, 64, 64, 2, 2, 8),
            mma(kind, 128, 64, 4, 2, 8), mma(kind, 128, 128, 4, 4, 4)]


def _partial_for(m: int, batch: bool = False) -> list:
    if m > 4:
        return []
    return [partial(1, 1, 1, 4, batch), partial(1, 1, 2, 4, batch), partial(1, 1, 4, 4, batch),
            partial(1, 1, 8, 4, batch), partial(m, 1, 2, 4, batch), partial(1, 1, 4, 2, batch)]


def _batch_for(p: Point) -> list:
    """A batch point's: the plain matmul's families with a batch loop
    first, and IREE's own choices for attention's shapes with their
    neighbours (for M = 1 a partial reduction over K = D, as short as 64;
    at larger M, TileAndFuse SIMT 32 x 128 and MMA 16 x 32 or 64 x 64),
    and tiles of N that P x V's head dim takes."""
    m, f16 = p.m, p.dtype == "f16"
    found = [*_simt_for(m, True), *_partial_for(m, True), *(_mma_for(m, True) if f16 else [])]
    found += _mma_for(m, True, MMA_KINDS[p.dtype]) if p.dtype in ("f16f32", "bf16f32") else []
    if m <= 4:
        found += [partial(1, 1, w, v, True) for w, v in ((1, 2), (2, 1), (2, 2), (4, 1))]
        found += [simt(m, 32, m, 1, 32, "", True), simt(m, 64, m, 2, 32, "", True)]
    elif m == 16:
        found += [mma(_F16MMA, 16, 32, 1, 2, 4, batch=True), mma(_F16MMA, 16, 32, 1, 2, 8, batch=True)] if f16 else []
        found += [simt(16, 64, 1, 4, 16, "[0, 1]", True), simt(16, 32, 1, 2, 16, "[0, 1]", True)]
    else:
        found += [simt(32, 128, 1, 16, 32, "", True), simt(32, 64, 1, 8, 32, "", True)]
        # P x V's N is the head dim (64 or 128): tiles of N 32 and 64.
        found += [simt(64, 32, 4, 2, 32, "[0, 1]", True), simt(128, 32, 8, 2, 16, "[0, 1]", True),
                  simt(32, 64, 2, 4, 32, "[0, 1]", True)]
        found += [mma(_F16MMA, 64, 64, 2, 4, 4, batch=True), mma(_F16MMA, 64, 64, 2, 4, 8, batch=True)] if f16 else []
    return found


def dynamic_candidates(dtype: str) -> list:
    """A dynamic M's: SIMT tiles from one row (M = 1) to 128 rows, and
    the partial reduction IREE itself picks for a dynamic M (one output
    element a workgroup, 16 warps over K) with fewer warps."""
    return [simt(1, 64, 1, 2, 64, ""), simt(1, 128, 1, 4, 64, ""), simt(8, 64, 1, 2, 32), simt(16, 32, 1, 2, 32),
            simt(16, 64, 2, 2, 32), simt(32, 32, 1, 4, 32), simt(32, 64, 2, 4, 32), simt(64, 64, 4, 4, 16),
            simt(64, 64, 4, 4, 32), simt(128, 64, 8, 4, 16), simt(128, 128, 8, 8, 16),
            partial(1, 1, 2, 4), partial(1, 1, 4, 4), partial(1, 1, 8, 4), partial(1, 1, 16, 4),
            *([partial(1, 1, 8, 8)] if dtype != "f32" else [])]


def candidates(p: Point) -> list[Candidate]:
    """The candidates that fit the point, each once."""
    if p.dynamic:
        found = dynamic_candidates(p.dtype)
    elif p.batch:
        found = _batch_for(p)
    else:
        kind = MMA_KINDS.get(p.dtype)
        found = [*_simt_for(p.m), *_partial_for(p.m), *(_mma_for(p.m, kind=kind) if kind else [])]
        found += _mixed_for(p.m, kind) if p.dtype in ("f16f32", "bf16f32") else []
    seen, out = set(), []
    for c in found:
        if c is not None and c.fits(p) and c.name not in seen:
            seen.add(c.name)
            out.append(c)
    return out
