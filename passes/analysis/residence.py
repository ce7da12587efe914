"""Residence analysis on stream-tensor IR: where each resource lives, where
each consumer runs.

Right after IREE's ``iree-stream-tensor-transformation-pipeline`` most ops
carry an affinity (``on(#hal.device.affinity<@d>)``), but not all
(docs/DESIGN.md section 3): a dispatch fed by arguments imported on different
devices has none yet, and its operands arrive through transfers with no
target. IREE places such ops later, with an analysis Python cannot reach, so
mdc decides first and writes the decision into the IR.

The residence rule for an op with no affinity (stated in docs/mdc-compile.md and
tested in test/lit/passes/residence.mlir):

1. the device that holds the most operand bytes (operand sizes taken from
   static tensor encodings; a dynamic operand counts as one byte);
2. on a tie, the module's default device (``stream.affinity.default``:
   IREE's, module_facts.iree_default_device) if it holds any operand, else
   the first operand's device in operand order;
3. with no placed operand: the device of its first placed consumer, else the
   module's default device.

Where a value lives (its *home*):

* a result of an op with an affinity: that device;
* a result of ``stream.async.transfer``: its target (``to(...)``) or, with no
  target, the device of its consumers (its source if they disagree; each
  consumer elsewhere is then a crossing of its own);
* ``scf.for``/``scf.while`` iteration values: their initial value's home
  (the ``do`` region's arguments and the results of ``scf.while``: the home
  of what ``scf.condition`` forwards); a
  value yielded from another device is staged back on the back edge, and
  an ``scf.if`` else-branch value into the then-branch value's home;
  ``scf.if`` results: the home of what the then-branch yields;
* ``util.global.load``: the home of the first value the module stores to
  that global that has one, else the device of the first placed op using a
  value loaded from it (a store from another device is staged into that
  home; a store consumes its value there);
* arguments of a block that ``cf.br``/``cf.cond_br`` branch to: the home of
  the values its predecessors pass when they agree; when they disagree, the
  module's default device if one of them lives there, else the first
  predecessor's (in block order). A value passed from another device is
  staged at its branch;
* anything else (arguments of internal functions, call results): unknown.
  Unknown homes are left to IREE; the device-isolation check at the stream
  level catches any that IREE then shares across a staged pair.

:class:`Residence` answers where values live and ops run; the rule is
``choose_device`` and ``place_unplaced_ops``, which apply it to a module.
"""

from __future__ import annotations

from iree.compiler import ir

from ..ir import ir_adapter as irx
from ..ir.ir_util import affinity_attr, branch_edges, get_attr, is_resource, walk
from ..ir.module_facts import module_default_device, single_device
from .sizes import static_bytes


# Ops whose result i is their operand i, unchanged.
_FORWARDING = {irx.UTIL_OPTIMIZATION_BARRIER, irx.STREAM_TIMEPOINT_BARRIER, irx.STREAM_TIMEPOINT_AWAIT}

# Ops that never execute on a device themselves: values flow through them.
_PASS_THROUGH = {
    irx.SCF_YIELD,
    irx.SCF_CONDITION,
    irx.SCF_FOR,
    irx.SCF_WHILE,
    irx.SCF_IF,
    irx.UTIL_RETURN,
    irx.UTIL_CALL,
    irx.UTIL_GLOBAL_STORE,
    irx.UTIL_OPTIMIZATION_BARRIER,
    irx.CF_BR,
    irx.CF_COND_BR,
}


def _is_placeable(op: ir.Operation) -> bool:
    name = op.name
    if not name.startswith(irx.STREAM_RESOURCE_OP_PREFIXES):
        return False
    if name in (irx.STREAM_ASYNC_TRANSFER, irx.STREAM_TENSOR_SIZEOF):
        return False
    touches_resources = any(is_resource(v) for v in op.operands) or any(
        is_resource(r) for r in op.results
    )
    return touches_resources and get_attr(op, "affinity") is None


def _operand_bytes(op: ir.Operation, index: int) -> int:
    encodings = get_attr(op, "operand_encodings")
    if encodings is None:
        return 1
    resource_operands = [i for i, v in enumerate(op.operands) if is_resource(v)]
    if index not in resource_operands:
        return 1
    k = resource_operands.index(index)
    if k >= len(encodings):
        return 1
    return max(1, static_bytes(ir.TypeAttr(encodings[k]).value) or 1)


def _while_forwarded(op: ir.Operation) -> list[ir.Value]:
    """What the ``scf.condition`` of scf.while ``op`` forwards."""
    condition = list(op.regions[0].blocks[0].operations)[-1].operation
    return list(condition.operands)[1:]


class Residence:
    """Homes of resources and execution devices of ops in one module."""

    def __init__(self, module):
        self.module = module
        self.default_device = module_default_device(module)
        self._global_homes: dict[str, str] = {}
        self._transfer_targets: dict[ir.Operation, str] = {}
        self._finding_target: set[ir.Operation] = set()
        self._finding_branch_arg: set[tuple] = set()

    # -- queries ----------------------------------------------------------

    def exec_device(self, op: ir.Operation) -> str | None:
        """Where ``op`` runs, or None for ops that run nowhere (control flow,
        calls, stores) or are not placed."""
        if op.name == irx.UTIL_GLOBAL_STORE:
            # A store "runs" where the global lives: a value stored from
            # another device must be staged there first.
            return self._global_homes.get(get_attr(op, "global").value)
        if op.name in _PASS_THROUGH:
            return None
        if op.name == irx.STREAM_ASYNC_TRANSFER:
            return self.transfer_source(op)
        return single_device(get_attr(op, "affinity"))

    def yield_targets(self, op: ir.Operation) -> list[str | None]:
        """For an ``scf.yield``: where each yielded value must live. A loop
        carries its values where they entered it, so a value yielded from
        another device crosses back on the back edge; an ``scf.if``'s
        results live where its then-branch leaves them."""
        parent = op.parent
        if parent is None:
            return []
        if parent.name == irx.SCF_FOR:
            inits = list(parent.operands)[3:]
            return [self.home(v) for v in inits]
        if parent.name == irx.SCF_WHILE and op.block == parent.regions[1].blocks[0]:
            return [self.home(v) for v in parent.operands]
        if parent.name == irx.SCF_IF and len(parent.regions) > 1 and parent.regions[1].blocks and \
                op.block == parent.regions[1].blocks[0]:
            then_yield = list(parent.regions[0].blocks[0].operations)[-1].operation
            return [self.home(v) for v in then_yield.operands]
        return []

    def branch_targets(self, op: ir.Operation) -> list[str | None]:
        """For a ``cf.br``/``cf.cond_br``: where each operand must live (the
        home of the block argument it is passed to; None for operands that
        are not passed on, such as the condition)."""
        targets: list[str | None] = [None] * len(op.operands)
        for index, block, arg in branch_edges(op):
            targets[index] = self._branch_arg_home(block, arg, 0)
        return targets

    def transfer_source(self, op: ir.Operation) -> str | None:
        """Where the moved value is: the device of the op that made it, when
        that op names one, over the transfer's own ``from``. IREE can get the
        latter wrong: a reshape it folds into the producing dispatch leaves
        the transfer labelled with the reshape's device (random programs,
        seed 796039204 index 38: ``from(device_a)`` for a value made on
        device_b), and a staged pair then goes unstaged."""
        value = op.operands[0]
        made_on = None
        if not isinstance(value.owner, ir.Block):
            producer = value.owner.operation
            if producer.name in irx.LOOPS:
                # A loop's result lives where its home says (an scf.for's
                # where its initial value does: transfer-insertion stages
                # the back edge there; an scf.while's where the value its
                # scf.condition forwards does); IREE
                # labels a move of it with the loop body's device (random
                # programs, seed 796058199 index 146).
                made_on = self.home(value)
            elif producer.name != irx.STREAM_ASYNC_TRANSFER:
                made_on = single_device(get_attr(producer, "affinity"))
        return made_on or single_device(get_attr(op, "source_affinity")) or self.home(value)

    def transfer_target(self, op: ir.Operation) -> str | None:
        target = single_device(get_attr(op, "target_affinity"))
        if target:
            return target
        if op in self._transfer_targets:
            return self._transfer_targets[op]
        if op in self._finding_target:
            # A consumer asks where this move's value is (a move with no
            # source of its own, random programs seed 796059576 index 142:
            # one value returned on device_a and on device_b): while its
            # target is being found, where it is now.
            return self.transfer_source(op)
        self._finding_target.add(op)
        try:
            consumers = set(self._consumer_devices(op.results[0]))
        finally:
            self._finding_target.discard(op)
        consumers.discard(None)
        if len(consumers) == 1:
            return consumers.pop()
        # Consumers on several devices: the value stays where it is, and
        # each consumer elsewhere is an implicit crossing of its own.
        return self.transfer_source(op) if consumers else None

    def home(self, value: ir.Value, _depth: int = 0) -> str | None:
        if _depth > 64:
            return None
        owner = value.owner
        if isinstance(owner, ir.Block):
            return self._block_arg_home(value, owner, _depth)
        op = owner.operation
        name = op.name
        if name == irx.STREAM_ASYNC_TRANSFER:
            return self.transfer_target(op)
        if name == irx.UTIL_GLOBAL_LOAD:
            return self._global_homes.get(get_attr(op, "global").value)
        if name == irx.SCF_FOR:
            index = list(op.results).index(value)
            inits = list(op.operands)[-len(op.results):]
            return self.home(inits[index], _depth + 1) if index < len(inits) else None
        if name == irx.SCF_WHILE:
            # Its results are what `scf.condition` forwards, as for the `do`
            # region's arguments (not its initial values: the before region
            # may move them elsewhere first).
            index = list(op.results).index(value)
            forwarded = _while_forwarded(op)
            return self.home(forwarded[index], _depth + 1) if index < len(forwarded) else None
        if name == irx.SCF_IF:
            index = list(op.results).index(value)
            then_block = op.regions[0].blocks[0]
            terminator = list(then_block.operations)[-1].operation
            return self.home(terminator.operands[index], _depth + 1)
        if name in _FORWARDING:
            # Value-preserving ops: a result lives where its operand does.
            return self.home(op.operands[list(op.results).index(value)], _depth + 1)
        return single_device(get_attr(op, "affinity"))

    # -- analysis ---------------------------------------------------------

    def _block_arg_home(self, value, block, depth) -> str | None:
        parent = block.owner.operation if block.owner is not None else None
        if parent is None:
            return None
        if parent.name == irx.SCF_FOR:
            # Block args: induction variable, then one per iter_arg.
            index = value.arg_number - 1
            inits = list(parent.operands)[3:]
            if 0 <= index < len(inits):
                return self.home(inits[index], depth + 1)
        if parent.name == irx.SCF_WHILE and block == parent.regions[0].blocks[0]:
            inits = list(parent.operands)
            if value.arg_number < len(inits):
                return self.home(inits[value.arg_number], depth + 1)
        if block != block.region.blocks[0]:
            return self._branch_arg_home(block, value.arg_number, depth)
        if parent.name == irx.SCF_WHILE and block == parent.regions[1].blocks[0]:
            # The `do` region receives what `scf.condition` forwards.
            forwarded = _while_forwarded(parent)
            if value.arg_number < len(forwarded):
                return self.home(forwarded[value.arg_number], depth + 1)
        return None

    def _branch_arg_home(self, block: ir.Block, index: int, depth: int) -> str | None:
        """The home of argument ``index`` of ``block``, which branches reach
        (this module's docstring). Not ``ir_util.sources``, the walk
        dealloca-affinity and cross-driver-waits share: that one gathers
        every op a value may come from and gives up on any it cannot follow;
        a home is one device, chosen among what the predecessors pass (the
        default device where they disagree, else the first), where a
        predecessor with no home does not count, and reached through
        scf regions and forwarding ops as well."""
        key = (block, index)
        if key in self._finding_branch_arg or depth > 64:
            return None  # a cycle of branches: what the other edges pass decides
        self._finding_branch_arg.add(key)
        try:
            homes = []
            for pred in block.region.blocks:
                ops = list(pred.operations)
                if not ops:
                    continue
                terminator = ops[-1].operation
                for operand, successor, arg in branch_edges(terminator):
                    if successor == block and arg == index:
                        home = self.home(terminator.operands[operand], depth + 1)
                        if home is not None:
                            homes.append(home)
        finally:
            self._finding_branch_arg.discard(key)
        if not homes:
            return None
        if len(set(homes)) > 1 and self.default_device in homes:
            return self.default_device
        return homes[0]

    def _consumer_devices(self, value: ir.Value, depth: int = 0):
        """Devices of the ops using ``value``, looking through ops that only
        forward it (timepoint barriers and awaits)."""
        for use in value.uses:
            user = use.owner
            if user.name in _FORWARDING and depth < 16:
                index = use.operand_number
                if index < len(user.results):
                    yield from self._consumer_devices(user.results[index], depth + 1)
                continue
            yield self.consumer_device(user)

    def consumer_device(self, op: ir.Operation) -> str | None:
        """Where ``op`` consumes an operand (None for returns, calls and
        yields, which pass it on)."""
        # A store consumes its value where the global lives (exec_device):
        # a move with no target whose one use is a store goes there (IREE
        # makes one, ``from`` the global's loads' device, where a host twin
        # both returns a value and stores it).
        if op.name in (irx.SCF_YIELD, irx.UTIL_RETURN, irx.UTIL_CALL):
            return None
        return self.exec_device(op)

    def analyze(self) -> None:
        """Records where module globals live, anew on each call (placing ops
        gives stored values the homes they lacked before): the home of the
        first value stored to each that has one (initializers come first);
        for a global none of whose stored values has a home (a move with no
        target, whose one use is the store, goes wherever the global lives),
        the device of the first placed op that uses a value loaded from it.
        Stores from elsewhere are crossings into that home."""
        self._global_homes = {}
        stored: dict[str, None] = {}
        loads: dict[str, list[ir.Operation]] = {}
        for op in walk(self.module):
            if op.name == irx.UTIL_GLOBAL_LOAD and is_resource(op.results[0]):
                loads.setdefault(get_attr(op, "global").value, []).append(op)
            elif op.name == irx.UTIL_GLOBAL_STORE and is_resource(op.operands[0]):
                name = get_attr(op, "global").value
                stored[name] = None
                device = self.home(op.operands[0])
                if device:
                    self._global_homes.setdefault(name, device)
        for name in stored:
            if name not in self._global_homes:
                device = next((d for load in loads.get(name, []) for d in self._consumer_devices(load.results[0])
                               if d), None)
                if device:
                    self._global_homes[name] = device


def place_unplaced_ops(residence: Residence) -> list[tuple[ir.Operation, str, str]]:
    """Gives every resource op of ``residence``'s module without an
    affinity one, by the rule in this module's docstring. Returns (op,
    device, why) for each."""
    placed = []
    for op in walk(residence.module):
        if not _is_placeable(op):
            continue
        device, why = choose_device(residence, op)
        if device is None:
            continue
        op.attributes["affinity"] = affinity_attr(device)
        placed.append((op, device, why))
    return placed


def choose_device(residence: Residence, op: ir.Operation) -> tuple[str | None, str]:
    """The device the residence rule gives ``op``, and why."""
    weights: dict[str, int] = {}
    order: list[str] = []
    for i, v in enumerate(op.operands):
        if not is_resource(v):
            continue
        owner = v.owner
        if (not isinstance(owner, ir.Block) and owner.operation.name == irx.STREAM_ASYNC_TRANSFER
                and get_attr(owner.operation, "target_affinity") is None):
            # A transfer with no target moves to wherever this op runs:
            # what counts is where the bytes come from.
            device = residence.transfer_source(owner.operation)
        else:
            device = residence.home(v)
        if device is None:
            continue
        weights[device] = weights.get(device, 0) + _operand_bytes(op, i)
        if device not in order:
            order.append(device)
    if weights:
        best = max(weights.values())
        tied = [d for d in order if weights[d] == best]
        if len(tied) == 1:
            return tied[0], "holds the most operand bytes"
        if residence.default_device in tied:
            return residence.default_device, "operand bytes tie; module default device"
        return tied[0], "operand bytes tie; first operand's device"
    for result in op.results:
        for use in result.uses:
            device = residence.consumer_device(use.owner)
            if device:
                return device, "no placed operand; first placed consumer"
    return residence.default_device, "nothing placed around it; module default device"
