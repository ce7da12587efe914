"""The oracles: numpy's reference within its error bound, and stock IREE bit
for bit."""

from __future__ import annotations

from typing import Optional

import numpy as np

from .values import FLOATS, NP, TINY


# How much the observed error may exceed the first-order bound (second-order
# terms, approximated transcendental functions).
SAFETY = 4.0


def compare_reference(got: np.ndarray, want: np.ndarray, bound: np.ndarray, dtype: str) -> Optional[str]:
    """None if `got` (what IREE computed) agrees with the numpy reference."""
    if got.shape != want.shape:
        return f"shape {got.shape} != reference {want.shape}"
    if got.dtype != np.dtype(NP[dtype]):
        return f"dtype {got.dtype} != {dtype}"
    if dtype in FLOATS:
        g = got.astype(np.float64)
        tol = SAFETY * bound + 2 * TINY[dtype]
        bad = ~(np.abs(g - want) <= tol)
        if bad.any():
            i = tuple(int(k) for k in np.argwhere(bad)[0])
            return (f"{int(bad.sum())} of {bad.size} elements outside the error bound; first at {list(i)}: "
                    f"got {g[i]!r}, reference {want[i]!r}, allowed {tol[i]:.3g}")
        return None
    w = want.astype(NP[dtype])
    if not np.array_equal(got, w):
        i = tuple(int(k) for k in np.argwhere(got != w)[0])
        return f"{int(np.count_nonzero(got != w))} of {w.size} elements differ; first at {list(i)}: got {got[i]}, reference {w[i]}"
    return None


def compare_bitwise(got: np.ndarray, want: np.ndarray) -> Optional[str]:
    if got.shape != want.shape or got.dtype != want.dtype:
        return f"{got.dtype}{list(got.shape)} != stock {want.dtype}{list(want.shape)}"
    if got.tobytes() != want.tobytes():
        diff = got != want
        i = tuple(int(k) for k in np.argwhere(diff)[0]) if diff.any() else ()
        return (f"{int(diff.sum())} of {got.size} elements differ from stock IREE; first at {list(i)}: "
                f"mdc {got[i] if i else got!r}, stock {want[i] if i else want!r}")
    return None
