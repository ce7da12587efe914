"""--expected_output: results compared with expected values, reported in
iree-run-module's words.

As stock iree-run-module (its tooling's comparison): a tensor must have the
expected shape and element type, then every element must match. With
``--equality_mode=approximate`` (the default) an f16, bf16, f32 or f64
element matches when ``|actual - expected| <= atol + rtol * |expected|``
(atol per type: --expected_f16_threshold=0.001, --expected_bf16_threshold=
0.01, --expected_f32_threshold=0.0001, --expected_f64_threshold=0.0001;
rtol --expected_rtol=1e-5), NaN matches NaN and an infinite expected value
only itself; every other type, and every type with
``--equality_mode=exact``, compares bytes. ``(ignored)`` skips a result.
The report goes to stdout: ``[FAILED] result[i]: ...`` for each mismatch
with both values printed, else ``[SUCCESS] all function outputs matched
their expected values.``; the exit status is 1 on any mismatch.

Unlike stock 3.13.0, whose comparison reports every scalar result as a
type mismatch ("expected i32 but got i32") whatever its value, a scalar
result here is compared exactly, as that comparison means to.
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

import numpy as np

from . import literals, values
from .cli_io import IGNORED

MODES = ("approximate", "exact")
_FLOAT_NAMES = ("f16", "bf16", "f32", "f64")


@dataclasses.dataclass
class Tolerance:
    mode: str = "approximate"
    f16: float = 0.001
    bf16: float = 0.01
    f32: float = 0.0001
    f64: float = 0.0001
    rtol: float = 1e-5

    def atol(self, type_name: str) -> float:
        # Stock keeps the 16- and 32-bit thresholds as C floats.
        value = getattr(self, type_name)
        return value if type_name == "f64" else float(np.float32(value))


def compare(expected: Sequence, results: Sequence[tuple[object, object]], tolerance: Tolerance,
            limit: int = 1024) -> tuple[bool, str]:
    """(all matched, the report) for results as Function._invoke gives
    them: (array, HAL element type) or (number, MLIR scalar type)."""
    if len(expected) != len(results):
        return False, f"[FAILED] expected {len(expected)} list elements but {len(results)} provided\n"
    lines = []
    for i, (want, (got, kind)) in enumerate(zip(expected, results)):
        if want is IGNORED:
            continue
        if isinstance(kind, str):
            lines += _compare_scalar(i, want, got, kind)
        elif not isinstance(want, tuple):
            lines.append(f"[FAILED] result[{i}]: variant types mismatch; expected "
                         f"{_scalar_name(want)} but got hal.buffer_view\n")
        else:
            lines += _compare_tensor(i, want, got, kind, tolerance, limit)
    if lines:
        return False, "".join(lines)
    return True, "[SUCCESS] all function outputs matched their expected values.\n"


def _scalar_name(value) -> str:
    return "f64" if isinstance(value, float) else "i64"


def _compare_scalar(i: int, want, got, kind: str) -> list[str]:
    name = "i64" if kind == "index" else kind
    if isinstance(want, tuple):
        return [f"[FAILED] result[{i}]: variant types mismatch; expected hal.buffer_view but got {name}\n"]
    if values.SCALAR_TYPES[kind](want) == got:
        return []
    show = (lambda v: "%G" % v) if kind.startswith("f") else (lambda v: str(int(v)))
    return [f"[FAILED] result[{i}]: {name} values differ\n  expected: {show(want)}\n  actual: {show(got)}\n"]


def _compare_tensor(i: int, want: tuple, got: np.ndarray, kind: int, tolerance: Tolerance,
                    limit: int) -> list[str]:
    want, want_kind = want
    got_text = literals.format_array(got, kind, limit)
    want_text = literals.format_array(want, want_kind, limit)
    described = f"{_shape_and_type(want.shape, want_kind)}"
    if want.shape != got.shape or want_kind != kind:
        why = (f"metadata is {_shape_and_type(got.shape, kind)}; expected that the view matches "
               f"{described}")
    else:
        index = _first_mismatch(want, got, values.type_name(kind), tolerance)
        if index is None:
            return []
        flat_got, flat_want = got.reshape(-1), want.reshape(-1)
        why = (f"element at index {index} ({_element(flat_got, index, kind)}) does not match the "
               f"expected ({_element(flat_want, index, kind)})")
    return [f"[FAILED] result[{i}]: {why}; expected that the view is equal to contents of a view "
            f"of {described}\n  expected:\n{want_text}\n  actual:\n{got_text}\n"]


def _shape_and_type(shape, kind: int) -> str:
    return "x".join([*(str(d) for d in shape), values.type_name(kind)])


def _element(flat: np.ndarray, index: int, kind: int) -> str:
    """One element as iree-run-module prints it (the text after '=')."""
    return literals.format_array(flat[index:index + 1].reshape(()), kind).split("=", 1)[1]


def _first_mismatch(want: np.ndarray, got: np.ndarray, type_name: str, tolerance: Tolerance):
    """The flat index of the first element that does not match, or None."""
    if tolerance.mode == "approximate" and type_name in _FLOAT_NAMES:
        a = got.reshape(-1).astype(np.float64)
        e = want.reshape(-1).astype(np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            close = np.abs(a - e) <= tolerance.atol(type_name) + tolerance.rtol * np.abs(e)
        ok = (a == e) | (np.isnan(a) & np.isnan(e)) | (np.isfinite(e) & close)
    else:
        width = want.dtype.itemsize
        ok = (np.ascontiguousarray(want).reshape(-1).view(np.uint8).reshape(-1, width)
              == np.ascontiguousarray(got).reshape(-1).view(np.uint8).reshape(-1, width)).all(axis=1)
    bad = np.flatnonzero(~ok)
    return int(bad[0]) if bad.size else None
