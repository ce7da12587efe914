"""Rules judged on the whole module, before any ownership is computed."""

from __future__ import annotations

from iree.compiler import ir

from ..infra.diagnostics import format_location
from ..ir.ir_util import top_level_ops, walk
from ..ir.module_facts import device_formats
from .rule import ModuleRule, Violation
from ..ir import ir_adapter as irx


def _variant_formats(module) -> dict[tuple, str]:
    """(executable, variant) -> the variant's executable format."""
    out = {}
    for op in top_level_ops(module):
        if op.name != irx.HAL_EXECUTABLE:
            continue
        exe = op.attributes["sym_name"].value
        for inner in op.regions[0].blocks[0].operations:
            inner = inner.operation
            if inner.name == irx.HAL_EXECUTABLE_BINARY:
                out[(exe, inner.attributes["sym_name"].value)] = inner.attributes["format"].value
            elif inner.name == irx.HAL_EXECUTABLE_VARIANT:
                found = irx.executable_target_format(inner.attributes["target"])
                if found is not None:
                    out[(exe, inner.attributes["sym_name"].value)] = found
    return out


class ExecutableFormat(ModuleRule):
    """Every ``hal.executable.create`` on a device loads a variant whose
    format that device runs (see executable_per_target.py); a CPU-only run
    never shows it, a GPU refuses to load the module."""

    name = "executable-format"
    guards = ("IREE 3.13.0 creates an executable dispatched on devices of different targets "
              "from one variant, on a device that cannot run that variant's format.")

    def violations(self, module) -> list[Violation]:
        formats = device_formats(module)
        variants = _variant_formats(module)
        out = []
        for index, op in enumerate(walk(module)):
            if op.name != irx.HAL_EXECUTABLE_CREATE:
                continue
            owner = op.operands[0].owner
            if isinstance(owner, ir.Block) or owner.operation.name != irx.UTIL_GLOBAL_LOAD:
                continue
            device = ir.FlatSymbolRefAttr(owner.operation.attributes["global"]).value
            path = ir.SymbolRefAttr(op.attributes["executable_target"]).value
            fmt = variants.get(tuple(path[:2]))
            runs = formats.get(device)
            if fmt is None or not runs or fmt in runs:
                continue
            out.append(Violation(
                index, self.name, format_location(op.location),
                f"'hal.executable.create' on {device} loads variant @{path[0]}::@{path[1]} "
                f"of format {fmt}, which {device} cannot run",
                [f"{device} runs: {', '.join(sorted(runs))}",
                 "IREE 3.13.0 does this to an executable dispatched on devices of different "
                 "targets; mdc's executable-per-target pass gives each target its own copy",
                 "the module would fail to load: \"does not support any variant of executable\""],
            ))
        return out


def _list_reads(fn) -> dict:
    """{list value: the first util.call in ``fn`` that takes it}, also
    through ``util.optimization_barrier``s (mdc's staging hands the call
    its list through one, to keep IREE from moving the call)."""
    first, source = {}, {}
    for op in walk(fn):
        if op.name == irx.UTIL_OPTIMIZATION_BARRIER:
            for operand, result in zip(op.operands, op.results):
                source[result] = source.get(operand, operand)
        elif op.name == irx.UTIL_CALL:
            for value in op.operands:
                if irx.is_list_type(value.type):
                    first.setdefault(source.get(value, value), op)
    return first


class ListOrder(ModuleRule):
    """Every ``util.list.set`` into a list precedes each call that takes the
    list (in program order within its function). mdc's staging passes the
    fences of a value's pieces to the call that waits for them in a list;
    filled later, the wait is on nothing."""

    name = "list-order"
    guards = ("IREE's scheduling can move the fill of a list of fences after the call that waits "
              "on it, and the GPU then reads pinned memory before the CPU has written it.")

    def violations(self, module) -> list[Violation]:
        out = []
        index = {op: i for i, op in enumerate(walk(module))}
        for fn in top_level_ops(module):
            if fn.name != irx.UTIL_FUNC:
                continue
            reads = _list_reads(fn)
            for op in walk(fn):
                call = reads.get(op.operands[0]) if op.name == irx.UTIL_LIST_SET else None
                if call is None or index[op] < index[call]:
                    continue
                callee = ir.FlatSymbolRefAttr(call.attributes["callee"]).value
                out.append(Violation(
                    index[op], self.name, format_location(op.location),
                    f"'util.list.set' fills a list that '@{callee}' has already read",
                    [f"the call is at {format_location(call.location)}",
                     "the call waits on the list's fences before they are in it, and reads what they "
                     "guard unwritten (wrong values, no error)"],
                ))
        return out
