"""Values: a program's SSA values, their types, and the numpy helpers every
statement uses to print constants and to evaluate in float64 with an error bound."""

from __future__ import annotations

import dataclasses
from typing import Optional

import numpy as np

DEVICES = ("device_a", "device_b", "device_c")
NP = {"f32": np.float32, "f16": np.float16, "i32": np.int32, "i8": np.int8}
FLOATS = ("f32", "f16")
# Unit roundoff, and an absolute floor per rounding (flushed subnormals).
UNIT = {"f32": 2.0 ** -24, "f16": 2.0 ** -11}
TINY = {"f32": 2.0 ** -120, "f16": 2.0 ** -14}
# Largest magnitude a float value may reach; ops that go beyond are not generated.
FLOAT_BOUND = {"f32": 4096.0, "f16": 256.0}
I32_MIN, I32_MAX = -(2 ** 31), 2 ** 31 - 1


class Reject(Exception):
    """The candidate op would overflow or leave the safe value range."""




@dataclasses.dataclass(eq=False)
class Value:
    name: str                      # SSA name without '%'
    dtype: str                     # f32 f16 i32 i8, or "index" for a loop count
    shape: tuple[int, ...]         # concrete sizes
    dyn: tuple[bool, ...]          # dynamic in the type
    dims: tuple[Optional[str], ...]  # SSA names of the dynamic sizes
    device: Optional[str]          # where it lives (None: left to placement)

    @property
    def type(self) -> str:
        if self.dtype == "index":
            return "index"
        return "tensor<" + "".join(("?" if d else str(n)) + "x" for n, d in zip(self.shape, self.dyn)) + self.dtype + ">"

    @property
    def dyn_dims(self) -> list[str]:
        return [d for d, dy in zip(self.dims, self.dyn) if dy]

    def type_with_dims(self) -> str:
        dd = self.dyn_dims
        return self.type + ("{" + ", ".join("%" + d for d in dd) + "}" if dd else "")

    @property
    def rank(self) -> int:
        return len(self.shape)


def fmt_float(x: float) -> str:
    return f"{float(x):.6e}"


def fmt_scalar(x, dtype: str) -> str:
    return fmt_float(x) if dtype in FLOATS else str(int(x))


def dense(arr: np.ndarray, dtype: str) -> str:
    if arr.ndim == 0:
        return fmt_scalar(arr.item(), dtype)
    if np.all(arr == arr.flat[0]):
        return fmt_scalar(arr.flat[0], dtype)

    def rec(a):
        if a.ndim == 1:
            return "[" + ", ".join(fmt_scalar(v, dtype) for v in a.tolist()) + "]"
        return "[" + ", ".join(rec(s) for s in a) + "]"

    return rec(arr)


def wrap(dtype: str, a: np.ndarray) -> np.ndarray:
    """Integer results in int64: i8 wraps, i32 must not overflow."""
    if dtype == "i8":
        return a.astype(np.int64).astype(np.int8).astype(np.int64)
    if dtype == "i32":
        if a.size and (a.min() < I32_MIN or a.max() > I32_MAX):
            raise Reject("i32 overflow")
        return a.astype(np.int64)
    raise AssertionError(dtype)


def round_err(dtype: str, r: np.ndarray) -> np.ndarray:
    return UNIT[dtype] * np.abs(r) + TINY[dtype]


def check_float(dtype: str, r: np.ndarray) -> None:
    if r.size and not (np.all(np.isfinite(r)) and np.abs(r).max() <= FLOAT_BOUND[dtype]):
        raise Reject("float out of range")


def zeros_err(shape) -> np.ndarray:
    return np.zeros(shape, np.float64)
