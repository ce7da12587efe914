"""``bench placement build DIR``: the kit of automatic placement against hand
splits and greedy fill (here, with the compiler).

Per batch size, the workload's placement variant (model.placement_program:
no device named, weights as named parameters) and, per budget
(placement_plan.py), one module per placement: ``--place=auto
--gpu-memory=B`` and, as ``--place=FILE.json`` assignment files, the two
hand splits and greedy fill, each compiled with ``--report`` (its estimate
and GPU bytes). Placements that come out the same share one module. The
weights are in no module and not in the kit: the run makes them from the
seed and writes the parameter archive there. placement.json says how it
was all made.

The kit's second table, ``throughput``: for each budget that fits at least
half the blocks, memory for two calls in flight (``two_calls``: the
budget's program bytes three times, Function.map's two lanes and the
module's own context each holding a copy, plus the runtime's once), and
two modules for it: the latency auto module of that budget (each copy fits
its bytes), and ``--place=auto --place-objective=throughput`` under the
two-call budget; both with their estimates under the throughput objective.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess

import numpy as np

from . import model, placement_plan as plan_mod
from .kitframe import compile_jobs, kit_mib, write_manifest
from .placement_format import FORMAT, VARIANTS, placed_text

HOST, ACCELERATOR = "cpu", "gpu"


@dataclasses.dataclass(frozen=True)
class Plan:
    """What a kit holds: the stack, the batch sizes, the block counts the
    budgets fit, the CPU target, whether a second local device stands in
    for the GPU, and a machine profile file (None: the built-in one)."""

    stack: model.Stack
    batches: tuple[int, ...]
    fits: tuple[int, ...]
    cpu: str = "generic"
    smoke: bool = False
    profile: str | None = None
    jobs: int = 1  # compiles at a time
    costs: str | None = None  # a folder of costs_bB.json (mdc-profile --program-kit's), one per batch

    def costs_file(self, b: int) -> str | None:
        """The costs file of batch ``b``'s program (--place-costs), or None."""
        return None if self.costs is None else os.path.abspath(os.path.join(self.costs, f"costs_b{b}.json"))

    def cost_model(self):
        """The cost model mdc-compile places with (the profile, or the built-in one)."""
        from mdc.contract.machine_profile import default_profile, load_profile
        from mdc.passes.assignment.cost_model import CostModel

        profile = load_profile(self.profile) if self.profile else default_profile()
        return CostModel.of(profile, self.kinds())

    def kinds(self) -> dict:
        return {HOST: "local", ACCELERATOR: "local" if self.smoke else "cuda"}

    def devices(self) -> list[str]:
        gpu = (["--device=gpu=local[1]", "--link=cpu:gpu=staged"] if self.smoke else
               ["--device=gpu=cuda[0]", "--iree-cuda-target=sm_80"])
        return [f"--device={HOST}=local[0]", *gpu, f"--iree-llvmcpu-target-cpu={self.cpu}", "--no-host-entry-points",
                *([f"--place-profile={os.path.abspath(self.profile)}"] if self.profile else [])]


def work_graph(text: str, name: str):
    """The work graph of the program's one public function, as the pass
    sees it (cpu the host, gpu the accelerator)."""
    from mdc.passes.ir import ir_adapter as irx
    from mdc.passes.assignment.extract import work_graph_of
    from mdc.pipeline.ireec import Compiler

    compiler = Compiler([])
    module = compiler.parse_text(text, name)
    with compiler.context, module.location:
        (function,) = [op for op in irx.top_level_ops(module) if irx.is_function(op) and irx.is_public(op)]
        return work_graph_of(function, HOST, ACCELERATOR, {})


def _measured(plan: Plan, b: int, graph):
    """The cost model of batch ``b``: with its costs file's measurements of
    ``graph`` where the plan has one (the throughput table's estimates,
    which no report gives)."""
    cost, costs_file = plan.cost_model(), plan.costs_file(b)
    if costs_file is None:
        return cost
    from mdc.contract.place_costs import load_costs
    from mdc.passes.assignment.measured import with_measurements

    return with_measurements(cost, load_costs(costs_file), graph, plan.kinds())


def program_kits(plan: Plan, out: str) -> int:
    """``build --program-kits``: each batch's placement program and its
    mdc-profile --program kit (``bB/``) in ``out``, for the GPU machine to
    time into costs_bB.json (bench/gpu_placement_costs.sh)."""
    from mdc.profiler.program import build as build_program

    os.makedirs(out, exist_ok=True)
    gpu = "local[1]" if plan.smoke else "cuda[0]"
    flags = [] if plan.smoke else ["--iree-cuda-target=sm_80"]
    for b in plan.batches:
        source = os.path.join(out, f"placement_b{b}.mlir")
        with open(source, "w") as f:
            f.write(model.placement_program(plan.stack, b))
        for path in build_program(os.path.join(out, f"b{b}"), source, {HOST: "local[0]", ACCELERATOR: gpu}, {},
                                  plan.cpu, flags):
            print(f"wrote {path}")
    return 0


def _key(assignment_json: dict) -> str:
    return json.dumps(assignment_json, sort_keys=True)


def _report(out: str, name: str) -> dict:
    with open(os.path.join(out, name)) as f:
        return json.load(f)["placement"]


class _Batch:
    """The modules of one batch size: auto's first (its reports say what
    it chose), then each file's assignment unless a module already has it."""

    def __init__(self, plan: Plan, out: str, b: int):
        self.plan, self.out, self.b = plan, out, b
        text = model.placement_program(plan.stack, b)
        self.source = os.path.join(out, f"placement_b{b}.mlir")
        with open(self.source, "w") as f:
            f.write(text)
        self.graph = work_graph(text, self.source)
        self.cost = _measured(plan, b, self.graph)  # the profile (and costs) read once a batch
        # What the runtime itself takes on the GPU (the profile's
        # reserved_bytes), which every budget holds beside the program.
        self.reserved = self.cost.reserved_bytes(ACCELERATOR)
        self.budgets = plan_mod.budgets(self.graph, plan.stack, plan.fits, self.reserved)
        self.modules: dict[str, str] = {}  # an assignment's key -> its module

    def _job(self, vmfb: str, place: list[str]) -> list[str]:
        report = os.path.join(self.out, vmfb.replace(".vmfb", ".report.json"))
        costs = self.plan.costs_file(self.b)
        return ["mdc-compile", self.source, *self.plan.devices(), *place, f"--report={report}",
                *([f"--place-costs={costs}"] if costs else [])]

    def auto_jobs(self) -> dict[str, list[str]]:
        return {f"auto_b{self.b}_{bd.name}.vmfb": self._job(f"auto_b{self.b}_{bd.name}.vmfb",
                                                             ["--place=auto", f"--gpu-memory={bd.bytes}"])
                for bd in self.budgets}

    def file_jobs(self) -> dict[str, list[str]]:
        """Reads auto's reports; -> the jobs of the files' assignments that
        no module has yet."""
        jobs = {}
        for bd in self.budgets:
            auto = f"auto_b{self.b}_{bd.name}.vmfb"
            self.modules.setdefault(_key(plan_mod.assignment_json(self._assignment(auto))), auto)
            for variant, assignment in bd.assignments.items():
                data = plan_mod.assignment_json(assignment)
                if _key(data) in self.modules:
                    continue
                vmfb = f"{variant}_b{self.b}_{bd.name}.vmfb"
                path = write_manifest(self.out, vmfb.replace(".vmfb", ".place.json"), data)
                self.modules[_key(data)] = vmfb
                jobs[vmfb] = self._job(vmfb, [f"--place={path}"])
        return jobs

    def throughput_budgets(self) -> list:
        """(budget, two-call bytes) for each budget that fits at least half
        the blocks (see the module's doc)."""
        return [(bd, two_calls(bd.bytes, self.reserved)) for bd in self.budgets
                if bd.name.startswith("n") and bd.bytes and 2 * int(bd.name[1:]) >= self.plan.stack.blocks]

    def throughput_jobs(self) -> dict[str, list[str]]:
        return {f"throughput_b{self.b}_{bd.name}.vmfb": self._job(
                    f"throughput_b{self.b}_{bd.name}.vmfb",
                    ["--place=auto", "--place-objective=throughput", f"--gpu-memory={both}"])
                for bd, both in self.throughput_budgets()}

    def throughput_entries(self) -> list[dict]:
        """The throughput table's rows: per budget, the latency module and
        the throughput one, estimated under the throughput objective."""
        from mdc.passes.assignment.estimate import estimate_seconds

        rows = []
        for bd, both in self.throughput_budgets():
            row = {"name": bd.name, "bytes": both, "placements": {}}
            for variant, vmfb in (("latency", f"auto_b{self.b}_{bd.name}.vmfb"),
                                  ("throughput", f"throughput_b{self.b}_{bd.name}.vmfb")):
                assignment = self._assignment(vmfb)
                row["placements"][variant] = {
                    "file": vmfb, "estimate_seconds": estimate_seconds(self.graph, assignment, self.cost, "throughput"),
                    **plan_mod.describe(self.graph, self.plan.stack, assignment)}
            rows.append(row)
        return rows

    def _assignment(self, vmfb: str):
        from mdc.passes.assignment.work_graph import Assignment

        report = _report(self.out, vmfb.replace(".vmfb", ".report.json"))
        return Assignment(units={u["id"]: u["device"] for u in report["units"]},
                          weights={w["name"]: w["device"] for w in report["weights"]})

    def entries(self) -> list[dict]:
        """The kit's rows: per budget, per placement, its module, estimate
        and what it puts on the GPU."""
        rows = []
        for bd in self.budgets:
            row = {"name": bd.name, "bytes": bd.bytes, "placements": {}}
            auto = f"auto_b{self.b}_{bd.name}.vmfb"
            chosen = {"auto": self._assignment(auto), **bd.assignments}
            for variant in VARIANTS:
                vmfb = self.modules[_key(plan_mod.assignment_json(chosen[variant]))]
                report = _report(self.out, vmfb.replace(".vmfb", ".report.json"))
                row["placements"][variant] = {
                    "file": vmfb, "estimate_seconds": report["estimate_seconds"],
                    **plan_mod.describe(self.graph, self.plan.stack, chosen[variant])}
            rows.append(row)
        return rows


def two_calls(budget: int, reserved: int) -> int:
    """The bytes that hold two calls in flight of ``budget``'s program
    bytes (its bytes less ``reserved``, the runtime's own, which is there
    once): three copies (mdc.passes.assignment.budget.device_bytes)."""
    from mdc.passes.assignment.budget import device_bytes

    return device_bytes(budget - reserved, reserved, "throughput")


def _expected(plan: Plan, out: str) -> dict:
    params = model.weights(plan.stack)
    entries = {}
    for b in plan.batches:
        ids = plan.stack.ids(b)
        name = f"expected_b{b}.npy"
        np.save(os.path.join(out, name), model.reference(plan.stack, params, ids).astype(np.float32))
        entries[b] = {"ids": ids.tolist(), "expected": name}
    return {"references": entries, "weights_sha256": model.digest(params)}


def _mdc_compile_ok() -> bool:
    try:
        return subprocess.run(["mdc-compile", "--help"], capture_output=True).returncode == 0
    except OSError:
        return False


def build(plan: Plan, out: str) -> int:
    if not _mdc_compile_ok():
        print("bench: error: mdc-compile is not on PATH (install mdc here: pip install -e .)")
        return 1
    os.makedirs(out, exist_ok=True)
    batches = [_Batch(plan, out, b) for b in plan.batches]
    for jobs in ("auto_jobs", "file_jobs", "throughput_jobs"):  # in turn: file_jobs reads auto's reports
        if compile_jobs(out, {k: v for batch in batches for k, v in getattr(batch, jobs)().items()}, plan.jobs):
            return 1
    expected = _expected(plan, out)
    kit = {"format": FORMAT, "stack": dataclasses.asdict(plan.stack), "smoke": plan.smoke, "cpu": plan.cpu,
           "profile": plan.profile, "costs": plan.costs is not None, "weights_sha256": expected["weights_sha256"],
           "batches": {str(batch.b): {**expected["references"][batch.b], "budgets": batch.entries(),
                                      "throughput": batch.throughput_entries()}
                       for batch in batches}}
    write_manifest(out, "placement.json", kit)
    modules = sum(len(b.modules) for b in batches)
    s = plan.stack
    print(f"built {modules} modules in {out} ({kit_mib(out):.1f} MiB): {s.blocks} blocks, hidden {s.hidden}, "
          f"vocab {s.vocab}, {s.weight_bytes / 2**20:.1f} MiB of weights made at run time as parameters")
    for batch in batches:
        print(plan_text(kit["batches"][str(batch.b)], batch.b))
        print(throughput_text(kit["batches"][str(batch.b)], batch.b))
    return 0


def plan_text(entry: dict, b: int) -> str:
    """The estimates of a batch's placements, one line per budget."""
    def cell(p: dict) -> str:
        return f"{placed_text(p):>8} {p['estimate_seconds'] * 1e3:9.3f} ms"

    lines = [f"batch {b}: blocks on the GPU (placement_format.placed_text) and estimated time per call",
             f"  {'budget':>6} {'MiB':>9}  " + "  ".join(f"{v:>21}" for v in VARIANTS)]
    for row in entry["budgets"]:
        lines.append(f"  {row['name']:>6} {row['bytes'] / 2**20:9.1f}  "
                     + "  ".join(f"{cell(row['placements'][v]):>21}" for v in VARIANTS))
    return "\n".join(lines)


def throughput_text(entry: dict, b: int) -> str:
    """The throughput table's estimates of a batch, one line per budget."""
    lines = [f"batch {b}, two calls in flight: blocks on the GPU and estimated time per call in a stream",
             f"  {'budget':>6} {'MiB':>9}  {'latency':>21}  {'throughput':>21}"]
    for row in entry["throughput"]:
        cells = [f"{placed_text(p):>8} {p['estimate_seconds'] * 1e3:9.3f} ms" for p in row["placements"].values()]
        lines.append(f"  {row['name']:>6} {row['bytes'] / 2**20:9.1f}  " + "  ".join(f"{c:>21}" for c in cells))
    return "\n".join(lines)
