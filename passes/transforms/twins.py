"""What the twin passes share (host_entry_points.py, result_storage_twins.py):
a public function's signature read off the IR after IREE's input phase,
which functions can have a twin, and the one way a twin is added beside
the function it calls.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

from iree.compiler import ir

from ..ir import ir_adapter as irx
from ..infra.diagnostics import MdcError
from ..ir.ir_util import symbol_ref, top_level_ops
from ..ir.module_facts import declared_device

FUNCTION_OPS = (irx.UTIL_FUNC, irx.FUNC_FUNC)


@dataclasses.dataclass
class Signature:
    """A public function's signature: types and per-value attribute entries
    (``name = value`` texts), with each value's declared device."""

    name: str
    arg_types: list[ir.Type]
    result_types: list[ir.Type]
    arg_attrs: list[list[tuple[str, str]]]
    result_attrs: list[list[tuple[str, str]]]
    func_attrs: list[tuple[str, str]]

    def arg_devices(self, default: str | None = None) -> list[str | None]:
        """Each argument's declared device; ``default`` for one declared
        without (the module's default device, where the caller places it)."""
        return [declared_device(entries) or default for entries in self.arg_attrs]

    def result_devices(self, default: str | None = None) -> list[str | None]:
        return [declared_device(entries) or default for entries in self.result_attrs]


_SIGNATURE_ATTRS = ("sym_name", "function_type", "arg_attrs", "res_attrs", "sym_visibility", "tied_operands")


def signature_of(op: ir.Operation) -> Signature:
    ftype = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)

    def entries(key: str, count: int) -> list[list[tuple[str, str]]]:
        if key not in op.attributes:
            return [[] for _ in range(count)]
        out = []
        for item in ir.ArrayAttr(op.attributes[key]):
            d = ir.DictAttr(item)
            out.append([(d[i].name, str(d[i].attr)) for i in range(len(d))])
        return out

    attrs = op.attributes
    func_attrs = [(attrs[i].name, str(attrs[i].attr)) for i in range(len(attrs))
                  if attrs[i].name not in _SIGNATURE_ATTRS]
    return Signature(
        name=ir.StringAttr(attrs["sym_name"]).value,
        arg_types=list(ftype.inputs),
        result_types=list(ftype.results),
        arg_attrs=entries("arg_attrs", len(ftype.inputs)),
        result_attrs=entries("res_attrs", len(ftype.results)),
        func_attrs=func_attrs,
    )


def is_scalar(t: ir.Type) -> bool:
    return isinstance(t, (ir.IntegerType, ir.IndexType, ir.FloatType))


def needs_twin(sig: Signature, staged_from_host: frozenset[str], default: str | None = None) -> bool:
    """A twin helps when a value is declared on a device the host cannot
    reach (one declared on none is on ``default``, where given), and can be
    built when every value is a ranked tensor or a scalar."""
    types = sig.arg_types + sig.result_types
    if not all(isinstance(t, ir.RankedTensorType) or is_scalar(t) for t in types):
        return False
    declared = sig.arg_devices(default) + sig.result_devices(default)
    return any(d in staged_from_host for d in declared)


def parse_beside(text: str, sig: Signature, op_name: str) -> ir.Operation:
    """Parses the twin next to a declaration of the function it calls (the
    parser verifies the call), and takes it out of that scratch module.

    Text, not builders: the twin's ops are located at their line and column
    in this text (``loc("-":L:C)``), and a host function's locations reach
    the vmfb (the VM module's debug database), so built ops, located
    elsewhere, would change every vmfb with a twin."""
    arg_types = ", ".join(str(t) for t in sig.arg_types)
    result_types = ", ".join(str(t) for t in sig.result_types)
    scratch = ir.Module.parse(f"{op_name} private {symbol_ref(sig.name)}({arg_types}) -> ({result_types})\n{text}")
    twin = list(scratch.body.operations)[1].operation
    twin.detach_from_parent()
    return twin


def public_functions(module) -> list[ir.Operation]:
    out = []
    for op in top_level_ops(module):
        if op.name not in FUNCTION_OPS or "function_type" not in op.attributes:
            continue
        if irx.is_public(op):
            if len(op.regions) and len(op.regions[0].blocks):  # a definition, not an import
                out.append(op)
    return out


def add_twins(module, twin_of: Callable, what: str, flag: str) -> list[tuple]:
    """For each public function, in program order, ``twin_of(sig, op)``
    says its twin: None, or (twin name, twin text, record). Each twin is
    parsed beside its function and added to ``module``; returns the
    records. A twin's name that the program already defines is an error
    naming ``what`` the twin is and the ``flag`` that leaves such twins out."""
    taken = irx.SymbolNames(module)
    added = []
    for op in public_functions(module):
        sig = signature_of(op)
        planned = twin_of(sig, op)
        if planned is None:
            continue
        name, text, record = planned
        if name in taken:
            raise MdcError(
                f"the program defines '@{name}', the name of the {what} mdc adds for '@{sig.name}'",
                location=op.location,
                notes=[f"rename the function, or compile with {flag}"],
            )
        ir.InsertionPoint(module.regions[0].blocks[0]).insert(parse_beside(text, sig, op.name))
        taken.add(name)
        added.append(record)
    return added
