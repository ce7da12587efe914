"""Running cases: the real modules mdc-run is given, each case's files,
and the command under a memory limit and a timeout."""

from __future__ import annotations

import concurrent.futures
import os
import shutil
import subprocess
import time

import numpy as np

from ..paths import ROOT
from ..processes import limited, run_killing_group
from .cases import Case, VMFB_SOURCES
from .rule import Result, check
from .tools import TIMEOUT, tool


def prepare(work: str) -> dict:
    """Build the real modules mdc-run cases use. -> name: path."""
    os.makedirs(work, exist_ok=True)
    out = {}

    def build(name):
        src, devs, extra, _, _ = VMFB_SOURCES[name]
        path = os.path.join(work, f"{name}.vmfb")
        if not os.path.exists(path):
            r = subprocess.run([tool("mdc-compile"), os.path.join(ROOT, src), *[f"--device={d}" for d in devs],
                                *extra, "-o", path], capture_output=True, text=True, timeout=600)
            if r.returncode:
                raise RuntimeError(f"fuzz: cannot build {name}: {r.stderr}")
        return name, path

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        for name, path in pool.map(build, sorted(VMFB_SOURCES)):
            out[name] = path
    return out


def materialize(case: Case, indir: str, vmfbs: dict) -> None:
    os.makedirs(indir, exist_ok=True)
    for name, data in case.files.items():
        if name == "@trunc":
            src, frac = data
            blob = open(vmfbs[src], "rb").read()
            with open(os.path.join(indir, "trunc.vmfb"), "wb") as f:
                f.write(blob[: int(len(blob) * frac)])
        elif name == "@flip":
            src, where, n = data
            blob = bytearray(open(vmfbs[src], "rb").read())
            rng = np.random.default_rng(where)
            for _ in range(n):
                k = int(rng.integers(len(blob)))
                blob[k] ^= 1 << int(rng.integers(8))
            with open(os.path.join(indir, "flipped.vmfb"), "wb") as f:
                f.write(bytes(blob))
        else:
            with open(os.path.join(indir, name), "wb") as f:
                f.write(data)


# A runaway case fails alone instead of taking the machine down.
MEMORY_LIMIT_GB = float(os.environ.get("MDC_FUZZ_MEMORY_GB", "6"))


def run_case(case: Case, work: str, vmfbs: dict) -> Result:
    cdir = os.path.join(work, f"case{case.index:04d}")
    shutil.rmtree(cdir, ignore_errors=True)
    indir, outdir = os.path.join(cdir, "in"), os.path.join(cdir, "out")
    materialize(case, indir, vmfbs)
    os.makedirs(outdir)
    cmd = case.command(indir, outdir, vmfbs)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    start = time.time()
    # progen's runner: a timeout kills the whole process group (returncode
    # -999, a note appended to stderr), under the address-space limit.
    r = run_killing_group(limited(cmd, MEMORY_LIMIT_GB), TIMEOUT, text=False, cwd=cdir, env=env)
    rc, out, err = r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")
    seconds = time.time() - start
    violations, left = check(case, rc, out, err, outdir)
    return Result(case, cmd, rc, out, err, seconds, left, violations)


def run_all(cases: list[Case], work: str, jobs: int = 2, progress=None) -> list[Result]:
    vmfbs = prepare(os.path.join(work, "vmfb"))
    results = []
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        futs = [pool.submit(run_case, c, work, vmfbs) for c in cases]
        for f in concurrent.futures.as_completed(futs):
            results.append(f.result())
            if progress:
                progress(results[-1])
    return sorted(results, key=lambda r: r.case.index)


def default_seed() -> int:
    env = os.environ.get("MDC_FUZZ_SEED")
    return int(env) if env else int(time.time()) % 1_000_000_007
