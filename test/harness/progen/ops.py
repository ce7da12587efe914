"""The op builders: each draws one statement (elementwise, conversion,
matmul, reduction, transpose, reshape, broadcast, transfer, cast) and
returns its value, or raises Reject."""

from __future__ import annotations

from .draws import Draws
from .stmts import (
    Broadcast, CONVERSIONS, Cast, Collapse, Constant, Convert, Elementwise, Expand, Matmul, Reduce, Transfer,
    Transpose)
from .values import FLOATS, Reject, Value


class Ops(Draws):
    # -- op builders: each returns the new value or raises Reject ----------
    def op_elementwise(self, scope, pool, primary=None) -> Value:
        rng = self.rng
        x = primary or self.pick_value(pool)
        t = x.dtype
        same = [v for v in pool if v.dtype == t and v.shape == x.shape and v is not x]
        n_in = 1 + int(rng.integers(0, 3))
        ins = [x]
        for _ in range(n_in - 1):
            if same and self.chance(0.7):
                ins.append(self.pick(same))
            elif not any(x.dyn) and self.chance(0.5) and x.rank:
                c = Value(self.name(), t, x.shape, x.dyn, x.dims, None)
                ins.append(self.add(scope, Constant(c, self.rand_data(t, x.shape))))
                self.constants.add(c)
                self.no_use.add(c)
                self.features.add("constant")
            elif len(self.args) < 6 and self.chance(0.5):
                ins.append(self.new_arg(t, x.shape))
        style = "generic" if self.chance(0.55) else "arith"
        expr = self.rand_expr(t, len(ins), depth=2 if style == "generic" else 1, single=style == "arith")
        if ("in", 0) not in list(_leaves(expr)):  # keep the primary operand
            if style == "arith":
                expr = ("neg", ("in", 0)) if t in FLOATS else ("add", ("in", 0), ("in", 0))
            else:
                expr = ("add" if t in FLOATS else "xor", expr, ("in", 0))
        used = sorted({e[1] for e in _leaves(expr) if e[0] == "in"})
        ins2 = [ins[k] for k in used]
        remap = {k: i for i, k in enumerate(used)}
        expr = _remap(expr, remap)
        # operands on the primary's device
        moved = [ins2[0]] + [self.move(scope, v, x.device) for v in ins2[1:]]
        if style == "arith":
            moved = [moved[0]] + [self.cast_to(scope, v, moved[0]) for v in moved[1:]]
        devs = {v.device for v in moved}
        r = self.result_like(x, device=x.device if len(devs) == 1 else None)
        self.features.add(f"ew_{style}")
        return self.add(scope, Elementwise(r, moved, expr, style))


    def op_convert(self, scope, pool) -> Value:
        x = self.pick_value(pool)
        targets = [b for (a, b) in CONVERSIONS if a == x.dtype]
        if not targets:
            raise Reject("no conversion")
        r = self.result_like(x, dtype=self.pick(targets))
        self.features.add("convert")
        return self.add(scope, Convert(r, x, "arith" if self.chance(0.5) else "generic"))

    def op_matmul(self, scope, pool) -> Value:
        mats = [v for v in pool if v.rank == 2]
        if not mats:
            raise Reject("no matrix")
        a = self.pick(mats)
        k = a.shape[1]
        bs = [v for v in mats if v.dtype == a.dtype and v.shape[0] == k]
        if bs and self.chance(0.6):
            b = self.pick(bs)
        elif len(self.args) < 6 and self.chance(0.6):
            b = self.new_arg(a.dtype, (k, int(self.rng.integers(1, 9))), dyn=(a.dyn[1] and self.chance(0.5), self.chance(0.3)))
        else:
            shape = (k, int(self.rng.integers(1, 9)))
            b = self.add(scope, Constant(Value(self.name(), a.dtype, shape, (False, False), (None, None), None),
                                         self.rand_data(a.dtype, shape)))
            self.constants.add(b)
            self.no_use.add(b)
        b = self.move(scope, b, a.device)
        devs = {a.device, b.device}
        r = Value(self.name(), a.dtype, (a.shape[0], b.shape[1]), (a.dyn[0], b.dyn[1]), (a.dims[0], b.dims[1]),
                  a.device if len(devs) == 1 else None)
        self.features.add("matmul")
        return self.add(scope, Matmul(r, a, b))

    def op_reduce(self, scope, pool) -> Value:
        xs = [v for v in pool if v.rank >= 2 or (v.rank == 1 and self.chance(0.15))]
        if not xs:
            raise Reject("nothing to reduce")
        x = self.pick(xs)
        dim = int(self.rng.integers(x.rank))
        kind = self.pick(["sum", "sum", "max", "min"])
        keep = [i for i in range(x.rank) if i != dim]
        r = Value(self.name(), x.dtype, tuple(x.shape[i] for i in keep), tuple(x.dyn[i] for i in keep),
                  tuple(x.dims[i] for i in keep), x.device)
        self.features.add("reduce")
        return self.add(scope, Reduce(r, x, dim, kind, "reduce" if self.chance(0.5) else "generic"))

    def op_transpose(self, scope, pool) -> Value:
        xs = [v for v in pool if v.rank >= 2]
        if not xs:
            raise Reject("nothing to transpose")
        x = self.pick(xs)
        perm = list(range(x.rank))
        while perm == list(range(x.rank)):
            perm = [int(i) for i in self.rng.permutation(x.rank)]
        r = Value(self.name(), x.dtype, tuple(x.shape[p] for p in perm), tuple(x.dyn[p] for p in perm),
                  tuple(x.dims[p] for p in perm), x.device)
        self.features.add("transpose")
        return self.add(scope, Transpose(r, x, perm))

    def op_collapse(self, scope, pool) -> Value:
        xs = [v for v in pool if v.rank >= 2]
        if not xs:
            raise Reject("nothing to collapse")
        x = self.pick(xs)
        i = int(self.rng.integers(x.rank - 1))
        groups = [[j] for j in range(i)] + [[i, i + 1]] + [[j] for j in range(i + 2, x.rank)]
        shape = [x.shape[g[0]] if len(g) == 1 else x.shape[i] * x.shape[i + 1] for g in groups]
        dyn = [x.dyn[g[0]] if len(g) == 1 else (x.dyn[i] or x.dyn[i + 1]) for g in groups]
        dims = [x.dims[g[0]] if len(g) == 1 else None for g in groups]
        r = Value(self.name(), x.dtype, tuple(shape), tuple(dyn), tuple(dims), x.device)
        st = Collapse(r, x, groups)
        self.refresh_dims(r, st)
        self.features.add("collapse")
        return self.add(scope, st)

    def op_expand(self, scope, pool) -> Value:
        xs = [v for v in pool if 1 <= v.rank <= 2]
        if not xs:
            raise Reject("nothing to expand")
        x = self.pick(xs)
        i = int(self.rng.integers(x.rank))
        n = x.shape[i]
        if x.dyn[i]:
            parts = [(n, True, x.dims[i]), (1, False, None)]
            if self.chance(0.5):
                parts.reverse()
        else:
            fs = [f for f in range(1, n + 1) if n % f == 0]
            f = self.pick(fs)
            parts = [(f, False, None), (n // f, False, None)]
        shape, dyn, dims, groups, k = [], [], [], [], 0
        for j in range(x.rank):
            if j == i:
                groups.append([k, k + 1])
                for p in parts:
                    shape.append(p[0]); dyn.append(p[1]); dims.append(p[2])
                k += 2
            else:
                groups.append([k])
                shape.append(x.shape[j]); dyn.append(x.dyn[j]); dims.append(x.dims[j])
                k += 1
        r = Value(self.name(), x.dtype, tuple(shape), tuple(dyn), tuple(dims), x.device)
        self.features.add("expand")
        return self.add(scope, Expand(r, x, groups))

    def op_broadcast(self, scope, pool) -> Value:
        xs = [v for v in pool if 1 <= v.rank <= 2]
        if not xs:
            raise Reject("nothing to broadcast")
        x = self.pick(xs)
        pos = int(self.rng.integers(x.rank + 1))
        size = int(self.rng.integers(1, 6))
        shape, dyn, dims = list(x.shape), list(x.dyn), list(x.dims)
        shape.insert(pos, size); dyn.insert(pos, False); dims.insert(pos, None)
        r = Value(self.name(), x.dtype, tuple(shape), tuple(dyn), tuple(dims), x.device)
        self.features.add("broadcast")
        return self.add(scope, Broadcast(r, x, [pos]))

    def op_transfer(self, scope, pool) -> Value:
        x = self.pick_value(pool)
        r = self.result_like(x, device=self.other_device(x.device))
        self.features.add("transfer")
        return self.add(scope, Transfer(r, x))

    def op_cast(self, scope, pool) -> Value:
        xs = [v for v in pool if v.rank]
        if not xs:
            raise Reject("nothing to cast")
        x = self.pick(xs)
        dyn = list(x.dyn)
        i = int(self.rng.integers(x.rank))
        dyn[i] = not dyn[i]
        dims = list(x.dims)
        dims[i] = None
        r = self.result_like(x, dyn=dyn, dims=dims)
        st = Cast(r, x)
        self.refresh_dims(r, st)
        self.features.add("cast")
        return self.add(scope, st)



def _leaves(expr):
    if expr[0] in ("in", "c"):
        yield expr
        return
    for e in expr[1:]:
        if isinstance(e, tuple):
            yield from _leaves(e)


def _remap(expr, remap):
    if expr[0] == "in":
        return ("in", remap[expr[1]])
    if expr[0] == "c":
        return expr
    return (expr[0], *[_remap(e, remap) if isinstance(e, tuple) else e for e in expr[1:]])

