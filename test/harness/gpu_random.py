"""Random multi-device programs on a real GPU: build here, run there.

    python test/e2e/gpu_random.py build KIT --seed S --count N   # here: compiler + progen
    python test/e2e/gpu_random.py run KIT [--soak SECONDS]       # there: runtime only

``build`` generates N programs with progen.py, batches them into modules
(one per device count and execution model) and compiles each with
mdc-compile for a local CPU device (portable ``generic`` CPU) and a cuda
device: device_a = local[0], device_b = cuda[0], device_c = local[1]. It
stores every input and progen's float64 reference with its error bound, and
each module's triage oracle: the same programs built by stock iree-compile
with every device the GPU (cuda[0]), no mdc (a batch stock cannot compile is
built one program at a time; a program that still fails is listed).

``run`` loads each module with the runtime shim on local-task + cuda
(+ local-sync), calls every function, and compares each result with the
reference (floats within progen's rounding bound, integers exactly). A
program whose answer is wrong is called again, on the same inputs, in its
triage oracle: when stock IREE is wrong too (mdc's answer, or another wrong
one) the failure is IREE's own, listed apart with both answers and not
counted in the exit status; otherwise it is mdc's. With
``--soak``, it then calls all functions round-robin for that many seconds,
each call under a watchdog, checking every result, and reports host RSS and
GPU memory at the start and the end. With no cuda device it says so and
exits with status 2 (``--allow-no-gpu``: exit 0, a skip).
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import time
from collections import defaultdict
from typing import Callable

import numpy as np

from bench.kitframe import (Step, allow_no_gpu_option, as_list, device_missing, gpu_memory_used, host_rss_kib,
                            kit_main, load_values, no_device, option, read_manifest, save_values, watchdog,
                            write_manifest)

RUNTIME = {1: ["cuda"], 2: ["local-task", "cuda"], 3: ["local-task", "cuda", "local-sync"]}


def device_specs(devices: tuple, kind: str = "cuda") -> list[str]:
    """device_b (else the second device) is the GPU (a ``kind`` device);
    the others are CPUs."""
    gpu = "device_b" if "device_b" in devices else devices[1]
    specs, local = [], 0
    for d in devices:
        if d == gpu:
            specs.append(f"--device={d}={kind}[0]")
        else:
            specs.append(f"--device={d}=local[{local}]")
            local += 1
    return specs


def _compile(src: str, out: str, names: tuple, model: str, gpu: str, mdc_flags=(), all_on_gpu: bool = False):
    """mdc-compile ``src`` for the devices ``names`` (device_specs), or with
    ``all_on_gpu`` stock iree-compile with every device the GPU (``gpu[0]``;
    IREE merges them into one device): no mdc, no crossing. Only the
    --iree-* flags of ``mdc_flags`` reach stock iree-compile."""
    # const-eval off: IREE 3.13.0's constant evaluator crashes or loses
    # device globals on several local+cuda programs (stock iree-compile too).
    compile_cmd = ["mdc-compile", src, *device_specs(names, gpu), "--iree-llvmcpu-target-cpu=generic", *mdc_flags]
    if all_on_gpu:
        compile_cmd = ["iree-compile", src, *[f"--iree-hal-target-device={n}={gpu}[0]" for n in names],
                       "--iree-cuda-target=sm_80", *[f for f in mdc_flags if f.startswith("--iree-")]]
    return subprocess.run([*compile_cmd, "--iree-opt-const-eval=false", f"--iree-execution-model={model}",
                           "-o", out], capture_output=True, text=True)


def _first_line(r) -> str:
    return (r.stderr.strip().splitlines() or ["(no message)"])[0][:300]


def _stock_builds(kit: str, name: str, chunk: list, names: tuple, model: str, gpu: str, mdc_flags) -> dict:
    """The triage oracle of each program in a module: stock iree-compile,
    every device the GPU. {program index: {"module": vmfb} or {"error":
    why it did not compile}}; a batch that fails is built again one
    program at a time."""
    from . import progen

    src = os.path.join(kit, f"{name}.stock.mlir")
    with open(src, "w") as f:
        f.write(progen.module_text(chunk))
    r = _compile(src, os.path.join(kit, f"{name}.stock.vmfb"), names, model, gpu, mdc_flags, all_on_gpu=True)
    if r.returncode == 0:
        return {prog.index: {"module": f"{name}.stock.vmfb"} for prog in chunk}
    if len(chunk) == 1:
        return {chunk[0].index: {"error": f"stock iree-compile, every device {gpu}[0], failed: {_first_line(r)}"}}
    built = {}
    for prog in chunk:
        built.update(_stock_builds(kit, f"{name}_p{prog.index}", [prog], names, model, gpu, mdc_flags))
    return built


def _case(kit: str, prog, stock: dict | None) -> dict:
    """One program's entry in random.json, its inputs and references saved."""
    inputs = save_values(kit, f"{prog.name}.in", [x if isinstance(x, np.ndarray) else int(x) for x in prog.inputs()])
    results = []
    for k, ((value, _), (ref, bound)) in enumerate(zip(prog.results, prog.reference())):
        np.save(os.path.join(kit, f"{prog.name}.ref{k}.npy"), ref)
        np.save(os.path.join(kit, f"{prog.name}.bound{k}.npy"), bound)
        results.append({"dtype": value.dtype, "ref": f"{prog.name}.ref{k}.npy", "bound": f"{prog.name}.bound{k}.npy"})
    case = {"function": prog.name, "seed": prog.seed, "index": prog.index, "inputs": inputs, "results": results}
    if stock is not None:
        case["stock"] = stock
    return case


def build(kit: str, seed: int, count: int, batch: int, mdc_flags=(), gpu: str = "cuda",
          indices=None, all_on_gpu: bool = False) -> int:
    """Without ``all_on_gpu``, each module also gets its triage oracle
    (_stock_builds), which ``run`` calls on a program that comes out wrong."""
    from . import progen

    kit = os.path.abspath(kit)
    os.makedirs(kit, exist_ok=True)
    groups = defaultdict(list)
    for index in indices or range(count):
        prog = progen.generate(seed, index)
        groups[(tuple(prog.devices()), prog.model)].append(prog)
    modules, failed, stock_failed = [], [], []
    for (names, model), progs in sorted(groups.items()):
        ndev = len(names)
        units = []  # (module name, programs); a batch that fails is split into single programs
        for start in range(0, len(progs), batch):
            units.append((f"m{''.join(n[-1] for n in names)}_{model}_{start // batch}", progs[start:start + batch]))
        while units:
            name, chunk = units.pop(0)
            src = os.path.join(kit, f"{name}.mlir")
            with open(src, "w") as f:
                f.write(progen.module_text(chunk))
            r = _compile(src, os.path.join(kit, f"{name}.vmfb"), names, model, gpu, mdc_flags, all_on_gpu)
            if r.returncode and len(chunk) > 1:
                units[:0] = [(f"{name}_p{prog.index}", [prog]) for prog in chunk]
                continue
            if r.returncode:
                failed.append((name, r.stderr.strip().splitlines()[:1]))
                continue
            stock = None if all_on_gpu else _stock_builds(kit, name, chunk, names, model, gpu, mdc_flags)
            stock_failed += [(prog.name, stock[prog.index]["error"]) for prog in chunk
                             if stock and "error" in stock[prog.index]]
            modules.append({"module": f"{name}.vmfb", "devices": 1 if all_on_gpu else ndev, "model": model,
                            "cases": [_case(kit, prog, stock and stock[prog.index]) for prog in chunk]})
    write_manifest(kit, "random.json", {"seed": seed, "gpu": gpu, "modules": modules})
    n = sum(len(m["cases"]) for m in modules)
    print(f"seed {seed}: {n} programs in {len(modules)} modules; {len(failed)} programs failed to compile (alone)")
    for name, why in failed:
        print(f"  {name}: {why}")
    if not all_on_gpu:
        print(f"  triage oracles (stock iree-compile, every device {gpu}[0]): {n - len(stock_failed)} programs, "
              f"{len(stock_failed)} did not compile")
        for name, why in stock_failed:
            print(f"  @{name}: {why}")
    return 0 if n else 1


def _one_device_module(path: str, devices: list, timeout_s: float):
    """A stock module whose devices IREE merged into one (their targets are
    equal), run by stock iree-run-module: its declarations still name every
    device, which the shim would refuse as undeclared."""
    import iree.runtime as rt
    from mdc.runtime_shim import native
    from mdc.runtime_shim.module import read_signatures

    signatures, _ = read_signatures(rt.VmModule.mmap(rt.VmInstance(), path))
    return native.NativeModule(path, devices, None, signatures, {}, "every device the one GPU",
                               timeout_s=timeout_s)


def check_results(outs: list, expected: list) -> str | None:
    """None if a call's results ``outs`` agree with ``expected``, one
    (reference, bound, dtype) per result the program returns; else why not.
    A call that returns fewer or more results than there are references
    fails: zip alone would pass a dropped result."""
    from .progen import compare_reference

    if len(outs) != len(expected):
        return f"{len(outs)} results, {len(expected)} references"
    for k, (got, (ref, bound, dtype)) in enumerate(zip(outs, expected)):
        why = compare_reference(np.asarray(got), ref, bound, dtype)
        if why:
            return f"result {k}: {why}"
    return None


@dataclasses.dataclass
class Call:
    """One program's call: ``stock`` is its triage oracle, a function that
    returns the stock module's function (loaded on first use), or why
    there is none (its stock build failed), or None (a kit built with
    --all-on-gpu, itself stock)."""

    label: str
    fn: Callable
    inputs: list
    expected: list
    stock: Callable | str | None = None


def _outputs(fn, inputs: list, timeout: float) -> list | str:
    """A call's results, or why the call failed (a hang past ``timeout``
    ends the process with every thread's traceback)."""
    try:
        with watchdog(timeout):
            out = fn(*inputs)
    except Exception as e:  # a call that fails is one failure, not the end of the run
        return f"call failed: {type(e).__name__}: {(str(e).splitlines() or [''])[-1][:200]}"
    return [] if out is None else as_list(out)


def check_call(call: Call, timeout: float) -> tuple[str | None, list | None]:
    """(None, or why the call is wrong; its results, None if it failed)."""
    outs = _outputs(call.fn, call.inputs, timeout)
    if isinstance(outs, str):
        return outs, None
    return check_results(outs, call.expected), outs


def _values(x, n: int = 12) -> str:
    flat = np.asarray(x).ravel()
    return " ".join(str(v) for v in flat[:n].tolist()) + (" ..." if flat.size > n else "")


def _beside(outs: list, stock: list, expected: list) -> str:
    """mdc's, stock's and the reference's values of the first wrong result."""
    k = next((k for k, (o, e) in enumerate(zip(outs, expected)) if check_results([o], [e])), 0)
    from .progen import FLOATS, NP

    said = stock[k] if k < len(stock) else "(none)"
    ref, _, dtype = expected[k]
    ref = ref if dtype in FLOATS else ref.astype(NP[dtype])
    return f"result {k}: mdc [{_values(outs[k])}], stock [{_values(said)}], reference [{_values(ref)}]"


def triage(outs: list, expected: list, stock: list | str) -> tuple[bool, str]:
    """Whose failure the wrong results ``outs`` are: (IREE's own, what the
    oracle said). ``stock``: stock IREE's results on the same inputs, every
    device the GPU, or why there are none. IREE's own when stock is wrong
    too: its answer equal to mdc's, or also off the reference."""
    if isinstance(stock, str):
        return False, f"no stock answer to compare: {stock}"
    why = check_results(stock, expected)
    if why is None:
        return False, "stock IREE, every device the GPU, is right"
    same = len(stock) == len(outs) and all(np.array_equal(np.asarray(a), np.asarray(b)) for a, b in zip(outs, stock))
    verdict = "gives mdc's answer" if same else f"is wrong too ({why})"
    return True, f"stock IREE, every device the GPU, {verdict}: {_beside(outs, stock, expected)}"


def _stock_outputs(call: Call, timeout: float) -> list | str:
    if isinstance(call.stock, str):
        return call.stock
    try:
        fn = call.stock()
    except Exception as e:  # a stock module that does not load answers nothing
        return f"the stock module does not load: {(str(e).splitlines() or [type(e).__name__])[0][:200]}"
    return _outputs(fn, call.inputs, timeout)


def check_calls(calls: list[Call], timeout: float) -> tuple[list, list]:
    """Calls each once: (mdc's failures, IREE's own), each (label, why). A
    wrong answer is rerun on its triage oracle (triage); a call that fails,
    or one with no oracle, is mdc's."""
    failures, iree_own = [], []
    for call in calls:
        why, outs = check_call(call, timeout)
        if why is None:
            continue
        if outs is None or call.stock is None:
            failures.append((call.label, why))
            continue
        own, said = triage(outs, call.expected, _stock_outputs(call, timeout))
        (iree_own if own else failures).append((call.label, f"{why}; {said}"))
    return failures, iree_own


def _stock_loader(kit: str, stock: dict | None, function: str, gpu: str, timeout: float, loaded: dict):
    """A case's Call.stock: None, why it has no oracle, or a function that
    loads its stock module once (kept in ``loaded``) and returns ``function``."""
    if stock is None or "error" in stock:
        return None if stock is None else stock["error"]

    def fn():
        path = os.path.join(kit, stock["module"])
        if path not in loaded:
            loaded[path] = _one_device_module(path, [gpu], timeout)
        return loaded[path].function(function)

    return fn


def _spec(kit: str) -> dict:
    return read_manifest(kit, "random.json", build=f"python test/e2e/gpu_random.py build {kit}")


def run(kit: str, soak: float, call_timeout: float, cpu_driver: str = "local-task",
        allow_no_gpu: bool = False) -> int:
    """Exit status 1 only for mdc's failures: a program stock IREE gets
    wrong too (every device the GPU) is reported as IREE's own."""
    from mdc.runtime_shim import load

    kit = os.path.abspath(kit)
    spec = _spec(kit) if os.path.exists(os.path.join(kit, "random.json")) else None
    gpu = spec.get("gpu", "cuda") if spec else "cuda"
    why = device_missing(gpu, width=80)
    if why:
        return no_device("gpu_random", gpu, why=why, allow=allow_no_gpu)
    spec = spec or _spec(kit)  # no kit: its KitError says how to build one
    calls: list[Call] = []
    loaded, stock_loaded = [], {}
    load_failures = []
    for m in spec["modules"]:
        try:
            devices = [cpu_driver if d == "local-task" else gpu if d == "cuda" else d
                       for d in RUNTIME[m["devices"]]]
            path = os.path.join(kit, m["module"])
            if m["devices"] == 1:  # --all-on-gpu: IREE merged the devices into one; no manifest
                module = _one_device_module(path, devices, call_timeout)
            else:
                module = load(path, devices, timeout_s=call_timeout)
        except Exception as e:  # a module that does not load fails all its programs
            load_failures.append((m["module"], len(m["cases"]), str(e).splitlines()[0][:200]))
            continue
        loaded.append(module)
        for case in m["cases"]:
            inputs = load_values(kit, case["inputs"])
            expected = [(np.load(os.path.join(kit, r["ref"])), np.load(os.path.join(kit, r["bound"])), r["dtype"])
                        for r in case["results"]]
            label = f"seed={case['seed']} index={case['index']} @{case['function']} ({m['model']}, {m['devices']} devices)"
            stock = _stock_loader(kit, case.get("stock"), case["function"], gpu, call_timeout, stock_loaded)
            calls.append(Call(label, module.function(case["function"]), inputs, expected, stock))

    mismatches, iree_own = check_calls(calls, call_timeout)
    for name, n, why in load_failures:
        mismatches.append((f"{name} ({n} programs)", f"does not load: {why}"))
    print(f"seed {spec['seed']}: {len(calls)} programs run on {cpu_driver} + {gpu}, {len(mismatches)} failures "
          f"({len(load_failures)} modules, {sum(n for _, n, _ in load_failures)} programs, did not load); "
          f"{len(iree_own)} IREE'S OWN (stock IREE, every device the GPU, wrong too: not counted)")
    for label, why in mismatches[:20]:
        print(f"  FAIL {label}: {why}")
    for label, why in iree_own[:20]:
        print(f"  IREE'S OWN {label}: {why}")
    if soak > 0:
        own = {label for label, _ in iree_own}
        mismatches += _soak([c for c in calls if c.label not in own], soak, call_timeout)
    for module in [*loaded, *stock_loaded.values()]:
        module.close()
    return 1 if mismatches else 0


def _soak(calls: list[Call], seconds: float, timeout: float) -> list:
    """Round-robin calls for ``seconds`` (IREE's own wrong programs left
    out): [("soak", how many were wrong)] or []."""
    rss0, gpu0 = host_rss_kib() / 1024, gpu_memory_used() or "n/a"
    start, n, bad = time.monotonic(), 0, 0
    while calls and time.monotonic() - start < seconds:
        bad += check_call(calls[n % len(calls)], timeout)[0] is not None
        n += 1
    elapsed = time.monotonic() - start
    print(f"soak: {n} calls over {elapsed:.0f} s mixing {len(calls)} programs, {bad} mismatches")
    print(f"  host RSS: start {rss0:.1f} MiB, end {host_rss_kib() / 1024:.1f} MiB")
    print(f"  GPU memory used: start {gpu0}, end {gpu_memory_used() or 'n/a'}")
    return [("soak", f"{bad} mismatches")] if bad else []


BUILD = Step(lambda a: build(a.kit, a.seed, a.count, a.batch, a.mdc_flag, a.gpu, a.index, a.all_on_gpu), [
    option("--seed", type=int, default=20261130),
    option("--count", type=int, default=120),
    option("--batch", type=int, default=4),
    option("--mdc-flag", action="append", default=[], help="extra mdc-compile flag, e.g. --staging=emplace"),
    option("--index", type=int, action="append", help="only these program indices (instead of --count)"),
    option("--all-on-gpu", action="store_true",
           help="the oracle for a GPU-only failure: stock iree-compile, every device the GPU, no mdc"),
    option("--gpu", default="cuda", choices=["cuda", "vulkan"],
           help="device_b's kind (vulkan: run goes through iree-run-module and the host entry "
           "points, as mdc.runtime_shim.load does for Vulkan beside a CPU)")])
RUN = Step(lambda a: run(a.kit, a.soak, a.timeout, a.cpu_driver, a.allow_no_gpu), [
    option("--soak", type=float, default=0, help="seconds of round-robin calls after the check"),
    option("--timeout", type=float, default=60, help="seconds a call may take"),
    option("--cpu-driver", default="local-task", choices=["local-task", "local-sync"],
           help="driver of the devices otherwise run on local-task"),
    allow_no_gpu_option()])


def main() -> int:
    return kit_main(__doc__, BUILD, RUN, name="gpu_random")
