"""assign-devices: ``--place``, the device of each unit of work and each
weight of a program, written into it before IREE assigns devices.

* ``--place=manual`` (the default): the program is left exactly as it is.
* ``--place=FILE.json``: the assignment the file gives
  (assignment/assignment_file.py says its shape), checked against each
  public function's work graph.
* ``--place=auto``: the assignment of least estimated time under
  ``--gpu-memory``, by the cost model of ``--place-profile`` (else the
  built-in profile) and ``--place-objective`` (assignment/search.py),
  with the units stock IREE does not run right on the accelerator's kind
  kept on the host (assignment/device_limits.py). ``--place-costs``: the
  times ``mdc-profile --program`` measured of this program's own units and
  crossings stand in for the model's where the file has them
  (assignment/measured.py); a file measured for another program is refused. A budget too small for
  any work there places everything on the host, with a warning.

``--max-dim``'s names are checked against the functions first
(assignment/dim_names.py), and the bounds of their arguments' dimensions
are left for the manifest, so that the runtime refuses a call above one.

Either way the assignment is written as hand-placed programs write it
(assignment/rewrite.py), so the rest of the pipeline stages every crossing
as it does for those. It needs exactly two devices: the *host*, where
arguments and results live (the local device; of two local devices, the
first given), and the *accelerator*, the other one. A table or matrix
written inline (a non-splat tensor ``arith.constant``) first becomes a
global, so that it is a weight like the others (assignment/constants.py),
and work that reads only weights (a PyTorch Linear's transpose) a global
computed at start-up, a weight too (assignment/hoist.py); the weights
only such start-up work reads live on the host.
Each public function is placed in program order (for a
PyTorch export, IREE's coarse-fences ``@main$async``: its imports are the
arguments, its exports the results; assignment/boundary.py); a weight two
functions read stays where the first put it, and one budget holds the
module: each function's search counts what the functions placed before it
keep on the accelerator (their weights, the working memory of their
calls; assignment/work_graph.Elsewhere), and each report the whole
module's bytes. The placement (per unit: device, and with auto the
estimates; per weight: device and bytes) is left for ``--report`` under
``"placement"`` with a one-line summary that the tools print on stderr.

Runs first at the input level: the default device and every later pass see
the program as placed.
"""

from __future__ import annotations

import dataclasses
from typing import Mapping

from mdc.contract.machine_profile import ProfileError, default_profile, load_profile
from mdc.contract.place_costs import load_costs
from mdc.contract.place_options import AUTO, MANUAL, AutoMemory

from ..ir import ir_adapter as irx
from ..assignment.assignment_file import assignment_for, function_entry, read_assignment_file
from ..assignment.boundary import has_tensor_work
from ..assignment.budget import elsewhere_of
from ..assignment.constants import hoist_constants
from ..assignment.cost_model import CostModel
from ..assignment.device_limits import keep_on_host, kept_warning
from ..assignment.dim_names import argument_bounds, check_max_dims
from ..assignment.extract import function_parts, read_function
from ..assignment.hoist import hoist_weight_work, start_up_reads
from ..assignment.measured import check_functions, with_measurements
from ..assignment.report import auto_text, placement_report, summary_line
from ..assignment.rewrite import apply_assignment, place_globals
from ..assignment.search import Found, find_assignment, is_chain
from ..assignment.work_graph import WorkGraph
from ..infra.diagnostics import MdcError
from ..infra.outputs import Report
from ..infra.pass_base import CompileSettings, Fact, ModulePass


class PlacementError(MdcError):
    """``--place`` cannot be used with these devices."""


@dataclasses.dataclass(frozen=True)
class AssignDevicesOptions:
    """``--place``, ``--gpu-memory`` (bytes, AutoMemory or None), ``--place-profile``
    (a path or None), ``--place-objective``, ``--max-dim`` (name -> bound),
    the command line's devices (contract Device records by name, in the
    order given), ``--place-costs`` (a path or None), and ``decided``: the
    placement an earlier try of this compile chose (its report), which
    auto reuses instead of searching again (None: search)."""

    place: str = MANUAL
    gpu_memory: int | AutoMemory | None = None
    place_profile: str | None = None
    place_objective: str = "latency"
    max_dims: Mapping = dataclasses.field(default_factory=dict)
    devices: Mapping = dataclasses.field(default_factory=dict)
    place_costs: str | None = None
    decided: Mapping | None = None

    @classmethod
    def of(cls, settings: CompileSettings) -> "AssignDevicesOptions":
        return cls(settings.place, settings.gpu_memory, settings.place_profile, settings.place_objective,
                   dict(settings.max_dims), dict(settings.devices), settings.place_costs, settings.place_decided)


def host_and_accelerator(devices: Mapping) -> tuple[str, str]:
    """(host, accelerator) of exactly two devices: the local one (of two,
    the first given) and the other."""
    if len(devices) != 2:
        raise PlacementError(f"--place needs exactly two devices, a host and an accelerator; got {len(devices)}"
                             + (f" ({', '.join(devices)})" if devices else ""))
    names = list(devices)
    local = [n for n in names if devices[n].uses_host_memory]
    if not local:
        raise PlacementError(f"--place needs a local (CPU) device for the host; got {', '.join(names)}")
    host = local[0]
    return host, next(n for n in names if n != host)


def public_functions(module) -> list:
    """The module's public functions with bodies and tensor work, in program
    order (a function that only passes buffers and fences on, like the
    synchronous wrapper of IREE's coarse-fences ABI, has nothing to place)."""
    return [op for op in irx.top_level_ops(module)
            if irx.is_function(op) and irx.is_public(op) and op.regions and op.regions[0].blocks
            and has_tensor_work(op)]


def _pin_decided(graph: WorkGraph, decided: dict) -> WorkGraph:
    """``graph`` with the weights an earlier function placed pinned there."""
    weights = tuple(dataclasses.replace(w, pinned=w.pinned or decided.get(w.name)) for w in graph.weights)
    return dataclasses.replace(graph, weights=weights)


def _placed(chosen: list) -> list:
    """(graph, assignment) of each (graph, Found, ...)."""
    return [(entry[0], entry[1].assignment) for entry in chosen]


class _Placer:
    """The cost model of ``--place-profile`` (else the built-in profile) and
    the assignment of each function: the search's (``--place=auto``) or the
    file's, each reported with the same estimates (assignment/report.py)."""

    def __init__(self, options: AssignDevicesOptions, accelerator: str):
        profile = load_profile(options.place_profile) if options.place_profile else default_profile()
        self.kinds = {name: d.kind for name, d in options.devices.items()}
        self.cost = CostModel.of(profile, self.kinds)
        self.costs = load_costs(options.place_costs) if options.place_costs else None
        self.options = options
        self.file = None if options.place == AUTO else read_assignment_file(options.place)
        self.budget, self.budget_from = _budget(options, profile, accelerator)

    def cost_of(self, graph: WorkGraph) -> CostModel:
        """The model for ``graph``: with --place-costs' measurements of it."""
        return with_measurements(self.cost, self.costs, graph, self.kinds)

    def check_functions(self, placed: list) -> None:
        if self.costs is not None:
            check_functions(self.costs, placed)

    def choose(self, graph: WorkGraph, functions: int) -> Found:
        """The assignment of ``graph``: the search's, or the file's (whose
        ``exact`` is what the graph's shape lets it be, since no search ran)."""
        cost = self.cost_of(graph)
        if self.file is None and self.options.decided is not None:
            return decided_before(self.options.decided, graph, functions)
        if self.file is None:
            return find_assignment(graph, cost, self.budget, self.options.place_objective,
                                   cost.reserved_bytes(graph.accelerator))
        return Found(assignment_for(self.options.place, self.file, graph, functions), is_chain(graph))

    def report(self, graph: WorkGraph, found: Found) -> dict:
        cost = self.cost_of(graph)
        report = placement_report(graph, found.assignment, cost, self.budget,
                                  self.options.place_objective, cost.reserved_bytes(graph.accelerator),
                                  exact=found.exact, crowded=found.crowded, budget_from=self.budget_from)
        if found.too_small:  # a budget too small for any work there: all on the host, and why
            report["budget_too_small"] = found.too_small
        if self.file is not None:
            report = {"source": self.options.place, **report}
        return {**report, "summary": summary_line(report)}


def decided_before(decided: Mapping, graph: WorkGraph, functions: int) -> Found:
    """What the search found for ``graph`` in an earlier try of this compile,
    read back from that try's report (``decided``): the same assignment,
    ``exact``, ``too_small`` and ``crowded``, so the report is the same too."""
    source = "(the first try's placement)"
    entry = function_entry(source, decided, graph.function, functions)
    assignment = assignment_for(source, decided, graph, functions)
    return Found(assignment, entry.get("search") == "exact", entry.get("budget_too_small"),
                 bool(entry.get("crowded")))


class AssignDevices(ModulePass):
    """Places each unit of work and weight on the host or the accelerator
    (--place), as affinities and flow.tensor.transfers."""

    name = "assign-devices"
    level = "input"
    summary = ("--place: give each unit of work and each weight a device (an assignment file, or auto: the "
               "fastest estimate under --gpu-memory), written as affinities and flow.tensor.transfers")
    Options = AssignDevicesOptions
    provides = (Fact.DEVICES_ASSIGNED,)

    def apply(self, module, options: AssignDevicesOptions) -> Report | None:
        if options.place == MANUAL:
            return None
        host, accelerator = host_and_accelerator(options.devices)
        functions = public_functions(module)
        bounds = _checked_bounds(functions, options.max_dims)
        placer = _Placer(options, accelerator)
        chosen = _choose(module, functions, options, placer)
        placer.check_functions([graph.function for graph, _, _ in chosen])
        # Weights only start-up work reads (hoist.py) stay on the host.
        decided = {name: device for _, found, _ in chosen for name, device in found.assignment.weights.items()}
        start_up = place_globals(module, {name: host for name in start_up_reads(module) if name not in decided})
        placements: dict = {}
        warnings: list = []
        kind = options.devices[accelerator].kind
        for graph, found, kept in chosen:
            # Each report counts every other function, before and after it: the module's bytes.
            others = _placed([c for c in chosen if c[0].function != graph.function])
            placement = placer.report(dataclasses.replace(graph, elsewhere=elsewhere_of(graph, others)), found)
            placements[graph.function] = placement
            if kept:
                warnings.append(_note_kept(placement, graph, kind, kept))
        if not placements:
            return None
        warnings += [(None, f"@{name}: {p['budget_too_small']}{_auto_note(placer.budget_from)}")
                     for name, p in placements.items() if p.get("budget_too_small")]
        if placer.budget_from and placer.budget == 0:
            warnings.append((None, f"{auto_text(placer.budget_from)} leaves no budget, so everything stays on "
                                   f"'{host}', as with --gpu-memory=0"))
        extra = {"start_up_weights": start_up} if start_up else {}
        if len(placements) == 1:
            return Report(placement={**next(iter(placements.values())), **extra}, warnings=warnings,
                          argument_bounds=bounds)
        summary = "; ".join(p["summary"] for p in placements.values())
        return Report(placement={"functions": placements, "summary": summary, **extra}, warnings=warnings,
                      argument_bounds=bounds)


def _choose(module, functions: list, options: AssignDevicesOptions, placer: _Placer) -> list:
    """Each function placed in program order, written into the module:
    (graph, Found, {unit id: why} of the units kept on the host) each. A
    weight an earlier function placed is pinned there, and each search
    counts what the earlier functions hold on the accelerator (one budget
    for the module); auto keeps the units the accelerator's kind cannot
    run right on the host (device_limits.py)."""
    host, accelerator = host_and_accelerator(options.devices)
    decided: dict = {}
    chosen: list = []
    for function in functions:
        hoist_constants(module, function)
        hoist_weight_work(module, function)
        read = read_function(function, host, accelerator, options.max_dims)
        graph = _pin_decided(read.graph, decided)
        kept: dict = {}
        if options.place == AUTO:  # a file's assignment is the user's, kept as given
            graph, kept = keep_on_host(graph, read.parts.units, options.devices[accelerator].kind)
        graph = dataclasses.replace(graph, elsewhere=elsewhere_of(graph, _placed(chosen)))
        found = placer.choose(graph, len(functions))
        decided.update(found.assignment.weights)
        apply_assignment(module, read.parts, graph, found.assignment)
        chosen.append((graph, found, kept))
    return chosen


def _note_kept(placement: dict, graph: WorkGraph, kind: str, kept: dict) -> tuple:
    """Each unit auto kept on the host because the accelerator (of
    ``kind``) cannot run it right gets its ``why`` in the report; returns
    the warning (location, message) that names them."""
    for entry in placement["units"]:
        if entry["id"] in kept:
            entry["why"] = kept[entry["id"]]
    placement["summary"] = summary_line(placement)
    return graph.units[min(kept)].location, kept_warning(graph, kind, kept)


def _budget(options: AssignDevicesOptions, profile, accelerator: str) -> tuple:
    """(the budget in bytes or None, where --gpu-memory=auto found it or
    None): ``auto`` is the profile's free memory of the accelerator less
    the margin (contract/place_options.AutoMemory); a profile without it
    is a ProfileError that names the profile and the field."""
    memory = options.gpu_memory
    if not isinstance(memory, AutoMemory) or options.place != AUTO:
        return memory, None
    kind = options.devices[accelerator].kind
    key = accelerator if accelerator in profile.devices else kind
    origin = f"machine profile {options.place_profile}" if options.place_profile else "mdc's default machine profile"
    free = profile.devices[key].free_bytes
    if free is None:
        remedy = ("the built-in profile records no machine's free memory" if not options.place_profile
                  else "it was written by hand or before mdc-profile measured memory")
        raise ProfileError(f"--gpu-memory={memory.text} needs the free memory of '{accelerator}' ({kind}), and "
                           f"{origin} has none (devices.{key}.free_bytes is missing: {remedy}); measure this "
                           f"machine with mdc-profile and give its profile (--place-profile=FILE), or give "
                           f"--gpu-memory a size")
    return memory.budget(free), {"gpu_memory": memory.text, "profile": str(options.place_profile or "built-in"),
                                 "device": key, "free_bytes": free, "margin_bytes": memory.margin(free)}


def _auto_note(budget_from) -> str:
    """What the too-small warning adds for --gpu-memory=auto."""
    return f" ({auto_text(budget_from)})" if budget_from else ""


def _checked_bounds(functions: list, max_dims: dict) -> dict:
    """--max-dim checked against the functions to place (each name a
    dynamic dimension of one: dim_names.check_max_dims), and the bounds of
    their arguments' dimensions, which the manifest records for the runtime
    to check each call against."""
    if not max_dims:
        return {}
    parts = [function_parts(f) for f in functions]
    check_max_dims(parts, max_dims)
    return argument_bounds(parts, max_dims)
