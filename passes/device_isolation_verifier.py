"""device-isolation-verifier: no device is handed memory or fences it cannot use.

The original failure stayed silent until run time: IREE gave a buffer of one
device to another device's queue, and a GPU queue waited on a CPU fence (it
hangs on a real GPU). This pass is a pure analysis of the final HAL-level IR
of any module, mdc's or IREE's own; it never changes the IR. In terms of the
memory model (memory_model.py, with the ``--link`` overrides) it checks:

1. no shared allocation spans a staged pair: a ``hal.allocator.select`` (or
   ``hal.allocator.resolve_memory_properties``) over a set of devices that
   holds both devices of a staged pair;
2. no queue operation (``hal.device.queue.*``) or command buffer of device X
   uses a buffer X cannot access: from X's own allocator or one of a device
   sharing memory with X is fine, and a ``local`` device may use any
   host-visible buffer (pinned memory from a GPU allocator: mdc's staging);
3. in a module with a staged pair, no GPU queue operation waits on a fence
   created on a device of another driver, or on the caller's fence (a
   ``!hal.fence`` argument of a public function, async-external);
4. in any module of several devices, no device creates an executable from
   a variant of a format it cannot run;
5. every result of a public function that declares a device for it
   (``iree.abi.affinity``, read off the ``iree.abi.declaration``) is memory
   that device can use, as rule 2 says: the caller reads it as that
   device's. An argument returned as it is belongs to the device it is
   declared on (IREE folds an import on device_b exported on device_a to
   the argument itself, with no move);
6. no list a call reads is filled after the call: a ``util.list.set`` into
   a list that an earlier ``util.call`` took (mdc's staging passes the
   fences of a value's pieces to the call that waits for them in a list;
   filled later, the wait is on nothing, and the GPU reads pinned memory
   before the CPU has written it: wrong numbers, no error);
7. where the module carries an mdc manifest, an argument of a public
   function declared on no device is imported (``hal.buffer.assert``) on a
   device that can use the memory of the manifest's default device, where
   the caller places it: mdc's default device and IREE's agree.

How: device globals are recognised by their initializer (IREE's device
query ``hal.device.id`` and the ``#hal.device.target<...>`` in its error
message; or a ``#hal.device.target`` initial value; module_facts.py reads
both). A may-analysis then
follows where each device, allocator, command buffer, buffer and fence value
can come from, through ``hal.buffer_view.buffer``/``create``,
``hal.buffer.subspan``, ``arith.select``, branches to block arguments
(``cf``; ``scf.if``/``scf.for`` results where those remain), globals (to a fixpoint over all initializers and functions) and calls
(each callee is analysed once per distinct set of argument origins, so mdc's
``@__mdc_stage`` is checked per transfer direction). The buffer of an
imported argument belongs to the allocator its ``hal.buffer.assert`` names,
i.e. the device its ``iree.abi.affinity`` declares, unless the module
records it as given in a device's pinned memory (``mdc.pinned_arguments``,
--pinned-arguments): then it is that device's host-visible memory. A value whose origin is
unknown is never an error.
"""

from __future__ import annotations

import dataclasses
import json

from iree.compiler import ir
from iree.compiler.dialects import cf as _cf  # noqa: F401  (registers op views)
from iree.compiler.dialects import hal as _hal  # noqa: F401

from .diagnostics import MdcError, format_location
from mdc.contract.manifest import KEY as MANIFEST_KEY
from mdc.contract.manifest import LOCAL

from .ir_util import top_level_ops, walk
from .memory_model import MemoryModel
from .module_facts import (SYMBOL, declared_argument_devices, declared_result_devices, device_formats,
                           executable_formats, hal_devices)
from .pass_base import ANALYSES, DeviceOptions, ModulePass
from .abi import pinned_arguments_of


CALLER = "<caller>"  # fence origin: a fence the caller passed in
_HOST_VISIBLE_BIT = 1 << 1  # IREE_HAL_MEMORY_TYPE_HOST_VISIBLE
_EMPTY: frozenset = frozenset()

# Facts: ("dev", name) for !hal.device, ("alloc", name), ("cmd", name),
# ("buf", device, host_visible: bool | None, loc, op index) for buffers and
# buffer views, ("fence", device or CALLER, loc, op index) for fences. A
# value's facts are every origin it may have; no facts means unknown.


_FLOW_OPS = frozenset(("cf.br", "cf.cond_br", "scf.for", "scf.yield", "util.return", "util.call"))


@dataclasses.dataclass
class Violation:
    index: int  # program order of the offending op
    rule: str
    location: str | None
    message: str
    notes: list

    @property
    def short(self) -> str:
        return f"{self.location or '<unknown location>'}: {self.message}"


@dataclasses.dataclass
class _Function:
    op: ir.Operation
    name: str
    ops: list  # (index, op) in program order, nested regions included
    entry_args: list
    public: bool


@dataclasses.dataclass
class _Analysis:
    state: dict
    returns: list


class _Verifier:
    def __init__(self, module, model: MemoryModel):
        self.module = module
        self.model = model
        self.devices = model.devices
        self.functions: dict[str, _Function] = {}
        self.initializers: list[_Function] = []
        self.globals: dict[str, frozenset] = {
            name: frozenset({("dev", name)}) for name in self.devices
        }
        self.memo: dict = {}
        self.in_progress: set = set()
        self.globals_changed = False
        self.locs: dict[int, str | None] = {}
        self.violations: dict = {}
        self.op_names: dict[int, str] = {}
        self.pinned = pinned_arguments_of(module)
        self.manifest_default = manifest_default_device(module)
        self._collect()

    # -- structure -----------------------------------------------------------

    def _collect(self) -> None:
        index = 0
        for op in top_level_ops(self.module):
            if op.name not in ("util.func", "util.initializer"):
                continue
            ops = []
            for inner in walk(op):
                ops.append((index, inner))
                self.op_names[index] = inner.name
                index += 1
            region = op.regions[0]
            blocks = list(region.blocks)
            args = list(blocks[0].arguments) if blocks else []
            if op.name == "util.initializer":
                self.initializers.append(_Function(op, f"<initializer {len(self.initializers)}>", ops, args, False))
                continue
            name = op.attributes["sym_name"].value
            vis = op.attributes["sym_visibility"].value if "sym_visibility" in op.attributes else "public"
            self.functions[name] = _Function(op, name, ops, args, vis == "public" and bool(blocks))

    def _loc(self, index: int, op) -> str | None:
        if index not in self.locs:
            self.locs[index] = format_location(op.location)
        return self.locs[index]

    # -- the analysis ----------------------------------------------------------

    def run(self) -> list[Violation]:
        called = set()
        for fn in list(self.functions.values()) + self.initializers:
            for _, op in fn.ops:
                if op.name == "util.call":
                    called.add(ir.FlatSymbolRefAttr(op.attributes["callee"]).value)
        entries = [(fn, ()) for fn in self.initializers]
        pinned = self.pinned
        for fn in self.functions.values():
            if not fn.ops:
                continue  # an external declaration
            if fn.public:
                loc = format_location(fn.op.location)
                # An argument given in a device's pinned memory
                # (--pinned-arguments) is host-visible memory of that device.
                in_pinned = pinned.get(fn.name, {})
                ctx = tuple(
                    frozenset({("fence", CALLER, loc, -1)}) if str(a.type) == "!hal.fence"
                    else frozenset({("buf", in_pinned[i], True, loc, -1)}) if i in in_pinned
                    else _EMPTY
                    for i, a in enumerate(fn.entry_args)
                )
                entries.append((fn, ctx))
            elif fn.name not in called:
                entries.append((fn, tuple(_EMPTY for _ in fn.entry_args)))
        for _ in range(16):  # globals to a fixpoint
            self.memo.clear()
            self.globals_changed = False
            for fn, ctx in entries:
                self._analyze(fn, ctx)
            if not self.globals_changed:
                break
        checked: set = set()
        for fn, ctx in entries:
            self._check_context(fn, ctx, checked)
        return sorted(self.violations.values(), key=lambda v: (v.index, v.rule))

    def _analyze(self, fn: _Function, ctx: tuple) -> _Analysis | None:
        key = (fn.name, ctx)
        if key in self.memo:
            return self.memo[key]
        if key in self.in_progress:
            return None  # recursion: unknown results
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
        result = _Analysis(state, returns)
        self.memo[key] = result
        return result

    @staticmethod
    def _join(state: dict, value, facts) -> bool:
        if not facts:
            return False
        old = state.get(value, _EMPTY)
        new = old | facts
        if new == old:
            return False
        state[value] = new
        return True

    def _call_context(self, op, state) -> tuple:
        return tuple(state.get(v, _EMPTY) for v in op.operands)

    def _transfer(self, index: int, op, state: dict, returns: list) -> bool:
        name = op.name
        if name in _FLOW_OPS:
            return self._flow(op, state, returns)
        get = lambda v: state.get(v, _EMPTY)  # noqa: E731
        out = None  # facts for result 0
        if name == "util.global.load":
            out = self.globals.get(ir.FlatSymbolRefAttr(op.attributes["global"]).value, _EMPTY)
        elif name == "util.global.store":
            g = ir.FlatSymbolRefAttr(op.attributes["global"]).value
            facts = get(op.operands[0])
            old = self.globals.get(g, _EMPTY)
            if facts and not facts <= old:
                self.globals[g] = old | facts
                self.globals_changed = True
            return False
        elif name == "hal.device.allocator":
            out = frozenset(("alloc", f[1]) for f in get(op.operands[0]) if f[0] == "dev")
        elif name == "hal.command_buffer.create":
            out = frozenset(("cmd", f[1]) for f in get(op.opview.device) if f[0] == "dev")
        elif name == "hal.command_buffer.device":
            out = frozenset(("dev", f[1]) for f in get(op.operands[0]) if f[0] == "cmd")
        elif name == "hal.allocator.select":
            out = frozenset(f for v in op.opview.devices for f in get(v) if f[0] == "dev")
        elif name == "hal.device.queue.alloca":
            view = op.opview
            hv = _host_visible(view.memory_types)
            loc = self._loc(index, op)
            out = frozenset(("buf", f[1], hv, loc, index) for f in get(view.device) if f[0] == "dev")
        elif name in ("hal.allocator.allocate", "hal.allocator.import"):
            view = op.opview
            hv = _host_visible(view.memory_types)
            loc = self._loc(index, op)
            facts = frozenset(("buf", f[1], hv, loc, index) for f in get(view.allocator) if f[0] == "alloc")
            # import has (did_import, buffer) results
            return self._join(state, op.results[len(op.results) - 1], facts)
        elif name in ("hal.buffer_view.buffer", "hal.buffer_view.create", "hal.buffer.subspan",
                      "util.optimization_barrier"):
            out = get(op.operands[0])
        elif name == "hal.buffer.assert":
            buf = op.operands[0]
            if not get(buf):
                loc = self._loc(index, op)
                facts = frozenset(
                    ("buf", f[1], None if _has_host_visible_attr(op) else False, loc, index)
                    for f in get(op.opview.allocator) if f[0] == "alloc"
                )
                return self._join(state, buf, facts)
            return False
        elif name == "hal.fence.create":
            loc = self._loc(index, op)
            out = frozenset(("fence", f[1], loc, index) for f in get(op.opview.device) if f[0] == "dev")
        elif name == "hal.fence.join":
            out = frozenset(f for v in op.operands for f in get(v))
        elif name == "arith.select":
            out = get(op.operands[1]) | get(op.operands[2])
        else:
            return False
        if out is None or len(op.results) == 0:
            return False
        return self._join(state, op.results[0], out)

    def _flow(self, op, state: dict, returns: list) -> bool:
        """_transfer for the ops that pass facts between blocks, regions and
        functions (_FLOW_OPS): branches, loops, yields, returns, calls."""
        name = op.name
        get = lambda v: state.get(v, _EMPTY)  # noqa: E731
        if name == "cf.br":
            changed = False
            for arg, v in zip(op.successors[0].arguments, op.operands):
                changed |= self._join(state, arg, get(v))
            return changed
        elif name == "cf.cond_br":
            view = op.opview
            changed = False
            for block, operands in ((op.successors[0], view.trueDestOperands),
                                    (op.successors[1], view.falseDestOperands)):
                for arg, v in zip(block.arguments, operands):
                    changed |= self._join(state, arg, get(v))
            return changed
        elif name == "scf.for":
            # Initial values flow into the iteration arguments and results.
            body = op.regions[0].blocks[0]
            changed = False
            for i, v in enumerate(list(op.operands)[3:]):
                changed |= self._join(state, body.arguments[1 + i], get(v))
                changed |= self._join(state, op.results[i], get(v))
            return changed
        elif name == "scf.yield":
            parent = op.parent
            if parent is None or parent.name not in ("scf.if", "scf.for", "scf.index_switch", "scf.execute_region"):
                return False
            changed = False
            for i, v in enumerate(op.operands):
                changed |= self._join(state, parent.results[i], get(v))
                if parent.name == "scf.for":
                    changed |= self._join(state, parent.regions[0].blocks[0].arguments[1 + i], get(v))
            return changed
        elif name == "util.return":
            parent = op.parent
            if parent is None or parent.name not in ("util.func", "util.initializer"):
                return False
            changed = False
            while len(returns) < len(op.operands):
                returns.append(_EMPTY)
            for i, v in enumerate(op.operands):
                new = returns[i] | get(v)
                if new != returns[i]:
                    returns[i] = new
                    changed = True
            return changed
        elif name == "util.call":
            callee = self.functions.get(ir.FlatSymbolRefAttr(op.attributes["callee"]).value)
            if callee is None or not callee.ops:
                return False
            analysis = self._analyze(callee, self._call_context(op, state))
            if analysis is None:
                return False
            changed = False
            for result, facts in zip(op.results, analysis.returns):
                changed |= self._join(state, result, facts)
            return changed
        return False

    # -- the checks ------------------------------------------------------------

    def _check_context(self, fn: _Function, ctx: tuple, checked: set) -> None:
        key = (fn.name, ctx)
        if key in checked:
            return
        checked.add(key)
        analysis = self.memo.get(key) or self._analyze(fn, ctx)
        if analysis is None:
            return
        state = analysis.state
        for index, op in fn.ops:
            name = op.name
            if name.startswith("hal.device.queue."):
                self._check_queue(index, op, state)
            elif name.startswith("hal.command_buffer.") and name != "hal.command_buffer.create":
                self._check_command_buffer(index, op, state)
            elif name == "hal.allocator.select":
                devs = [f[1] for v in op.opview.devices for f in state.get(v, _EMPTY) if f[0] == "dev"]
                self._check_shared(index, op, devs, "hal.allocator.select")
            elif name == "hal.allocator.resolve_memory_properties":
                devs = SYMBOL.findall(str(op.attributes["affinity"])) if "affinity" in op.attributes else []
                self._check_shared(index, op, devs, "hal.allocator.resolve_memory_properties")
            elif name == "util.call":
                callee = self.functions.get(ir.FlatSymbolRefAttr(op.attributes["callee"]).value)
                if callee is not None and callee.ops:
                    self._check_context(callee, self._call_context(op, state), checked)
            elif name == "util.return" and fn.public and op.parent is not None and op.parent.name == "util.func":
                self._check_results(index, op, state, fn)
            elif name == "hal.buffer.assert" and fn.public:
                self._check_default_device(index, op, state, fn)

    def _driver(self, name: str) -> str | None:
        d = self.devices.get(name)
        return d.driver if d else None

    def _describe(self, name: str) -> str:
        driver = self._driver(name)
        return f"{name} ({driver})" if driver else name

    def _staged(self, a: str, b: str) -> bool:
        if a == b or a not in self.devices or b not in self.devices:
            return False
        try:
            return self.model.policy(a, b).is_staged
        except MdcError:
            return True  # GPUs of different drivers with no host to stage through

    def _reason(self, a: str, b: str) -> str:
        try:
            # The first clause: why; the rest is about staging memory.
            return self.model.policy(a, b).reason.split(";")[0]
        except MdcError as e:
            return e.message

    def _report(self, index, op, rule, key, message, notes) -> None:
        full = (index, rule) + key
        if full not in self.violations:
            self.violations[full] = Violation(index, rule, self._loc(index, op), message, notes)

    def _check_shared(self, index, op, devs, what) -> None:
        devs = list(dict.fromkeys(devs))
        for i, a in enumerate(devs):
            for b in devs[i + 1:]:
                if self._staged(a, b):
                    notes = [
                        f"{a} and {b} are a staged pair: {self._reason(a, b)}",
                        "a buffer allocated for both is handed to a device that cannot address it",
                    ]
                    topo = self._topology_note(a, b)
                    if topo:
                        notes.append(topo)
                    self._report(
                        index, op, "shared", (a, b),
                        f"'{what}' makes one allocation serve {self._describe(a)} and "
                        f"{self._describe(b)}, which do not share memory",
                        notes,
                    )

    def _topology_note(self, a: str, b: str) -> str | None:
        attrs = self.module.attributes
        if "stream.topology" not in attrs:
            return None
        text = str(attrs["stream.topology"])
        if "transparent_access" in text and f"@{a}" in text and f"@{b}" in text:
            return ("the module's stream.topology claims transparent_access between them; "
                    "that is not true of these devices (such a program hangs on a real GPU)")
        return None

    def _can_use(self, user: str, owner: str, host_visible) -> bool:
        if not self._staged(user, owner):
            return True
        # A CPU reaches any host-visible memory (a GPU's pinned host memory).
        return self._driver(user) == LOCAL and host_visible is not False

    def _check_buffers(self, index, op, state, users, buffers, what, pooled_only=False) -> None:
        """Reports each buffer a user cannot access."""
        for v in buffers:
            for fact in state.get(v, _EMPTY):
                if fact[0] != "buf":
                    continue
                _, owner, hv, origin_loc, origin_index = fact
                if pooled_only and self.op_names.get(origin_index) != "hal.device.queue.alloca":
                    continue
                for user in users:
                    if self._can_use(user, owner, hv):
                        continue
                    kind = "a device-local buffer" if self._driver(user) == LOCAL else "a buffer"
                    notes = [f"{user} and {owner} are a staged pair: {self._reason(user, owner)}"]
                    if self.op_names.get(origin_index) == "hal.buffer.assert":
                        notes.append(
                            f"the buffer is an argument imported on {owner}"
                            + (f" at {origin_loc}" if origin_loc else "")
                            + f" (its hal.buffer.assert names {owner}'s allocator)"
                        )
                    elif origin_loc:
                        notes.append(f"the buffer is allocated at {origin_loc}")
                    self._report(
                        index, op, "buffer", (user, owner),
                        f"{what} on {self._describe(user)} uses {kind} allocated by "
                        f"{self._describe(owner)}, memory {user} cannot access",
                        notes,
                    )

    def _check_results(self, index, op, state, fn: _Function) -> None:
        """5. each declared result is memory its device can use."""
        results = declared_result_devices(fn.op)
        if not results:
            return
        arguments = declared_argument_devices(fn.op) or []
        entry = fn.op.regions[0].blocks[0]
        for i, value in enumerate(op.operands):
            user = results[i] if i < len(results) else None
            if user is None or user not in self.devices:
                continue
            facts = [f for f in state.get(value, _EMPTY) if f[0] == "buf"]
            argument = ir.BlockArgument(value).arg_number \
                if isinstance(value.owner, ir.Block) and value.owner == entry else None
            if not facts and argument is not None and argument < len(arguments) and arguments[argument]:
                # The caller's own buffer, in the memory of the device it is declared on.
                facts = [("buf", arguments[argument], False, None, -1)]
            for _, owner, hv, origin_loc, origin_index in facts:
                if self._can_use(user, owner, hv):
                    continue
                notes = [f"{user} and {owner} are a staged pair: {self._reason(user, owner)}"]
                if origin_index < 0 and argument is not None:
                    what = f"argument {argument}, declared on {self._describe(owner)}, returned as it is"
                    notes.append("nothing moves it: the caller gets its own buffer back as "
                                 f"{user}'s result (IREE folds an import exported on another device)")
                else:
                    what = f"a buffer allocated by {self._describe(owner)}"
                    if self.op_names.get(origin_index) == "hal.buffer.assert":
                        notes.append(f"the buffer is an argument imported on {owner}"
                                     + (f" at {origin_loc}" if origin_loc else ""))
                    elif origin_loc:
                        notes.append(f"the buffer is allocated at {origin_loc}")
                self._report(
                    index, op, "result", (i, user, owner),
                    f"result {i} of @{fn.name}, declared on {self._describe(user)}, is {what}: "
                    f"memory {user} cannot access",
                    notes,
                )

    def _check_default_device(self, index, op, state, fn: _Function) -> None:
        """7. an argument declared on no device is imported on a device that
        can use the memory of the manifest's default device, where the
        caller (mdc-run, load) places it."""
        default = self.manifest_default
        source = op.operands[0].owner
        if default is None or isinstance(source, ir.Block) or source.name != "hal.buffer_view.buffer":
            return
        view = source.operands[0]
        if not isinstance(view.owner, ir.Block) or view.owner != fn.op.regions[0].blocks[0]:
            return
        argument = ir.BlockArgument(view).arg_number
        declared = declared_argument_devices(fn.op)
        # No declaration: a buffer-view ABI function, whose manifest entry
        # names each argument's device (stub_signatures), default or not.
        if declared is None or (argument < len(declared) and declared[argument]) \
                or argument in self.pinned.get(fn.name, {}):
            return
        for importer in sorted({f[1] for f in state.get(op.opview.allocator, _EMPTY) if f[0] == "alloc"}):
            if self._can_use(importer, default, False):
                continue
            self._report(
                index, op, "default", (argument, importer),
                f"argument {argument} of @{fn.name} has no device of its own: mdc's default device "
                f"(the manifest's, where the caller places it) is {self._describe(default)}, "
                f"IREE's (where the module imports it) is {self._describe(importer)}",
                [f"{importer} and {default} are a staged pair: {self._reason(importer, default)}"],
            )

    def _check_queue(self, index, op, state) -> None:
        view = op.opview
        users = [f[1] for f in state.get(op.operands[0], _EMPTY) if f[0] == "dev"]
        if not users:
            return
        buffers = [v for v in op.operands if str(v.type) == "!hal.buffer"]
        # A dealloca touches no memory; it only returns queue-allocated
        # (pooled) memory, so only those buffers must belong to the queue's
        # device. For others it is a barrier (IREE emits "origin" deallocas
        # of constants on the default device). With PreferOrigin the runtime
        # performs it on the device that allocated the buffer, whatever
        # device the op names: IREE frees a loop-carried GPU buffer that way
        # on the default (CPU) device, and on the H200 that runs correctly
        # (test/lit/regress/loop_on_gpu_dealloca_on_default_device.mlir).
        pooled_only = op.name == "hal.device.queue.dealloca"
        if not (pooled_only and _prefers_origin(op)):
            self._check_buffers(index, op, state, users, buffers, f"'{op.name}'", pooled_only)
        wait = getattr(view, "wait_fence", None)
        if wait is None:
            return
        for user in users:
            driver = self._driver(user)
            if driver is None or driver == LOCAL:
                continue
            for fact in state.get(wait, _EMPTY):
                if fact[0] != "fence":
                    continue
                _, origin, origin_loc, _ = fact
                if origin == CALLER:
                    self._report(
                        index, op, "fence", (user, CALLER),
                        f"'{op.name}' on {self._describe(user)} waits on the caller's fence, "
                        "which may belong to another driver's device",
                        [
                            "in a program whose devices do not all share memory, await the caller's "
                            "fence on the host (mdc's host-fences pass) before any GPU queue work",
                            "a GPU queue told to wait on another driver's semaphore never runs",
                        ],
                    )
                    continue
                other = self._driver(origin)
                if other is None or other == driver:
                    continue
                notes = ["a GPU queue told to wait on another driver's semaphore never runs; "
                         "wait on the host at such boundaries"]
                if origin_loc:
                    notes.append(f"the fence is created at {origin_loc}")
                self._report(
                    index, op, "fence", (user, origin),
                    f"'{op.name}' on {self._describe(user)} waits on a fence created on "
                    f"{self._describe(origin)}, a device of another driver",
                    notes,
                )

    def _check_command_buffer(self, index, op, state) -> None:
        if not len(op.operands) or str(op.operands[0].type) != "!hal.command_buffer":
            return
        users = [f[1] for f in state.get(op.operands[0], _EMPTY) if f[0] == "cmd"]
        buffers = [v for v in op.operands if str(v.type) == "!hal.buffer"]
        if users and buffers:
            self._check_buffers(index, op, state, users, buffers, f"'{op.name}' in a command buffer")


_PREFER_ORIGIN = 1  # IREE_HAL_DEALLOCA_FLAG_PREFER_ORIGIN


def _has_bit(op, name: str, bit: int, *words: str) -> bool:
    """Whether integer attribute ``name`` of ``op`` has ``bit`` set (or, for
    a printed enum, names one of ``words``)."""
    if name not in op.attributes:
        return False
    try:
        return bool(ir.IntegerAttr(op.attributes[name]).value & bit)
    except (ValueError, TypeError):
        return any(w in str(op.attributes[name]) for w in words)


def _prefers_origin(op) -> bool:
    return _has_bit(op, "flags", _PREFER_ORIGIN, "PreferOrigin")


def _host_visible(value) -> bool | None:
    """Whether a memory type operand includes HostVisible (None: unknown)."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        return None
    owner = owner.operation
    attr = None
    if owner.name == "hal.memory_type" and "type" in owner.attributes:
        attr = owner.attributes["type"]
    elif owner.name == "arith.constant":
        attr = owner.attributes["value"]
    if attr is None:
        return None
    try:
        bits = ir.IntegerAttr(attr).value
    except (ValueError, TypeError):
        return "HostVisible" in str(attr) or "HostLocal" in str(attr) or None
    return bool(bits & _HOST_VISIBLE_BIT)


def _has_host_visible_attr(op) -> bool:
    return _has_bit(op, "memory_types", _HOST_VISIBLE_BIT)


def _variant_formats(module) -> dict[tuple, str]:
    """(executable, variant) -> the variant's executable format."""
    out = {}
    for op in top_level_ops(module):
        if op.name != "hal.executable":
            continue
        exe = op.attributes["sym_name"].value
        for inner in op.regions[0].blocks[0].operations:
            inner = inner.operation
            if inner.name == "hal.executable.binary":
                out[(exe, inner.attributes["sym_name"].value)] = inner.attributes["format"].value
            elif inner.name == "hal.executable.variant":
                found = executable_formats(str(inner.attributes["target"]))
                if found:
                    out[(exe, inner.attributes["sym_name"].value)] = found[0]
    return out


def verify_executable_targets(module) -> list[Violation]:
    """4. every ``hal.executable.create`` on a device loads a variant whose
    format that device runs. IREE 3.13.0 breaks this for an executable
    dispatched on devices of different targets (see executable_per_target.py);
    a CPU-only run never shows it, a GPU refuses to load the module."""
    formats = device_formats(module)
    variants = _variant_formats(module)
    out = []
    for index, op in enumerate(walk(module)):
        if op.name != "hal.executable.create":
            continue
        owner = op.operands[0].owner
        if isinstance(owner, ir.Block) or owner.operation.name != "util.global.load":
            continue
        device = ir.FlatSymbolRefAttr(owner.operation.attributes["global"]).value
        path = ir.SymbolRefAttr(op.attributes["executable_target"]).value
        fmt = variants.get(tuple(path[:2]))
        runs = formats.get(device)
        if fmt is None or not runs or fmt in runs:
            continue
        out.append(Violation(
            index, "executable", format_location(op.location),
            f"'hal.executable.create' on {device} loads variant @{path[0]}::@{path[1]} "
            f"of format {fmt}, which {device} cannot run",
            [f"{device} runs: {', '.join(sorted(runs))}",
             "IREE 3.13.0 does this to an executable dispatched on devices of different "
             "targets; mdc's executable-per-target pass gives each target its own copy",
             "the module would fail to load: \"does not support any variant of executable\""],
        ))
    return out


def _list_reads(fn) -> dict:
    """{list value: the first util.call in ``fn`` that takes it}"""
    first = {}
    for op in walk(fn):
        if op.name == "util.call":
            for value in op.operands:
                if str(value.type).startswith("!util.list<"):
                    first.setdefault(value, op)
    return first


def verify_list_order(module) -> list[Violation]:
    """6. every ``util.list.set`` into a list precedes each call that takes
    the list (in program order within its function)."""
    out = []
    index = {op: i for i, op in enumerate(walk(module))}
    for fn in top_level_ops(module):
        if fn.name != "util.func":
            continue
        reads = _list_reads(fn)
        for op in walk(fn):
            call = reads.get(op.operands[0]) if op.name == "util.list.set" else None
            if call is None or index[op] < index[call]:
                continue
            callee = ir.FlatSymbolRefAttr(call.attributes["callee"]).value
            out.append(Violation(
                index[op], "list-order", format_location(op.location),
                f"'util.list.set' fills a list that '@{callee}' has already read",
                [f"the call is at {format_location(call.location)}",
                 "the call waits on the list's fences before they are in it, and reads what they guard "
                 "unwritten (wrong values, no error)"],
            ))
    return out


def manifest_default_device(module) -> str | None:
    """The default device the module's mdc manifest gives the caller (its
    "default", else its first device, as the shim reads it), or None
    where no public function carries a manifest."""
    for op in top_level_ops(module):
        if op.name != "util.func" or "iree.reflection" not in op.attributes:
            continue
        reflection = ir.DictAttr(op.attributes["iree.reflection"])
        if MANIFEST_KEY not in reflection:
            continue
        try:
            data = json.loads(ir.StringAttr(reflection[MANIFEST_KEY]).value)
            return data.get("default") or data["devices"][0]["name"]
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            return None
    return None


def verify(module, links: dict | None = None, given: dict | None = None,
           model: MemoryModel | None = None) -> list[Violation]:
    """Every isolation violation in ``module``, in program order.
    ``given``: the devices the command line declares (memory_model.Device
    by symbol); those the module no longer declares are added. IREE drops
    the global of a device nothing runs on any more, while a function's
    declaration still names it (rule 5). ``model``: the memory model of
    those devices (pass_manager.py's), else one is built."""
    devices = dict(hal_devices(module))
    for name, device in (given or {}).items():
        devices.setdefault(name, device)
    if len(devices) < 2:
        return []
    wrong_code = verify_executable_targets(module)
    if wrong_code:
        return wrong_code
    late_fills = verify_list_order(module)
    if late_fills:
        return late_fills
    # Overrides naming devices this level cannot see are left out.
    links = {pair: v for pair, v in (links or {}).items() if all(n in devices for n in pair)}
    model = model if model is not None else MemoryModel(devices, links)
    if not model.needs_staging:
        return []  # all pairs share memory: IREE's own behaviour stands
    return _Verifier(module, model).run()


class DeviceIsolationVerifier(ModulePass):
    """Rejects HAL-level IR that hands a device memory or fences it cannot use."""

    name = "device-isolation-verifier"
    level = "hal"
    summary = "reject buffers, shared allocations and fences that cross incompatible devices"

    Options = DeviceOptions
    requires = (MemoryModel,)
    preserves = ANALYSES

    def apply(self, module, options: DeviceOptions, model: MemoryModel) -> None:
        violations = verify(module, options.links, options.devices, model)
        if not violations:
            return
        first, rest = violations[0], violations[1:]
        notes = list(first.notes)
        if rest:
            notes.append(f"{len(rest)} more violation(s):")
            notes += [f"  {v.short}" for v in rest[:5]]
            if len(rest) > 5:
                notes.append(f"  ... and {len(rest) - 5} more")
        raise MdcError(first.message, location=first.location, notes=notes)
