"""Where a function's tensors come in and go out: its arguments and results
as the work graph sees them, in either shape a public function has at
mdc's input level.

* *Plain*: the block's arguments are the arguments and the return's
  operands the results; each one's device is the one its
  ``iree.abi.affinity`` (``arg_attrs``/``res_attrs``) names, else the host.
* *IREE's coarse-fences ABI* (``iree.abi.model = "coarse-fences"``: what
  IREE's ABI wrapping makes of an exported PyTorch program, ``@main$async``
  taking ``!hal.buffer_view``s and two ``!hal.fence``s): the argument N is
  the tensor ``hal.tensor.import`` makes of block argument N, and a result
  is the tensor a ``hal.tensor.export`` (through a ``hal.tensor.barrier``)
  hands back. Their devices are the ones those ops name with ``on(...)``
  (kept as pins), else the host.

``annotate`` writes the devices back the way stock IREE 3.13 honours
them: ``iree.abi.affinity`` in ``arg_attrs``/``res_attrs`` for a plain
function, the import's and export's own ``on(#hal.device.promise<@D>)``
for the ABI shape (IREE makes the ``stream.tensor.import``/``export`` on
that device; an ``iree.abi.affinity`` there would be ignored, the ABI
having been made already). A value may be returned only after the rewrite
moved it to its result's device; ``sites`` say where it leaves the body.

A function with no tensor work at all (the ABI's synchronous wrapper
``@main``, which only makes fences and calls ``@main$async``) is not
placed: ``has_tensor_work`` says so.
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir

from ..ir import ir_adapter as irx

ABI_AFFINITY = "iree.abi.affinity"
OP_AFFINITY = "affinity"


@dataclasses.dataclass
class Boundary:
    """``arguments``: each value that is an argument -> its number;
    ``results``: each returned value, as the tensor the body makes (the
    export's source, through its barrier) where there is one; ``sites``: per
    result, ``(op, operand number)`` where that value leaves the body (the
    return, the barrier or the export); ``imports``: argument number ->
    ``hal.tensor.import``; ``exports``: per result, its ``hal.tensor.export``
    or None. ``imports`` and ``exports`` are empty for a plain function."""

    arguments: dict
    results: list
    sites: list
    imports: dict
    exports: list

    @property
    def is_abi(self) -> bool:
        return bool(self.imports) or any(e is not None for e in self.exports)


def _ops(function) -> list:
    return [op.operation for op in function.regions[0].blocks[0].operations]


def _imports(function) -> dict:
    found = {}
    for op in _ops(function):
        source = op.operands[0] if op.name == irx.HAL_TENSOR_IMPORT else None
        if source is not None and isinstance(source.owner, ir.Block) and source.owner == function.regions[0].blocks[0]:
            found.setdefault(ir.BlockArgument(source).arg_number, op)
    return found


def _maker(value):
    """The operation that makes ``value``; None for a block argument."""
    return None if isinstance(value.owner, ir.Block) else value.owner.operation


def _result(value) -> tuple:
    """(tensor, (op, operand number), export) for a returned ``value``."""
    export = _maker(value)
    if export is None or export.name != irx.HAL_TENSOR_EXPORT:
        return value, None, None
    source = export.operands[0]
    owner = _maker(source)
    if owner is not None and owner.name == irx.HAL_TENSOR_BARRIER:
        return owner.operands[source.result_number], (owner, source.result_number), export
    return source, (export, 0), export


def boundary_of(function) -> Boundary:
    """``function``'s boundary (the module docstring says how)."""
    block = function.regions[0].blocks[0]
    imports = _imports(function)
    if imports:
        arguments = {op.results[0]: n for n, op in imports.items()}
    else:
        arguments = {arg: i for i, arg in enumerate(block.arguments)}
    returner = _ops(function)[-1]
    results, sites, exports = [], [], []
    for i, value in enumerate(returner.operands if irx.is_return(returner) else []):
        tensor, site, export = _result(value)
        results.append(tensor)
        sites.append(site or (returner, i))
        exports.append(export)
    return Boundary(arguments, results, sites, imports, exports)


def _single(attr) -> str | None:
    return irx.Affinity.of_attr(attr).single


def _abi_attr(function, attr_name: str, i: int):
    attrs = irx.get_attr(function, attr_name)
    entry = ir.DictAttr(attrs[i]) if attrs is not None and i < len(attrs) else None
    return entry[ABI_AFFINITY] if entry is not None and ABI_AFFINITY in entry else None


def argument_devices(function, boundary: Boundary, host: str) -> tuple[str, ...]:
    """Each block argument's device: its import's ``on(...)`` (ABI shape)
    or its ``iree.abi.affinity`` (plain), else ``host``."""
    count = len(function.regions[0].blocks[0].arguments)
    if boundary.is_abi:
        return tuple((_single(irx.get_attr(boundary.imports[n], OP_AFFINITY)) if n in boundary.imports else None)
                     or host for n in range(count))
    return tuple(_single(_abi_attr(function, "arg_attrs", i)) or host for i in range(count))


def result_devices(function, boundary: Boundary, host: str) -> tuple[str, ...]:
    """Each result's device: its export's ``on(...)`` (ABI shape) or its
    ``iree.abi.affinity`` (plain), else ``host``."""
    if boundary.is_abi:
        return tuple((_single(irx.get_attr(e, OP_AFFINITY)) if e is not None else None) or host
                     for e in boundary.exports)
    return tuple(_single(_abi_attr(function, "res_attrs", i)) or host for i in range(len(boundary.results)))


def promise(device: str) -> ir.Attribute:
    """``#hal.device.promise<@device>``."""
    return ir.Attribute.parse(f"#hal.device.promise<{irx.symbol_ref(device)}>")


def _annotate_attrs(function, attr_name: str, devices) -> None:
    attrs = irx.get_attr(function, attr_name)
    entries = []
    for i, device in enumerate(devices):
        entry = ir.DictAttr(attrs[i]) if attrs is not None and i < len(attrs) else ir.DictAttr.get({})
        values = {entry[j].name: entry[j].attr for j in range(len(entry))}
        values.setdefault(ABI_AFFINITY, promise(device))
        entries.append(ir.DictAttr.get(values))
    if entries:
        function.attributes[attr_name] = ir.ArrayAttr.get(entries)


def annotate(function, boundary: Boundary, arguments, results) -> None:
    """Gives each argument and result with no device named the device of
    ``arguments``/``results`` (as ``argument_devices``/``result_devices``
    number them), where IREE reads it for this shape."""
    if not boundary.is_abi:
        _annotate_attrs(function, "arg_attrs", arguments)
        _annotate_attrs(function, "res_attrs", results)
        return
    marked = [(op, arguments[n]) for n, op in sorted(boundary.imports.items())]
    marked += [(op, results[i]) for i, op in enumerate(boundary.exports) if op is not None]
    for op, device in marked:
        if irx.get_attr(op, OP_AFFINITY) is None:
            op.attributes[OP_AFFINITY] = promise(device)


def has_tensor_work(function) -> bool:
    """Whether any op of ``function`` makes or reads a tensor."""
    return any(isinstance(v.type, ir.RankedTensorType)
               for op in irx.walk(function) for v in [*op.results, *op.operands])
