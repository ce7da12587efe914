#!/usr/bin/env python3
"""Check runtime_shim on a GPU machine, with prebuilt modules (no compiler).

Cases: every case runs through the Python API (in a child process) and
through mdc-run (`python -m mdc.runtime_shim`), each under a timeout, and both
outputs are compared with the expected .npy files:

    python test/e2e/gpu_runtime_shim.py cases DIR

DIR holds the .vmfb and .npy files and a cases.json (paths relative to DIR):

    {"cases": [{"name": "seed", "module": "seed.vmfb", "function": "multi_device_mul",
                "devices": ["local-task", "cuda"], "inputs": ["seed_in0.npy"],
                "expected": ["seed_out0.npy"], "rel_tol": 1e-6}]}

An input is a .npy file or anything mdc-run's --input takes ("3", "4xf32=1,2,3,4",
"--input=@x.npy"); "expected" may be one file. A bare list of cases (the
cases.json of gpu_kit.py) works too.

Stability: one function called N times through the Python API; after the
warm-up, host RSS (VmRSS) and GPU memory used (nvidia-smi) at start and end:

    python test/e2e/gpu_runtime_shim.py stability --module M.vmfb --function f \\
        --device local-task --device cuda --input x.npy [--expected y.npy] [--calls 10000]

Both modes exit 0 with a message when the cuda driver is not available
(--skip-unless-driver picks another driver, e.g. to try this script on CPUs).
Exit status 1 when a case does not match or a run fails or times out.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import _harness_path  # noqa: F401  (test/ and the checkout on sys.path)
from bench.kitframe import (checkout_env, device_missing, fixed, gpu_memory_used, host_rss_kib,  # noqa: E402
                            run_timed, watchdog)
from bench.kitframe import compare as kit_compare  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="mode", required=True)
    c = sub.add_parser("cases", help="run every case of DIR/cases.json")
    c.add_argument("dir", type=Path)
    s = sub.add_parser("stability", help="call one function many times")
    s.add_argument("--module", required=True)
    s.add_argument("--function", required=True)
    s.add_argument("--device", action="append", required=True)
    s.add_argument("--input", action="append", default=[], help=".npy file, one per input")
    s.add_argument("--expected", action="append", default=[], help=".npy file, one per result")
    s.add_argument("--calls", type=int, default=10_000)
    s.add_argument("--warmup", type=int, default=100)
    for q in (c, s):
        q.add_argument("--timeout", type=float, default=120.0, help="seconds per call or run")
        q.add_argument("--skip-unless-driver", default="cuda")
    a = sub.add_parser("_api")  # internal: one case through the API, in a child
    a.add_argument("case")
    args = p.parse_args(argv)

    if args.mode == "_api":
        return _api_child(json.loads(args.case))
    reason = device_missing(args.skip_unless_driver, child_timeout=args.timeout, width=300)
    if reason:
        print(f"SKIP: the {args.skip_unless_driver} driver is not available here ({reason})")
        return 0
    return run_cases(args.dir, args.timeout) if args.mode == "cases" else run_stability(args)


# -- cases --------------------------------------------------------------------


def run_cases(directory: Path, timeout: float) -> int:
    spec = json.loads((directory / "cases.json").read_text())
    rows = []
    for case in spec["cases"] if isinstance(spec, dict) else spec:
        expected = case["expected"]
        case = dict(case, dir=str(directory.resolve()),
                    inputs=[_input_flag(i) for i in case["inputs"]],
                    expected=[expected] if isinstance(expected, str) else expected)
        rows.append((case["name"], api_check(case, timeout), cli_check(case, timeout)))
    table = [("case", "api", "cli")] + rows
    columns = [f"<{max(len(row[i]) for row in table) + 2}" for i in range(2)] + [""]
    for row in table:
        print(fixed(row, columns, sep=""))
    return 0 if all(r[1] == r[2] == "ok" for r in rows) else 1


def _input_flag(text: str) -> str:
    """'x.npy' -> '@x.npy'; '--input=3' -> '3'; literals stay as they are."""
    text = text[len("--input="):] if text.startswith("--input=") else text
    return "@" + text if text.endswith(".npy") and not text.startswith("@") else text


def api_check(case: dict, timeout: float) -> str:
    ran = run_timed([sys.executable, __file__, "_api", json.dumps(case)], timeout, env=checkout_env())
    if ran.status == "TIMEOUT":
        return f"timeout ({timeout:g} s)"
    lines = ran.stdout.strip().splitlines()
    if ran.returncode not in (0, 1) or not lines:
        return f"crashed (status {ran.returncode}): {_last_line(ran.stderr)}"
    return lines[-1]


def _api_child(case: dict) -> int:
    from mdc.runtime_shim import load
    from mdc.runtime_shim.cli import read_input

    d = Path(case["dir"])
    os.chdir(d)  # inputs are relative to the case directory, as for mdc-run
    try:
        with load(d / case["module"], case["devices"], timeout_s=60) as m:
            function = m.function(case["function"])
            args = function.signature.args
            if len(args) != len(case["inputs"]):
                raise ValueError(f"{len(case['inputs'])} inputs for {len(args)} arguments")
            inputs = [read_input(t, v, i) for i, (t, v) in enumerate(zip(case["inputs"], args))]
            got = function(*inputs)
        got = list(got) if isinstance(got, tuple) else [got]
        verdict = compare(got, [np.load(d / f) for f in case["expected"]], case)
    except Exception as e:  # report, do not trace back: the table is the output
        verdict = f"error: {type(e).__name__}: {' '.join(str(e).split())[:200]}"
    print(verdict)
    return 0 if verdict == "ok" else 1


def cli_check(case: dict, timeout: float) -> str:
    d = Path(case["dir"])
    with tempfile.TemporaryDirectory() as tmp:
        outs = [Path(tmp) / f"out{i}.npy" for i in range(len(case["expected"]))]
        cmd = [sys.executable, "-m", "mdc.runtime_shim", f"--module={d / case['module']}",
               f"--function={case['function']}",
               *(f"--device={u}" for u in case["devices"]),
               *(f"--input={i}" for i in case["inputs"]),
               *(f"--output=@{o}" for o in outs)]
        ran = run_timed(cmd, timeout, env=checkout_env(), cwd=d)
        if ran.status == "TIMEOUT":
            return f"timeout ({timeout:g} s)"
        if not ran.ok:
            return f"error (status {ran.returncode}): {_last_line(ran.stderr)}"
        return compare([np.load(o) for o in outs], [np.load(d / f) for f in case["expected"]], case)


def compare(got: list, expected: list, case: dict) -> str:
    """Per result: kitframe.compare's rule (integers equal; floats within a
    relative error of 1e-4, 1e-2 for f16), or ``case["rel_tol"]``."""
    if len(got) != len(expected):
        return f"mismatch: {len(got)} results, expected {len(expected)}"
    for i, (g, e) in enumerate(zip(got, expected)):
        g = np.asarray(g)
        if g.shape != e.shape or g.dtype != e.dtype:
            return f"mismatch: result {i} is {g.dtype}{list(g.shape)}, expected {e.dtype}{list(e.shape)}"
        ok, err = kit_compare(g, e, case.get("rel_tol"))
        if not ok:
            return f"mismatch: result {i} error {err:.3g}"
    return "ok"


def _last_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[-1][:200] if lines else ""


# -- stability -------------------------------------------------------------------


def run_stability(args) -> int:
    from mdc.runtime_shim import load

    inputs = [np.load(f) for f in args.input]
    expected = [np.load(f) for f in args.expected]
    case = {}
    with load(args.module, args.device, timeout_s=args.timeout) as m:
        function = m.function(args.function)

        def call():
            with watchdog(args.timeout):  # a call that hangs ends the process (status 1, with a traceback)
                out = function(*inputs)
            return list(out) if isinstance(out, tuple) else [out]

        for _ in range(args.warmup):
            call()
        rss0, gpu0 = host_rss_kib(), gpu_memory_used()
        times, bad = [], 0
        for i in range(args.calls):
            start = time.perf_counter()
            out = call()
            times.append((time.perf_counter() - start) * 1e3)
            if expected and (i % 1000 == 0 or i == args.calls - 1):
                bad += compare(out, expected, case) != "ok"
        rss1, gpu1 = host_rss_kib(), gpu_memory_used()

    print(f"stability @{args.function} on {', '.join(args.device)}: "
          f"{args.calls} calls after {args.warmup} warm-up calls")
    print(f"host RSS: start {rss0 / 1024:.1f} MiB, end {rss1 / 1024:.1f} MiB, "
          f"growth {100.0 * (rss1 - rss0) / rss0:+.2f} %")
    if gpu0 is None or gpu1 is None:
        print("device memory used: n/a (no nvidia-smi)")
    else:
        print(f"device memory used: start {gpu0}, end {gpu1} (nvidia-smi, per GPU)")
    if times:
        print(f"per call: min {min(times):.4f} ms, median {statistics.median(times):.4f} ms, "
              f"max {max(times):.4f} ms")
    if expected:
        print("results: ok" if not bad else f"results: {bad} checked call(s) mismatched")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
