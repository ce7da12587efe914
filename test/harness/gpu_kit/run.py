"""Running a kit on the GPU machine: every case under a timeout, compared
with its expected outputs, in one table."""

from __future__ import annotations

import os
import shutil
import sys

import numpy as np

from bench.kitframe import checkout_env, compare, cuda_available, fixed, no_device, read_manifest, run_timed

from ..paths import script
from .canaries import canary_stock_cuda_maxsi, canary_stock_cuda_min_reduce, canary_stock_cuda_other_thread
from .cases import result_files
from .runners import RUNNERS

COLUMNS = ("24", "16", "30", "9", "7", "")  # case, runner, devices, result, wall, detail


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
        return no_device("gpu_kit", allow=allow_no_gpu)
    cases = read_manifest(kit, "cases.json", build=f"python test/e2e/gpu_kit.py build {kit}")
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
    for row in [("case", "runner", "devices", "result", "wall", "detail"), *rows]:
        print(fixed(row, COLUMNS))
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
    if case["runner"] == "shim" or case["runner"] in RUNNERS:
        cmd = [sys.executable, "-m", "mdc.runtime_shim"]
        if case["runner"] in RUNNERS:
            cmd = [sys.executable, script("gpu_kit"), f"_{case['runner']}"]
        env = checkout_env()
    else:
        cmd = [shutil.which("iree-run-module") or "iree-run-module"]
        env = None
    cmd += [f"--module={case['module']}", f"--function={case['function']}",
            *[f"--device={d}" for d in case["devices"]], *case["inputs"], *[f"--output=@{o}" for o in outs]]
    ran = run_timed(cmd, timeout, cwd=kit, env=env, outputs=outs)
    if ran.status == "NO-TOOL":
        return "NO-TOOL", None, 0.0, [ran.stderr]
    detail = [ran.last_line(None)] if ran.returncode and ran.last_line() else []
    missing = [o for o in outs if not os.path.exists(o)]
    if ran.ok and missing:
        # The runners check the result count; a run that still wrote no
        # result is a failure, not a crash of this script.
        return "NO-OUTPUT", None, ran.seconds, [f"exit 0 but no {os.path.basename(missing[0])}"]
    if not ran.ok:
        return ran.status, None, ran.seconds, detail
    verdict, errs = "match", []
    for out, expected in zip(outs, case["expected"]):
        want = np.load(os.path.join(kit, expected))
        same, err = compare(np.load(out), want)
        verdict = verdict if same else "MISMATCH"
        if want.dtype.kind == "f":
            errs.append(err)
    return verdict, max(errs) if errs else None, ran.seconds, detail
