"""The generator: a pure function of (seed, index) to a Program."""

from __future__ import annotations

import numpy as np

from .ops import Ops
from .program import Arg, Program
from .stmts import Elementwise, Loop, Stmt, Transfer
from .values import Reject, Value


# mdc-compile rejects `--link` for a device that the program names only in
# dead code or an unused argument (test/lit/pending/link_device_only_in_dead_code.test).
# Until that is fixed, programs have no dead code and no unused arguments.
KEEP_DEAD_CODE = True
# Loop bodies that leave the carried value on another device
# (loop_carried_value_changes_device.mlir).
LOOP_BODY_MAY_END_ELSEWHERE = True
# async-external results declared away from where they are computed
# (async_external_result_view_elsewhere.mlir,
# async_external_computed_result_elsewhere_with_passthrough.mlir).
ASYNC_EXTERNAL_RESULTS_ELSEWHERE = True


class _Gen(Ops):
    """Ops, plus loops and the whole program."""

    def op_loop(self, scope, pool) -> Value:
        """scf.for carrying a value that the body moves to another device
        and (usually) back.

        Stock IREE 3.13 compiles such a loop only when the carried value's
        init and the loop's result have the same lifetime ("'scf.for' op
        along control flow edge ... successor operand type
        '!stream.resource<external>' should match ... '<transient>'", and
        the reverse): either the init is a function argument and the result
        is returned and nothing else ("external"), or the init is computed
        and the result only feeds other ops ("transient"). Both are
        generated; see test/lit/regress/README.md.
        """
        # Stock IREE 3.13 miscompiles some loops over values with two or more
        # dynamic dims (the loop starts from the wrong value; see
        # test/lit/regress/iree_loop_init_two_dynamic_dims.test): carry at
        # most one dynamic dim.
        pool = [v for v in pool if sum(v.dyn) <= 1]
        if not pool:
            raise Reject("no value with at most one dynamic dim")
        tensor_args = [a.value for a in self.args if a.value.dtype != "index" and a.value in pool]
        external = bool(tensor_args) and self.chance(0.35)
        if external:
            x = self.pick(tensor_args)
        else:
            x = self.pick_value(pool)
            c = self.rand_const(x.dtype) or 1
            pre = self.result_like(x)
            x = self.add(scope, Elementwise(pre, [x], ("add", ("in", 0), ("c", c)), "generic"))
            self.no_use.add(x)  # used by the loop only: not exported, not shared
        n_args = len(self.args)
        for _attempt in range(6):
            env_keys = set(self.env)
            del self.args[n_args:]
            acc = Value(self.name("acc"), x.dtype, x.shape, x.dyn, x.dims, x.device)
            loop_stmt = Loop(None, x, acc, [], None, None)
            if any(x.dyn) and self.chance(0.5):
                for i, dy in enumerate(acc.dyn):
                    if dy:
                        loop_stmt.acc_fresh.append((i, self.name("d")))
                acc.dims = tuple(dict(loop_stmt.acc_fresh).get(i, None) for i in range(acc.rank))
            if self.chance(0.4) and len(self.args) < 6:
                trips = int(self.rng.integers(0, 5))
                cnt = Value(f"arg{len(self.args)}", "index", (), (), (), None)
                self.args.append(Arg(cnt, None, trips))
                self.env[cnt] = (np.int64(trips), None)
                loop_stmt.count = cnt
            else:
                loop_stmt.count = int(self.rng.integers(1, 5))
            body: list[Stmt] = []
            try:
                self.env[acc] = self.env[x]
                cur = acc
                home = x.device or "device_a"
                if self.chance(0.85):
                    cur = self.add(body, Transfer(self.result_like(cur, device=self.other_device(home)), cur))
                inner_pool = [v for v in pool if v.shape == x.shape and v.dtype == x.dtype] + [cur]
                for _ in range(int(self.rng.integers(1, 3))):
                    cur = self.op_elementwise(body, inner_pool, primary=cur)
                    inner_pool.append(cur)
                if cur.device != home and (not LOOP_BODY_MAY_END_ELSEWHERE or self.chance(0.8)):
                    cur = self.add(body, Transfer(self.result_like(cur, device=home), cur))
                cur = self.cast_to(body, cur, acc)
                loop_stmt.body, loop_stmt.yielded = body, cur
                r = Value(self.name(), x.dtype, x.shape, x.dyn, x.dims, cur.device)
                loop_stmt.result = r
                if self.chance(0.5):
                    r.dims = tuple(None for _ in r.dims)
                    self.refresh_dims(r, loop_stmt)
                self.add(scope, loop_stmt)
            except Reject:
                for k in set(self.env) - env_keys:
                    del self.env[k]
                continue
            self.features |= {"loop", f"loop_{'external' if external else 'transient'}"}
            if isinstance(loop_stmt.count, Value):
                self.features.add("loop_dynamic_count")
            if external:  # returned, and used by nothing else
                self.forced_results.append((r, x.device or "device_a"))
                self.no_use.add(r)
                return r
            # Only a real computation reads the loop result (a reshape, cast
            # or folded op in between would export it: see above).
            self.no_use.add(r)
            c = self.rand_const(r.dtype) or 1
            return self.add(scope, Elementwise(self.result_like(r), [r], ("add", ("in", 0), ("c", c)), "generic"))
        del self.args[n_args:]
        raise Reject("no bounded loop body")



    # -- the whole program --------------------------------------------------
    def program(self) -> Program:
        rng = self.rng
        model = self.model = "async-external" if self.chance(0.3) else "async-internal"
        pool: list[Value] = []
        for _ in range(int(rng.integers(1, 3))):
            rank = int(rng.choice([1, 2, 2, 3]))
            shape = tuple(int(s) for s in rng.integers(1, 9, rank))
            pool.append(self.new_arg(self.dtype, shape))
        stmts: list[Stmt] = []
        builders = [(self.op_elementwise, 6), (self.op_transfer, 4), (self.op_matmul, 2), (self.op_reduce, 2),
                    (self.op_transpose, 1.5), (self.op_collapse, 1), (self.op_expand, 1), (self.op_broadcast, 1.5),
                    (self.op_convert, 1), (self.op_cast, 0.7), (self.op_loop, 1.2)]
        weights = np.array([w for _, w in builders])
        target = int(rng.integers(3, 11))
        made = tries = 0
        while made < target and tries < 60:
            tries += 1
            build = builders[int(rng.choice(len(builders), p=weights / weights.sum()))][0]
            before = len(stmts)
            try:
                v = build(stmts, pool)
            except Reject:
                del stmts[before:]  # a rejected builder may have appended a transfer or constant
                self._prune_env(stmts)
                continue
            pool.extend(s.result for s in stmts[before:] if s.result not in pool and s.result not in self.no_use)
            made += 1
        # Results: the newest values first (they are rarely used by others).
        used = {o for s in stmts for o in s.operands()}
        candidates = [v for v in reversed(pool) if v.dtype != "index"]
        sinks = [v for v in candidates if v not in used] or candidates
        n_res = min(len(sinks), int(rng.integers(2, 5)))
        chosen = sinks[:n_res]
        results = []
        for v in chosen:
            home = v.device or "device_a"
            d = home if self.chance(0.6) else self.pick(list(self.devices))
            if self.model == "async-external" and not ASYNC_EXTERNAL_RESULTS_ELSEWHERE:
                d = home
            if d != home:
                self.features.add("result_elsewhere")
            if d != "device_a":
                self.features.add(f"result_on_{d[-1]}")
            results.append((v, d))
        results += self.forced_results
        if not KEEP_DEAD_CODE:
            stmts = live(stmts, [v for v, _ in results])
            used = {o for s in stmts for o in s.operands()} | {v for v, _ in results}
            self.args = [a for a in self.args if a.value in used]
        self.features |= {v.dtype for v, _ in results}
        prog = Program(self.seed, self.index, f"p{self.index}", self.ndev, model, self.args, stmts, results,
                       self.features)
        prog.features.add(f"{len(prog.devices())}dev")
        return prog

    def _prune_env(self, stmts):
        live = {a.value for a in self.args} | {s.result for s in stmts}
        for s in stmts:
            if isinstance(s, Loop):
                live |= {b.result for b in s.body} | {s.acc}
        for k in [k for k in self.env if k not in live]:
            del self.env[k]


def live(stmts: list[Stmt], roots: list[Value]) -> list[Stmt]:
    """The statements the roots depend on (a loop keeps its whole body)."""
    need = set(roots)
    keep = []
    for s in reversed(stmts):
        if s.result in need or any(s.result is r for r in need):
            keep.append(s)
            need |= set(s.operands())
    keep.reverse()
    return keep



def generate(seed: int, index: int) -> Program:
    """Program `index` of run `seed`: a pure function of both."""
    for attempt in range(20):
        rng = np.random.default_rng([seed, index, attempt])
        prog = _Gen(rng, seed, index).program()
        if prog.stmts and len(prog.devices()) >= 2:
            # The reference must evaluate from scratch exactly as generated.
            prog.reference()
            return prog
    raise RuntimeError(f"progen: no program for seed={seed} index={index}")


def module_text(programs: list[Program]) -> str:
    return "\n".join(p.text() for p in programs)
