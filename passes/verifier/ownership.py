"""Ownership: which device's memory each buffer, allocator, command buffer
and fence of a HAL-level module belongs to, computed once over the module.

A may-analysis follows where each value can come from: device globals
(recognised by module_facts.py), through the HAL ops of hal_transfer.py,
``arith.select``, branches to block arguments (``cf``; ``scf.if``/``scf.for``
results where those remain), globals (to a fixpoint over all initializers
and functions) and calls: each callee is analysed once per distinct set of
argument origins (a *context*), so mdc's ``@__mdc_stage`` is seen once per
transfer direction. The buffer of an imported argument belongs to the
allocator its ``hal.buffer.assert`` names, unless the module records it as
given in a device's pinned memory (``mdc.pinned_arguments``): then it is
that device's host-visible memory. A fence argument of a public function is
the caller's. A value whose origin is unknown has no facts.

The result lists every op of every analysed context in the order the rules
judge them (rules.py): each function's ops in program order, a callee's
right after the call that reaches it with a context not seen before.
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir
from iree.compiler.dialects import cf as _cf  # noqa: F401  (registers op views)
from iree.compiler.dialects import hal as _hal  # noqa: F401

from ..infra.diagnostics import format_location
from ..ir.ir_util import top_level_ops, walk
from .facts import CALLER, EMPTY, Buffer, Device, Fence
from .hal_transfer import TRANSFERS
from ..ir import ir_adapter as irx


@dataclasses.dataclass
class Function:
    """A ``util.func`` or ``util.initializer`` with its ops in program order."""

    op: ir.Operation
    name: str
    ops: list  # (index, op), nested regions included; index: module-wide program order
    entry_args: list
    public: bool


@dataclasses.dataclass
class Context:
    """A function analysed with one set of argument origins."""

    function: Function
    state: dict  # value -> facts

    def facts(self, value) -> frozenset:
        return self.state.get(value, EMPTY)


@dataclasses.dataclass
class Ownership:
    """The analysis's answer. ``sites``: (context, index, op) in the order
    the rules judge them; ``op_names``: program order -> op name."""

    sites: list
    op_names: dict
    _locations: dict

    def op_name(self, index: int) -> str | None:
        return self.op_names.get(index)

    def location(self, index: int, op) -> str | None:
        """``op``'s printed location (``index``: its program order)."""
        if index not in self._locations:
            self._locations[index] = format_location(op.location)
        return self._locations[index]


def analyse(module, devices, pinned: dict) -> Ownership:
    """The ownership of every value of ``module`` whose device globals are
    ``devices``; ``pinned``: {function: {argument: device}} of arguments
    given in a device's pinned memory."""
    return _Solver(module, devices, pinned).solve()


def collect_functions(module) -> tuple[dict, list, dict]:
    """({name: Function}, [initializer Function], {index: op name})."""
    functions, initializers, op_names = {}, [], {}
    index = 0
    for op in top_level_ops(module):
        if op.name not in (irx.UTIL_FUNC, irx.UTIL_INITIALIZER):
            continue
        ops = []
        for inner in walk(op):
            ops.append((index, inner))
            op_names[index] = inner.name
            index += 1
        blocks = list(op.regions[0].blocks)
        args = list(blocks[0].arguments) if blocks else []
        if op.name == irx.UTIL_INITIALIZER:
            initializers.append(Function(op, f"<initializer {len(initializers)}>", ops, args, False))
            continue
        name = op.attributes["sym_name"].value
        vis = op.attributes["sym_visibility"].value if "sym_visibility" in op.attributes else "public"
        functions[name] = Function(op, name, ops, args, vis == "public" and bool(blocks))
    return functions, initializers, op_names


def _callee(op) -> str:
    return ir.FlatSymbolRefAttr(op.attributes["callee"]).value


def _join(state: dict, value, facts) -> bool:
    if not facts:
        return False
    old = state.get(value, EMPTY)
    new = old | facts
    if new == old:
        return False
    state[value] = new
    return True


_REGION_PARENTS = (irx.SCF_IF, irx.SCF_FOR, irx.SCF_INDEX_SWITCH, irx.SCF_EXECUTE_REGION)


class _Solver:
    def __init__(self, module, devices, pinned: dict):
        self.functions, self.initializers, self.op_names = collect_functions(module)
        self.pinned = pinned
        self.globals: dict[str, frozenset] = {name: frozenset({Device.of(name)}) for name in devices}
        self.memo: dict = {}  # (function name, context) -> (state, returns)
        self.in_progress: set = set()
        self.globals_changed = False
        self.locations: dict[int, str | None] = {}

    def _loc(self, index: int, op) -> str | None:
        if index not in self.locations:
            self.locations[index] = format_location(op.location)
        return self.locations[index]

    def _entries(self) -> list:
        """(function, argument facts) for every function nothing calls."""
        called = {_callee(op) for fn in list(self.functions.values()) + self.initializers
                  for _, op in fn.ops if op.name == irx.UTIL_CALL}
        entries = [(fn, ()) for fn in self.initializers]
        for fn in self.functions.values():
            if not fn.ops:
                continue  # an external declaration
            if fn.public:
                loc = format_location(fn.op.location)
                in_pinned = self.pinned.get(fn.name, {})
                ctx = tuple(
                    frozenset({Fence.of(CALLER, loc, -1)}) if irx.is_type(a.type, irx.FENCE)
                    else frozenset({Buffer.of(in_pinned[i], True, loc, -1)}) if i in in_pinned
                    else EMPTY
                    for i, a in enumerate(fn.entry_args)
                )
                entries.append((fn, ctx))
            elif fn.name not in called:
                entries.append((fn, tuple(EMPTY for _ in fn.entry_args)))
        return entries

    def solve(self) -> Ownership:
        entries = self._entries()
        for _ in range(16):  # globals to a fixpoint
            self.memo.clear()
            self.globals_changed = False
            for fn, ctx in entries:
                self._analyze(fn, ctx)
            if not self.globals_changed:
                break
        sites: list = []
        seen: set = set()
        for fn, ctx in entries:
            self._visit(fn, ctx, seen, sites)
        return Ownership(sites, self.op_names, self.locations)

    def _visit(self, fn: Function, ctx: tuple, seen: set, sites: list) -> None:
        """Appends the sites of ``fn`` in context ``ctx``, each callee's
        (in a context not seen before) right after its call."""
        key = (fn.name, ctx)
        if key in seen:
            return
        seen.add(key)
        analysis = self.memo.get(key) or self._analyze(fn, ctx)
        if analysis is None:
            return
        context = Context(fn, analysis[0])
        for index, op in fn.ops:
            sites.append((context, index, op))
            if op.name == irx.UTIL_CALL:
                callee = self.functions.get(_callee(op))
                if callee is not None and callee.ops:
                    self._visit(callee, self._call_context(op, context.state), seen, sites)

    def _analyze(self, fn: Function, ctx: tuple):
        """(state, returns) of ``fn`` in context ``ctx``; None while it is
        being analysed (recursion: unknown results)."""
        key = (fn.name, ctx)
        if key in self.memo:
            return self.memo[key]
        if key in self.in_progress:
            return None
        self.in_progress.add(key)
        state: dict = {}
        for arg, facts in zip(fn.entry_args, ctx):
            if facts:
                state[arg] = facts
        returns: list = []
        for _ in range(64):
            changed = False
            for index, op in fn.ops:
                if self._transfer(index, op, state, returns):
                    changed = True
            if not changed:
                break
        self.in_progress.discard(key)
        self.memo[key] = (state, returns)
        return self.memo[key]

    @staticmethod
    def _call_context(op, state) -> tuple:
        return tuple(state.get(v, EMPTY) for v in op.operands)

    def _transfer(self, index: int, op, state: dict, returns: list) -> bool:
        """Adds what ``op`` says to ``state``; whether anything changed."""
        name = op.name
        flow = self._FLOW.get(name)
        if flow is not None:
            return flow(self, op, state, returns)
        get = lambda v: state.get(v, EMPTY)  # noqa: E731
        if name == irx.UTIL_GLOBAL_LOAD:
            if not len(op.results):
                return False
            return _join(state, op.results[0], self.globals.get(
                ir.FlatSymbolRefAttr(op.attributes["global"]).value, EMPTY))
        if name == irx.UTIL_GLOBAL_STORE:
            self._store_global(op, get(op.operands[0]))
            return False
        transfer = TRANSFERS.get(name)
        found = transfer(op, get, index, lambda: self._loc(index, op)) if transfer else None
        if found is None or found[0] is None:
            return False
        return _join(state, found[0], found[1])

    def _store_global(self, op, facts) -> None:
        name = ir.FlatSymbolRefAttr(op.attributes["global"]).value
        old = self.globals.get(name, EMPTY)
        if facts and not facts <= old:
            self.globals[name] = old | facts
            self.globals_changed = True

    # -- ops that pass facts between blocks, regions and functions ----------

    def _branch(self, op, state, returns) -> bool:
        changed = False
        for arg, v in zip(op.successors[0].arguments, op.operands):
            changed |= _join(state, arg, state.get(v, EMPTY))
        return changed

    def _cond_branch(self, op, state, returns) -> bool:
        view = op.opview
        changed = False
        for block, operands in ((op.successors[0], view.trueDestOperands),
                                (op.successors[1], view.falseDestOperands)):
            for arg, v in zip(block.arguments, operands):
                changed |= _join(state, arg, state.get(v, EMPTY))
        return changed

    def _for(self, op, state, returns) -> bool:
        """Initial values flow into the iteration arguments and results."""
        body = op.regions[0].blocks[0]
        changed = False
        for i, v in enumerate(list(op.operands)[3:]):
            changed |= _join(state, body.arguments[1 + i], state.get(v, EMPTY))
            changed |= _join(state, op.results[i], state.get(v, EMPTY))
        return changed

    def _yield(self, op, state, returns) -> bool:
        parent = op.parent
        if parent is None or parent.name not in _REGION_PARENTS:
            return False
        changed = False
        for i, v in enumerate(op.operands):
            changed |= _join(state, parent.results[i], state.get(v, EMPTY))
            if parent.name == irx.SCF_FOR:
                changed |= _join(state, parent.regions[0].blocks[0].arguments[1 + i], state.get(v, EMPTY))
        return changed

    def _return(self, op, state, returns) -> bool:
        parent = op.parent
        if parent is None or parent.name not in (irx.UTIL_FUNC, irx.UTIL_INITIALIZER):
            return False
        changed = False
        while len(returns) < len(op.operands):
            returns.append(EMPTY)
        for i, v in enumerate(op.operands):
            new = returns[i] | state.get(v, EMPTY)
            if new != returns[i]:
                returns[i] = new
                changed = True
        return changed

    def _call(self, op, state, returns) -> bool:
        callee = self.functions.get(_callee(op))
        if callee is None or not callee.ops:
            return False
        analysis = self._analyze(callee, self._call_context(op, state))
        if analysis is None:
            return False
        changed = False
        for result, facts in zip(op.results, analysis[1]):
            changed |= _join(state, result, facts)
        return changed

    _FLOW = {
        irx.CF_BR: _branch,
        irx.CF_COND_BR: _cond_branch,
        irx.SCF_FOR: _for,
        irx.SCF_YIELD: _yield,
        irx.UTIL_RETURN: _return,
        irx.UTIL_CALL: _call,
    }
