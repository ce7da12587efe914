"""Statements: each prints its MLIR and evaluates itself with numpy, so the
program text and the reference cannot disagree."""

from __future__ import annotations

from typing import Optional

import numpy as np

from .expr import Body, TENSOR_FLOAT, TENSOR_INT, emit_expr, eval_expr
from .values import (
    FLOATS, I32_MAX, I32_MIN, TINY, UNIT, Value, check_float, dense, fmt_scalar, round_err, wrap, zeros_err)


def identity_map(rank: int) -> str:
    d = ", ".join(f"d{i}" for i in range(rank))
    return f"affine_map<({d}) -> ({d})>"


def empty(name: str, v: Value) -> str:
    return f"%{name} = tensor.empty({', '.join('%' + d for d in v.dyn_dims)}) : {v.type}"


class Stmt:
    result: Value
    fresh: list  # (dim index, SSA name) of dynamic sizes read back with tensor.dim

    def operands(self) -> list[Value]:
        raise NotImplementedError

    def emit(self, out: list[str]) -> None:
        raise NotImplementedError

    def evaluate(self, env: dict) -> None:
        raise NotImplementedError

    def emit_fresh(self, out: list[str]) -> None:
        for i, d in getattr(self, "fresh", []):
            out.append(f"%{d} = tensor.dim %{self.result.name}, %c{i} : {self.result.type}")


class Elementwise(Stmt):
    def __init__(self, result, ins, expr, style):
        self.result, self.ins, self.expr, self.style, self.fresh = result, ins, expr, style, []

    def operands(self):
        return list(self.ins)

    def emit(self, out):
        r, t = self.result, self.result.dtype
        if self.style == "arith":
            kind = self.expr[0]
            opname = (TENSOR_FLOAT if t in FLOATS else TENSOR_INT)[kind]
            args = []
            for k, e in enumerate(self.expr[1:]):
                if e[0] == "in":
                    args.append("%" + self.ins[e[1]].name)
                else:  # a constant tensor of the result's type
                    c = f"{r.name}_k{k}"
                    if any(r.dyn):
                        out.append(f"%{c}s = arith.constant {fmt_scalar(e[1], t)} : {t}")
                        out.append(empty(c + "e", r))
                        out.append(f"%{c} = linalg.fill ins(%{c}s : {t}) outs(%{c}e : {r.type}) -> {r.type}")
                    else:
                        out.append(f"%{c} = arith.constant dense<{fmt_scalar(e[1], t)}> : {r.type}")
                    args.append("%" + c)
            out.append(f"%{r.name} = {opname} {', '.join(args)} : {r.type}")
        else:
            out.append(empty(r.name + "_e", r))
            body = Body(t, "s")
            names = [f"%i{k}" for k in range(len(self.ins))]
            y = emit_expr(self.expr, body, names)
            maps = ", ".join([identity_map(r.rank)] * (len(self.ins) + 1))
            iters = ", ".join(['"parallel"'] * r.rank)
            ins = ", ".join("%" + v.name for v in self.ins)
            tys = ", ".join(v.type for v in self.ins)
            args = ", ".join([f"{n}: {t}" for n in names] + [f"%o: {t}"])
            out.append(f"%{r.name} = linalg.generic {{indexing_maps = [{maps}], iterator_types = [{iters}]}} "
                       f"ins({ins} : {tys}) outs(%{r.name}_e : {r.type}) {{")
            out.append(f"^bb0({args}):")
            out.extend("  " + line for line in body.lines)
            out.append(f"  linalg.yield {y} : {t}")
            out.append(f"}} -> {r.type}")
        self.emit_fresh(out)

    def evaluate(self, env):
        env[self.result] = eval_expr(self.expr, self.result.dtype, [env[v] for v in self.ins])
        v, e = env[self.result]
        env[self.result] = (np.broadcast_to(v, self.result.shape).astype(v.dtype),
                            np.broadcast_to(e, self.result.shape).astype(np.float64))


# Conversions: (from, to) -> arith op on tensors / scalars.
CONVERSIONS = {("f32", "f16"): "arith.truncf", ("f16", "f32"): "arith.extf",
               ("i32", "f32"): "arith.sitofp", ("i8", "f16"): "arith.sitofp", ("i8", "f32"): "arith.sitofp",
               ("i8", "i32"): "arith.extsi", ("i32", "i8"): "arith.trunci", ("i32", "f16"): "arith.sitofp"}


class Convert(Stmt):
    def __init__(self, result, x, style):
        self.result, self.x, self.style, self.fresh = result, x, style, []

    def operands(self):
        return [self.x]

    def emit(self, out):
        r, x = self.result, self.x
        op = CONVERSIONS[(x.dtype, r.dtype)]
        if self.style == "arith":
            out.append(f"%{r.name} = {op} %{x.name} : {x.type} to {r.type}")
        else:
            out.append(empty(r.name + "_e", r))
            maps = ", ".join([identity_map(r.rank)] * 2)
            iters = ", ".join(['"parallel"'] * r.rank)
            out.append(f"%{r.name} = linalg.generic {{indexing_maps = [{maps}], iterator_types = [{iters}]}} "
                       f"ins(%{x.name} : {x.type}) outs(%{r.name}_e : {r.type}) {{")
            out.append(f"^bb0(%i0: {x.dtype}, %o: {r.dtype}):")
            out.append(f"  %s1 = {op} %i0 : {x.dtype} to {r.dtype}")
            out.append(f"  linalg.yield %s1 : {r.dtype}")
            out.append(f"}} -> {r.type}")
        self.emit_fresh(out)

    def evaluate(self, env):
        a, e = env[self.x]
        t = self.result.dtype
        if t in FLOATS:
            r = a.astype(np.float64)
            check_float(t, r)
            e = e + round_err(t, r)
        else:
            r = wrap(t, a)
        env[self.result] = (r, e)


class Matmul(Stmt):
    def __init__(self, result, a, b):
        self.result, self.a, self.b, self.fresh = result, a, b, []

    def operands(self):
        return [self.a, self.b]

    def emit(self, out):
        r, t = self.result, self.result.dtype
        out.append(f"%{r.name}_z = arith.constant {fmt_scalar(0, t)} : {t}")
        out.append(empty(r.name + "_e", r))
        out.append(f"%{r.name}_f = linalg.fill ins(%{r.name}_z : {t}) outs(%{r.name}_e : {r.type}) -> {r.type}")
        out.append(f"%{r.name} = linalg.matmul ins(%{self.a.name}, %{self.b.name} : {self.a.type}, {self.b.type}) "
                   f"outs(%{r.name}_f : {r.type}) -> {r.type}")
        self.emit_fresh(out)

    def evaluate(self, env):
        (a, ea), (b, eb) = env[self.a], env[self.b]
        t = self.result.dtype
        if t in FLOATS:
            r = a @ b
            check_float(t, r)
            k = a.shape[1]
            e = (np.abs(a) @ eb + ea @ np.abs(b) + ea @ eb
                 + (k + 1) * UNIT[t] * (np.abs(a) @ np.abs(b)) + (k + 1) * TINY[t])
        else:
            r, e = wrap(t, a @ b), zeros_err(self.result.shape)
        env[self.result] = (r, e)


REDUCE_INIT = {
    ("sum", "f32"): "0.000000e+00", ("sum", "f16"): "0.000000e+00", ("sum", "i32"): "0", ("sum", "i8"): "0",
    ("max", "f32"): "0xFF800000", ("max", "f16"): "0xFC00", ("min", "f32"): "0x7F800000", ("min", "f16"): "0x7C00",
    ("max", "i32"): str(I32_MIN), ("min", "i32"): str(I32_MAX), ("max", "i8"): "-128", ("min", "i8"): "127",
}


class Reduce(Stmt):
    def __init__(self, result, x, dim, kind, style):
        self.result, self.x, self.dim, self.kind, self.style, self.fresh = result, x, dim, kind, style, []

    def operands(self):
        return [self.x]

    def emit(self, out):
        r, x, t = self.result, self.x, self.result.dtype
        op = {"sum": "arith.addf", "max": "arith.maximumf", "min": "arith.minimumf"}[self.kind] if t in FLOATS else \
            {"sum": "arith.addi", "max": "arith.maxsi", "min": "arith.minsi"}[self.kind]
        out.append(f"%{r.name}_z = arith.constant {REDUCE_INIT[(self.kind, t)]} : {t}")
        out.append(empty(r.name + "_e", r))
        out.append(f"%{r.name}_f = linalg.fill ins(%{r.name}_z : {t}) outs(%{r.name}_e : {r.type}) -> {r.type}")
        if self.style == "reduce":
            out.append(f"%{r.name} = linalg.reduce ins(%{x.name} : {x.type}) outs(%{r.name}_f : {r.type}) "
                       f"dimensions = [{self.dim}]")
            out.append(f"  (%in: {t}, %acc: {t}) {{")
            out.append(f"    %s1 = {op} %in, %acc : {t}")
            out.append(f"    linalg.yield %s1 : {t}")
            out.append("  }")
        else:
            ds = [f"d{i}" for i in range(x.rank)]
            out_map = f"affine_map<({', '.join(ds)}) -> ({', '.join(d for i, d in enumerate(ds) if i != self.dim)})>"
            iters = ", ".join('"reduction"' if i == self.dim else '"parallel"' for i in range(x.rank))
            out.append(f"%{r.name} = linalg.generic {{indexing_maps = [{identity_map(x.rank)}, {out_map}], "
                       f"iterator_types = [{iters}]}} ins(%{x.name} : {x.type}) outs(%{r.name}_f : {r.type}) {{")
            out.append(f"^bb0(%in: {t}, %acc: {t}):")
            out.append(f"  %s1 = {op} %in, %acc : {t}")
            out.append(f"  linalg.yield %s1 : {t}")
            out.append(f"}} -> {r.type}")
        self.emit_fresh(out)

    def evaluate(self, env):
        a, e = env[self.x]
        t = self.result.dtype
        if self.kind == "sum":
            r = a.sum(axis=self.dim)
            if t in FLOATS:
                n = a.shape[self.dim]
                err = e.sum(axis=self.dim) + (n + 1) * (UNIT[t] * np.abs(a).sum(axis=self.dim) + TINY[t])
            else:
                err = None
        else:
            r = (a.max if self.kind == "max" else a.min)(axis=self.dim)
            err = e.max(axis=self.dim) if t in FLOATS else None
        if t in FLOATS:
            r = np.asarray(r, np.float64)
            check_float(t, r)
            env[self.result] = (r, np.asarray(err, np.float64))
        else:
            env[self.result] = (wrap(t, np.asarray(r)), zeros_err(self.result.shape))


class Transpose(Stmt):
    def __init__(self, result, x, perm):
        self.result, self.x, self.perm, self.fresh = result, x, perm, []

    def operands(self):
        return [self.x]

    def emit(self, out):
        r, x = self.result, self.x
        out.append(empty(r.name + "_e", r))
        out.append(f"%{r.name} = linalg.transpose ins(%{x.name} : {x.type}) outs(%{r.name}_e : {r.type}) "
                   f"permutation = [{', '.join(map(str, self.perm))}]")
        self.emit_fresh(out)

    def evaluate(self, env):
        a, e = env[self.x]
        env[self.result] = (np.transpose(a, self.perm), np.transpose(e, self.perm))


class _Reshape(Stmt):
    """A reshape by reassociation groups (collapse_shape, expand_shape): the
    same bytes, so numpy reshapes value and error bound alike."""

    def __init__(self, result, x, groups):
        self.result, self.x, self.groups, self.fresh = result, x, groups, []

    def operands(self):
        return [self.x]

    def groups_text(self) -> str:
        return ", ".join("[" + ", ".join(map(str, grp)) + "]" for grp in self.groups)

    def evaluate(self, env):
        a, e = env[self.x]
        env[self.result] = (a.reshape(self.result.shape), e.reshape(self.result.shape))


class Collapse(_Reshape):
    def emit(self, out):
        r, x = self.result, self.x
        out.append(f"%{r.name} = tensor.collapse_shape %{x.name} [{self.groups_text()}] : {x.type} into {r.type}")
        self.emit_fresh(out)


class Expand(_Reshape):
    def emit(self, out):
        r, x = self.result, self.x
        shape = ", ".join("%" + d if dy else str(n) for n, dy, d in zip(r.shape, r.dyn, r.dims))
        out.append(f"%{r.name} = tensor.expand_shape %{x.name} [{self.groups_text()}] output_shape [{shape}] "
                   f": {x.type} into {r.type}")
        self.emit_fresh(out)


class Broadcast(Stmt):
    def __init__(self, result, x, added):
        self.result, self.x, self.added, self.fresh = result, x, added, []

    def operands(self):
        return [self.x]

    def emit(self, out):
        r, x = self.result, self.x
        out.append(empty(r.name + "_e", r))
        out.append(f"%{r.name} = linalg.broadcast ins(%{x.name} : {x.type}) outs(%{r.name}_e : {r.type}) "
                   f"dimensions = [{', '.join(map(str, self.added))}]")
        self.emit_fresh(out)

    def evaluate(self, env):
        a, e = env[self.x]
        shape = self.result.shape
        a2, e2 = a, e
        for d in self.added:
            a2, e2 = np.expand_dims(a2, d), np.expand_dims(e2, d)
        env[self.result] = (np.broadcast_to(a2, shape).copy(), np.broadcast_to(e2, shape).copy())


class Transfer(Stmt):
    def __init__(self, result, x):
        self.result, self.x, self.fresh = result, x, []

    def operands(self):
        return [self.x]

    def emit(self, out):
        out.append(f"%{self.result.name} = flow.tensor.transfer %{self.x.name} : {self.x.type_with_dims()} "
                   f"to #hal.device.promise<@{self.result.device}>")
        self.emit_fresh(out)

    def evaluate(self, env):
        env[self.result] = env[self.x]


class Cast(Stmt):
    """tensor.cast between static and dynamic sizes of one shape."""

    def __init__(self, result, x):
        self.result, self.x, self.fresh = result, x, []

    def operands(self):
        return [self.x]

    def emit(self, out):
        out.append(f"%{self.result.name} = tensor.cast %{self.x.name} : {self.x.type} to {self.result.type}")
        self.emit_fresh(out)

    def evaluate(self, env):
        env[self.result] = env[self.x]


class Constant(Stmt):
    def __init__(self, result, array):
        self.result, self.array, self.fresh = result, array, []

    def operands(self):
        return []

    def emit(self, out):
        r = self.result
        out.append(f"%{r.name} = arith.constant dense<{dense(self.array, r.dtype)}> : {r.type}")

    def evaluate(self, env):
        t = self.result.dtype
        a = self.array.astype(np.float64 if t in FLOATS else np.int64)
        env[self.result] = (a, zeros_err(a.shape))


class Loop(Stmt):
    """scf.for with a loop-carried value; the body usually moves it to
    another device and back."""

    def __init__(self, result, init, acc, body, yielded, count):
        self.result, self.init, self.acc, self.body, self.yielded, self.count = result, init, acc, body, yielded, count
        self.fresh, self.acc_fresh = [], []
        self.count_const: Optional[int] = None  # or count is an index Value

    def operands(self):
        inner = {s.result for s in self.body} | {self.acc}
        used = [self.init] + ([self.count] if isinstance(self.count, Value) else [])
        for s in self.body:
            used += [v for v in s.operands() if v not in inner and v not in used]
        return used

    def emit(self, out):
        r = self.result
        if isinstance(self.count, Value):
            n = "%" + self.count.name
        else:
            n = f"%{r.name}_n"
            out.append(f"{n} = arith.constant {self.count} : index")
        out.append(f"%{r.name} = scf.for %{r.name}_iv = %c0 to {n} step %c1 "
                   f"iter_args(%{self.acc.name} = %{self.init.name}) -> ({r.type}) {{")
        inner: list[str] = []
        for i, d in self.acc_fresh:
            inner.append(f"%{d} = tensor.dim %{self.acc.name}, %c{i} : {self.acc.type}")
        for s in self.body:
            s.emit(inner)
        inner.append(f"scf.yield %{self.yielded.name} : {self.yielded.type}")
        out.extend("  " + line for line in inner)
        out.append("}")
        self.emit_fresh(out)

    def trips(self, env) -> int:
        return int(env[self.count][0]) if isinstance(self.count, Value) else self.count

    def evaluate(self, env):
        env[self.acc] = env[self.init]
        for _ in range(self.trips(env)):
            for s in self.body:
                s.evaluate(env)
            env[self.acc] = env[self.yielded]
        env[self.result] = env[self.acc]
