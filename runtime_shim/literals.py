"""iree-run-module's literals: parsing its input literals ("4xf32=1,2,3,4",
"2x2xf32=[1 2][3 4]", a bare scalar) and printing results byte for byte
as it prints them (iree/hal/string_util.c). mdc-run reads and writes
these; the Python API never does.
"""

from __future__ import annotations

import math
import re

import numpy as np

from .errors import ShimError
from .values import MLIR_TYPES, aligned_array, check_scalar, numpy_dtype, type_name


# Literals: "4xf32=1,2,3,4", "2x2xf32=[1 2][3 4]", "f32=5", "4xi1=1 0 0 1"

_LITERAL_TYPES = {n: t for n, t in MLIR_TYPES.items() if not n.startswith("complex")}


# A literal is typed on a command line; anything larger is a mistake, and
# building it would exhaust memory before the shape check could say so.
MAX_LITERAL_BYTES = 1 << 30


def parse_literal(text: str) -> tuple[np.ndarray, int]:
    """An iree-run-module input literal -> (array, HAL element type).

    Like iree-run-module: tokens are separated by spaces, commas and brackets;
    one value fills the whole tensor; no value gives zeros. Unlike it, i1
    takes 0/1/true/false.
    """
    head, _, data = text.partition("=")
    shape, hal_type = parse_shape_and_type(head, text)
    name = type_name(hal_type)
    dtype = numpy_dtype(hal_type)
    count = math.prod(shape)
    if count * dtype.itemsize > MAX_LITERAL_BYTES:
        raise ShimError(f"bad input literal {text[:60]!r}: {'x'.join(map(str, shape))} elements of "
                        f"{name} are more than a literal may hold ({MAX_LITERAL_BYTES >> 20} MiB); "
                        "pass large inputs as @file.npy")
    tokens = [t for t in re.split(r"[\s,\[\]]+", data) if t]
    if not tokens:
        return aligned_array(np.zeros(shape, dtype)), hal_type
    if len(tokens) == 1:
        tokens = tokens * count
    if len(tokens) != count:
        raise ShimError(f"bad input literal {text!r}: {len(tokens)} values for shape "
                        f"{'x'.join(map(str, shape)) or 'scalar'} ({count} elements)")
    try:
        values = _convert(tokens, name, dtype)
    except (ValueError, OverflowError) as e:
        raise ShimError(f"bad input literal {text!r}: {e}") from None
    return aligned_array(values.reshape(shape)), hal_type


def parse_shape_and_type(head: str, text: str) -> tuple[tuple[int, ...], int]:
    """'2x3xf32' (the part of literal ``text`` before '=') -> (shape, HAL
    element type)."""
    head = head.strip().strip('"')
    dims, _, name = head.rpartition("x")
    if name not in _LITERAL_TYPES:
        raise ShimError(f"bad input literal {text!r}: unknown element type {name!r}")
    try:
        shape = tuple(int(d) for d in dims.split("x")) if dims else ()
        if any(d < 0 for d in shape):
            raise ValueError
    except ValueError:
        raise ShimError(f"bad input literal {text!r}: bad shape {dims!r}") from None
    return shape, int(_LITERAL_TYPES[name])


def _convert(tokens: list[str], name: str, dtype: np.dtype) -> np.ndarray:
    if name == "i1":
        table = {"0": False, "1": True, "false": False, "true": True}
        bad = [t for t in tokens if t.lower() not in table]
        if bad:
            raise ValueError(f"{bad[0]!r} is not an i1 value (0, 1, true, false)")
        return np.array([table[t.lower()] for t in tokens], dtype)
    if dtype.kind in "iu":
        bits = dtype.itemsize * 8
        lo = 0 if name.startswith("ui") else -(1 << (bits - 1))
        hi = (1 << (bits - 1)) - 1 if name.startswith("si") else (1 << bits) - 1
        values = []
        for t in tokens:
            v = int(t, 10)
            if not lo <= v <= hi:
                raise ValueError(f"{t} is out of range for {name}")
            values.append(v & ((1 << bits) - 1))  # two's complement, as IREE stores it
        return np.array(values, np.dtype(f"u{dtype.itemsize}")).view(dtype)
    values = np.array([float(t) for t in tokens], np.float64)
    if dtype.itemsize < 4:  # IREE parses f16/bf16/f8 as f32, then narrows
        values = values.astype(np.float32)
    return values.astype(dtype)


def parse_scalar(text: str, type_: str, where: str):
    """An iree-run-module scalar input (a bare number such as 3 or 2.5)."""
    try:
        value = float(text) if type_.startswith("f") else int(text, 10)
    except ValueError:
        raise ShimError(f"bad input literal {text!r} for {where}: expected a {type_}") from None
    return check_scalar(value, type_, where)


def format_scalar(value, type_: str) -> str:
    """As iree-run-module prints a scalar result: 'i32=3', 'f32=2.5', 'i64=7'."""
    name = "i64" if type_ == "index" else type_
    if type_.startswith("f"):
        text = "%g" % value
        if math.isnan(value):
            text = "-nan" if math.copysign(1.0, value) < 0 else "nan"
        return f"{name}={text}"
    return f"{name}={int(value)}"


# ---------------------------------------------------------------------------
# Printing, byte for byte as iree-run-module (iree/hal/string_util.c)


def format_array(array: np.ndarray, hal_type: int, max_elements: int = 1024) -> str:
    """'4xf32=0 55 144 273', '2x2xi64=[1 2][3 4]', '4xi1=00 01 00 01'."""
    name = type_name(hal_type)
    head = "x".join(str(d) for d in array.shape) + "x" + name if array.ndim else name
    flat = np.ascontiguousarray(array).reshape(-1)
    numerical = (int(hal_type) >> 24) & 0xFF
    if numerical in (0x10, 0x11, 0x12) and flat.dtype.kind in "iu":
        fmt = lambda i: str(int(flat[i]))
    elif numerical & 0x20 and numerical != 0x23 and flat.dtype.kind not in "iub":
        fmt = lambda i: _format_float(float(flat[i]))
    else:  # booleans, complex and anything else: the bytes in hex
        raw = flat.view(np.uint8).reshape(flat.size, -1) if flat.size else flat
        fmt = lambda i: bytes(raw[i]).hex().upper()
    budget = [max_elements]

    def walk(start: int, shape: tuple[int, ...]) -> str:
        if not shape:
            return walk(start, (1,))
        if len(shape) > 1:
            stride = math.prod(shape[1:])
            return "".join("[" + walk(start + i * stride, shape[1:]) + "]" for i in range(shape[0]))
        n = min(budget[0], shape[0])
        budget[0] -= n
        return " ".join(fmt(start + i) for i in range(n)) + ("..." if n < shape[0] else "")

    return f"{head}={walk(0, tuple(array.shape))}"


def _format_float(v: float) -> str:
    if math.isnan(v):  # glibc keeps the sign of a NaN
        return "-NAN" if math.copysign(1.0, v) < 0 else "NAN"
    return "%G" % v
