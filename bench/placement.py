"""``bench placement run DIR``: the placement kit on the GPU machine (runtime
wheel and numpy).

Per model and dtype of the kit (placement_kit.py's grid; ``--models``,
``--dtypes``, ``--tokens`` run a part of it): makes the weights from the
stack's seed (checking their digest), writes them as a parameter archive
(scope ``model``, one entry per weight, as the programs'
``#flow.parameter.named`` globals name them), then, per token count, loads
each module of the variant once with ``mdc.runtime_shim.load(...,
parameters=...)`` and measures its calls, ids in host memory to logits in
host memory, every result checked against the kit's numpy reference.
Around each module's load and calls the GPU memory in use is sampled (the
CUDA driver's cuMemGetInfo, every few milliseconds, profiler/memory.py's
CudaMemory): its peak over the module's life, less what was in use before
the load, and beside it the peak with the device open: less what the GPU
used before this process opened it (NVML's reading; n/a without NVML), the
CUDA context and the runtime's own memory included, which is what
``--gpu-memory`` holds once the profile's reserved_bytes count opening
the device.

Per variant, three tables (placement_table.py), each printed as soon as
its variant is measured: one line per budget, auto's estimate and
measured time against the best contiguous split (the fastest measured of
all-CPU, all-GPU where it fits and every contiguous split compiled for the
budget, placement_splits.py) and greedy fill, the ratios, and the peak GPU
bytes against the budget; one line per module, every placement's estimate
beside its measurement; and, per two-call budget (placement_kit.py), the
latency auto module and the throughput one, each in a stream of calls with
two in flight (Function.map, depth 2): the estimate under the throughput
objective beside the time per call, and the peak GPU bytes of the stream
(each call in flight holds its own weights) against the budget. Then the
targets, counted over every variant run: estimates within 1.5x of their
measurement, auto within 1.05x of the best. Exit status 1 on a wrong
result.
"""

from __future__ import annotations

import dataclasses
import gc
import os
import shutil
import tempfile
import time

import numpy as np

from mdc.profiler.memory import CudaMemory

from . import model, placement_table as table
from .common import Config, gpu_or_none
from .kitframe import KitError, incomplete, parameter_archive, read_manifest, require_files, verdict
from .models_kit import KINDS
from .placement_format import FORMAT
from .workload import CPU, Measured, for_this_run, measure, stream


@dataclasses.dataclass(frozen=True)
class Kit:
    path: str
    smoke: bool
    weights_sha256: dict  # MODEL_DTYPE -> the digest of the weights the references were computed with
    variants: dict  # name -> its placement.json entry, with "stack" made a stack object
    costs: bool = False  # built with --place-costs: estimates measured where the costs files have them


def _files(entry: dict) -> set:
    rows = entry["budgets"] + entry["throughput"]
    found = {p["file"] for row in rows for p in row["placements"].values()}
    return found | {s["file"] for row in entry["budgets"] for s in row["splits"]} | {entry["expected"]}


def read_kit(path: str) -> Kit:
    kit = read_manifest(path, "placement.json", build=f"python -m bench placement build {path}", kind="placement",
                        fmt=FORMAT)
    try:
        variants = {name: {**e, "stack": KINDS[e["model"]].stack(e["stack"])} for name, e in kit["variants"].items()}
        result = Kit(path, bool(kit["smoke"]), dict(kit["weights_sha256"]), variants, bool(kit.get("costs")))
        for e in variants.values():
            _files(e)
    except (KeyError, TypeError, ValueError) as e:
        raise incomplete(path, "placement.json", e) from None
    return result


def select(kit: Kit, grid) -> list[dict]:
    """The kit's variants in ``grid`` (models, dtypes, tokens; tokens None:
    every token count); KitError where none is, or where the kit lacks a
    file of one (a kit carried to the GPU with one model's files runs that
    model)."""
    models, dtypes, tokens = grid
    chosen = [e for e in kit.variants.values()
              if e["model"] in models and e["dtype"] in dtypes and (tokens is None or e["batch"] in tokens)]
    if not chosen:
        have = ", ".join(sorted(kit.variants))
        raise KitError(f"the kit in {kit.path} has no variant of --models {','.join(models)} --dtypes "
                       f"{','.join(dtypes)}" + (f" --tokens {','.join(map(str, tokens))}" if tokens else "")
                       + f" (it has {have})")
    require_files(kit.path, set().union(*(_files(e) for e in chosen)))
    return chosen


def write_parameters(stack: model.Stack, params: list[np.ndarray], path: str) -> str:
    """The weights as a parameter archive at ``path``; -> mdc-run's
    ``--parameters`` spelling of it (``model=PATH``)."""
    named = ((name, array) for (name, _, _), array in zip(stack.weights(), params))
    return parameter_archive(path, model.PARAMETER_SCOPE, named)


@dataclasses.dataclass(frozen=True)
class Run:
    measured: Measured
    gpu_bytes: int | None  # peak GPU memory in use less before the load; None: not measured
    open_bytes: int | None = None  # the peak less the device's use before this process opened it; None: unknown


def _measure_module(config: Config, kit: Kit, entry: dict, file: str, parameters: str,
                    memory: CudaMemory | None, body) -> Run:
    """``body(function, ids, want)`` (-> Measured) on the module's
    ``forward_b{b}``, loaded with the parameter archive, its GPU memory
    sampled around its load and ``body``."""
    import contextlib

    from mdc.runtime_shim import load

    b = entry["batch"]
    ids = model.aligned_copy(np.array(entry["ids"], np.int64))
    want = np.load(os.path.join(kit.path, entry["expected"])).astype(np.float64)
    gc.collect()  # the last module's device and buffers gone before "before" is read
    with memory if memory is not None else contextlib.nullcontext():
        with load(os.path.join(kit.path, file), [CPU, config.gpu], parameters=[parameters]) as m:
            measured = body(m.function(f"forward_b{b}"), ids, want)
    return Run(measured, memory.grown if memory is not None else None, memory.held if memory is not None else None)


def run_module(config: Config, kit: Kit, entry: dict, file: str, parameters: str, calls: int,
               memory: CudaMemory | None) -> Run:
    """One module's calls, one after another."""
    tolerance = entry["stack"].tolerance
    return _measure_module(config, kit, entry, file, parameters, memory,
                           lambda f, ids, want: measure(f, want, calls, ids, tolerance))


def stream_module(config: Config, kit: Kit, entry: dict, file: str, parameters: str, items: int,
                  memory: CudaMemory | None) -> Run:
    """A stream of ``items`` calls with two in flight (Function.map)."""
    import itertools

    tolerance = entry["stack"].tolerance
    return _measure_module(config, kit, entry, file, parameters, memory, lambda f, ids, want: stream(
        lambda n: f.map(itertools.repeat(ids, n), depth=2), want, items, tolerance))


@dataclasses.dataclass
class Tally:
    """What the targets are counted over: every budget line, every
    module's estimate/measured ratio, the two-calls table's lines."""

    lines: list = dataclasses.field(default_factory=list)
    ratios: list = dataclasses.field(default_factory=list)
    faster: list = dataclasses.field(default_factory=list)
    streamed_inside: list = dataclasses.field(default_factory=list)
    right: bool = True


def _variant(config: Config, kit: Kit, entry: dict, parameters: str, calls: int, memory: CudaMemory | None,
             tally: Tally) -> None:
    """Every module of one variant measured once; its budget lines and
    module lines printed."""
    name = entry["name"]
    files = sorted(table.roles(entry))
    began = time.perf_counter()
    runs = {f: run_module(config, kit, entry, f, parameters, calls, memory) for f in files}
    cpu_only = next((s["file"] for row in entry["budgets"] for s in row["splits"] if s.get("run") == "cpu"), None)
    overhead = runs[cpu_only].gpu_bytes if cpu_only and memory is not None else None
    lines = [table.budget_line(name, row, runs, overhead) for row in entry["budgets"]]
    module_text, ratios = table.module_lines(name, entry, runs)
    r = entry["runs"]
    print(f"\n{name}: {len(files)} modules measured in {time.perf_counter() - began:.1f} s; contiguous splits: "
          f"{r['every']} runs, {r['classes']} classes, {r['compiled']} compiled")
    print(table.BUDGET_HEADER)
    print("\n".join(x.text for x in lines))
    print(table.MODULE_HEADER)
    print("\n".join(module_text), flush=True)
    tally.lines += lines
    tally.ratios += ratios
    tally.right = tally.right and all(x.right for x in lines) and all(x.measured.right for x in runs.values())
    _streams(config, kit, entry, parameters, 4 * calls, memory, overhead, tally)


def _streams(config: Config, kit: Kit, entry: dict, parameters: str, items: int, memory: CudaMemory | None,
             overhead: int | None, tally: Tally) -> None:
    """The variant's two-calls lines (placement_kit.py's throughput table)."""
    lines = []
    for row in entry["throughput"]:
        runs = {v: stream_module(config, kit, entry, p["file"], parameters, items, memory)
                for v, p in row["placements"].items()}
        text, faster, inside = table.throughput_line(entry["name"], row, runs, overhead)
        lines.append(text)
        tally.faster.append(faster)
        tally.streamed_inside.append(inside)
        tally.right = tally.right and all(r.measured.right for r in runs.values())
    if lines:
        print(f"two calls in flight, streams of {items} calls:")
        print(table.THROUGHPUT_HEADER)
        print("\n".join(lines), flush=True)


def _legends(kit: Kit, calls: int, batch_calls: int) -> None:
    estimates = ("measured where the kit's costs files have a unit or crossing: mdc-profile --program, "
                 "--place-costs" if kit.costs else "modelled from the machine profile")
    print(table.BUDGET_LEGEND.format(calls1=calls, callsn=batch_calls, estimates=estimates,
                                     within=table.AUTO_WITHIN))
    print(table.MODULE_LEGEND.format(within=table.ESTIMATE_WITHIN))
    print("two calls in flight (Function.map, depth 2): ms per call in a stream (the best of 3 streams after 1); "
          "MiB: room for two calls (each budget's program bytes three times: Function.map's two lanes and the "
          "module's own context; the runtime's once); l: the latency auto module of the budget of one call, t: "
          "--place-objective=throughput under the two-call budget; est: under the throughput objective; peak "
          "MiB: the stream's GPU memory less before its load; in budget: as above; open MiB: the stream's peak "
          "less the GPU's use before this process opened it", flush=True)


def _weights(kit: Kit, entry: dict, scratch: str) -> str:
    """The weights of ``entry``'s stack made from its seed, checked
    against the kit's digest, written as a parameter archive; -> its
    ``model=PATH``."""
    stack, key = entry["stack"], f"{entry['model']}_{entry['dtype']}"
    began = time.perf_counter()
    params = model.weights(stack)
    if model.digest(params) != kit.weights_sha256.get(key):
        raise KitError(f"the {key} weights made here from the kit's seed differ from the ones its reference was "
                       "computed with (sha256); build the kit with this checkout's bench/model.py")
    parameters = write_parameters(stack, params, os.path.join(scratch, f"{key}.irpa"))
    print(f"\n{key}: {KINDS[entry['model']].describe(stack)}; weights {stack.weight_bytes / 2**20:.1f} MiB made "
          f"from seed {stack.seed} and written as a parameter archive in {time.perf_counter() - began:.1f} s",
          flush=True)
    return parameters


def run(config: Config, path: str, calls: int, batch_calls: int, grid) -> int:
    if gpu_or_none(config) is None:
        return config.no_gpu_status()
    scratch = tempfile.mkdtemp(prefix="mdc-placement-")
    try:
        kit = for_this_run(read_kit(os.path.abspath(path)), config)
        chosen = select(kit, grid)
        print(f"placement: {len(chosen)} of the kit's {len(kit.variants)} variants "
              f"({', '.join(e['name'] for e in chosen)}); devices {CPU} and {config.gpu}")
        _legends(kit, calls, batch_calls)
        memory = CudaMemory() if config.gpu == "cuda" else None
        tally = Tally()
        groups: dict = {}
        for entry in chosen:
            groups.setdefault((entry["model"], entry["dtype"]), []).append(entry)
        for group in groups.values():
            parameters = _weights(kit, group[0], scratch)
            for entry in sorted(group, key=lambda e: e["batch"]):
                _variant(config, kit, entry, parameters, calls if entry["batch"] == 1 else batch_calls, memory,
                         tally)
            os.remove(parameters.split("=", 1)[1])  # the next stack's archive in its place
        print()
        print(table.targets(tally.lines, tally.ratios))
        held = [h for h in tally.streamed_inside if h is not None]
        print(f"throughput targets: the throughput module no slower in a stream than the latency one at "
              f"{sum(tally.faster)} of {len(tally.faster)} lines; its peak within the two-call budget at "
              + (f"{sum(held)} of {len(held)}" if held else "n/a (no GPU memory measured)"))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return verdict(tally.right)
