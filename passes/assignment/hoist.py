"""Work that reads only weights becomes a weight before placement.

A PyTorch ``nn.Linear`` exports ``x @ W.T``: a ``linalg.transpose`` of the
weight W, then the matmul. The transpose reads nothing of the call, so
IREE hoists it out of the function: into a global computed once, at
compile time where W is a constant in the module (const-eval), else in a
``util.initializer`` at start-up (a parameter). Left in the function, the
work graph would count it as a unit of every call, and a placement with
the transpose on one device and the matmul on the other made IREE move
the whole transposed weight on every call, or keep it resident on the
matmul's device without the budget counting it (DESIGN.md, section 11).

``hoist_weight_work`` does IREE's hoisting first, so that the work graph
sees what IREE will run: each *weight expression* (an op of the function
that makes a tensor from weights, scalar constants and storage alone,
directly or through other such ops) read by the function's other work
becomes a private immutable ``util.global`` named ``__placed_hoisted``
(``_1``, ...), stored by a ``util.initializer`` that recomputes the
expression from the weights it reads, and read with ``util.global.load``
where the expression's result was. The work graph counts that global as a
weight (extract.py, kind ``computed``) and the rewrite gives it the device
of the units that read it (rewrite.py), so the value is resident there.
The initializer names no device (IREE's const-eval cannot run one that
does): its work runs where the weights it reads live, the weight it
stores crosses to its global's device once, at start-up; with constant
weights IREE evaluates it at compile time and the module holds only the
result. The weights such initializers read, where no function reads them
too, live on the host (assign_devices.py).

Not hoisted: a ``flow.tensor.transfer`` (a move the program makes itself),
an expression a function returns, work that reads no weight (an ``iota``
of constants is per-call work as before), and work that makes more bytes
than the weights it reads (a broadcast over a batch, which IREE fuses
into its reader: the work graph reads it as a view of the weight,
extract.py). The same expression in two functions, or twice in one, is
one global.
"""

from __future__ import annotations

from iree.compiler import ir

from ..ir import ir_adapter as irx
from ..ir import ir_util as iru
from . import bounds as bnd

PREFIX = "__placed_hoisted"
# Ops that only give storage or name a constant: hoisted with the work that
# reads them, never on their own.
_FREE = (irx.TENSOR_EMPTY, irx.ARITH_CONSTANT, irx.LINALG_FILL)
# Ops that hand a value out of the body: an expression they read is not hoisted.
_BOUNDARY = (irx.HAL_TENSOR_BARRIER, irx.HAL_TENSOR_EXPORT)
# Dialects of ops that are not work on tensors (calls, state, control flow, the ABI).
_NOT_WORK = ("hal.", "util.", "scf.", "cf.", "func.")


def _is_tensor(value) -> bool:
    return isinstance(value.type, ir.RankedTensorType)


def _bytes(tensor_type) -> int:
    shaped = ir.RankedTensorType(tensor_type)
    count = 1
    for d in shaped.shape:
        count *= d
    return count * bnd.element_bytes(shaped.element_type)


def _top(op, block_ops: dict):
    """The op of the function's block that is or holds ``op``."""
    while op is not None and op not in block_ops:
        op = op.parent.operation if op.parent is not None else None
    return op


def _users(op, block_ops: dict) -> list:
    return [_top(use.owner.operation, block_ops) for r in op.results for use in r.uses]


class _Expressions:
    """Which ops of one block are constants (``constant``: every input is
    a constant, a weight or an expression of them) and which of those are
    weight expressions to hoist (``hoisted``). ``weights``: the bytes of
    each immutable tensor global, by name."""

    def __init__(self, block, weights: dict):
        self.order = [op.operation for op in block.operations]
        self.block_ops = {op: i for i, op in enumerate(self.order)}
        self.constant, self.hoisted = set(), set()
        self.weights = weights
        self.values = {}  # constant value -> the weights it is computed from
        for op in self.order:
            inputs = irx.reads_from_outside(op)
            if not all(v in self.values for v in inputs) or op.regions and not op.results:
                continue
            read = frozenset().union(*(self.values[v] for v in inputs))
            if op.name == irx.UTIL_GLOBAL_LOAD:
                name = iru.global_name(op)
                if name not in weights or not all(_is_tensor(r) for r in op.results):
                    continue
                read = frozenset([name])
            elif op.name in _FREE or op.name.startswith("arith.") and not any(_is_tensor(r) for r in op.results):
                pass  # storage, constants and their scalar arithmetic
            elif self._hoistable(op, read):
                self.hoisted.add(op)
            else:
                continue
            self.constant.add(op)
            for r in op.results:
                self.values[r] = read

    def _hoistable(self, op, read: frozenset) -> bool:
        """Whether ``op``, whose inputs are constants made from the weights
        ``read``, is hoisted: it makes tensors from weights and no more
        bytes than they hold (IREE hoists no broadcast, and nothing that
        grows the module much), is not a move the program makes, and hands
        nothing out of the body."""
        if not read or op.name == irx.FLOW_TENSOR_TRANSFER or op.name.startswith(_NOT_WORK):
            return False
        if not all(_is_tensor(r) and r.type.has_static_shape for r in op.results):
            return False
        made = sum(_bytes(r.type) for r in op.results)
        if made > sum(self.weights[name] for name in read):
            return False
        return not any(u is None or irx.is_return(u) or u.name in _BOUNDARY for u in _users(op, self.block_ops))

    def roots(self) -> list:
        """The hoisted ops some other op reads, in program order."""
        return [op for op in self.order if op in self.hoisted
                and any(u not in self.hoisted for u in _users(op, self.block_ops))]

    def slice_of(self, root) -> list:
        """``root`` and the constants it is made from, in program order."""
        needed, stack = {root}, [root]
        while stack:
            for value in irx.reads_from_outside(stack.pop()):
                owner = value.owner
                if isinstance(owner, ir.Block):
                    continue
                owner = _top(owner.operation, self.block_ops)
                if owner is not None and owner not in needed:
                    needed.add(owner)
                    stack.append(owner)
        return sorted(needed, key=self.block_ops.__getitem__)


def _weights(module) -> dict:
    """The bytes of each immutable global of a static tensor type, by name."""
    found = {}
    for op in irx.top_level_ops(module):
        if op.name != irx.UTIL_GLOBAL or "is_mutable" in op.attributes:
            continue
        type_ = ir.TypeAttr(op.attributes["type"]).value
        if isinstance(type_, ir.RankedTensorType) and type_.has_static_shape:
            found[irx.symbol_name(op)] = _bytes(type_)
    return found


def _initializer(function, ops: list, root, name: str):
    """A ``util.initializer`` just before ``function`` that recomputes
    ``ops`` (a slice ending in ``root``) and stores ``root``'s result into
    ``@name``. (IREE runs initializers in module order and refuses one that
    reads a global made later, its own hoisted ones included: before the
    function, the global is made before anything that reads it.)"""
    with ir.InsertionPoint(function), root.location:
        init = ir.Operation.create(irx.UTIL_INITIALIZER, regions=1, attributes={
            "function_type": ir.TypeAttr.get(ir.FunctionType.get([], []))})
        block = init.regions[0].blocks.append()
    mapping = {}
    with ir.InsertionPoint(block):
        for op in ops:
            clone = op.clone()
            for user in [clone, *irx.walk(clone)]:
                for i, value in enumerate(user.operands):
                    if value in mapping:
                        user.operands[i] = mapping[value]
            mapping.update(zip(op.results, clone.operation.results))
        with root.location:
            ir.Operation.create(irx.UTIL_GLOBAL_STORE, operands=[mapping[root.results[0]]],
                                attributes={"global": ir.FlatSymbolRefAttr.get(name)})
            ir.Operation.create(irx.UTIL_RETURN)
    return init


def _fingerprint(init, name: str) -> str:
    # Generic and locally numbered, so that an initializer prints alike
    # before its global exists (an op that does not verify prints generic).
    text = init.get_asm(enable_debug_info=False, print_generic_op_form=True, use_local_scope=True,
                        assume_verified=True)
    return text.replace(irx.symbol_ref(name), "@_")


def _existing(module) -> dict:
    """Fingerprint -> global name of the initializers this module already
    has from here."""
    found = {}
    for op in irx.top_level_ops(module):
        name = _stored(op, PREFIX) if irx.is_initializer(op) else None
        if name is not None:
            found.setdefault(_fingerprint(op, name), name)
    return found


def start_up_reads(module) -> list[str]:
    """The globals that start-up work reads, in module order: what the
    module's initializers load where they store only immutable globals
    (weights computed at start-up: this module's, or IREE's own
    ``__hoisted_tensor_*`` in a program that has them already)."""
    mutable = {irx.symbol_name(op) for op in irx.top_level_ops(module)
               if op.name == irx.UTIL_GLOBAL and "is_mutable" in op.attributes}
    names: list = []
    for op in irx.top_level_ops(module):
        if not irx.is_initializer(op):
            continue
        nested = list(irx.walk(op))
        if any(o.name == irx.UTIL_GLOBAL_STORE and iru.global_name(o) in mutable for o in nested):
            continue
        for o in nested:
            if o.name == irx.UTIL_GLOBAL_LOAD and _is_tensor(o.results[0]) and iru.global_name(o) not in names:
                names.append(iru.global_name(o))
    return names


def _stored(init, prefix: str) -> str | None:
    """The global ``init`` stores into where it is one of this module's
    (one store, of a global named ``prefix``...), else None."""
    stores = [o for o in irx.walk(init) if o.name == irx.UTIL_GLOBAL_STORE]
    if len(stores) != 1:
        return None
    name = iru.global_name(stores[0])
    return name if name.startswith(prefix) else None


def _sources_first(module, function, ops: list) -> bool:
    """Whether every global ``ops`` load is made before ``function``, where
    their initializer goes (IREE refuses an initializer that reads a global
    made later): a global with a value of its own defined after it is moved
    before it (the same program); one an initializer computes is not, and
    the work is then not hoisted."""
    loaded = {iru.global_name(op) for op in ops if op.name == irx.UTIL_GLOBAL_LOAD}
    later, seen = [], False
    for op in irx.top_level_ops(module):
        seen = seen or op == function
        if seen and op.name == irx.UTIL_GLOBAL and irx.symbol_name(op) in loaded:
            later.append(op)
    if any("initial_value" not in op.attributes for op in later):
        return False
    for op in later:
        op.move_before(function)
    return True


def hoist_weight_work(module, function) -> list[str]:
    """Moves ``function``'s weight expressions into globals computed at
    start-up (see the module's doc); returns the globals' names, one per
    expression (a name twice where two expressions are one)."""
    blocks = list(function.regions[0].blocks)
    if len(blocks) != 1:
        return []  # control flow: the work graph refuses the function
    found = _Expressions(blocks[0], _weights(module))
    names, existing, made, sliced = irx.SymbolNames(module), _existing(module), [], set()
    for root in found.roots():
        ops = found.slice_of(root)
        if len(root.results) != 1 or not _sources_first(module, function, ops):
            continue
        sliced.update(ops)
        result_type = root.results[0].type
        name = names.unique(PREFIX)
        init = _initializer(function, ops, root, name)
        key = _fingerprint(init, name)
        if key in existing:
            init.erase()
            name = existing[key]
        else:
            existing[key] = name
            with ir.InsertionPoint(init), root.location:
                ir.Operation.create(irx.UTIL_GLOBAL, attributes={
                    "sym_name": ir.StringAttr.get(name), "sym_visibility": ir.StringAttr.get("private"),
                    "type": ir.TypeAttr.get(result_type)})
        with ir.InsertionPoint(root), root.location:
            load = ir.Operation.create(irx.UTIL_GLOBAL_LOAD, results=[result_type],
                                       attributes={"global": ir.FlatSymbolRefAttr.get(name)})
        root.results[0].replace_all_uses_with(load.results[0])
        made.append(name)
    for op in reversed(found.order):
        if op in sliced and not any(True for r in op.results for _ in r.uses):
            op.erase()
    return made
