"""Elementwise expressions: a small tree, printed as a linalg.generic body
and evaluated per element."""

from __future__ import annotations

from typing import Optional

import numpy as np

from .values import FLOATS, UNIT, check_float, fmt_scalar, round_err, wrap


# The tree:
#   ("in", k)  operand k        ("c", x)  constant
#   (op, child, ...)            op in FLOAT_OPS or INT_OPS
FLOAT_OPS = {"add": 2, "sub": 2, "mul": 2, "max": 2, "min": 2, "neg": 1, "abs": 1, "tanh": 1, "div": 2}
INT_OPS = {"add": 2, "sub": 2, "mul": 2, "max": 2, "min": 2, "and": 2, "or": 2, "xor": 2,
           "shr": 1, "divc": 1, "remc": 1, "sel": 4}
# Single ops that also exist as arith/math ops on whole tensors.
TENSOR_FLOAT = {"add": "arith.addf", "sub": "arith.subf", "mul": "arith.mulf", "max": "arith.maximumf",
                "min": "arith.minimumf", "neg": "arith.negf", "abs": "math.absf", "tanh": "math.tanh"}
TENSOR_INT = {"add": "arith.addi", "sub": "arith.subi", "mul": "arith.muli", "max": "arith.maxsi",
              "min": "arith.minsi", "and": "arith.andi", "or": "arith.ori", "xor": "arith.xori"}


def eval_expr(expr, dtype: str, ins: list[tuple[np.ndarray, np.ndarray]]):
    """-> (value, error bound), float64 arrays (error zeros for integers)."""
    kind = expr[0]
    if kind == "in":
        return ins[expr[1]]
    if kind == "c":
        v = np.float64(expr[1]) if dtype in FLOATS else np.int64(expr[1])
        return v, np.float64(0.0)
    args = [eval_expr(e, dtype, ins) for e in expr[1:] if isinstance(e, tuple)]
    if dtype in FLOATS:
        u = UNIT[dtype]
        if kind in ("add", "sub"):
            (a, ea), (b, eb) = args
            r = a + b if kind == "add" else a - b
            e = ea + eb
        elif kind == "mul":
            (a, ea), (b, eb) = args
            r, e = a * b, np.abs(a) * eb + np.abs(b) * ea + ea * eb
        elif kind in ("max", "min"):
            (a, ea), (b, eb) = args
            r, e = (np.maximum if kind == "max" else np.minimum)(a, b), np.maximum(ea, eb)
        elif kind == "neg":
            (a, ea), = args
            return -a, ea
        elif kind == "abs":
            (a, ea), = args
            return np.abs(a), ea
        elif kind == "tanh":
            (a, ea), = args
            r, e = np.tanh(a), ea + 4 * u
        elif kind == "div":  # x / (|y| + 1)
            (a, ea), (b, eb) = args
            q = np.abs(b) + 1.0
            r = a / q
            e = ea / q + np.abs(a) * (eb + round_err(dtype, q)) / (q * q)
        else:
            raise AssertionError(kind)
        r = np.asarray(r, np.float64)
        check_float(dtype, r)
        return r, e + round_err(dtype, r)
    # integers
    if kind in ("add", "sub", "mul", "max", "min", "and", "or", "xor"):
        (a, _), (b, _) = args
        r = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "max": np.maximum,
             "min": np.minimum, "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[kind](a, b)
    elif kind == "shr":
        (a, _), = args
        r = np.right_shift(a, expr[2])
    elif kind == "divc":  # signed division by a positive constant, rounding to zero
        (a, _), = args
        c = expr[2]
        r = np.sign(a) * (np.abs(a) // c)
    elif kind == "remc":
        (a, _), = args
        c = expr[2]
        r = np.sign(a) * (np.abs(a) % c)
    elif kind == "sel":  # a < b ? x : y
        (a, _), (b, _), (x, _), (y, _) = args
        r = np.where(a < b, x, y)
    else:
        raise AssertionError(kind)
    return wrap(dtype, np.asarray(r, np.int64)), np.float64(0.0)


class Body:
    """Scalar SSA lines of a linalg region."""

    def __init__(self, dtype: str, prefix: str):
        self.dtype, self.prefix, self.lines, self.n = dtype, prefix, [], 0

    def new(self) -> str:
        self.n += 1
        return f"%{self.prefix}{self.n}"

    def op(self, text: str) -> str:
        name = self.new()
        self.lines.append(f"{name} = {text}")
        return name

    def const(self, x, dtype: Optional[str] = None) -> str:
        dtype = dtype or self.dtype
        return self.op(f"arith.constant {fmt_scalar(x, dtype)} : {dtype}")


def emit_expr(expr, body: Body, ins: list[str]) -> str:
    kind, t = expr[0], body.dtype
    if kind == "in":
        return ins[expr[1]]
    if kind == "c":
        return body.const(expr[1])
    args = [emit_expr(e, body, ins) for e in expr[1:] if isinstance(e, tuple)]
    if t in FLOATS:
        if kind in TENSOR_FLOAT:
            return body.op(f"{TENSOR_FLOAT[kind]} {', '.join(args)} : {t}")
        if kind == "div":
            q = body.op(f"arith.addf {body.op(f'math.absf {args[1]} : {t}')}, {body.const(1.0)} : {t}")
            return body.op(f"arith.divf {args[0]}, {q} : {t}")
    else:
        if kind in TENSOR_INT:
            return body.op(f"{TENSOR_INT[kind]} {', '.join(args)} : {t}")
        if kind in ("shr", "divc", "remc"):
            op = {"shr": "arith.shrsi", "divc": "arith.divsi", "remc": "arith.remsi"}[kind]
            return body.op(f"{op} {args[0]}, {body.const(expr[2])} : {t}")
        if kind == "sel":
            c = body.op(f"arith.cmpi slt, {args[0]}, {args[1]} : {t}")
            return body.op(f"arith.select {c}, {args[2]}, {args[3]} : {t}")
    raise AssertionError(kind)


def expr_size(expr) -> int:
    return 1 + sum(expr_size(e) for e in expr[1:] if isinstance(e, tuple))
