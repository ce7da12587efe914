"""The ABI record of a compiled function, shared by the passes, the CLI and
the manifest: which public-function arguments the caller gives in a GPU's
pinned memory (``--pinned-arguments``), kept on the module as
PINNED_ARGUMENTS_ATTR, and the queries that find a public function's
argument behind a resource.
"""

from __future__ import annotations

from iree.compiler import ir

from ..ir import ir_adapter as irx


def function_argument(value: ir.Value) -> tuple[str, int] | None:
    """(function, index) when ``value`` is, through casts and awaits, the
    import of argument ``index`` of public function ``function``; else None."""
    view = function_argument_view(value)
    if view is None:
        return None
    function = view.owner.owner
    return ir.StringAttr(function.attributes["sym_name"]).value, ir.BlockArgument(view).arg_number


def update_into_argument(value: ir.Value):
    """The ``stream.async.update`` that is ``value``'s one use and writes it
    from offset 0 into a public function's argument (how IREE writes a
    result into an output argument, iree.abi.output); else None."""
    uses = list(value.uses)
    if len(uses) != 1 or uses[0].owner.name != irx.STREAM_ASYNC_UPDATE:
        return None
    update = uses[0].owner
    view = update.opview
    if view.update != value or not is_constant_zero(view.target_offset):
        return None
    return update if function_argument(view.target) is not None else None


def is_constant_zero(value: ir.Value) -> bool:
    owner = value.owner
    return (not isinstance(owner, ir.Block) and owner.name == irx.ARITH_CONSTANT
            and irx.index_constant(owner.attributes["value"]) == 0)


def import_of(value: ir.Value) -> ir.Operation | None:
    """The ``stream.tensor.import`` that ``value`` is, through casts and
    awaits; else None."""
    while not isinstance(value.owner, ir.Block):
        op = value.owner
        if op.name == irx.STREAM_ASYNC_CAST:
            value = op.operands[0]
        elif op.name == irx.STREAM_TIMEPOINT_AWAIT:
            value = op.opview.resource_operands[ir.OpResult(value).result_number]
        elif op.name == irx.STREAM_TENSOR_IMPORT:
            return op
        else:
            return None
    return None


def function_argument_view(value: ir.Value) -> ir.Value | None:
    """The ``!hal.buffer_view`` argument of a public function whose import
    ``value`` is, through casts and awaits; else None."""
    imported = import_of(value)
    if imported is None:
        return None
    value = imported.operands[0]
    if not isinstance(value.owner, ir.Block) or not irx.is_type(value.type, irx.BUFFER_VIEW):
        return None
    block = value.owner
    function = block.owner
    if function is None or function.name != irx.UTIL_FUNC or block != function.regions[0].blocks[0]:
        return None
    if not irx.is_public(function):
        return None
    return value


PINNED_ARGUMENTS_ATTR = "mdc.pinned_arguments"


def pinned_arguments_attr(pinned: dict[str, dict[int, str]]) -> ir.Attribute:
    """``{function = {"index" = "device", ...}, ...}``, the record the
    manifest writer reads off the module (pipeline/manifest.py)."""
    return ir.DictAttr.get({
        function: ir.DictAttr.get({str(i): ir.StringAttr.get(d) for i, d in sorted(arguments.items())})
        for function, arguments in sorted(pinned.items())})


def pinned_arguments_of(module) -> dict[str, dict[int, str]]:
    """The PINNED_ARGUMENTS_ATTR record of ``module``: {function: {index: device}}."""
    if PINNED_ARGUMENTS_ATTR not in module.attributes:
        return {}
    record = ir.DictAttr(module.attributes[PINNED_ARGUMENTS_ATTR])
    out: dict[str, dict[int, str]] = {}
    for i in range(len(record)):
        arguments = ir.DictAttr(record[i].attr)
        out[record[i].name] = {int(arguments[j].name): ir.StringAttr(arguments[j].attr).value
                               for j in range(len(arguments))}
    return out
