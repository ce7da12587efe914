"""The tuner's search space: candidate CUDA configs for one matmul.

Each candidate is a ``#iree_codegen.compilation_info`` that stock
iree-compile 3.13 takes on a ``linalg`` contraction, and the divisibility
it needs (M, N and K multiples of its tiles), so that a row chosen from it
can be applied to shapes the tuner never saw. Three families:

* ``simt``: IREE's ``TileAndFuse`` pipeline with scalar FMA: a workgroup
  tile (wm x wn), a per-thread tile (tm x tn) and a K step; optionally the
  operands staged through shared memory (``promote_operands``);
* ``mma``: ``TileAndFuse`` with an NVIDIA tensor-core intrinsic (f16);
  ``subgroup`` counts intrinsic tiles per warp, the K step counts
  intrinsic K steps;
* ``partial``: the ``VectorDistribute`` reduction that IREE itself picks
  for M <= 4: warps split K, each lane reading ``v`` contiguous elements.
"""

from __future__ import annotations

import dataclasses

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
        return p.m % self.m_multiple == 0 and p.n % self.n_multiple == 0 and p.k % self.k_multiple == 0


def _info(lowering: str, pipeline: str, threads: int, options: str = "") -> str:
    return (f"#iree_codegen.compilation_info<lowering_config = #iree_gpu.lowering_config<{{{lowering}}}>, "
            f"translation_info = #iree_codegen.translation_info<pipeline = {pipeline} "
            f"workgroup_size = [{threads}, 1, 1] subgroup_size = 32{options}>>")


def simt(wm: int, wn: int, tm: int, tn: int, rk: int, promote: str = "[0, 1]") -> Candidate | None:
    threads = (wm // tm) * (wn // tn)
    if wm % tm or wn % tn or threads % 32 or threads > 1024:
        return None
    prom = f"promote_operands = {promote}, " if promote else ""
    low = f"{prom}reduction = [0, 0, {rk}], thread = [{tm}, {tn}, 0], workgroup = [{wm}, {wn}, 0]"
    tag = {"[0, 1]": "s", "[0]": "a", "": "g"}[promote]
    return Candidate(f"simt{tag}_{wm}x{wn}_t{tm}x{tn}_k{rk}", _info(low, _TF, threads), wm, wn, rk)


# NV_WMMA_F16_16x16x16_F16 is left out: iree-compile 3.13 fails on it inside
# TileAndFuse ("tensor.expand_shape op expected dimension 2 ... to be static").
MMA_SHAPES = {"NV_MMA_SYNC_F16_16x8x16_F16": (16, 8, 16)}


def mma(kind: str, wm: int, wn: int, sm: int, sn: int, rk: int, stages: int = 2) -> Candidate | None:
    im, inn, ik = MMA_SHAPES[kind]
    if wm % (im * sm) or wn % (inn * sn):
        return None
    threads = 32 * (wm // (im * sm)) * (wn // (inn * sn))
    if threads > 512:
        return None
    low = (f"mma_kind = #iree_gpu.mma_layout<{kind}>, promote_operands = [0, 1], reduction = [0, 0, {rk}], "
           f"subgroup = [{sm}, {sn}, 0], workgroup = [{wm}, {wn}, 0]")
    opts = f", {{gpu_pipeline_options = #iree_gpu.pipeline_options<prefetch_num_stages = {stages}>}}"
    short = "mma" if "MMA_SYNC" in kind else "wmma"
    return Candidate(f"{short}_{wm}x{wn}_s{sm}x{sn}_k{rk}_p{stages}", _info(low, _TF, threads, opts),
                     wm, wn, rk * ik)


def partial(wm: int, wn: int, warps: int, v: int) -> Candidate:
    chunk = 32 * warps * v
    low = (f"lane_basis = [[1, 1, 32], [0, 1, 2]], partial_reduction = [0, 0, {chunk}], "
           f"subgroup_basis = [[1, 1, {warps}], [0, 1, 2]], thread = [0, 0, {v}], workgroup = [{wm}, {wn}, 0]")
    return Candidate(f"partial_{wm}x{wn}_w{warps}_v{v}", _info(low, _VD, 32 * warps), wm, wn, chunk)


def _simt_for(m: int) -> list:
    if m <= 4:
        return [simt(m, 64, m, 2, 64, ""), simt(m, 128, m, 4, 64, ""), simt(m, 128, m, 1, 64, ""),
                simt(m, 256, m, 2, 64, ""), simt(m, 128, m, 2, 128, "[0]"), simt(m, 64, m, 1, 256, "[0]")]
    if m == 8:
        return [simt(8, 32, 1, 1, 32), simt(8, 64, 1, 2, 32), simt(8, 128, 1, 4, 32), simt(8, 64, 1, 1, 64),
                simt(8, 128, 2, 2, 32), simt(8, 64, 1, 2, 64)]
    if m == 16:
        return [simt(16, 32, 1, 2, 32), simt(16, 64, 1, 4, 32), simt(16, 64, 2, 2, 32), simt(16, 128, 2, 4, 32),
                simt(16, 32, 1, 1, 64), simt(16, 64, 1, 2, 32), simt(16, 64, 2, 2, 64)]
    if m == 32:
        return [simt(32, 16, 1, 2, 64), simt(32, 32, 1, 4, 32), simt(32, 64, 2, 4, 32), simt(32, 64, 1, 4, 32),
                simt(32, 128, 2, 8, 32), simt(32, 64, 2, 2, 32), simt(32, 32, 1, 2, 64)]
    if m == 64:
        return [simt(64, 64, 4, 4, 16), simt(64, 64, 2, 4, 32), simt(32, 64, 2, 4, 32), simt(64, 128, 4, 8, 16),
                simt(64, 64, 4, 4, 32), simt(64, 32, 2, 4, 32), simt(64, 128, 4, 4, 16)]
    return [simt(128, 128, 8, 8, 16), simt(128, 64, 8, 4, 16), simt(64, 128, 4, 8, 16), simt(64, 64, 4, 4, 16),
            simt(128, 128, 4, 8, 16), simt(128, 128, 8, 8, 8), simt(64, 64, 4, 4, 32), simt(128, 64, 4, 4, 16)]


_F16MMA = "NV_MMA_SYNC_F16_16x8x16_F16"


def _mma_for(m: int) -> list:
    if m < 16:
        return []
    if m == 16:
        return [mma(_F16MMA, 16, 32, 1, 1, 4), mma(_F16MMA, 16, 64, 1, 2, 4), mma(_F16MMA, 16, 128, 1, 4, 4),
                mma(_F16MMA, 16, 64, 1, 1, 2), mma(_F16MMA, 16, 64, 1, 2, 8)]
    if m == 32:
        return [mma(_F16MMA, 32, 16, 1, 1, 4), mma(_F16MMA, 32, 64, 1, 2, 4), mma(_F16MMA, 32, 64, 2, 2, 4),
                mma(_F16MMA, 32, 128, 1, 4, 4), mma(_F16MMA, 32, 64, 1, 2, 8)]
    return [mma(_F16MMA, 64, 64, 2, 2, 4), mma(_F16MMA, 64, 128, 2, 4, 4), mma(_F16MMA, 128, 128, 4, 4, 2),
            mma(_F16MMA, 128, 128, 2, 4, 2), mma(_F16MMA, 128, 64, 4, 2, 4), mma(_F16MMA, 64, 64, 2, 2, 4, 3)]


def _partial_for(m: int) -> list:
    if m > 4:
        return []
    return [partial(1, 1, 1, 4), partial(1, 1, 2, 4), partial(1, 1, 4, 4), partial(1, 1, 8, 4),
            partial(m, 1, 2, 4), partial(1, 1, 4, 2)]


def candidates(p: Point) -> list[Candidate]:
    """The candidates that fit the point, each once."""
    found = [*_simt_for(p.m), *_partial_for(p.m), *(_mma_for(p.m) if p.dtype == "f16" else [])]
    seen, out = set(), []
    for c in found:
        if c is not None and c.fits(p) and c.name not in seen:
            seen.add(c.name)
            out.append(c)
    return out
