"""The signatures of public ABI functions, read off the stream IR.

IREE's ABI conversion writes an ``iree.abi.declaration`` into the reflection
of every public function it wraps: the tensor types and the device of each
argument and result, which the runtime reads. A program whose input already
speaks the buffer-view ABI has none: IREE's torch input conversion (what
iree-turbine's exports go through) turns ``@main`` into

* ``@main$async(%bv..., %wait: !hal.fence, %signal: !hal.fence)`` with
  ``iree.abi.model = "coarse-fences"``: each argument imported on the device
  its ``iree.abi.affinity`` named, each result exported where IREE's
  affinity analysis leaves it, the signal fence joined by the results;
* ``@main(%bv...)``, which makes a fence, calls ``@main$async`` with its
  own arguments and waits.

This module reads the same facts off the stream IR right after IREE's
tensor pipeline (or later): an argument's tensor type and device from its
``stream.tensor.import``, a result's from the ``stream.tensor.export`` that
makes the returned view, and a value passed to or returned from a call of
another such function from that function's signature. Imports and exports
of other values (mdc's staging moves bytes as ``tensor<?xi8>``) play no
part. The manifest carries the result (pipeline/manifest.py), and the
stub-host-entry-points pass uses it to build host twins.

A function IREE did declare is read the same way where its declaration
says nothing: a result declared on no device lives wherever the program
left it (declared_stub_signatures, undeclared_result_devices), which the
manifest's ``result_devices`` records.
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir

from mdc.contract.manifest import MODEL_COARSE_FENCES, MODEL_SYNC

from ..ir import ir_adapter as irx
from ..ir.ir_util import get_attr, top_level_ops
from ..ir.module_facts import declared_argument_devices, declared_result_devices, module_default_device

BUFFER_VIEW = irx.BUFFER_VIEW
FENCE = irx.FENCE


@dataclasses.dataclass(frozen=True)
class StubValue:
    """One argument or result: its type (``tensor<?x8xf32>``; a scalar's
    type; ``!hal.buffer_view`` when no import or export says more) and the
    device it lives on (None: not known, or not a tensor)."""

    type: str
    device: str | None = None
    # The type itself, where the IR gave one (the twins read its shape off
    # it); the manifest records ``type``, its printed form.
    ir_type: ir.Type | None = dataclasses.field(default=None, compare=False, repr=False)

    @classmethod
    def of(cls, type_: ir.Type, device: str | None = None) -> StubValue:
        return cls(str(type_), device, type_)

    @property
    def is_tensor(self) -> bool:
        return self.type.startswith("tensor<")


@dataclasses.dataclass(frozen=True)
class StubSignature:
    """``model``: MODEL_SYNC, or MODEL_COARSE_FENCES (the function also
    takes a wait and a signal fence, its last two arguments, which are not
    in ``arguments``). ``calls``: for a sync function that only calls a
    coarse-fences function with its own arguments, that function."""

    name: str
    model: str
    arguments: tuple[StubValue, ...]
    results: tuple[StubValue, ...]
    calls: str | None = None


def _name(op: ir.Operation) -> str:
    return ir.StringAttr(op.attributes["sym_name"]).value


def _has_declaration(op: ir.Operation) -> bool:
    reflection = get_attr(op, "iree.reflection")
    return reflection is not None and "iree.abi.declaration" in ir.DictAttr(reflection)


def abi_functions(module) -> dict[str, ir.Operation]:
    """Public ``util.func`` definitions in the buffer-view ABI (every
    argument and result a buffer view, a fence or a scalar, at least one a
    buffer view), declared or not, by name."""
    out = {}
    for op in top_level_ops(module):
        if op.name != irx.UTIL_FUNC or "function_type" not in op.attributes:
            continue
        if not irx.is_public(op):
            continue
        if not len(op.regions) or not len(op.regions[0].blocks):
            continue
        ftype = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
        types = [*ftype.inputs, *ftype.results]
        if any(irx.is_type(t, BUFFER_VIEW) for t in types) and all(_abi_value_type(t) for t in types):
            out[_name(op)] = op
    return out


def _abi_value_type(type_: ir.Type) -> bool:
    """A buffer view, a fence, or a builtin type that is not a tensor."""
    if irx.is_type(type_, BUFFER_VIEW) or irx.is_type(type_, FENCE):
        return True
    return irx.is_builtin_type(type_) and not irx.is_tensor_type(type_)


def undeclared_functions(module) -> dict[str, ir.Operation]:
    """The abi_functions without an ``iree.abi.declaration``, by name."""
    return {name: op for name, op in abi_functions(module).items() if not _has_declaration(op)}


def _model(op: ir.Operation) -> str:
    """The function's ``iree.abi.model``: its own attribute (IREE's torch
    input conversion), else its reflection's (IREE's ABI)."""
    attr = get_attr(op, "iree.abi.model")
    reflection = get_attr(op, "iree.reflection")
    if attr is None and reflection is not None and "iree.abi.model" in ir.DictAttr(reflection):
        attr = ir.DictAttr(reflection)["iree.abi.model"]
    model = ir.StringAttr(attr).value if attr is not None else MODEL_SYNC
    ftype = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
    fences = list(ftype.inputs)[-2:]
    fenced = len(fences) == 2 and all(irx.is_type(t, FENCE) for t in fences)
    return MODEL_COARSE_FENCES if model == MODEL_COARSE_FENCES and fenced else MODEL_SYNC


class _Reader:
    def __init__(self, functions: dict[str, ir.Operation]):
        self.functions = functions
        self.done: dict[str, StubSignature] = {}
        self.busy: set[str] = set()

    def signature(self, name: str) -> StubSignature | None:
        if name in self.done:
            return self.done[name]
        if name in self.busy or name not in self.functions:
            return None  # a call cycle, or not such a function
        self.busy.add(name)
        op = self.functions[name]
        model = _model(op)
        block = op.regions[0].blocks[0]
        count = len(block.arguments) - (2 if model == MODEL_COARSE_FENCES else 0)
        arguments = tuple(self._argument(block.arguments[i]) for i in range(count))
        returns = [o.operation for b in op.regions[0].blocks for o in b.operations
                   if o.operation.name == irx.UTIL_RETURN]
        returned = returns[0] if len(returns) == 1 else None
        if returned is not None:
            results = tuple(self._result(v) for v in returned.operands)
        else:  # several returns: what each gives is not one value
            ftype = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
            results = tuple(StubValue.of(t) for t in ftype.results)
        self.busy.discard(name)
        self.done[name] = StubSignature(name, model, arguments, results, self._wrapped(op, block, returned))
        return self.done[name]

    def _argument(self, arg: ir.Value) -> StubValue:
        if not irx.is_type(arg.type, BUFFER_VIEW):
            return StubValue.of(arg.type)
        for use in arg.uses:
            user = use.owner
            if user.name == irx.STREAM_TENSOR_IMPORT and use.operand_number == 0:
                return StubValue.of(ir.TypeAttr(user.attributes["result_encoding"]).value, irx.affinity_of(user).single)
        for use in arg.uses:
            callee = self._callee(use.owner)
            if callee is not None and use.operand_number < len(callee.arguments):
                return callee.arguments[use.operand_number]
        return StubValue(BUFFER_VIEW)

    def _result(self, value: ir.Value) -> StubValue:
        if not irx.is_type(value.type, BUFFER_VIEW):
            return StubValue.of(value.type)
        if isinstance(value.owner, ir.Block):  # an argument returned as it is
            block = value.owner
            if block.owner is not None and block.owner.name == irx.UTIL_FUNC:
                return self._argument(value)
            return StubValue(BUFFER_VIEW)
        op = value.owner
        if op.name == irx.STREAM_TENSOR_EXPORT:
            return StubValue.of(ir.TypeAttr(op.attributes["source_encoding"]).value, irx.affinity_of(op).single)
        callee = self._callee(op)
        index = ir.OpResult(value).result_number
        if callee is not None and index < len(callee.results):
            return callee.results[index]
        return StubValue(BUFFER_VIEW)

    def _callee(self, op: ir.Operation) -> StubSignature | None:
        if op.name != irx.UTIL_CALL:
            return None
        return self.signature(ir.FlatSymbolRefAttr(op.attributes["callee"]).value)

    def _wrapped(self, op, block, returned) -> str | None:
        """The coarse-fences function a sync ``op`` calls with its own
        arguments and whose results it returns, else None."""
        if _model(op) != MODEL_SYNC:
            return None
        calls = [o.operation for o in block.operations if o.operation.name == irx.UTIL_CALL]
        if len(calls) != 1:
            return None
        call = calls[0]
        callee = ir.FlatSymbolRefAttr(call.attributes["callee"]).value
        target = self.functions.get(callee)
        if target is None or _model(target) != MODEL_COARSE_FENCES:
            return None
        own = list(block.arguments)
        if list(call.operands)[:len(own)] != own or len(call.operands) != len(own) + 2:
            return None
        if returned is None or list(returned.operands) != list(call.results):
            return None
        return callee


def stub_signatures(module) -> dict[str, StubSignature]:
    """The signature of every public buffer-view function without an
    ``iree.abi.declaration`` (undeclared_functions), in program order."""
    functions = undeclared_functions(module)
    reader = _Reader(functions)
    return {name: reader.signature(name) for name in functions}


def declared_stub_signatures(module) -> dict[str, StubSignature]:
    """The signature read off the stream IR of every public buffer-view
    function IREE wrote a declaration for, each argument on the device its
    declaration names (else the module's default device, where a caller
    places it; IREE may import it elsewhere) and each result on the device
    its declaration names, else where the IR leaves it (a result declared
    without an affinity ends wherever the program put it: a transfer, a
    consumer's device, mdc's placement)."""
    everything = abi_functions(module)
    reader = _Reader(everything)
    default = module_default_device(module)
    out = {}
    for name, op in everything.items():
        if not _has_declaration(op):
            continue
        sig = reader.signature(name)
        arguments = _declared(sig.arguments, declared_argument_devices(op), default)
        results = _declared(sig.results, declared_result_devices(op), None)
        out[name] = dataclasses.replace(sig, arguments=arguments, results=results)
    return out


def _declared(values: tuple[StubValue, ...], declared: list | None, fallback: str | None) -> tuple[StubValue, ...]:
    """``values`` with each tensor's device the declared one where there is
    one, else ``fallback``, else the one the IR gave it."""
    declared = list(declared or []) + [None] * len(values)
    return tuple(dataclasses.replace(v, device=declared[i] or fallback or v.device) if v.is_tensor else v
                 for i, v in enumerate(values))


def undeclared_result_devices(module) -> dict[str, dict[int, str]]:
    """{function: {result index: device}} for each tensor result of a
    declared public function whose declaration names no device, where the
    stream IR says where it lives."""
    functions = abi_functions(module)
    out = {}
    for name, sig in declared_stub_signatures(module).items():
        declared = declared_result_devices(functions[name]) or []
        found = {i: v.device for i, v in enumerate(sig.results)
                 if v.is_tensor and v.device is not None and (i >= len(declared) or declared[i] is None)}
        if found:
            out[name] = found
    return out


def pin_wrapper_arguments(module) -> None:
    """A function of these (undeclared_functions) that hands one of its own
    arguments as it is to a call (a sync wrapper to its coarse-fences
    function, a host twin to the function it stands for) takes it in a
    GPU's pinned memory where the callee does (--pinned-arguments,
    abi.PINNED_ARGUMENTS_ATTR). Updates the module's record, which the
    manifest and the verifier read."""
    from .abi import PINNED_ARGUMENTS_ATTR, pinned_arguments_attr, pinned_arguments_of

    pinned = pinned_arguments_of(module)
    before = {f: dict(a) for f, a in pinned.items()}
    functions = undeclared_functions(module)
    for _ in range(len(functions)):  # a chain of calls, to a fixpoint
        for name, op in functions.items():
            arguments = list(op.regions[0].blocks[0].arguments)
            for call in (o.operation for o in op.regions[0].blocks[0].operations):
                if call.name != irx.UTIL_CALL:
                    continue
                callee = pinned.get(ir.FlatSymbolRefAttr(call.attributes["callee"]).value, {})
                for j, operand in enumerate(call.operands):
                    if j in callee and operand in arguments:
                        pinned.setdefault(name, {}).setdefault(arguments.index(operand), callee[j])
    if pinned != before:
        module.attributes[PINNED_ARGUMENTS_ATTR] = pinned_arguments_attr(pinned)
