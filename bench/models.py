"""``bench models run DIR``: whole models on each device, mdc against torch
(issue 44 item 5), on the GPU machine (runtime wheel, numpy; torch when
present).

Per model of the kit (models_kit.py): the weights made from its seed and
written as a parameter archive, the float64 numpy reference of each batch
size; then, per batch size, four measurements, each in a process of its
own (models_child.py): mdc's all-GPU module and torch with everything on
the GPU, mdc's all-CPU module (local-task) and torch on the CPU. Each call
goes from token ids in host memory to logits in host memory, the weights
loaded once; a line's time is the median of its calls after 2, and every
result is checked against the reference. One table: per model, batch and
device, mdc's time, torch's, their ratio and item 5's target (GPU: mdc <=
2x torch; CPU: mdc <= 1.3x torch). Exit status 1 on a wrong result.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import tempfile
import time

import numpy as np

from . import model
from .common import Config
from .kitframe import (ROOT, KitError, checkout_env, device_missing, incomplete, no_device, parameter_archive,
                       read_manifest, require_files, run_timed, verdict)
from .models_kit import FORMAT, KINDS, SIDES

TARGETS = {"gpu": 2.0, "cpu": 1.3}  # mdc's time over torch's, at most
CHILD_TIMEOUT_S = 240.0


@dataclasses.dataclass(frozen=True)
class Model:
    name: str
    stack: object
    modules: dict  # side -> {batch size (str) -> vmfb}


@dataclasses.dataclass(frozen=True)
class Kit:
    path: str
    smoke: bool
    batches: tuple[int, ...]
    models: tuple[Model, ...]
    cpu: str


def read_kit(path: str) -> Kit:
    """The kit in ``path``; KitError saying what is wrong with it."""
    kit = read_manifest(path, "models.json", build=f"python -m bench models build {path}", kind="models",
                        fmt=FORMAT)
    try:
        models = tuple(Model(m["name"], KINDS[m["name"]].stack(m["stack"]), m["modules"]) for m in kit["models"])
        result = Kit(path, bool(kit["smoke"]), tuple(kit["batches"]), models, kit["cpu"])
        files = [m.modules[side][str(b)] for m in models for side in SIDES for b in result.batches]
    except (KeyError, TypeError, ValueError) as e:
        raise incomplete(path, "models.json", e) from None
    require_files(path, files)
    return result


@dataclasses.dataclass(frozen=True)
class Result:
    """One child's measurement, or why there is none (``skipped``, or ``failed``)."""

    seconds: float = float("nan")
    right: bool = False
    error: float = float("nan")
    load_s: float = float("nan")
    about: str = ""
    skipped: str = ""
    failed: str = ""

    @property
    def measured(self) -> bool:
        return not (self.skipped or self.failed)


def child(spec: dict, scratch: str) -> Result:
    """``spec`` measured by models_child.py in its own process."""
    path = os.path.join(scratch, "spec.json")
    with open(path, "w") as f:
        json.dump(spec, f)
    ran = run_timed([sys.executable, "-m", "bench.models_child", path], CHILD_TIMEOUT_S, cwd=ROOT,
                    env=checkout_env())
    if ran.status == "TIMEOUT":
        return Result(failed=f"took over {CHILD_TIMEOUT_S:g} s")
    lines = ran.stdout.strip().splitlines()
    try:
        return Result(**json.loads(lines[-1])) if ran.ok and lines else Result(failed=ran.first_error(100))
    except (ValueError, TypeError):
        return Result(failed=lines[-1][:100])


def _prepare(m: Model, batches: tuple[int, ...], scratch: str) -> tuple[str, dict]:
    """The model's weights as a parameter archive in ``scratch``, and the
    reference of each batch size saved there; -> (the archive, batch ->
    the reference's file)."""
    began = time.perf_counter()
    params = model.weights(m.stack)
    made = time.perf_counter() - began
    irpa = os.path.join(scratch, f"{m.name}.irpa")
    parameter_archive(irpa, model.PARAMETER_SCOPE, ((n, w) for (n, _, _), w in zip(m.stack.weights(), params)))
    expected = {}
    for b in batches:
        expected[b] = os.path.join(scratch, f"{m.name}_b{b}_expected.npy")
        np.save(expected[b], KINDS[m.name].reference(m.stack, params, m.stack.ids(b)))
    print(f"{m.name}: {KINDS[m.name].describe(m.stack)}; {m.stack.weight_bytes / 2**20:.1f} MiB of weights made "
          f"from seed {m.stack.seed} in {made:.1f} s, archive and references in "
          f"{time.perf_counter() - began - made:.1f} s", flush=True)
    return irpa, expected


def _cell(r: Result) -> str:
    return f"{r.seconds * 1e3:10.3f}" if r.measured else f"{'n/a':>10}"


def _line(name: str, b: int, side: str, mdc: Result, torch: Result) -> tuple[str, bool, bool | None]:
    """(the table's line, every measured result right, target met (None: no ratio))."""
    both = mdc.measured and torch.measured
    ratio = mdc.seconds / torch.seconds if both else None
    met = None if ratio is None else ratio <= TARGETS[side]
    measured = [r for r in (mdc, torch) if r.measured]
    right = mdc.measured and all(r.right for r in measured)
    error = max((r.error for r in measured), default=float("nan"))
    text = (f"  {name:<9} {b:>6} {side.upper():>6} {_cell(mdc)} {_cell(torch)} "
            f"{f'{ratio:9.2f}x' if ratio is not None else f'{chr(32) * 7}n/a'} {f'<= {TARGETS[side]:.1f}x':>8} "
            f"{'n/a' if met is None else ('yes' if met else 'no'):>4} {str(right):>8} {error:10.1e} "
            f"{mdc.load_s if mdc.measured else float('nan'):10.2f}")
    for who, r in (("mdc", mdc), ("torch", torch)):
        if r.failed:
            text += f"\n      {who}: FAILED {r.failed}"
    return text, right, met


def _specs(kit: Kit, m: Model, b: int, side: str, devices: dict, common: dict) -> tuple[dict, dict]:
    """(mdc's child spec, torch's) of one line."""
    mdc = dict(common, who="mdc", file=os.path.join(kit.path, m.modules[side][str(b)]),
               driver=devices[side][0])
    return mdc, dict(common, who="torch", device=devices[side][1])


def run(config: Config, path: str, calls: int, runtime_flags: tuple[str, ...] = ()) -> int:
    missing = device_missing(config.gpu, child_timeout=120)
    if missing:
        return no_device("bench", config.gpu, why=missing, allow=config.allow_no_gpu, nothing="measured")
    kit = read_kit(os.path.abspath(path))
    if kit.smoke != (config.gpu != "cuda"):
        raise KitError(f"the kit was built {'with' if kit.smoke else 'without'} --smoke; run it "
                       f"{'with' if kit.smoke else 'without'} --smoke")
    # side -> (mdc's driver, torch's device); --smoke: local-sync and torch's CPU play the GPU.
    devices = {"gpu": (config.gpu, "cuda" if config.gpu == "cuda" else "cpu"), "cpu": ("local-task", "cpu")}
    print(f"whole models, mdc against torch on each device (issue 44 item 5); CPU code for {kit.cpu}; "
          f"the GPU played by {config.gpu}; each measurement in a process of its own")
    right, met, abouts = True, [], {}
    with tempfile.TemporaryDirectory(prefix="mdc_models_") as scratch:
        prepared = {m.name: _prepare(m, kit.batches, scratch) for m in kit.models}
        print(f"\nms per call, median of {calls} calls after 2 (ids in, logits out, in host memory; weights "
              f"loaded once); ratio: mdc's time over torch's, below 1.00x mdc is faster")
        print(f"  {'model':<9} {'tokens':>6} {'device':>6} {'mdc ms':>10} {'torch ms':>10} {'mdc/torch':>10} "
              f"{'target':>8} {'met':>4} {'correct':>8} {'max error':>10} {'mdc load s':>10}", flush=True)
        for m in kit.models:
            irpa, expected = prepared[m.name]
            for b in kit.batches:
                common = dict(model=m.name, stack=dataclasses.asdict(m.stack), batch=b, calls=calls, irpa=irpa,
                              expected=expected[b], flags=list(runtime_flags))
                for side in SIDES:
                    mdc_spec, torch_spec = _specs(kit, m, b, side, devices, common)
                    mdc, torch = child(mdc_spec, scratch), child(torch_spec, scratch)
                    abouts.update({r.about or f"not measured: {r.skipped}": None for r in (mdc, torch)
                                   if r.about or r.skipped})
                    text, ok, line_met = _line(m.name, b, side, mdc, torch)
                    print(text, flush=True)
                    right = right and ok
                    met.append(line_met)
    counted = [x for x in met if x is not None]
    print(f"targets (GPU: mdc <= {TARGETS['gpu']:.1f}x torch, CPU: <= {TARGETS['cpu']:.1f}x): met at "
          f"{sum(counted)} of {len(met)} lines" + (f" ({len(met) - len(counted)} without torch)"
                                                  if len(counted) < len(met) else ""))
    for about in abouts:
        print(f"  {about}")
    return verdict(right)
