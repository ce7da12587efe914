"""Running a kit on the GPU machine: every case under a timeout, compared
with its expected outputs, in one table."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np

from ..paths import ROOT, script
from ..processes import run_captured
from .canaries import canary_stock_cuda_maxsi, canary_stock_cuda_min_reduce, canary_stock_cuda_other_thread
from .cases import result_files
from .runners import RUNNERS

NO_GPU_STATUS = 2  # run's exit status with no cuda device (a run that checked nothing)


def compare(got: np.ndarray, want: np.ndarray, rel_tol: float | None = None) -> tuple[bool, float]:
    """Integers and booleans must be equal; floats within a relative
    Frobenius error of ``rel_tol``, by default 1e-4 (f32: summation order
    differs across devices) or 1e-2 (f16). Returns (ok, error)."""
    if got.shape != want.shape or got.dtype != want.dtype:
        return False, float("inf")
    if want.dtype.kind != "f":
        return bool(np.array_equal(got, want)), float(np.count_nonzero(got != want))
    g, w = got.astype(np.float64), want.astype(np.float64)
    if not np.all(np.isfinite(g)):
        return False, float("inf")
    err = float(np.linalg.norm(g - w) / max(np.linalg.norm(w), 1e-30))
    if rel_tol is None:
        rel_tol = 1e-2 if want.dtype.itemsize <= 2 else 1e-4
    return err <= rel_tol, err


def cuda_available() -> bool:
    try:
        import iree.runtime as rt

        return "cuda" in rt.query_available_drivers() and bool(
            rt.get_driver("cuda").query_available_devices())
    except Exception:
        return False


def run(kit: str, timeout: float, only: str | None, repeat: int = 1, cpu_driver: str = "local-task",
        allow_no_gpu: bool = False) -> int:
    """Runs each case ``repeat`` times; a case passes only if every run
    matched (a missing wait shows as an intermittent mismatch: before
    fixing one, loop_dynamic_large came back wrong in 22 of 40 runs, and
    one run a case hid it for several sessions). ``cpu_driver`` runs the
    devices the cases give to local-task (local-sync: every CPU submission
    runs on the calling thread)."""
    kit = os.path.abspath(kit)
    if not cuda_available():
        if allow_no_gpu:
            print("gpu_kit: no cuda device here; skipping (--allow-no-gpu)")
            return 0
        print("gpu_kit: error: no cuda device here; nothing was checked "
              "(--allow-no-gpu makes this a skip with exit status 0)", file=sys.stderr)
        return NO_GPU_STATUS
    with open(os.path.join(kit, "cases.json")) as f:
        cases = json.load(f)
    rows, failures = [], 0
    for case in cases:
        if only and case["name"] != only:
            continue
        case = dict(case, devices=[cpu_driver if d == "local-task" else d for d in case["devices"]])
        verdicts, errs, elapsed, detail = [], [], 0.0, []
        for _ in range(repeat):
            verdict, err, seconds, run_detail = run_case(kit, case, timeout)
            if verdict != "match" and not detail:
                detail = run_detail  # the first failing run's message, not a later run's
            verdicts.append(verdict)
            errs.append(err)
            elapsed += seconds
        wrong = sum(v != "match" for v in verdicts)
        verdict = "match" if not wrong else next(v for v in verdicts if v != "match")
        if errs and all(e is not None for e in errs):
            detail = [f"rel err {max(errs):.1e}"]
        if repeat > 1:
            detail = [f"{wrong} of {repeat} runs wrong" + (f", {detail[0]}" if detail else "")]
        failures += bool(wrong)
        rows.append((case["name"], case["runner"], " ".join(case["devices"]), verdict,
                     f"{elapsed / repeat:.2f}s", detail[0][:90] if detail else ""))
    print(f"{'case':24} {'runner':16} {'devices':30} {'result':9} {'wall':7} detail")
    for row in rows:
        print(f"{row[0]:24} {row[1]:16} {row[2]:30} {row[3]:9} {row[4]:7} {row[5]}")
    print(f"{len(rows) - failures} passed, {failures} failed")
    if not only:
        still, what = canary_stock_cuda_other_thread()
        print(f"canary, stock cuda allocation on another thread: {'still fails' if still else 'CHANGED'}: {what}")
        failures += not still
        if os.path.exists(os.path.join(kit, "canary_min_reduce.vmfb")):
            still, what = canary_stock_cuda_min_reduce(kit, timeout)
            print(f"canary, stock cuda i32 min-reduce of a dynamic shape: {'still wrong' if still else 'CHANGED'}: "
                  f"{what}")
            failures += not still
        if os.path.exists(os.path.join(kit, "canary_maxsi_dynamic_middle.vmfb")):
            still, lines = canary_stock_cuda_maxsi(kit, timeout)
            verdict = {True: "still fails", False: "CHANGED", None: "DID NOT RUN"}[still]
            print(f"canary, stock cuda i32 maxsi-reduce from INT_MIN: {verdict} "
                  "(a variant wrong: mdc-compile's warning stays; none: narrow or drop it)")
            for line in lines:
                print(f"  {line}")
            failures += not still
    return 1 if failures else 0


def run_case(kit: str, case: dict, timeout: float):
    """One run of ``case``: (verdict, relative error or None, seconds, detail lines)."""
    outs = [os.path.join(kit, f) for f in result_files(case["name"], "out", len(case["expected"]))]
    for out in outs:
        if os.path.exists(out):
            os.unlink(out)
    if case["runner"] == "shim" or case["runner"] in RUNNERS:
        cmd = [sys.executable, "-m", "mdc.runtime_shim"]
        if case["runner"] in RUNNERS:
            cmd = [sys.executable, script("gpu_kit"), f"_{case['runner']}"]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    else:
        cmd = [shutil.which("iree-run-module") or "iree-run-module"]
        env = None
    cmd += [f"--module={case['module']}", f"--function={case['function']}",
            *[f"--device={d}" for d in case["devices"]], *case["inputs"], *[f"--output=@{o}" for o in outs]]
    start = time.perf_counter()
    try:
        r = run_captured(cmd, cwd=kit, timeout=timeout, env=env)
        status = "ok" if r.returncode == 0 else f"rc={r.returncode}"
        detail = (r.stderr or r.stdout).strip().splitlines()[-1:] if r.returncode else []
    except subprocess.TimeoutExpired:
        status, detail = "TIMEOUT", []
    except FileNotFoundError:
        return "NO-TOOL", None, 0.0, [f"{cmd[0]} not found: put the runtime's bin/ on PATH"]
    elapsed = time.perf_counter() - start
    verdict, err = status, None
    missing = [o for o in outs if not os.path.exists(o)]
    if status == "ok" and missing:
        # The runners check the result count; a run that still wrote no
        # result is a failure, not a crash of this script.
        return "NO-OUTPUT", None, elapsed, [f"exit 0 but no {os.path.basename(missing[0])}"]
    if status == "ok":
        verdict, errs = "match", []
        for out, expected in zip(outs, case["expected"]):
            want = np.load(os.path.join(kit, expected))
            same, err = compare(np.load(out), want)
            verdict = verdict if same else "MISMATCH"
            if want.dtype.kind == "f":
                errs.append(err)
        err = max(errs) if errs else None
    return verdict, err, elapsed, detail
