"""forward-plain-encodings: on a device that lays every encoding out
plain, an encode op is dropped and its readers read its source.

With data tiling, IREE gives each matmul's operands an encoding
(``#iree_encoding.encoding``) that names the matmul's sizes, M among
them, and hoists the packing of every constant operand into an
initializer, one global per encoding. A weight read by @prefill (M = 128)
and by @decode (M = 1) is packed twice. On a CPU the two packings differ.
On a device whose executable targets have no encoding resolver (cuda and
vulkan in IREE 3.13: no ``iree.encoding.resolver`` in their
configuration) both resolve to the plain layout, so each
``stream.tensor.encode`` there is a copy of its source, and the GPU holds
every weight twice: a Llama placed on an H100 held 2082 MiB of GPU memory
where its weights there take 1011 MiB (docs/PERFORMANCE.md, run G3).

This pass runs on IREE's stream IR after the ops are placed and after
plain-encoded-crossings (level ``stream``). Each ``stream.tensor.encode``
placed on such a device, from and to a plain or ``#iree_encoding.encoding``
type, is replaced by its source, when every reader of its bytes (through
clones, and through the globals it is stored in and their loads) is an op
placed on a device that lays encodings out plain too.

Then the hoisted globals of one weight hold the same bytes. The pass
keys each immutable resource global stored once, in an initializer, by
what its stored value is made of: the same value through clones (on the
same devices), moves (between the same devices) and dispatches (of the
same entry point, on the same operands); IREE hoists a transpose and its
move once per function. Of the globals of one key in one block it keeps
the one stored first, points every load of the others at it, erases their
stores and declarations, and the moves and dispatches nothing reads any
more (a move left behind would still be staged through the host). Where
the kept global's value is a clone of a value of the global's type, on
such devices, the global stores that value itself: an immutable resource
needs no copy, and IREE 3.13 fills the copies of one initializer into one
slab while every source is still held (twice the weights at load time),
where it gives each stored value a buffer of its own, as it does without
data tiling.

An encode whose bytes reach a move (a transfer, an export), a call, a
return, a branch, an op without an affinity, or an op on a device with a
resolver stays as it is: another device may read those bytes in its own
layout, which is what plain-encoded-crossings and mdc's check of packed
crossings look for. A module with no such device is left as it is.
"""

from __future__ import annotations

from iree.compiler import ir

from ..infra.pass_base import Fact, ModulePass, NoOptions
from ..ir import ir_adapter as irx
from ..ir import ir_util as iru
from ..ir.module_facts import device_targets

# What a device's executable target names when it resolves encodings to a
# layout of its own (a CPU's packed tiles); a target without it lays every
# encoding out plain.
ENCODING_RESOLVER_KEY = "iree.encoding.resolver"
# An encoding that is still a request (the matmul's operand and sizes),
# which the device resolves later; any other encoding is left alone.
_UNRESOLVED_ENCODING = "#iree_encoding.encoding<"
# Ops whose results are other bytes than their operands': what they read
# in an encoding is read on their own device, and no further.
_COMPUTING = (irx.STREAM_TENSOR_DISPATCH, irx.STREAM_ASYNC_DISPATCH)
# Ops that take bytes off their device: a move, and an export to the
# caller or another device's import.
_LEAVING = (irx.STREAM_ASYNC_TRANSFER, irx.STREAM_TENSOR_EXPORT)
# Ops that pass the same bytes on without a device of their own.
_PASSING = (irx.STREAM_ASYNC_CLONE, irx.UTIL_GLOBAL_LOAD)


def plain_devices(module) -> set[str]:
    """The device globals whose every executable target lays encodings out
    plain (no encoding resolver in its configuration)."""
    return {name for name, text in device_targets(module).items() if ENCODING_RESOLVER_KEY not in text}


def _plain_or_requested(type_: ir.Type) -> bool:
    encoding = ir.RankedTensorType(type_).encoding if isinstance(type_, ir.RankedTensorType) else None
    return encoding is None or str(encoding).startswith(_UNRESOLVED_ENCODING)


def _global_loads(module) -> dict[str, list]:
    loads: dict[str, list] = {}
    for op in irx.walk(module):
        if op.name == irx.UTIL_GLOBAL_LOAD:
            loads.setdefault(iru.global_name(op), []).append(op)
    return loads


def read_only_on(value: ir.Value, devices: set[str], loads: dict[str, list]) -> set[str] | None:
    """The globals ``value``'s bytes are stored in, where every op that
    reads them, through clones and through those globals, is placed on one
    of ``devices`` (the module doc's rule); None where one is not."""
    seen: set = set()
    pending = [value]
    while pending:
        current = pending.pop()
        for use in current.uses:
            op = iru.user_op(use)
            if op.name == irx.UTIL_GLOBAL_STORE:
                name = iru.global_name(op)
                if name in seen:
                    continue
                seen.add(name)
                pending += [load.results[0] for load in loads.get(name, [])]
                continue
            if op.name in _PASSING and "affinity" not in op.attributes:
                pending += list(op.results)
                continue
            if "affinity" not in op.attributes or op.name in _LEAVING:
                return None
            device = irx.affinity_of(op).single
            if device is None or device not in devices:
                return None
            if op.name not in _COMPUTING:
                pending += [r for r in op.results if irx.is_resource(r)]
    return seen


def _global_ops(module) -> dict[str, ir.Operation]:
    return {irx.symbol_name(op): op for op in irx.top_level_ops(module) if op.name == irx.UTIL_GLOBAL}


def _clone_source(value: ir.Value) -> tuple[ir.Value, list]:
    """``value``'s source through clones, and the devices of those clones."""
    devices = []
    while not isinstance(value.owner, ir.Block) and value.owner.operation.name == irx.STREAM_ASYNC_CLONE:
        devices.append(irx.affinity_of(value.owner.operation).devices)
        value = value.owner.operation.operands[0]
    return value, devices


# Ops whose results are the same bytes wherever their operands are: a
# clone, a move, a dispatch (an executable's entry point is a function of
# its operands; IREE's hoisted initializers are made of them), an encode,
# and the constants and sizes they take.
_SAME_BYTES = (irx.STREAM_ASYNC_CLONE, irx.STREAM_ASYNC_TRANSFER, irx.STREAM_TENSOR_DISPATCH,
               irx.STREAM_TENSOR_ENCODE, irx.STREAM_TENSOR_SIZEOF, irx.STREAM_TENSOR_CONSTANT, "arith.constant")


def _names_its_devices(op: ir.Operation) -> bool:
    """Whether ``op`` names the devices its bytes are on (a clone or a move
    without them goes where its readers are, which its key cannot tell)."""
    if op.name == irx.STREAM_ASYNC_CLONE:
        return irx.affinity_of(op).single is not None
    if op.name == irx.STREAM_ASYNC_TRANSFER:
        return (irx.affinity_of(op, "source_affinity").single is not None
                and irx.affinity_of(op, "target_affinity").single is not None)
    return True


def _unpacks_a_pack(op: ir.Operation) -> bool:
    """An encode back to the type an encode on the same device packed its
    source from (plain-encoded-crossings' unpack before a move): the same
    bytes as that source."""
    if op.name != irx.STREAM_TENSOR_ENCODE or isinstance(op.operands[0].owner, ir.Block):
        return False
    inner = op.operands[0].owner.operation
    return (inner.name == irx.STREAM_TENSOR_ENCODE
            and irx.affinity_of(inner).devices == irx.affinity_of(op).devices
            and str(inner.attributes["source_encoding"]) == str(op.attributes["result_encoding"]))


def _bytes_of(value: ir.Value, memo: dict) -> object:
    """A key for what ``value`` holds: equal keys, equal bytes on the same
    device. A result of an op of _SAME_BYTES is keyed by the op's name,
    attributes and operands' keys (a clone by its source's key alone: it
    moves nothing); anything else by the value itself."""
    if value in memo:
        return memo[value]
    key: object = value
    if not isinstance(value.owner, ir.Block):
        op = value.owner.operation
        if op.name in _SAME_BYTES and len(op.results) == 1 and _names_its_devices(op):
            if op.name == irx.STREAM_ASYNC_CLONE:
                key = ("on", irx.affinity_of(op).devices, _bytes_of(op.operands[0], memo))
                inner = key[2]
                if isinstance(inner, tuple) and inner[:2] == key[:2]:
                    key = inner
            elif _unpacks_a_pack(op):
                key = _bytes_of(op.operands[0].owner.operation.operands[0], memo)
            else:
                attributes = tuple(sorted((name, str(op.attributes[name])) for name in op.attributes))
                key = (op.name, attributes, tuple(_bytes_of(v, memo) for v in op.operands))
    memo[value] = key
    return key


def _device_of(op: ir.Operation) -> str | None:
    """The device ``op``'s result is on: a move's target, else its own."""
    if op.name == irx.STREAM_ASYNC_TRANSFER:
        return irx.affinity_of(op, "target_affinity").single
    return irx.affinity_of(op).single


def _store_source(store: ir.Operation, devices: set[str]) -> None:
    """Stores the source of ``store``'s clones itself, where it has the
    global's type and it and every clone are on one device of ``devices``:
    an immutable resource needs no copy of its own, and IREE 3.13 packs the
    copies of one initializer into a slab that it fills while every source
    is still held."""
    value = store.operands[0]
    source, cloned_on = _clone_source(value)
    if source == value or source.type != value.type or isinstance(source.owner, ir.Block):
        return
    device = _device_of(source.owner.operation)
    if device is None or device not in devices or any(d != (device,) for d in cloned_on):
        return
    store.operands[0] = source
    _erase_unused(value)


def _erase_unused(value: ir.Value) -> None:
    """Erases the op of _SAME_BYTES that made ``value`` once nothing reads
    it, and so on up its operands: a dropped global's move would otherwise
    still be staged through the host."""
    pending, seen = [value], set()
    while pending:
        current = pending.pop()
        # A value read twice is pushed twice; its op may be gone by then.
        if current in seen or isinstance(current.owner, ir.Block):
            continue
        seen.add(current)
        op = current.owner.operation
        if op.name not in _SAME_BYTES or len(op.results) != 1 or any(True for _ in op.results[0].uses):
            continue
        operands = list(op.operands)
        op.erase()
        pending += operands


def merge_same_globals(module, devices: set[str], held: set[str]) -> int:
    """Of ``held`` (globals a dropped encode's bytes are stored in), each
    set of immutable resource globals of one type, stored once, in one
    block of an initializer, with the same bytes (_bytes_of), made one (the
    module doc); returns how many globals it erased. A global whose address
    is taken is left alone."""
    stores: dict[str, list] = {}
    addressed: set[str] = set()
    for op in irx.walk(module):
        if op.name == irx.UTIL_GLOBAL_STORE:
            stores.setdefault(iru.global_name(op), []).append(op)
        elif op.name == irx.UTIL_GLOBAL_ADDRESS:
            addressed.add(iru.global_name(op))
    globals_ = _global_ops(module)
    kept: dict[object, str] = {}
    merged: dict[str, str] = {}
    memo: dict = {}
    for name, found in stores.items():
        declaration = globals_.get(name)
        if (name not in held or name in addressed or declaration is None or len(found) != 1
                or "is_mutable" in declaration.attributes
                or not irx.is_resource_type(ir.TypeAttr(declaration.attributes["type"]).value)
                or not iru.in_initializer(found[0])):
            continue
        key = (str(ir.TypeAttr(declaration.attributes["type"]).value), _bytes_of(found[0].operands[0], memo))
        if key in kept and found[0].block == stores[kept[key]][0].block:
            merged[name] = kept[key]
        else:
            kept.setdefault(key, name)
    for name in kept.values():
        _store_source(stores[name][0], devices)
    if not merged:
        return 0
    for op in irx.walk(module):
        if op.name == irx.UTIL_GLOBAL_LOAD:
            name = iru.global_name(op)
            if name in merged:
                op.attributes["global"] = ir.FlatSymbolRefAttr.get(merged[name])
    for name in merged:
        stored = stores[name][0].operands[0]
        stores[name][0].erase()
        globals_[name].erase()
        _erase_unused(stored)
    return len(merged)


def forward_plain_encodings(module) -> int:
    """Drops every encode the module doc names, then merges the globals
    that hold the same bytes; returns how many encodes it dropped."""
    devices = plain_devices(module)
    if not devices:
        return 0
    encodes = [op for op in irx.walk(module) if op.name == irx.STREAM_TENSOR_ENCODE]
    if not encodes:
        return 0
    loads = _global_loads(module)
    forwarded = 0
    held: set[str] = set()
    for encode in encodes:
        device = irx.affinity_of(encode).single
        if device not in devices:
            continue
        types = [ir.TypeAttr(encode.attributes[k]).value for k in ("source_encoding", "result_encoding")]
        if not all(_plain_or_requested(t) for t in types):
            continue
        if encode.operands[0].type != encode.results[0].type:
            continue
        reached = read_only_on(encode.results[0], devices, loads)
        if reached is None:
            continue
        held |= reached
        encode.results[0].replace_all_uses_with(encode.operands[0])
        encode.erase()
        forwarded += 1
    if held:
        merge_same_globals(module, devices, held)
    return forwarded


class ForwardPlainEncodings(ModulePass):
    name = "forward-plain-encodings"
    level = "stream"
    summary = "drop an encode on a device that lays every encoding out plain, so one weight is held once"

    needs = (Fact.PLACED_OPS, Fact.PLAIN_CROSSINGS)
    provides = (Fact.PLAIN_ENCODES_FORWARDED,)

    def apply(self, module, options: NoOptions) -> None:
        forward_plain_encodings(module)
