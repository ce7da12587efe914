"""Performance of heterogeneous transfers: build here, measure on a GPU machine.

    python -m bench build DIR        # here: compile the modules (needs the compiler)
    python -m bench run DIR          # there: runtime (+ torch if present) only
    python -m bench pieces DIR       # there: CPU->GPU bandwidth by piece count
    python -m bench pinned DIR       # there: arguments given in pinned memory
    python -m bench latency DIR      # there: seed call latency by CPU driver
    python -m bench queue-latency    # there: what chained queue operations cost
    python -m bench compile-time     # here: mdc-compile against iree-compile

``run`` prints one table; every row is measured in that same run:

* mdc: effective CPU->GPU and GPU->CPU bandwidth of mdc-compiled programs in
  which a value produced on one device is consumed on the other (argument
  already resident on its device, result left on its device), for 1, 16,
  256 and 1024 MiB, for both lowerings (``--staging=copy`` and
  ``--staging=emplace``);
* the references moving the same bytes: IREE ``queue_copy`` between pinned
  host memory and device memory (the limit); torch ``.copy_()`` between
  existing tensors from pinned and from pageable memory, and torch
  ``x.cuda()`` / ``y.cpu()``, which make a new tensor each call as an mdc
  call makes a new result; and the manual workaround (numpy array uploaded
  to a cuda-only IREE device and read back);
* per-call latency of the seed program (4xf32) compiled by mdc for
  local+cuda (both lowerings), against stock IREE's cuda+cuda and
  local+local modules;
* a value computed on the CPU (x + 1) and returned on the GPU, and one
  computed on the GPU and returned on the CPU, both lowerings, against the
  op alone on its device.

``pieces`` measures CPU->GPU bandwidth of an argument (copied into pinned
memory by the CPU in fenced pieces, each piece's DMA started once the host
sees it written) for the default piece count (one per 16 MiB, up to 16) and
each count ``--staging-pieces`` in PIECE_COUNTS, beside the queue_copy limit
in the same run.

``pinned`` measures CPU->GPU bandwidth of an argument given in the GPU's
pinned memory (``mdc-compile --pinned-arguments``): placed there once and
reused, as torch's pinned row reuses its pinned tensor, and placed there by
the shim on every call (a copy into a new pinned buffer, or the array's own
pages registered with CUDA), beside the default (the argument in the CPU's
memory), the queue_copy limit and torch, in the same run; then GPU->CPU of
a result written into an output argument (``iree.abi.output``) placed once,
in the CPU's memory and in the GPU's pinned memory, beside the default (a
new result buffer each call), the limit and torch.

``latency`` measures the seed program's per-call latency in interleaved
rounds (each round loads every module afresh and takes the median of its
calls), for mdc's local+cuda modules with the CPU device run by local-task
and by local-sync, against stock IREE's cuda+cuda and local+local modules;
it prints each row's median over the rounds, its spread, and the ratio to
stock cuda+cuda taken within each round.

``components`` times the parts a staged transfer is made of with the
runtime API (host copies, queue copies, allocations, host round trips),
and the host copy and the GPU's DMA from pinned memory alone and at once
(the DMA in a second process): together they share host memory bandwidth,
which bounds any overlap of the two.

With no cuda device, a measuring command says so and exits with status 2
(``--allow-no-gpu``: it says so and exits 0).

``run``, ``pieces`` and ``components`` take ``--workers N`` (local-task worker threads)
and ``--retain-host-memory`` (mdc.runtime_shim.host_memory: freed host memory is
kept, so a new result's pages are not faulted in again), and print the host
settings they ran under.

Times are the median of repeated calls after warm-up, host clock around
synchronous calls (each call returns once its work is done).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MIB = 1 << 20
SIZES_MIB = (1, 16, 256, 1024)
SEED = os.path.join(ROOT, "examples", "multi_device_mul.mlir")
STAGINGS = ("copy", "emplace")  # mdc-compile --staging=...
PIECE_COUNTS = (1, 2, 4, 8, 16)  # mdc-compile --staging-pieces=...


# -- build (here) -------------------------------------------------------------


def build(out: str, cpu: str, smoke: bool = False) -> int:
    """``smoke``: a second local device (forced staging) stands in for the
    GPU, so ``run --smoke`` exercises this script on a CPU-only machine."""
    os.makedirs(out, exist_ok=True)
    gpu = ["--device=b=local[1]", "--link=a:b=staged"] if smoke else ["--device=b=cuda[0]"]
    mdc = ["--device=a=local[0]", *gpu, f"--iree-llvmcpu-target-cpu={cpu}"]
    jobs = {
        "seed_cuda_cuda.vmfb": ["iree-compile", SEED, *(
            ["--iree-hal-target-device=device_a=local[0]", "--iree-hal-target-device=device_b=local[1]",
             "--iree-hal-local-target-device-backends=llvm-cpu"] if smoke else
            ["--iree-hal-target-device=device_a=cuda[0]", "--iree-hal-target-device=device_b=cuda[1]",
             "--iree-cuda-target=sm_80"])],
        "seed_local_local.vmfb": ["iree-compile", SEED, "--iree-hal-target-device=device_a=local[0]",
                                  "--iree-hal-target-device=device_b=local[1]",
                                  "--iree-hal-local-target-device-backends=llvm-cpu",
                                  f"--iree-llvmcpu-target-cpu={cpu}"],
    }
    # Both lowerings of mdc-compile, side by side.
    for staging in STAGINGS:
        lowered = [*mdc, f"--staging={staging}"]
        for program in ("to_gpu", "to_cpu", "compute_to_gpu", "compute_to_cpu"):
            jobs[f"{program}_{staging}.vmfb"] = ["mdc-compile", os.path.join(HERE, "programs", f"{program}.mlir"),
                                                  *lowered]
        jobs[f"seed_mdc_{staging}.vmfb"] = ["mdc-compile", SEED, *lowered]
    for pieces in PIECE_COUNTS:
        jobs[f"to_gpu_pieces_{pieces}.vmfb"] = ["mdc-compile", os.path.join(HERE, "programs", "to_gpu.mlir"), *mdc,
                                                f"--staging-pieces={pieces}"]
    jobs["to_gpu_pinned.vmfb"] = ["mdc-compile", os.path.join(HERE, "programs", "to_gpu.mlir"), *mdc,
                                  "--pinned-arguments"]
    into = os.path.join(HERE, "programs", "to_cpu_into.mlir")
    jobs["to_cpu_into.vmfb"] = ["mdc-compile", into, *mdc]
    jobs["to_cpu_into_pinned.vmfb"] = ["mdc-compile", into, *mdc, "--pinned-arguments"]
    jobs["compute_on_gpu.vmfb"] = ["iree-compile", os.path.join(HERE, "programs", "compute_on_gpu.mlir"), *(
        ["--iree-hal-target-device=device_b=local[0]", "--iree-hal-local-target-device-backends=llvm-cpu",
         f"--iree-llvmcpu-target-cpu={cpu}"] if smoke else
        ["--iree-hal-target-device=device_b=cuda[0]", "--iree-cuda-target=sm_80"])]
    jobs["compute_on_cpu.vmfb"] = ["iree-compile", os.path.join(HERE, "programs", "compute_on_cpu.mlir"),
                                   "--iree-hal-target-device=device_a=local[0]",
                                   "--iree-hal-local-target-device-backends=llvm-cpu",
                                   f"--iree-llvmcpu-target-cpu={cpu}"]
    for name, cmd in jobs.items():
        r = subprocess.run([*cmd, "-o", os.path.join(out, name)], capture_output=True, text=True)
        if r.returncode:
            print(f"{name}: {' '.join(cmd)}\n{r.stderr}")
            return 1
    print(f"built {len(jobs)} modules in {out}")
    return 0


# -- run (there) --------------------------------------------------------------


def _median_time(fn, repeat: int, warmup: int = 2) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def _repeats(nbytes: int) -> int:
    return 30 if nbytes <= 16 * MIB else 5


GPU = "cuda"  # run --smoke: "local-sync" plays the GPU


NO_GPU_STATUS = 2  # the exit status of a measurement with no GPU to measure
ALLOW_NO_GPU = False  # --allow-no-gpu: no GPU is a skip (exit 0), not a failure


def _gpu_or_none() -> "_Iree | None":
    """The GPU for the references, or None (said) where there is none; the
    caller then returns _no_gpu_status()."""
    try:
        return _Iree()
    except Exception as e:  # no cuda driver or device
        first = str(e).splitlines()[0][:120] if str(e) else type(e).__name__
        if ALLOW_NO_GPU:
            print(f"bench: no {GPU} device here ({first}); skipping (--allow-no-gpu)")
        else:
            print(f"bench: error: no {GPU} device here ({first}); nothing was measured "
                  "(--allow-no-gpu makes this a skip with exit status 0)", file=sys.stderr)
        return None


def _no_gpu_status() -> int:
    return 0 if ALLOW_NO_GPU else NO_GPU_STATUS


class _Iree:
    def __init__(self):
        import iree.runtime as rt

        self.rt = rt
        self.cuda = rt.get_driver(GPU).create_default_device()

    def fence_wait(self, fn, device):
        rt = self.rt
        sem = device.create_semaphore(0)
        fn(rt.HalFence.create_at(sem, 1))
        rt.HalFence.create_at(sem, 1).wait()

    def pinned(self, nbytes):
        rt = self.rt
        return self.cuda.allocator.allocate_buffer(
            memory_type=rt.MemoryType.HOST_LOCAL | rt.MemoryType.DEVICE_VISIBLE,
            allowed_usage=rt.BufferUsage.TRANSFER | rt.BufferUsage.MAPPING, allocation_size=nbytes)

    def device_buffer(self, nbytes):
        rt = self.rt
        return self.cuda.allocator.allocate_buffer(
            memory_type=rt.MemoryType.DEVICE_LOCAL,
            allowed_usage=rt.BufferUsage.TRANSFER | rt.BufferUsage.DISPATCH_STORAGE,
            allocation_size=nbytes)

    def queue_copy_limit(self, nbytes):
        """IREE queue_copy pinned -> device and device -> pinned on cuda."""
        pinned, dev = self.pinned(nbytes), self.device_buffer(nbytes)
        h2d = _median_time(lambda: self.fence_wait(
            lambda f: self.cuda.queue_copy(pinned, dev, self.rt.HalFence(0), f), self.cuda), _repeats(nbytes))
        d2h = _median_time(lambda: self.fence_wait(
            lambda f: self.cuda.queue_copy(dev, pinned, self.rt.HalFence(0), f), self.cuda), _repeats(nbytes))
        return h2d, d2h

    def manual(self, host: np.ndarray):
        """What a user writes today between two single-device modules: the
        numpy array uploaded to the cuda device, and a device array read
        back to numpy."""
        rt = self.rt
        reps = _repeats(host.nbytes)
        h2d = _median_time(lambda: rt.asdevicearray(self.cuda, host), reps)
        view = rt.asdevicearray(self.cuda, host)._buffer_view

        def d2h_once():
            rt.DeviceArray(self.cuda, view).to_host()
            # to_host registers its numpy result with CUDA; an unreleased
            # registration at a reused address fails the next call
            # (CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED), so release it now.
            gc.collect()

        try:
            d2h = _median_time(d2h_once, reps)
        except RuntimeError as e:
            print(f"manual d2h failed: {str(e).splitlines()[0][:160]}", flush=True)
            d2h = float("nan")
        return h2d, d2h


def _mdc_transfer_time(kit, module_name, function, nbytes, src_is_gpu):
    """Median seconds per call of an mdc program moving nbytes, the argument
    already resident on its device and the result left on its device."""
    sys.path.insert(0, ROOT)
    from mdc.runtime_shim import load

    m = load(os.path.join(kit, module_name), ["local-task", GPU])
    f = m.function(function)
    host = values_aligned(nbytes)
    call = _resident_call(m, f, host, device_index=1 if src_is_gpu else 0)
    t = _median_time(call, _repeats(nbytes))
    del call
    # Correctness of what was measured: one more call, fetched to the host.
    ok = bool(np.array_equal(f(host), host))
    m.close()
    return t, ok


def _compute_rows(kit, sizes_mib):
    """A value computed on one device and returned on the other: per-call
    time of both lowerings against the op alone on its device (stock IREE);
    the difference is the transfer."""
    sys.path.insert(0, ROOT)
    from mdc.runtime_shim import load

    directions = (("CPU", "GPU", "compute_on_cpu", "compute_to_gpu", 0),
                  ("GPU", "CPU", "compute_on_gpu", "compute_to_cpu", 1))
    for producer, consumer, alone, program, where in directions:
        print(f"\nvalue computed on the {producer}, returned on the {consumer} (x + 1, bytes), median ms per call")
        print(f"  {'MiB':>5} {producer.lower() + ' op alone':>13} {'mdc copy':>12} {'mdc emplace':>12}  correct")
        for mib in sizes_mib:
            n = mib * MIB
            host = values_aligned(n)
            want = (host.astype(np.int16) + 1).astype(np.int8)
            times, ok = {}, True
            alone_devices = ["local-task"] if where == 0 else [GPU]
            for name, devices in ((alone, alone_devices),
                                  *((f"{program}_{staging}", ["local-task", GPU]) for staging in STAGINGS)):
                m = load(os.path.join(kit, f"{name}.vmfb"), devices)
                f = m.function(name.replace("_copy", "").replace("_emplace", ""))
                call = _resident_call(m, f, host, device_index=where if len(devices) > 1 else 0)
                times[name] = _median_time(call, _repeats(n))
                del call
                ok = ok and bool(np.array_equal(np.asarray(f(host)).view(np.int8), want))
                m.close()
            print(f"  {mib:>5} {times[alone] * 1e3:13.2f} {times[f'{program}_copy'] * 1e3:12.2f} "
                  f"{times[f'{program}_emplace'] * 1e3:12.2f}  {ok}")


def _resident_call(m, f, host, device_index, place=None):
    """A call of ``f`` whose one argument already lives on its device and
    whose result is left where it ends: the program's own work alone.
    ``place(device, array, kind)``: how the argument is placed (default:
    as the shim places it on ``device_index``)."""
    import iree.runtime as rt
    from mdc.runtime_shim import values

    (array, kind), = f.prepare([host])
    if place is None:
        view = values.to_device(m._devices[device_index], device_index == 0, array, kind, False, 300)
    else:
        view = place(m._devices[device_index], array, kind)
    vm_fn = f._vm_function

    def call():
        args = rt.VmVariantList(1)
        args.push_ref(view.ref)
        results = rt.VmVariantList(1)
        m._context.invoke(vm_fn, args, results)

    call.borrowed = array  # the view may be this array's own memory (values.to_device)
    return call


def _into_call(kit, module_name, host):
    """(load, call, correct) for to_cpu_into: the argument resident on the
    GPU, the output storage placed once (Function.place: in the GPU's pinned
    memory when the module pins it, else in the CPU's memory) and reused."""
    import iree.runtime as rt
    from mdc.runtime_shim import load, values

    m = load(os.path.join(kit, module_name), ["local-task", GPU])
    f = m.function("to_cpu_into")
    (array, kind), _ = f.prepare([host, host])
    source = values.to_device(m._devices[1], False, array, kind, False, 300)
    storage = f.place(1, np.zeros_like(host))

    def call():
        args = rt.VmVariantList(2)
        args.push_ref(source.ref)
        args.push_ref(storage.view.ref)
        results = rt.VmVariantList(1)
        m._context.invoke(f._vm_function, args, results)

    def correct():
        storage.array[...] = 0
        return bool(np.array_equal(f(host, storage), host))

    return m, call, correct


def _placing_call(m, f, host, device_index, register):
    """A call of ``f`` that first places its argument in pinned memory of
    device ``device_index`` as the shim does (mdc.runtime_shim.values.to_pinned):
    the whole cost a caller with the argument in ordinary memory pays."""
    import iree.runtime as rt
    from mdc.runtime_shim import values

    (array, kind), = f.prepare([host])
    device, vm_fn = m._devices[device_index], f._vm_function

    def call():
        view = values.to_pinned(device, array, kind, register=register)
        args = rt.VmVariantList(1)
        args.push_ref(view.ref)
        results = rt.VmVariantList(1)
        m._context.invoke(vm_fn, args, results)
        del args, view

    return call


def values_aligned(nbytes):
    from mdc.runtime_shim import aligned_array

    pattern = (np.arange(nbytes, dtype=np.int64) % 251).astype(np.int8)
    return aligned_array(pattern)


def _torch_rows(nbytes):
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    out = {}
    for kind, pin in (("pinned", True), ("pageable", False)):
        host = torch.empty(nbytes, dtype=torch.uint8, pin_memory=pin)
        dev = torch.empty(nbytes, dtype=torch.uint8, device="cuda")

        def h2d():
            dev.copy_(host, non_blocking=pin)
            torch.cuda.synchronize()

        def d2h():
            host.copy_(dev, non_blocking=pin)
            torch.cuda.synchronize()

        out[kind] = (_median_time(h2d, _repeats(nbytes)), _median_time(d2h, _repeats(nbytes)))
    # What a user writes most often, x.cuda() and y.cpu(): each call makes a
    # new tensor, as an mdc call makes a new result (host memory from the C
    # heap; device memory from torch's caching allocator).
    host = torch.empty(nbytes, dtype=torch.uint8)
    dev = torch.empty(nbytes, dtype=torch.uint8, device="cuda")

    def h2d_new():
        host.cuda()
        torch.cuda.synchronize()

    def d2h_new():
        dev.cpu()

    out["new"] = (_median_time(h2d_new, _repeats(nbytes)), _median_time(d2h_new, _repeats(nbytes)))
    return out


def _seed_latency(kit, name, devices, calls=300):
    sys.path.insert(0, ROOT)
    from mdc.runtime_shim import load

    m = load(os.path.join(kit, name), devices)
    f = m.function("multi_device_mul")
    x = np.array([10, 11, 12, 13], np.float32)
    out = f(x)
    assert np.array_equal(out, [0, 55, 144, 273]), out
    call = _resident_call(m, f, x, device_index=0)
    t = _median_time(call, calls, warmup=20)
    del call
    m.close()
    return t


def latency(kit: str, rounds: int, calls: int, baseline: str | None = None) -> int:
    """The seed program's call latency by CPU driver, in interleaved rounds;
    ``baseline``: a kit built from another commit, whose mdc modules are
    measured in the same rounds (before/after a change, side by side)."""
    kit = os.path.abspath(kit)
    if _gpu_or_none() is None:
        return _no_gpu_status()
    configs = {
        **{f"mdc {cpu}+{GPU}, {staging}": (kit, f"seed_mdc_{staging}.vmfb", [cpu, GPU])
           for cpu in ("local-task", "local-sync") for staging in STAGINGS},
        **({f"baseline mdc local-task+{GPU}, {staging}": (os.path.abspath(baseline), f"seed_mdc_{staging}.vmfb",
                                                          ["local-task", GPU])
            for staging in STAGINGS} if baseline else {}),
        f"stock {GPU}+{GPU}": (kit, "seed_cuda_cuda.vmfb", [GPU, GPU]),
        "stock local-task+local-task": (kit, "seed_local_local.vmfb", ["local-task", "local-task"]),
        "stock local-sync+local-sync": (kit, "seed_local_local.vmfb", ["local-sync", "local-sync"]),
    }
    stock = f"stock {GPU}+{GPU}"
    names = list(configs)
    per_round = {name: [] for name in names}
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]  # a different one first each round
        for name in order:
            per_round[name].append(_seed_latency(*configs[name], calls))
    print(f"\nseed program (4xf32) per call: median over {rounds} rounds of the median of {calls} calls, us")
    print(f"  {'':38} {'median':>8} {'min':>8} {'max':>8} {'/ stock ' + GPU + '+' + GPU:>16}")
    for name in names:
        t = per_round[name]
        ratio = statistics.median(a / b for a, b in zip(t, per_round[stock]))
        print(f"  {name:38} {statistics.median(t) * 1e6:8.1f} {min(t) * 1e6:8.1f} {max(t) * 1e6:8.1f} {ratio:15.2f}x")
    return 0


def run(kit: str, sizes_mib) -> int:
    kit = os.path.abspath(kit)
    iree = _gpu_or_none()
    if iree is None:
        return _no_gpu_status()
    gbps = lambda n, t: n / t / 1e9
    rows = []
    for mib in sizes_mib:
        n = mib * MIB
        row = {"MiB": mib, "ok": True}
        for staging in STAGINGS:
            up, up_ok = _mdc_transfer_time(kit, f"to_gpu_{staging}.vmfb", "to_gpu", n, src_is_gpu=False)
            down, down_ok = _mdc_transfer_time(kit, f"to_cpu_{staging}.vmfb", "to_cpu", n, src_is_gpu=True)
            row.update({f"{staging}_h2d": gbps(n, up), f"{staging}_d2h": gbps(n, down)})
            row["ok"] = row["ok"] and up_ok and down_ok
        lim_up, lim_down = iree.queue_copy_limit(n)
        host = values_aligned(n)
        man_up, man_down = iree.manual(host)
        torch_rows = _torch_rows(n)
        row.update({"limit_h2d": gbps(n, lim_up), "limit_d2h": gbps(n, lim_down),
                    "manual_h2d": gbps(n, man_up), "manual_d2h": gbps(n, man_down)})
        if torch_rows:
            row.update(torch_pin_h2d=gbps(n, torch_rows["pinned"][0]),
                       torch_pin_d2h=gbps(n, torch_rows["pinned"][1]),
                       torch_page_h2d=gbps(n, torch_rows["pageable"][0]),
                       torch_page_d2h=gbps(n, torch_rows["pageable"][1]),
                       torch_new_h2d=gbps(n, torch_rows["new"][0]),
                       torch_new_d2h=gbps(n, torch_rows["new"][1]))
        rows.append(row)
        print(json.dumps(row), flush=True)
    latency = {
        **{f"mdc local+cuda, {staging}": _seed_latency(kit, f"seed_mdc_{staging}.vmfb", ["local-task", GPU])
           for staging in STAGINGS},
        "stock cuda+cuda": _seed_latency(kit, "seed_cuda_cuda.vmfb", [GPU, GPU]),
        "stock local+local": _seed_latency(kit, "seed_local_local.vmfb", ["local-task", "local-task"]),
    }
    cols = ["copy_h2d", "copy_d2h", "emplace_h2d", "emplace_d2h", "limit_h2d", "limit_d2h", "torch_pin_h2d", "torch_pin_d2h",
            "torch_page_h2d", "torch_page_d2h", "torch_new_h2d", "torch_new_d2h", "manual_h2d", "manual_d2h"]
    print("\neffective bandwidth, GB/s (median; mdc rows are whole program calls)")
    print(f"{'MiB':>5} " + " ".join(f"{c:>14}" for c in cols) + "  correct")
    for r in rows:
        print(f"{r['MiB']:>5} " + " ".join(f"{r.get(c, float('nan')):>14.2f}" for c in cols) + f"  {r['ok']}")
    print("\nseed program (4xf32) per call, median of 300 calls")
    for name, t in latency.items():
        print(f"  {name:24} {t * 1e3:8.3f} ms")
    for staging in STAGINGS:
        ratio = latency[f"mdc local+cuda, {staging}"] / latency["stock cuda+cuda"]
        print(f"  ratio mdc ({staging}) / stock cuda+cuda: {ratio:.2f}x")
    _compute_rows(kit, sizes_mib)
    return 0


def pieces(kit: str, sizes_mib) -> int:
    """CPU->GPU bandwidth of an argument by piece count, with the limit."""
    kit = os.path.abspath(kit)
    iree = _gpu_or_none()
    if iree is None:
        return _no_gpu_status()
    gbps = lambda n, t: n / t / 1e9
    print("argument CPU->GPU by --staging-pieces, GB/s (median; whole program calls)")
    print("(auto: the default, one piece per 16 MiB up to 16; pN: --staging-pieces=N)")
    columns = {"auto": "to_gpu_emplace.vmfb", **{f"p{p}": f"to_gpu_pieces_{p}.vmfb" for p in PIECE_COUNTS}}
    print(f"{'MiB':>5} " + " ".join(f"{c:>7}" for c in columns) + f" {'limit':>7}  correct")
    for mib in sizes_mib:
        n = mib * MIB
        cells, ok = [], True
        for count, module in columns.items():
            began = time.perf_counter()
            t, good = _mdc_transfer_time(kit, module, "to_gpu", n, src_is_gpu=False)
            cells.append(gbps(n, t))
            ok = ok and good
            print(f"  [{mib} MiB, {count}: {gbps(n, t):.2f} GB/s, {good}, "
                  f"{time.perf_counter() - began:.1f} s]", file=sys.stderr, flush=True)
        limit = gbps(n, iree.queue_copy_limit(n)[0])
        print(f"{mib:>5} " + " ".join(f"{c:7.2f}" for c in cells) + f" {limit:7.2f}  {ok}", flush=True)
    return 0


def _configure_host(workers: int, retain: bool) -> None:
    """Process-wide runtime settings, before any device exists; printed, so
    every table says what it was measured under."""
    import iree.runtime as rt

    sys.path.insert(0, ROOT)
    if workers:
        rt.flags.parse_flags(f"--task_topology_group_count={workers}")
    retained = False
    if retain:
        from mdc.runtime_shim.host_memory import retain_freed_memory

        retained = retain_freed_memory()
    try:
        thp = open("/sys/kernel/mm/transparent_hugepage/enabled").read().strip()
    except OSError:
        thp = "?"
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"host: {cpus} cpus usable, local-task workers {workers or 'IREE default'}, "
          f"freed host memory retained: {retained}, transparent huge pages: {thp}, "
          f"GLIBC_TUNABLES={os.environ.get('GLIBC_TUNABLES', '')!r}", flush=True)


# -- components (there) ----------------------------------------------------------


def components(mib: int) -> int:
    """Times the pieces a staged transfer is made of, with the runtime API,
    to show where a call's time goes."""
    iree = _gpu_or_none()
    if iree is None:
        return _no_gpu_status()
    rt = iree.rt
    n = mib * MIB
    local = rt.get_driver("local-task").create_default_device()
    host_type = int(rt.MemoryType.DEVICE_LOCAL) | int(rt.MemoryType.HOST_VISIBLE)
    usage = int(rt.BufferUsage.TRANSFER) | int(rt.BufferUsage.DISPATCH_STORAGE) | int(rt.BufferUsage.MAPPING)

    def local_buffer():
        return local.allocator.allocate_buffer(memory_type=host_type, allowed_usage=usage, allocation_size=n)

    src, pinned, dev = local_buffer(), iree.pinned(n), iree.device_buffer(n)
    host_other = local_buffer()

    def local_copy(a, b):
        fence = rt.HalFence.create_at(local.create_semaphore(0), 1)
        local.queue_copy(a, b, rt.HalFence(0), fence)
        fence.wait()

    # The host's own memory bandwidth bounds any staging copy.
    host_a = np.ones(n, np.uint8)
    host_b = np.empty(n, np.uint8)
    np.copyto(host_b, host_a)

    def numpy_threads(k):
        import concurrent.futures
        step = n // k
        with concurrent.futures.ThreadPoolExecutor(k) as pool:
            list(pool.map(lambda i: np.copyto(host_b[i * step:(i + 1) * step], host_a[i * step:(i + 1) * step]),
                          range(k)))

    # The staging copy into pinned memory is issued as several concurrent
    # queue copies; this shows whether local-task runs them in parallel.
    eighth = n // 8
    pieces = [(local.allocator.allocate_buffer(memory_type=host_type, allowed_usage=usage, allocation_size=eighth),
               iree.pinned(eighth)) for _ in range(8)]

    def local_copies_concurrent():
        fences = []
        for a, b in pieces:
            fence = rt.HalFence.create_at(local.create_semaphore(0), 1)
            local.queue_copy(a, b, rt.HalFence(0), fence)
            fences.append(fence)
        for fence in fences:
            fence.wait()

    rows = [
        ("host memcpy, 1 thread (numpy)", lambda: np.copyto(host_b, host_a)),
        ("host memcpy, 8 threads (numpy)", lambda: numpy_threads(8)),
        ("host memcpy, 16 threads (numpy)", lambda: numpy_threads(16)),
        ("local queue_copy host->pinned", lambda: local_copy(src, pinned)),
        ("local queue_copy host->pinned, 8 at once", local_copies_concurrent),
        ("local queue_copy pinned->host", lambda: local_copy(pinned, src)),
        ("local queue_copy host->host", lambda: local_copy(src, host_other)),
        ("cuda queue_copy pinned->device", lambda: iree.fence_wait(
            lambda f: iree.cuda.queue_copy(pinned, dev, rt.HalFence(0), f), iree.cuda)),
        ("cuda allocate device buffer", lambda: iree.device_buffer(n)),
        ("cuda allocate pinned buffer", lambda: iree.pinned(n)),
        ("local allocate buffer", local_buffer),
        ("local allocate + copy pinned->new", lambda: local_copy(pinned, local_buffer())),
    ]
    print(f"components of a {mib} MiB staged transfer, median ms")
    for name, fn in rows:
        try:
            t = _median_time(fn, 5)
            print(f"  {name:40} {t * 1e3:9.2f} ms  {n / t / 1e9:7.2f} GB/s")
        except Exception as e:  # an API this runtime lacks
            print(f"  {name:40} n/a ({str(e).splitlines()[0][:80]})")
    _contention(iree, pinned, dev, n, lambda: numpy_threads(16))
    # What one host round trip costs: the floor of a crossing, which waits
    # on the host at least once per queue it uses.
    tiny = 64
    tiny_pinned, tiny_dev = iree.pinned(tiny), iree.device_buffer(tiny)
    tiny_a = local.allocator.allocate_buffer(memory_type=host_type, allowed_usage=usage, allocation_size=tiny)
    tiny_b = local.allocator.allocate_buffer(memory_type=host_type, allowed_usage=usage, allocation_size=tiny)
    round_trips = [
        ("cuda queue_copy 64 B + host wait", lambda: iree.fence_wait(
            lambda f: iree.cuda.queue_copy(tiny_pinned, tiny_dev, rt.HalFence(0), f), iree.cuda)),
        ("local-task queue_copy 64 B + host wait", lambda: local_copy(tiny_a, tiny_b)),
    ]
    print("host round trips, median of 200")
    for name, fn in round_trips:
        t = _median_time(fn, 200, warmup=20)
        print(f"  {name:40} {t * 1e6:9.1f} us")
    return 0


def queue_latency(calls: int) -> int:
    """What a chain of k dependent queue operations costs until the host sees
    its last fence, on the GPU and on both CPU drivers: each operation waits
    on the previous one's fence (as IREE's submissions within one call do).
    Tells how much of a small call's time is per submission and how much
    per host wait."""
    iree = _gpu_or_none()
    if iree is None:
        return _no_gpu_status()
    rt = iree.rt
    tiny = 64
    host_type = int(rt.MemoryType.DEVICE_LOCAL) | int(rt.MemoryType.HOST_VISIBLE)
    usage = int(rt.BufferUsage.TRANSFER) | int(rt.BufferUsage.DISPATCH_STORAGE) | int(rt.BufferUsage.MAPPING)
    devices = {GPU: iree.cuda}
    for driver in ("local-task", "local-sync"):
        devices[driver] = rt.get_driver(driver).create_default_device()

    def buffers(device):
        if device is iree.cuda:
            return iree.pinned(tiny), iree.device_buffer(tiny)
        return tuple(device.allocator.allocate_buffer(memory_type=host_type, allowed_usage=usage,
                                                      allocation_size=tiny) for _ in range(2))

    def chain(device, a, b, k, alloca=False, signaled_first=False):
        """k copies a -> b, each waiting on the previous one's fence; the
        host waits on the last. Each fence is a new semaphore, as in IREE's
        own programs: chaining three or more values of one semaphore failed
        on IREE 3.13's cuda (test/e2e/cuda_semaphore_chain.py)."""
        def fence():
            return rt.HalFence.create_at(device.create_semaphore(0), 1)

        wait = rt.HalFence(0)
        if signaled_first:
            sem = device.create_semaphore(0)
            sem.signal(1)
            wait = rt.HalFence.create_at(sem, 1)
        if alloca:
            signal = fence()
            b = device.queue_alloca(tiny, wait, signal)
            wait = signal
        for _ in range(k):
            signal = fence()
            device.queue_copy(a, b, wait, signal)
            wait = signal
        wait.wait()

    print(f"chains of dependent 64 B queue copies, each waiting on the previous one's fence;"
          f" the host waits on the last (median of {calls}), us")
    print(f"  {'':38} " + " ".join(f"{d:>12}" for d in devices))
    rows = [(f"{k} cop{'y' if k == 1 else 'ies'}", dict(k=k)) for k in (1, 2, 3, 4, 8)]
    rows += [("1 copy after a signalled fence", dict(k=1, signaled_first=True)),
             ("queue_alloca, then 1 copy into it", dict(k=1, alloca=True)),
             ("queue_alloca, then 2 copies", dict(k=2, alloca=True))]
    for name, kw in rows:
        cells = []
        for device in devices.values():
            a, b = buffers(device)
            try:
                cells.append(f"{_median_time(lambda: chain(device, a, b, **kw), calls, warmup=20) * 1e6:12.1f}")
            except Exception as e:  # an operation this driver lacks
                cells.append(f"{'n/a':>12}")
                print(f"  ({name}: {str(e).splitlines()[0][:100]})")
        print(f"  {name:38} " + " ".join(cells))
    return 0


def _dma_loop(nbytes: int, seconds: float) -> int:
    """The other process of ``_contention``: once told to go (a line on
    stdin), copies pinned -> device on the GPU for ``seconds``, then prints
    its GB/s and how many copies it made."""
    iree = _Iree()
    pinned, dev = iree.pinned(nbytes), iree.device_buffer(nbytes)

    def dma():
        iree.fence_wait(lambda f: iree.cuda.queue_copy(pinned, dev, iree.rt.HalFence(0), f), iree.cuda)

    dma()
    print("ready", flush=True)
    sys.stdin.readline()
    count, began = 0, time.perf_counter()
    while time.perf_counter() - began < seconds:
        dma()
        count += 1
    print(f"{count * nbytes / (time.perf_counter() - began) / 1e9:.2f} {count}", flush=True)
    return 0


def _contention(iree, pinned, dev, n, host_copy, seconds: float = 3.0) -> None:
    """The host copy and the GPU's DMA from pinned memory, each alone and
    then both at once (the DMA from another process, so neither waits on
    Python's lock): overlapped pieces can only reach the slower of the two
    rates they get together, which shared host memory bandwidth may lower."""
    rt = iree.rt
    dma_alone = n / _median_time(lambda: iree.fence_wait(
        lambda f: iree.cuda.queue_copy(pinned, dev, rt.HalFence(0), f), iree.cuda), 5)
    host_alone = n / _median_time(host_copy, 5)
    child = subprocess.Popen([sys.executable, "-m", "bench", "_dma_loop", str(n), str(seconds), GPU], cwd=ROOT,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        if child.stdout.readline().strip() != "ready":
            raise RuntimeError("the DMA process did not start")
        child.stdin.write("go\n")
        child.stdin.flush()
        times, began = [], time.perf_counter()
        while time.perf_counter() - began < seconds:
            t = time.perf_counter()
            host_copy()
            times.append(time.perf_counter() - t)
        rate, copies = child.communicate(timeout=seconds + 60)[0].split()
    finally:
        if child.poll() is None:
            child.kill()
    host_together = n / statistics.median(times)
    print("host copy (numpy, 16 threads) and GPU DMA from pinned memory: alone, then at once, GB/s")
    print(f"  {'host copy':32} alone {host_alone / 1e9:7.2f}   with the DMA running  {host_together / 1e9:7.2f}"
          f" ({len(times)} copies)")
    print(f"  {'queue_copy pinned->device':32} alone {dma_alone / 1e9:7.2f}   with the host copying "
          f"{float(rate):7.2f} ({copies} copies)")


# -- compile time (here) --------------------------------------------------------


def _larger_program(layers: int) -> str:
    """A chain of `layers` matmul+bias+relu blocks alternating between devices."""
    lines = ["func.func public @mlp(%x: tensor<64x64xf32> {iree.abi.affinity = #hal.device.promise<@device_a>})"
             " -> (tensor<64x64xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {",
             "  %zero = arith.constant 0.0 : f32",
             "  %e = tensor.empty() : tensor<64x64xf32>",
             "  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>"]
    cur = "%x"
    for i in range(layers):
        dev = "device_b" if i % 2 == 0 else "device_a"
        lines += [
            f"  %t{i} = flow.tensor.transfer {cur} : tensor<64x64xf32> to #hal.device.promise<@{dev}>",
            f"  %w{i} = arith.constant dense<{0.01 * (i + 1)}> : tensor<64x64xf32>",
            f"  %m{i} = linalg.matmul ins(%t{i}, %w{i} : tensor<64x64xf32>, tensor<64x64xf32>) "
            f"outs(%z : tensor<64x64xf32>) -> tensor<64x64xf32>",
            f"  %b{i} = arith.addf %m{i}, %t{i} : tensor<64x64xf32>",
            f"  %r{i} = arith.maximumf %b{i}, %z : tensor<64x64xf32>",
        ]
        cur = f"%r{i}"
    lines += [f"  %out = flow.tensor.transfer {cur} : tensor<64x64xf32> to #hal.device.promise<@device_a>",
              "  return %out : tensor<64x64xf32>", "}"]
    return "\n".join(lines) + "\n"


def compile_time(layers: int, repeat: int) -> int:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "mlp.mlir")
        with open(src, "w") as f:
            f.write(_larger_program(layers))
        ops = sum(1 for line in open(src) if " = " in line)
        devices = ["--device=a=local[0]", "--device=b=local[1]"]
        flags = subprocess.run(["mdc-compile", src, *devices, "--print-iree-flags"],
                               capture_output=True, text=True, check=True).stdout.split()
        variants = {
            "iree-compile": ["iree-compile", src, *flags, "-o", os.path.join(tmp, "ref.vmfb")],
            "mdc-compile (nothing staged)": ["mdc-compile", src, *devices, "-o", os.path.join(tmp, "a.vmfb")],
            "mdc-compile --link=a:b=staged": ["mdc-compile", src, *devices, "--link=a:b=staged",
                                             "-o", os.path.join(tmp, "b.vmfb")],
            "  the same, --staging=copy": ["mdc-compile", src, *devices, "--link=a:b=staged", "--staging=copy",
                                           "-o", os.path.join(tmp, "c.vmfb")],
        }
        results = {}
        for name, cmd in variants.items():
            times = []
            for _ in range(repeat):
                t = time.perf_counter()
                subprocess.run(cmd, check=True, capture_output=True)
                times.append(time.perf_counter() - t)
            results[name] = statistics.median(times)
        print(f"compile time, {ops} ops ({layers} layers, {2 * layers} transfers), median of {repeat}, wall clock")
        base = results["iree-compile"]
        for name, t in results.items():
            print(f"  {name:32} {t:7.2f} s   {t / base:5.2f}x")
    return 0


def _finish_row(iree, mib: int, row: dict, cols, ok: bool, direction: int) -> None:
    """Adds the references (the queue_copy limit, torch pinned and
    pageable; ``direction`` 0: CPU->GPU, 1: GPU->CPU) to ``row`` and prints it."""
    n = mib * MIB
    row["limit"] = n / iree.queue_copy_limit(n)[direction] / 1e9
    torch_rows = _torch_rows(n)
    if torch_rows:
        row["torch_pin"] = n / torch_rows["pinned"][direction] / 1e9
        row["torch_page"] = n / torch_rows["pageable"][direction] / 1e9
    print(f"{mib:>5} " + " ".join(f"{row.get(c, float('nan')):>10.2f}" for c in cols) + f"  {ok}", flush=True)


def pinned(kit: str, sizes_mib) -> int:
    """CPU->GPU bandwidth of an argument given in the GPU's pinned memory."""
    sys.path.insert(0, ROOT)
    from mdc.runtime_shim import load

    kit = os.path.abspath(kit)
    iree = _gpu_or_none()
    if iree is None:
        return _no_gpu_status()
    gbps = lambda n, t: n / t / 1e9
    print("argument CPU->GPU, GB/s (median; whole program calls, result left on the GPU)")
    print("  default: the argument in the CPU's memory (host copy into pinned, in pieces)")
    print("  pinned: --pinned-arguments, the argument placed in the GPU's pinned memory once, reused")
    print("  +copy / +register: placed by the shim on every call, copied into a new pinned")
    print("  buffer / the array's own pages registered (cuMemHostRegister), counted in the call")
    cols = ["default", "pinned", "+copy", "+register", "limit", "torch_pin", "torch_page"]
    print(f"{'MiB':>5} " + " ".join(f"{c:>10}" for c in cols) + "  correct")
    for mib in sizes_mib:
        n = mib * MIB
        host = values_aligned(n)
        row, ok = {}, True
        t, good = _mdc_transfer_time(kit, "to_gpu_emplace.vmfb", "to_gpu", n, src_is_gpu=False)
        row["default"], ok = gbps(n, t), ok and good
        m = load(os.path.join(kit, "to_gpu_pinned.vmfb"), ["local-task", GPU])
        f = m.function("to_gpu")
        index = f._pinned.get(0)
        if index is None:
            print("bench: to_gpu_pinned.vmfb pins no argument")
            return 1
        placed = lambda device, array, kind: f.place(0, array).view  # noqa: E731  (the public API)
        for name, call in (("pinned", _resident_call(m, f, host, index, place=placed)),
                           ("+copy", _placing_call(m, f, host, index, register=False)),
                           ("+register", _placing_call(m, f, host, index, register=True))):
            row[name] = gbps(n, _median_time(call, _repeats(n)))
            del call
            gc.collect()
        ok = ok and bool(np.array_equal(f(host), host))
        m.close()
        _finish_row(iree, mib, row, cols, ok, direction=0)
    print("\nresult GPU->CPU, GB/s (median; whole program calls)")
    print("  default: a new result buffer each call; into: to_cpu_into.mlir, written into an output")
    print("  argument (iree.abi.output) placed once in the CPU's memory; pinned: the same with")
    print("  --pinned-arguments, the output placed once in the GPU's pinned memory")
    cols = ["default", "into", "pinned", "limit", "torch_pin", "torch_page"]
    print(f"{'MiB':>5} " + " ".join(f"{c:>10}" for c in cols) + "  correct")
    for mib in sizes_mib:
        n = mib * MIB
        host = values_aligned(n)
        row, ok = {}, True
        t, good = _mdc_transfer_time(kit, "to_cpu_emplace.vmfb", "to_cpu", n, src_is_gpu=True)
        row["default"], ok = gbps(n, t), ok and good
        for name, module in (("into", "to_cpu_into.vmfb"), ("pinned", "to_cpu_into_pinned.vmfb")):
            m, call, correct = _into_call(kit, module, host)
            row[name] = gbps(n, _median_time(call, _repeats(n)))
            ok = ok and correct()
            # Both closures hold the GPU argument's buffer view; no HAL
            # object may outlive its module (runtime_shim Module.close).
            del call, correct
            m.close()
        _finish_row(iree, mib, row, cols, ok, direction=1)
    return 0


def main() -> int:
    global GPU, ALLOW_NO_GPU
    if len(sys.argv) == 5 and sys.argv[1] == "_dma_loop":  # _contention's other process
        GPU = sys.argv[4]
        return _dma_loop(int(sys.argv[2]), float(sys.argv[3]))
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("dir")
    b.add_argument("--cpu", default="generic")
    b.add_argument("--smoke", action="store_true", help="local devices stand in for the GPU")
    r = sub.add_parser("run")
    r.add_argument("dir")
    r.add_argument("--sizes", default=",".join(map(str, SIZES_MIB)), help="MiB, comma separated")
    r.add_argument("--smoke", action="store_true", help="local-sync stands in for the GPU")
    pc = sub.add_parser("pieces")
    pc.add_argument("dir")
    pc.add_argument("--sizes", default="1,16,256,1024", help="MiB, comma separated")
    pc.add_argument("--smoke", action="store_true", help="local-sync stands in for the GPU")
    pn = sub.add_parser("pinned")
    pn.add_argument("dir")
    pn.add_argument("--sizes", default="16,256,1024", help="MiB, comma separated")
    pn.add_argument("--smoke", action="store_true", help="local-sync stands in for the GPU")
    lt = sub.add_parser("latency")
    lt.add_argument("dir")
    lt.add_argument("--rounds", type=int, default=7)
    lt.add_argument("--calls", type=int, default=300)
    lt.add_argument("--baseline", help="a kit built at another commit, measured in the same rounds")
    lt.add_argument("--smoke", action="store_true", help="local-sync stands in for the GPU")
    ql = sub.add_parser("queue-latency")
    ql.add_argument("--calls", type=int, default=300)
    ql.add_argument("--smoke", action="store_true", help="local-sync stands in for the GPU")
    k = sub.add_parser("components")
    k.add_argument("--mib", type=int, default=256)
    k.add_argument("--smoke", action="store_true")
    c = sub.add_parser("compile-time")
    c.add_argument("--layers", type=int, default=12)
    c.add_argument("--repeat", type=int, default=3)
    for sp in (r, pc, pn, lt, ql, k):
        sp.add_argument("--allow-no-gpu", action="store_true",
                        help=f"with no cuda device, say so and exit 0 (default: exit status {NO_GPU_STATUS})")
    for sp in (r, pc, pn, lt, k):
        sp.add_argument("--workers", type=int, default=0,
                        help="local-task worker threads (IREE's --task_topology_group_count; 0: IREE's choice)")
        sp.add_argument("--retain-host-memory", action="store_true",
                        help="keep freed host memory for reuse (mdc.runtime_shim.host_memory)")
    a = p.parse_args()
    GPU = "local-sync" if getattr(a, "smoke", False) and a.cmd != "build" else "cuda"
    ALLOW_NO_GPU = getattr(a, "allow_no_gpu", False)
    if a.cmd in ("run", "pieces", "pinned", "latency", "components"):
        _configure_host(a.workers, a.retain_host_memory)
    if a.cmd == "build":
        return build(a.dir, a.cpu, a.smoke)
    if a.cmd == "run":
        return run(a.dir, [int(s) for s in a.sizes.split(",")])
    if a.cmd == "pieces":
        return pieces(a.dir, [int(s) for s in a.sizes.split(",")])
    if a.cmd == "pinned":
        return pinned(a.dir, [int(s) for s in a.sizes.split(",")])
    if a.cmd == "latency":
        return latency(a.dir, a.rounds, a.calls, a.baseline)
    if a.cmd == "components":
        return components(a.mib)
    if a.cmd == "queue-latency":
        return queue_latency(a.calls)
    return compile_time(a.layers, a.repeat)


if __name__ == "__main__":
    sys.exit(main())
