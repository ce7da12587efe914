"""``bench placement build DIR``: the kit of automatic placement against
every contiguous split and greedy fill (here, with the compiler).

The kit's grid (placement_format.py): each model (the workload's stack,
model.py; the Llama-style SwiGLU stack, swiglu.py; the GPT-2-style stack,
gpt2_mlp.py), at each dtype (f32, f16) and each token count (1 and 16 by
default) is a *variant*, with its placement program (no device named,
weights as named parameters: model.placement_program, swiglu.program,
gpt2_mlp.program). Per variant and budget
(placement_plan.py), one module per placement: ``--place=auto
--gpu-memory=B``, greedy fill, and each contiguous split that fits
(placement_splits.py: one run of each class), the last two as
``--place=FILE.json`` assignment files; each compiled with ``--report``
for its estimate. Placements that come out the same share one module. The
weights are in no module and not in the kit: the run makes them from each
stack's seed and writes a parameter archive there. placement.json says
how it was all made; build.json.gz holds every module's report and every
assignment file (not needed by the run).

The kit's second table, ``throughput``: for each budget that fits at
least half the blocks, memory for two calls in flight (``two_calls``: the
budget's program bytes three times, Function.map's two lanes and the
module's own context each holding a copy, plus the runtime's once), and
two modules for it: the latency auto module of that budget (each copy fits
its bytes), and ``--place=auto --place-objective=throughput`` under the
two-call budget; both with their estimates under the throughput objective.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
import shutil
import subprocess
import tempfile
import time

import numpy as np

from . import gpt2_mlp, model, placement_plan as plan_mod, placement_splits as splits, swiglu
from .kitframe import compile_jobs, kit_mib, write_manifest
from .models_kit import KINDS
from .placement_format import FORMAT, plan_text, split_text, throughput_text, variant_name

HOST, ACCELERATOR = "cpu", "gpu"
_STACKS = {"workload": model.Stack, "swiglu": swiglu.Stack, "gpt2mlp": gpt2_mlp.Stack}
_SMOKE_SIZES = {"workload": dict(hidden=64, blocks=4, vocab=256),
                "swiglu": dict(hidden=64, ffn=160, blocks=2, vocab=300),
                "gpt2mlp": dict(hidden=64, ffn=256, blocks=2, vocab=300)}


def stacks(models, dtypes, smoke: bool, workload_sizes: dict | None = None) -> dict:
    """model -> {dtype -> stack}: each model's default sizes (tiny with
    ``smoke``; ``workload_sizes`` overrides the workload's)."""
    out = {}
    for name in models:
        sizes = dict(_SMOKE_SIZES[name]) if smoke else {}
        if name == "workload":
            sizes.update({k: v for k, v in (workload_sizes or {}).items() if v})
        out[name] = {d: _STACKS[name](**sizes, dtype=d) for d in dtypes}
    return out


@dataclasses.dataclass(frozen=True)
class Variant:
    model: str
    stack: object
    batch: int

    @property
    def name(self) -> str:
        return variant_name(self.model, self.stack.dtype, self.batch)


@dataclasses.dataclass(frozen=True)
class Plan:
    """What a kit holds: the stacks (model -> {dtype -> stack}), the batch
    sizes, the block counts the budgets fit (None: each model's
    placement_plan.default_fits), the CPU target, whether a second local
    device stands in for the GPU, and a machine profile file (None: the
    built-in one)."""

    stacks: dict
    batches: tuple[int, ...]
    fits: tuple[int, ...] | None = None
    cpu: str = "generic"
    smoke: bool = False
    profile: str | None = None
    jobs: int = 1  # compiles at a time
    costs: str | None = None  # a folder of costs_VARIANT.json (mdc-profile --program-kit's), one per variant

    def variants(self) -> list[Variant]:
        return [Variant(m, s, b) for m, by_dtype in self.stacks.items() for s in by_dtype.values()
                for b in self.batches]

    def fits_of(self, stack) -> tuple[int, ...]:
        return self.fits if self.fits is not None else plan_mod.default_fits(stack.blocks)

    def costs_file(self, name: str) -> str | None:
        """The costs file of variant ``name``'s program (--place-costs), or None."""
        return None if self.costs is None else os.path.abspath(os.path.join(self.costs, f"costs_{name}.json"))

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


def _measured(plan: Plan, name: str, graph):
    """The cost model of variant ``name``: with its costs file's
    measurements of ``graph`` where the plan has one (the throughput
    table's estimates, which no report gives)."""
    cost, costs_file = plan.cost_model(), plan.costs_file(name)
    if costs_file is None:
        return cost
    from mdc.contract.place_costs import load_costs
    from mdc.passes.assignment.measured import with_measurements

    return with_measurements(cost, load_costs(costs_file), graph, plan.kinds())


def _key(assignment) -> str:
    return json.dumps(plan_mod.assignment_json(assignment), sort_keys=True)


class _Variant:
    """The modules of one variant: auto's first (its reports say what it
    chose), then each greedy fill's and contiguous split's assignment
    unless a module already has it, then the throughput modules. Sources,
    reports and assignment files go to ``scratch``."""

    def __init__(self, plan: Plan, out: str, scratch: str, variant: Variant):
        self.plan, self.out, self.scratch, self.v = plan, out, scratch, variant
        self.name, self.stack, self.b = variant.name, variant.stack, variant.batch
        text = KINDS[variant.model].program(self.stack, self.b)
        self.source = os.path.join(scratch, f"{self.name}.mlir")
        with open(self.source, "w") as f:
            f.write(text)
        self.graph = work_graph(text, self.source)
        self.cost = _measured(plan, self.name, self.graph)  # the profile (and costs) read once a variant
        # What the runtime itself takes on the GPU (the profile's
        # reserved_bytes), which every budget holds beside the program.
        self.reserved = self.cost.reserved_bytes(ACCELERATOR)
        self.layout = plan_mod.layout_of(self.graph, self.stack)
        self.every = plan_mod.Splits.of(self.graph, self.layout)  # every contiguous run's GPU bytes
        self.budgets = plan_mod.budgets(self.graph, self.every, plan.fits_of(self.stack), self.reserved)
        self.modules: dict[str, str] = {}  # an assignment's key -> its module
        self.assignments: dict[str, object] = {}  # a module -> its assignment
        self.run_files: dict[splits.Run, str] = {}

    def _job(self, vmfb: str, place: list[str]) -> list[str]:
        costs = self.plan.costs_file(self.name)
        return ["mdc-compile", self.source, *self.plan.devices(), *place, f"--report={self._report_path(vmfb)}",
                *([f"--place-costs={costs}"] if costs else [])]

    def _report_path(self, vmfb: str) -> str:
        return os.path.join(self.scratch, vmfb.replace(".vmfb", ".report.json"))

    def report(self, vmfb: str) -> dict:
        with open(self._report_path(vmfb)) as f:
            return json.load(f)["placement"]

    def auto_jobs(self) -> dict[str, list[str]]:
        return {f"{self.name}_auto_{bd.name}.vmfb": self._job(f"{self.name}_auto_{bd.name}.vmfb",
                                                               ["--place=auto", f"--gpu-memory={bd.bytes}"])
                for bd in self.budgets}

    def _file_job(self, vmfb: str, assignment, jobs: dict) -> str:
        """The module of ``assignment``: one already made, or ``vmfb``, a
        new job in ``jobs``."""
        key = _key(assignment)
        if key not in self.modules:
            path = write_manifest(self.scratch, vmfb.replace(".vmfb", ".place.json"),
                                  plan_mod.assignment_json(assignment))
            self.modules[key], self.assignments[vmfb] = vmfb, assignment
            jobs[vmfb] = self._job(vmfb, [f"--place={path}"])
        return self.modules[key]

    def file_jobs(self) -> dict[str, list[str]]:
        """Reads auto's reports; -> the jobs of greedy fill's and the
        contiguous splits' assignments that no module has yet."""
        jobs: dict[str, list[str]] = {}
        for bd in self.budgets:
            auto = f"{self.name}_auto_{bd.name}.vmfb"
            chosen = self._from_report(auto)
            self.assignments.setdefault(self.modules.setdefault(_key(chosen), auto), chosen)
        for bd in self.budgets:
            self._file_job(f"{self.name}_greedy_{bd.name}.vmfb", bd.greedy, jobs)
            for run in bd.runs:
                if run not in self.run_files:
                    label = splits.text(run, self.stack.blocks)
                    self.run_files[run] = self._file_job(f"{self.name}_split_{label}.vmfb",
                                                         plan_mod.run_assignment(self.graph, self.layout, run), jobs)
        return jobs

    def throughput_budgets(self) -> list:
        """(budget, two-call bytes) for each budget that fits at least half
        the blocks (see the module's doc)."""
        return [(bd, two_calls(bd.bytes, self.reserved)) for bd in self.budgets
                if bd.name.startswith("n") and bd.bytes and 2 * int(bd.name[1:]) >= self.stack.blocks]

    def throughput_jobs(self) -> dict[str, list[str]]:
        return {f"{self.name}_throughput_{bd.name}.vmfb": self._job(
                    f"{self.name}_throughput_{bd.name}.vmfb",
                    ["--place=auto", "--place-objective=throughput", f"--gpu-memory={both}"])
                for bd, both in self.throughput_budgets()}

    def _from_report(self, vmfb: str):
        """The assignment a module's report says it has."""
        from mdc.passes.assignment.work_graph import Assignment

        report = self.report(vmfb)
        return Assignment(units={u["id"]: u["device"] for u in report["units"]},
                          weights={w["name"]: w["device"] for w in report["weights"]})

    def _placed(self, vmfb: str) -> dict:
        """A module's entry: its file, estimate (and which parts of it were
        measured) and what it puts on the GPU."""
        report = self.report(vmfb)
        return {"file": vmfb, "estimate_seconds": report["estimate_seconds"], "estimates": report.get("estimates"),
                **plan_mod.describe(self.graph, self.stack, self.assignments[vmfb])}

    def entry(self) -> dict:
        """The variant's part of placement.json: per budget auto, greedy
        fill and the splits; the runs counted; the throughput table."""
        def run_text(run) -> str:
            return splits.text(run, self.stack.blocks)

        budgets = []
        for bd in self.budgets:
            auto = self.modules[_key(self._from_report(f"{self.name}_auto_{bd.name}.vmfb"))]
            budgets.append({"name": bd.name, "bytes": bd.bytes, "runs_fit": bd.runs_fit,
                            "classes_fit": bd.classes_fit,
                            "placements": {"auto": self._placed(auto),
                                           "greedy": self._placed(self.modules[_key(bd.greedy)])},
                            "splits": [{**self._placed(self.run_files[r]), "run": run_text(r)} for r in bd.runs]})
        return {"name": self.name, "model": self.v.model, "dtype": self.stack.dtype, "batch": self.b,
                "stack": dataclasses.asdict(self.stack), "budgets": budgets, "throughput": self.throughput_entries(),
                "runs": {"every": len(self.every.bytes), "classes": len(splits.classes(self.stack.blocks)),
                         "compiled": len(self.run_files)}}

    def throughput_entries(self) -> list[dict]:
        """The throughput table's rows: per budget, the latency module and
        the throughput one, estimated under the throughput objective."""
        from mdc.passes.assignment.estimate import estimate_seconds

        rows = []
        for bd, both in self.throughput_budgets():
            row = {"name": bd.name, "bytes": both, "placements": {}}
            auto = self._from_report(f"{self.name}_auto_{bd.name}.vmfb")
            for variant, vmfb in (("latency", self.modules[_key(auto)]),
                                  ("throughput", f"{self.name}_throughput_{bd.name}.vmfb")):
                assignment = self._from_report(vmfb)
                row["placements"][variant] = {
                    "file": vmfb, "estimate_seconds": estimate_seconds(self.graph, assignment, self.cost, "throughput"),
                    **plan_mod.describe(self.graph, self.stack, assignment)}
            rows.append(row)
        return rows


def two_calls(budget: int, reserved: int) -> int:
    """The bytes that hold two calls in flight of ``budget``'s program
    bytes (its bytes less ``reserved``, the runtime's own, which is there
    once): three copies (mdc.passes.assignment.budget.device_bytes)."""
    from mdc.passes.assignment.budget import device_bytes

    return device_bytes(budget - reserved, reserved, "throughput")


def _references(plan: Plan, out: str) -> dict:
    """Each variant's ids and float64 reference (saved as f32), and each
    stack's weights' digest (``MODEL_DTYPE``), the weights made once a stack."""
    refs, digests = {}, {}
    for name, by_dtype in plan.stacks.items():
        for dtype, stack in by_dtype.items():
            params = model.weights(stack)
            digests[f"{name}_{dtype}"] = model.digest(params)
            for b in plan.batches:
                v = variant_name(name, dtype, b)
                ids = stack.ids(b)
                np.save(os.path.join(out, f"expected_{v}.npy"),
                        KINDS[name].reference(stack, params, ids).astype(np.float32))
                refs[v] = {"ids": ids.tolist(), "expected": f"expected_{v}.npy"}
            del params
    return {"references": refs, "weights_sha256": digests}


def _mdc_compile_ok() -> bool:
    try:
        return subprocess.run(["mdc-compile", "--help"], capture_output=True).returncode == 0
    except OSError:
        return False


def _missing_costs(plan: Plan) -> list[str]:
    return [] if plan.costs is None else [v.name for v in plan.variants()
                                          if not os.path.isfile(plan.costs_file(v.name))]


def _bundle(out: str, scratch: str) -> None:
    """Every report and assignment file of the build as build.json.gz."""
    found = {"reports": {}, "assignments": {}}
    for name in sorted(os.listdir(scratch)):
        for suffix, kind in ((".report.json", "reports"), (".place.json", "assignments")):
            if name.endswith(suffix):
                with open(os.path.join(scratch, name)) as f:
                    found[kind][name[:-len(suffix)]] = json.load(f)
    with gzip.open(os.path.join(out, "build.json.gz"), "wt") as f:
        json.dump(found, f)


def _drop_unnamed(out: str, variants: list, entries: dict) -> None:
    """Removes each auto module no table names (another budget's auto
    module has its assignment): the kit travels to the GPU machine."""
    named = {p["file"] for e in entries.values() for row in e["budgets"] + e["throughput"]
             for p in [*row["placements"].values(), *row.get("splits", [])]}
    for v in variants:
        for vmfb in v.auto_jobs():
            if vmfb not in named:
                os.remove(os.path.join(out, vmfb))


def build(plan: Plan, out: str) -> int:
    if not _mdc_compile_ok():
        print("bench: error: mdc-compile is not on PATH (install mdc here: pip install -e .)")
        return 1
    missing = _missing_costs(plan)
    if missing:
        print(f"bench: error: --place-costs={plan.costs} lacks costs_{missing[0]}.json ({len(missing)} of the kit's "
              f"{len(plan.variants())} variants' costs files missing); time the program kits "
              f"(bench/gpu_placement_costs.sh) and copy every costs file there")
        return 1
    began = time.perf_counter()
    os.makedirs(out, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix="mdc-placement-build-")
    try:
        variants = [_Variant(plan, out, scratch, v) for v in plan.variants()]
        for jobs in ("auto_jobs", "file_jobs", "throughput_jobs"):  # in turn: file_jobs reads auto's reports
            todo = {k: cmd for variant in variants for k, cmd in getattr(variant, jobs)().items()}
            print(f"compiling {len(todo)} modules ({jobs[:-5]})", flush=True)
            if compile_jobs(out, todo, plan.jobs):
                return 1
        expected = _references(plan, out)
        entries = {v.name: {**v.entry(), **expected["references"][v.name]} for v in variants}
        _bundle(out, scratch)
        _drop_unnamed(out, variants, entries)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    kit = {"format": FORMAT, "smoke": plan.smoke, "cpu": plan.cpu, "profile": plan.profile,
           "costs": plan.costs is not None, "weights_sha256": expected["weights_sha256"], "variants": entries}
    write_manifest(out, "placement.json", kit)
    for entry in entries.values():
        print(plan_text(entry))
        print(throughput_text(entry))
    _say_built(out, variants, entries, time.perf_counter() - began)
    return 0


def _say_built(out: str, variants: list, entries: dict, seconds: float) -> None:
    modules = sum(len(v.modules) for v in variants) + sum(len(v.throughput_budgets()) for v in variants)
    print(f"built {modules} modules in {out} ({kit_mib(out):.1f} MiB) in {seconds / 60:.1f} min; weights made at "
          "run time as parameters:")
    for (name, _), stack in {(v.v.model, v.stack.dtype): v.stack for v in variants}.items():
        print(f"  {name}: {KINDS[name].describe(stack)}; {stack.weight_bytes / 2**20:.1f} MiB")
    print("per variant: contiguous runs in all, their classes, classes compiled (one run each, those that fit a "
          "budget; placement_splits.py); runs and classes that fit each budget; modules")
    for v in variants:
        r, rows = entries[v.name]["runs"], entries[v.name]["budgets"]
        fit = ", ".join(f"{row['name']} {row['runs_fit']}/{row['classes_fit']}" for row in rows)
        print(f"  {v.name}: {r['every']} runs, {r['classes']} classes, {r['compiled']} compiled; fit: {fit}; "
              f"{len(v.modules) + len(v.throughput_budgets())} modules")
