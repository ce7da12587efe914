"""place-unplaced-ops: give every resource op without an affinity a device,
by residence.py's rule, and say where everything runs (the residence graph).

Right after IREE's tensor pipeline a dispatch fed by arguments imported on
different devices has no affinity yet; IREE would place it later with an
analysis Python cannot reach, so mdc decides first and writes the decision
into the IR. The decisions and their reasons (outputs.PlacedOp) and the
residence graph go to the report. It first makes every import of a public
function's argument that crosses a staged pair run on the device the
argument is declared on (the default device where none is).

Modules whose device pairs all share memory are left untouched (only the
graph is taken). The first step of transfer-insertion; mdc-opt runs it
alone by name.
"""

from __future__ import annotations

from iree.compiler import ir
from iree.compiler.dialects import stream

from ..ir import ir_adapter as irx
from ..analysis import residence_graph
from ..analysis.crossings import policy_at
from ..infra.diagnostics import MdcError, format_location
from ..ir.ir_util import affinity_attr, get_attr, inside_executable, top_level_ops, walk
from ..analysis.memory_model import MemoryModel
from ..ir.module_facts import affinity_devices, declared_argument_devices, module_default_device
from ..infra.outputs import PlacedOp, Report
from ..infra.pass_base import Fact, Handle, ModulePass, NoOptions
from ..infra.pass_manager import AnalysisHandle
from ..analysis.residence import Residence, place_unplaced_ops
from ..analysis.sizes import measure

_AFFINITY_ATTRS = ("affinity", "source_affinity", "target_affinity")


def place(module, model: MemoryModel, residence: AnalysisHandle) -> tuple[Residence, residence_graph.ResidenceGraph,
                                                                          list[PlacedOp]]:
    """Places every unplaced op of ``module`` (where staging is needed);
    returns the residence analysis of the result (for stage-crossings),
    the residence graph, and each op placed with why. ``residence``: the
    pass manager's handle on the module's residence, told of each
    rewrite, so the analysis returned is of the module placed."""
    _check_devices_declared(module, model)
    if model.needs_staging and _import_arguments_where_declared(module, model):
        residence.rewrote()
    placed = []
    if model.needs_staging:  # else nothing to rewrite; still say where things run, for reports
        placed = [PlacedOp(format_location(op.location), op.name, device, why)
                  for op, device, why in place_unplaced_ops(residence.get())]
        if placed:
            residence.rewrote()
    analyzed = residence.get()
    return analyzed, residence_graph.snapshot(module, analyzed, model, measure), placed


def _check_devices_declared(module, model: MemoryModel) -> None:
    """Every device an op's affinity names is one the module declares
    (fuzzer, seed 796041255 case 124: an undeclared @nv was a KeyError in
    the memory model, or passed unnoticed)."""
    for op in walk(module):
        if inside_executable(op):
            continue
        for attr_name in _AFFINITY_ATTRS:
            for name in affinity_devices(get_attr(op, attr_name)):
                if name not in model.devices:
                    raise MdcError(
                        f"'{op.name}' runs on device '{name}', which the module does not declare",
                        location=format_location(op.location),
                        notes=[f"declared devices: {', '.join(sorted(model.devices)) or 'none'}"],
                    )


def _import_arguments_where_declared(module, model: MemoryModel) -> int:
    """Every import of a public function's argument that would cross a
    staged pair runs on the device the argument is declared on (its
    ``iree.abi.affinity``, else the module's default device, where the
    caller places it), followed by a move to the device IREE imported it
    on, which is then staged like any other.

    IREE gives an argument declared without an affinity the affinity of its
    consumers, and clones its import once per consumer device: a
    ``flow.tensor.transfer`` of it to device_b becomes an import on
    device_b and a clone there, and the move is gone (the caller's buffer,
    in device_a's memory, is then read by device_b;
    test/lit/regress/argument_moved_from_default_device.mlir). Two such
    imports on devices that are a staged pair share the caller's one
    buffer too, though each may use the default device's memory
    (test/lit/regress/argument_imported_on_two_staged_devices.mlir).
    Returns how many imports it moved."""
    moved = 0
    default = module_default_device(module)
    for function in _public_functions(module):
        declared = declared_argument_devices(function)
        if declared is None:
            continue
        for index, imports in _argument_imports(function).items():
            home = (declared[index] if index < len(declared) else None) or default
            if home is None or home not in model.devices:
                continue
            for op, device in _imports_crossing(model, home, imports):
                _import_at_home(op, home, device)
                moved += 1
    return moved


def _public_functions(module):
    for function in top_level_ops(module):
        if function.name != irx.UTIL_FUNC or not function.regions[0].blocks:
            continue
        if irx.is_public(function):
            yield function


def _argument_imports(function) -> dict[int, list[tuple[ir.Operation, str]]]:
    """The imports of each argument of ``function`` on one device:
    {argument index: [(stream.tensor.import, device)]}, in program order."""
    entry = function.regions[0].blocks[0]
    imports: dict[int, list] = {}
    for op in walk(function):
        if op.name != irx.STREAM_TENSOR_IMPORT or not isinstance(op.operands[0].owner, ir.Block) \
                or op.operands[0].owner != entry:
            continue
        device = irx.affinity_of(op).single
        if device is not None:
            imports.setdefault(ir.BlockArgument(op.operands[0]).arg_number, []).append((op, device))
    return imports


def _imports_crossing(model: MemoryModel, home: str, imports) -> list[tuple[ir.Operation, str]]:
    """The imports (of one argument, whose caller places it on ``home``)
    to move to ``home``: those on a device staged with ``home``, or staged
    with another device that imports the same argument (the two would
    share one buffer)."""
    def staged(a: str, b: str, op) -> bool:
        return policy_at(model, a, b, op).is_staged or policy_at(model, b, a, op).is_staged

    devices = {device for _, device in imports}
    return [(op, device) for op, device in imports
            if device != home and any(staged(device, other, op) for other in devices | {home} if other != device)]


def _import_at_home(op: ir.Operation, home: str, imported_on: str) -> None:
    """Makes ``op`` import on ``home`` instead of ``imported_on``, and
    moves its result there."""
    op.attributes["affinity"] = affinity_attr(home)
    result = op.results[0]
    size = op.opview.result_size
    with ir.InsertionPoint.after(op), op.location:
        moved = stream.AsyncTransferOp(result.type, result, size, size,
                                       source_affinity=affinity_attr(home),
                                       target_affinity=affinity_attr(imported_on)).result
    result.replace_all_uses_except(moved, moved.owner.operation)


class PlaceUnplacedOps(ModulePass):
    """Places ops with no affinity and records where everything runs."""

    name = "place-unplaced-ops"
    level = "stream"
    summary = "give resource ops without an affinity a device (residence.py's rule), for transfer-insertion"

    requires = (MemoryModel, Handle(Residence))
    # First at the stream level: every pass after it reads placed IR.
    provides = (Fact.PLACED_OPS,)

    def apply(self, module, options: NoOptions, model: MemoryModel, residence: AnalysisHandle) -> Report:
        _, graph, placed = place(module, model, residence)
        return Report(graph=graph, placed_ops=placed)
