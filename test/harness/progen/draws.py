"""The generator's state and its random draws: names, devices, values,
arguments, transfers and expressions. Ops (ops.py) and whole programs
(generator.py) are built on it; every draw comes from one seeded
numpy Generator, in a fixed order, so a seed and index repeat a program."""

from __future__ import annotations

from typing import Optional

import numpy as np

from .expr import FLOAT_OPS, INT_OPS, TENSOR_FLOAT, TENSOR_INT
from .program import Arg
from .stmts import Cast, Stmt, Transfer
from .values import DEVICES, FLOATS, NP, Value, zeros_err


# Constants moved to device_b/device_c with flow.tensor.transfer
# (transferred_constant.mlir).
TRANSFER_CONSTANTS = True


class Draws:
    def __init__(self, rng: np.random.Generator, seed: int, index: int):
        self.rng = rng
        self.seed, self.index = seed, index
        self.ndev = 3 if rng.random() < 0.35 else 2
        self.devices = DEVICES[: self.ndev]
        self.n = 0
        self.args: list[Arg] = []
        self.env: dict = {}
        self.features: set = set()
        self.forced_results: list = []
        self.no_use: set = set()
        self.constants: set = set()
        self.dtype = str(rng.choice(["f32", "f16", "i32", "i8"], p=[0.35, 0.2, 0.25, 0.2]))

    # -- helpers ----------------------------------------------------------
    def name(self, prefix="v") -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def pick(self, seq):
        return seq[int(self.rng.integers(len(seq)))]

    def other_device(self, d: Optional[str]) -> str:
        return self.pick([x for x in self.devices if x != d])

    def rand_data(self, dtype: str, shape) -> np.ndarray:
        rng = self.rng
        if dtype in FLOATS:
            data = np.round(rng.uniform(-2, 2, shape) * 16) / 16
        elif dtype == "i32":
            data = rng.integers(-40, 41, shape)
        else:
            data = rng.integers(-128, 128, shape)
        return np.asarray(data).astype(NP[dtype])  # 0-d arrays stay arrays

    def new_arg(self, dtype: str, shape, dyn=None) -> Value:
        name = f"arg{len(self.args)}"
        if dyn is None:
            dyn = tuple(self.chance(0.2) for _ in shape)
        dims = tuple(self.name("d") if dy else None for dy in dyn)
        aff = "device_a" if self.chance(0.85) else self.other_device("device_a")
        v = Value(name, dtype, tuple(shape), tuple(dyn), dims, aff)
        data = self.rand_data(dtype, shape)
        self.args.append(Arg(v, aff, data))
        base = data.astype(np.float64 if dtype in FLOATS else np.int64)
        self.env[v] = (base, zeros_err(data.shape))
        if any(dyn):
            self.features.add("dynamic")
        if aff != "device_a":
            self.features.add(f"arg_on_{aff[-1]}")
        return v

    def result_like(self, x: Value, dtype=None, shape=None, dyn=None, dims=None, device="same") -> Value:
        return Value(self.name(), dtype or x.dtype, x.shape if shape is None else tuple(shape),
                     x.dyn if dyn is None else tuple(dyn), x.dims if dims is None else tuple(dims),
                     x.device if device == "same" else device)

    def add(self, scope: list, stmt: Stmt) -> Value:
        """Evaluate (may raise Reject) and append."""
        stmt.evaluate(self.env)
        scope.append(stmt)
        return stmt.result

    def refresh_dims(self, v: Value, stmt: Stmt) -> None:
        """Dynamic sizes of `v` that have no SSA name get one (tensor.dim)."""
        dims = list(v.dims)
        for i, dy in enumerate(v.dyn):
            if dy and dims[i] is None:
                dims[i] = self.name("d")
                stmt.fresh.append((i, dims[i]))
        v.dims = tuple(dims)

    def move(self, scope, x: Value, device: Optional[str]) -> Value:
        """Make `x` available on `device`: usually an explicit transfer,
        sometimes left to IREE (an implicit crossing)."""
        if device is None or x.device == device:
            return x
        if x in self.constants and device != "device_a" and not TRANSFER_CONSTANTS:
            return x  # used where it is needed, which works
        if self.chance(0.2):
            self.features.add("implicit_crossing")
            return x
        r = self.result_like(x, device=device)
        self.features.add("transfer")
        if x in self.constants:
            self.features.add("constant_transfer")
        return self.add(scope, Transfer(r, x))


    def cast_to(self, scope, v: Value, like: Value) -> Value:
        if v.type == like.type:
            return v
        r = self.result_like(v, dyn=like.dyn, dims=like.dims)
        self.features.add("cast")
        return self.add(scope, Cast(r, v))

    def rand_expr(self, t: str, n_in: int, depth: int, single: bool):
        rng = self.rng
        ops = FLOAT_OPS if t in FLOATS else INT_OPS
        if single:
            names = list(TENSOR_FLOAT if t in FLOATS else TENSOR_INT)
            if n_in == 1:
                names = [k for k in names if ops[k] == 1] or names
            k = self.pick(names)
            args = [("in", 0)] * ops[k]
            if ops[k] == 2 and n_in >= 2:
                args = [("in", 0), ("in", 1)]
            elif ops[k] == 2 and n_in == 1 and self.chance(0.5):
                args = [("in", 0), ("c", self.rand_const(t))]
            return (k, *args)

        def leaf():
            if self.chance(0.2):
                return ("c", self.rand_const(t))
            return ("in", int(rng.integers(n_in)))

        def build(d):
            if d == 0 or self.chance(0.25):
                return leaf()
            k = self.pick(list(ops))
            if k in ("shr", "divc", "remc"):
                return (k, build(d - 1), int(rng.integers(1, 4)) if k == "shr" else int(rng.integers(2, 6)))
            return (k, *[build(d - 1) for _ in range(ops[k])])

        e = build(depth)
        if e[0] in ("in", "c"):
            e = ("add", e, ("in", 0))
        return e

    def rand_const(self, t: str):
        if t in FLOATS:
            return float(self.rng.integers(-16, 17)) / 8
        return int(self.rng.integers(-5, 6))

    def pick_value(self, pool) -> Value:
        # Prefer recent values: the DAG grows deeper instead of wider.
        w = np.arange(1, len(pool) + 1, dtype=np.float64) ** 1.5
        return pool[int(self.rng.choice(len(pool), p=w / w.sum()))]
