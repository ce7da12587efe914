"""The differential check: mdc-compile against stock iree-compile, and both
against the numpy reference."""

from __future__ import annotations

import concurrent.futures
import dataclasses
import os
import re
import time
from typing import Callable, Optional

import numpy as np

from mdc.pipeline.cli_errors import lost_device
from mdc.pipeline.driver import DATA_TILING_DROPPED

from .commands import RUNTIME_DEVICES, cmd_text, failed, run_cmd, sh, staged_compile_cmd, stock_compile_cmd
from .generator import module_text
from .oracle import compare_bitwise, compare_reference
from .program import Program
from .staging import staging_of
from .values import DEVICES, FLOATS
from .vulkan import (
    VULKAN_COMPILE_STATUS, VULKAN_NARROW_STATUS, VULKAN_STOCK_NUMBERS_STATUS, has_narrow_values,
    stock_fails_on_vulkan_alone, stock_wrong_on_vulkan_alone)


@dataclasses.dataclass
class Outcome:
    program: Program
    status: str          # "ok" or a failure category
    detail: str = ""
    batch_text: str = ""  # the module, when the failure needs the whole batch
    notes: list = dataclasses.field(default_factory=list)  # workarounds applied
    target: str = "local"  # where mdc's side ran (check_batch sets it)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def report(self) -> str:
        p = self.program
        parts = [f"MDC_PROGEN_SEED={p.seed} program index {p.index} (@{p.name}): {self.status}",
                 f"reproduce: MDC_PROGEN_SEED={p.seed} python test/e2e/progen.py check --seed {p.seed} --index {p.index}"
                 + (f" --target {self.target}" if self.target != "local" else ""),
                 self.detail.rstrip(), p.describe(self.target), "--- program ---", p.text().rstrip()]
        if self.batch_text:
            parts += ["--- the whole module it was compiled in ---", self.batch_text.rstrip()]
        return "\n".join(parts)


def write_inputs(prog: Program, work: str) -> list[str]:
    flags = []
    for k, a in enumerate(prog.args):
        if isinstance(a.data, np.ndarray):
            path = os.path.join(work, f"{prog.name}.in{k}.npy")
            np.save(path, a.data)
            flags.append(f"--input=@{path}")
        else:
            flags.append(f"--input={a.data}")
    return flags


def mdc_runtime(prog: Program, ndev: int, target: str, runner: Optional[str] = None):
    """(runner, runtime devices, function) for mdc's side.

    With the Vulkan target mdc's module runs on stock iree-run-module: IREE
    3.13's Python runtime cannot open a Vulkan device beside another one
    (test_vulkan.py's canary), so mdc-run cannot either. iree-run-module
    allocates every argument on its first device and reads every result
    back with that device's queue, so it calls the host twin ``@F$host``
    (passes/transforms/host_entry_points.py) that mdc-compile adds to a function with a
    value declared on device_b, with a CPU device first; it binds declared
    devices by kind and ordinal, not by position."""
    if target == "local":
        return runner or prog.runner, RUNTIME_DEVICES[ndev], prog.name
    cpus = iter(["local-task", "local-sync"])
    devices = [next(cpus) for d in prog.devices() if d != "device_b"] + ["vulkan"]
    declared = {a.affinity for a in prog.args if isinstance(a.data, np.ndarray)} | {d for _, d in prog.results}
    return "iree-run-module", devices, prog.name + "$host" if "device_b" in declared else prog.name


def _compare_all(prog: Program, outs: list[str], compare) -> list[str]:
    problems = []
    for k, (v, _) in enumerate(prog.results):
        bad = compare(k, v, np.load(outs[k]))
        if bad:
            problems.append(f"result {k} (%{v.name}, {v.type}): {bad}")
    return problems


def check_program_runs(prog: Program, staged: str, stock: Optional[str], work: str, ndev: int,
                       runner: Optional[str] = None, target: str = "local",
                       stock_failure: Optional["Outcome"] = None) -> Outcome:
    """Run one compiled program both ways and compare. `runner` forces
    iree-run-module or mdc-run for the staged module (local target).

    mdc's results are always compared with the numpy reference, and with
    stock IREE when stock IREE ran: bit for bit on CPU pairs, and on Vulkan
    (other codegen) within the reference's error bound. A failure of stock
    IREE (``stock`` None with ``stock_failure``, or a failing run, or stock
    numbers outside the bound) is reported as stock-side only when mdc's
    own numbers do not show an mdc bug."""
    flags = write_inputs(prog, work)
    n = len(prog.results)
    want_outs = [os.path.join(work, f"{prog.name}.stock{k}.npy") for k in range(n)]
    got_outs = [os.path.join(work, f"{prog.name}.mdc{k}.npy") for k in range(n)]
    for p in want_outs + got_outs:
        if os.path.exists(p):
            os.unlink(p)
    runner, devices, function = mdc_runtime(prog, ndev, target, runner)
    if stock is not None and stock_failure is None:
        r = sh(run_cmd("iree-run-module", stock, prog, flags, want_outs, ["local-task"] * ndev), timeout=120)
        if r.returncode:
            stock_failure = Outcome(prog, "stock-run-failed (generator or IREE bug)", failed("stock iree-run-module", r))
    cmd = run_cmd(runner, staged, prog, flags, got_outs, devices, function)
    r = sh(cmd, timeout=120)
    if r.returncode:
        return Outcome(prog, f"mdc-staged-run-failed ({runner}{', vulkan' if target == 'vulkan' else ''})",
                       failed(runner, r))
    reference = prog.reference()
    run = f"\nrun: {cmd_text(cmd)}"
    vs_numpy = _compare_all(prog, got_outs, lambda k, v, got: compare_reference(got, *reference[k], v.dtype))
    if stock_failure is not None:
        if vs_numpy and target == "vulkan" and has_narrow_values(prog):
            # Off on Vulkan with f16/i8 values: IREE's narrow types there,
            # as below; the local target checks this program against numpy.
            return Outcome(prog, VULKAN_NARROW_STATUS, "\n".join(vs_numpy) + run + "\nstock side: "
                           + stock_failure.status)
        if vs_numpy:
            return Outcome(prog, "mdc-vs-numpy-mismatch (stock IREE failed too)",
                           "\n".join(vs_numpy) + run + "\nstock side: " + stock_failure.status + "\n"
                           + stock_failure.detail)
        return stock_failure
    stock_bad = _compare_all(prog, want_outs, lambda k, v, want: compare_reference(want, *reference[k], v.dtype))
    if target == "local":
        vs_stock = _compare_all(prog, got_outs, lambda k, v, got: compare_bitwise(got, np.load(want_outs[k])))
    else:  # other codegen: stock's numbers within the error bound, integers exactly
        vs_stock = _compare_all(prog, got_outs, lambda k, v, got: compare_bitwise(got, np.load(want_outs[k]))
                                if v.dtype not in FLOATS else None)
    if stock_bad:
        # Stock IREE is wrong. mdc is then judged by numpy alone, and where it
        # is wrong too, by whether it gives stock's numbers: IREE's bug in a
        # part mdc leaves to IREE (a loop between two CPUs that share memory
        # stages nothing, so loop-init-isolation leaves it be).
        if target == "local":
            not_stocks = vs_stock
        else:  # other codegen: within the error bound of stock's numbers, integers exactly
            not_stocks = _compare_all(prog, got_outs, lambda k, v, got: compare_reference(
                got, np.load(want_outs[k]).astype(np.float64 if v.dtype in FLOATS else np.int64), reference[k][1],
                v.dtype))
        if vs_numpy and not_stocks and not (target == "vulkan" and has_narrow_values(prog)):
            return Outcome(prog, "mdc-vs-stock-mismatch (stock IREE is outside the reference too)",
                           "\n".join(not_stocks + vs_numpy) + run + "\nstock vs numpy: " + "\n".join(stock_bad))
        why = "mdc matches the reference" if not vs_numpy else "mdc gives stock's numbers"
        return Outcome(prog, f"stock-vs-numpy-mismatch (IREE bug or generator; {why})", "\n".join(stock_bad) + run)
    where = f" ({runner}{', vulkan' if target == 'vulkan' else ''})"
    if (vs_stock or vs_numpy) and target == "vulkan" and has_narrow_values(prog):
        return Outcome(prog, VULKAN_NARROW_STATUS, "\n".join(vs_stock + vs_numpy) + run)
    if (vs_stock or vs_numpy) and target == "vulkan":
        same = stock_wrong_on_vulkan_alone(prog, work, flags, got_outs, reference)
        if same:
            return Outcome(prog, VULKAN_STOCK_NUMBERS_STATUS, "\n".join(vs_stock + vs_numpy) + run + "\n" + same)
    if vs_stock:
        return Outcome(prog, "mdc-vs-stock-mismatch" + where, "\n".join(vs_stock) + run)
    if vs_numpy:
        return Outcome(prog, "mdc-vs-numpy-mismatch" + where, "\n".join(vs_numpy) + run)
    return Outcome(prog, "ok")


def compile_pair(src: str, work: str, devices: list[str], model: str, staging: str = "copy",
                 target: str = "local") -> tuple:
    """Compile `src` with stock iree-compile and with mdc-compile.
    -> (stock result, mdc result, notes).

    IREE 3.13.0 segfaults in constant evaluation (JitGlobals) on some
    programs with constants moved between devices, stock iree-compile too
    (and mdc-compile reports that), or fails with an undefined device
    global (regress/iree_undefined_device_global.test): then both compile
    again with --iree-opt-const-eval=false, and the notes say so. Where mdc-compile
    dropped its data tiling, stock compiles again without it (notes too).
    """
    stock, staged = os.path.join(work, "stock.vmfb"), os.path.join(work, "staged.vmfb")
    notes, extra = [], []
    for _ in range(2):
        rs = sh(stock_compile_cmd(src, stock, devices, model) + extra)
        crashed = rs.returncode not in (0, 1) or "Stack dump" in rs.stderr
        lost = rs.returncode == 1 and lost_device(rs.stderr, devices)
        if not (crashed or lost) or extra:
            break
        extra = ["--iree-opt-const-eval=false"]
        notes.append(f"stock iree-compile {'crashed in' if crashed else 'lost a device global in'} IREE's const-eval; "
                     "both compiled with --iree-opt-const-eval=false")
    rm = sh(staged_compile_cmd(src, staged, devices, model, staging, target) + extra)
    if rm.returncode == 0 and MDC_DROPPED_DATA_TILING in rm.stderr:
        # Stock is compiled as mdc compiled the module, so the two still compare bit for bit.
        rs = sh(stock_compile_cmd(src, stock, devices, model, data_tiling=False) + extra)
        notes.append("mdc-compile dropped its data tiling (IREE fails with it); stock compiled without it too")
    return rs, rm, notes


# mdc-compile's warning when it compiled a module again without its data tiling.
MDC_DROPPED_DATA_TILING = f"warning: {DATA_TILING_DROPPED}"


def check_batch(programs: list[Program], work: str, target: str = "local") -> list[Outcome]:
    """Compile `programs` (same devices and model) as one module both ways
    and check every function. A failing batch compile is split to find the
    programs responsible; a program stock IREE cannot compile is still run
    through mdc and compared with numpy."""
    outcomes = _check_batch(programs, work, target)
    for o in outcomes:
        o.target = target
    return outcomes


def _check_batch(programs: list[Program], work: str, target: str) -> list[Outcome]:
    os.makedirs(work, exist_ok=True)
    model = programs[0].model
    devices = [d for d in DEVICES if any(d in p.devices() for p in programs)]
    src = os.path.join(work, "module.mlir")
    text = module_text(programs)
    with open(src, "w") as f:
        f.write(text)
    rs, rm, notes = compile_pair(src, work, devices, model, staging_of(programs[0], target), target)
    staged, stock = os.path.join(work, "staged.vmfb"), os.path.join(work, "stock.vmfb")
    if rs.returncode or rm.returncode:
        if len(programs) == 1:
            p = programs[0]
            if rm.returncode:
                status = "mdc-compile-failed" + (" (vulkan)" if target == "vulkan" else "")
                if rs.returncode:
                    return [Outcome(p, "stock-compile-failed (generator or IREE bug)",
                                    failed("stock iree-compile", rs) + "\n" + failed("mdc-compile", rm))]
                if target == "vulkan":
                    same = stock_fails_on_vulkan_alone(src, work, devices, model, rm)
                    if same:
                        return [Outcome(p, VULKAN_COMPILE_STATUS, failed("mdc-compile", rm) + "\n" + same)]
                return [Outcome(p, status, failed("mdc-compile", rm))]
            failure = Outcome(p, "stock-compile-failed (generator or IREE bug)", failed("stock iree-compile", rs))
            o = check_program_runs(p, staged, None, work, len(devices), target=target, stock_failure=failure)
            o.notes = notes
            return [o]
        outcomes = []
        for k, p in enumerate(programs):
            outcomes += check_batch([p], os.path.join(work, f"alone{k}"), target)
        if rs.returncode == 0 and all(o.ok for o in outcomes):
            # Every program compiles alone: the batch itself trips mdc.
            return [Outcome(p, "mdc-compile-failed (only in a batch)", failed("mdc-compile", rm), text)
                    for p in programs]
        return outcomes
    outcomes = [check_program_runs(p, staged, stock, work, len(devices), target=target) for p in programs]
    for o in outcomes:
        o.notes = notes
    return outcomes


def check_all(programs: list[Program], work: str, jobs: int = 2, batch_size: int = 12,
              progress: Optional[Callable[[Outcome], None]] = None, target: str = "local") -> list[Outcome]:
    groups: dict = {}
    for p in programs:
        groups.setdefault((tuple(p.devices()), p.model, staging_of(p, target)), []).append(p)
    batches = []
    for key, ps in sorted(groups.items()):
        for i in range(0, len(ps), batch_size):
            batches.append(ps[i:i + batch_size])
    outcomes: list[Outcome] = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futs = [pool.submit(check_batch, b, os.path.join(work, f"batch{i:03d}"), target)
                for i, b in enumerate(batches)]
        for f in concurrent.futures.as_completed(futs):
            for o in f.result():
                outcomes.append(o)
                if progress:
                    progress(o)
    order = {id(p): i for i, p in enumerate(programs)}
    return sorted(outcomes, key=lambda o: order[id(o.program)])


# mdc bugs already reported, each with its pending lit test:
# test_random_programs.py marks matching failures xfail instead of failing.
# Entries: (pending test, failure category, regex on the failure detail,
# program feature that must be present). Remove an entry when its test moves
# to test/lit/regress/.
# Empty: the last one (a GPU queue alloca awaiting the default CPU device's
# dealloca, seed 796349654 index 104) is fixed by the cross-driver-waits
# pass (test/lit/regress/constant_read_on_gpu_waits_on_cpu.mlir).
KNOWN: list = []


def known_issue(o: Outcome) -> Optional[str]:
    for test, status, pattern, feature in KNOWN:
        if o.status.startswith(status) and re.search(pattern, o.detail) and feature in o.program.features:
            return test
    return None


def default_seed() -> int:
    env = os.environ.get("MDC_PROGEN_SEED")
    return int(env) if env else int(time.time()) % 1_000_000_007
