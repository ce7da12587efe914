"""Timing matmul functions, there: the IREE runtime, numpy and (if present) torch.

``measure`` runs in a worker process, one module at a time: for each entry
it makes the point's inputs from the seed, calls the function once and
checks its output against a float64-accumulated reference, then times
calls until about ``BUDGET_S`` has passed. A kernel's time is (median call
- the floor module's median call) / R, the floor being a call of one tiny
dispatch, so the launch gap between repeated dispatches stays in the
kernel's time as it does in torch's back-to-back time. Each result is one
JSON line, flushed, and a ``start`` line precedes each call, so the parent
knows which function a crashed or hung worker was in.

A module whose functions read their weight from a global (the CPU's:
``kernel_grid.function``'s ``weight``) is loaded with those weights as
parameters, made from the seed as the reference's are, so its calls run
the matmul alone, as a model's do: IREE packs a parameter for its data
tiling once, at load.

torch's cuda time for the point (CUDA events over a CUDA graph replaying
back-to-back calls of ``x @ W`` or ``F.linear(x, W)``) is measured in the
same worker when torch with CUDA is present; its CPU time comes with the
entry, measured before in a process of its own (bench/kernel_torch_cpu.py).
The graph takes Python's launch cost out of torch's time, as IREE's CUDA
command buffer (itself a CUDA graph) does for the repeated dispatches:
eager calls of a small product are bound by Python at 14 to 20 us a call
whatever the shape (run K2), which flattered mdc there. Where the capture
fails, the eager calls' time stands.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
import zlib

import numpy as np

from .kernel_grid import PARAMETER_SCOPE, mlir_type

BUDGET_S = 0.03
MAX_CALLS = 200
GRAPH_REPLAYS = 3  # replays of torch's captured calls, timed together
_NP = {"f32": np.float32, "f16": np.float16, "bf16": np.uint16}


def _bf16_bits(a: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 bit patterns (round to nearest even)."""
    u = a.astype(np.float32).view(np.uint32)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def _bf16_value(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


def shapes(point: dict) -> tuple[tuple, tuple]:
    """(x's shape, W's): M x K and K x N or N x K, each with the batch
    first for a batch point."""
    m, k, n, b = point["m"], point["k"], point["n"], point.get("batch", 0)
    lead = (b,) if b else ()
    return lead + (m, k), lead + ((n, k) if point["layout"] == "nt" else (k, n))


def inputs(point: dict, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(x, W) in the point's operands' type (bf16 as uint16 bits; a mixed
    point's, f16 or bf16: kernel_grid.mlir_type), W in its layout:
    uniform in [-1, 1), W scaled by 1/sqrt(K). Drawn by torch on the GPU
    where there is one (fast for the largest W), else by numpy."""
    batch = f"x{point['batch']}" if point.get("batch") else ""
    key = zlib.crc32(f"{point['k']}x{point['n']}x{point['m']}{batch}".encode())
    k = point["k"]
    xshape, wshape = shapes(point)
    torch = _torch()
    if torch is not None:
        g = torch.Generator(device="cuda").manual_seed(seed * 2**32 + key)
        x = (torch.rand(xshape, generator=g, device="cuda") * 2 - 1).cpu().numpy()
        w = ((torch.rand(wshape, generator=g, device="cuda") * 2 - 1) / k ** 0.5).cpu().numpy()
    else:
        rng = np.random.default_rng([seed, key])
        x = rng.uniform(-1, 1, xshape).astype(np.float32)
        w = (rng.uniform(-1, 1, wshape) / np.sqrt(k)).astype(np.float32)
    element = mlir_type(point["dtype"])
    if element == "bf16":
        return _bf16_bits(x), _bf16_bits(w)
    return x.astype(_NP[element]), w.astype(_NP[element])


def as_float(a: np.ndarray, dtype: str) -> np.ndarray:
    return _bf16_value(a) if mlir_type(dtype) == "bf16" else a.astype(np.float32)


def reference(point: dict, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    xf, wf = as_float(x, point["dtype"]), as_float(w, point["dtype"])
    nt = point["layout"] == "nt"
    torch = _torch()
    if torch is not None:
        with torch.no_grad():
            xt, wt = torch.from_numpy(xf).cuda().double(), torch.from_numpy(wf).cuda().double()
            y = xt @ (wt.transpose(-1, -2) if nt else wt)
            return y.float().cpu().numpy()
    return (xf.astype(np.float64) @ (np.swapaxes(wf, -1, -2) if nt else wf).astype(np.float64)).astype(np.float32)


def _product(torch, point: dict, xt, wt):
    """torch's own call for the point: F.linear for a weight out x in,
    x @ W, and for a batch torch.matmul(x, W.transpose(-1, -2)), as
    attention's Q x K^T is written."""
    if point["layout"] != "nt":
        return lambda: xt @ wt
    if point.get("batch"):
        return lambda: torch.matmul(xt, wt.transpose(-1, -2))
    return lambda: torch.nn.functional.linear(xt, wt)


# The largest error() a right output may have: the grid's check, and the
# tuner's where IREE's default gives nothing to compare with. f16 and bf16
# accumulate in their own type in those kernels (bf16 at K = 11008 is 0.15
# off); accumulating in f32 (f16f32, bf16f32: torch's), the output is off
# by its one rounding to f16 or bf16 (2^-11, 2^-8 of the largest value).
ERROR_LIMIT = {"f32": 1e-3, "f16": 5e-2, "bf16": 1.5e-1, "f16f32": 2e-3, "bf16f32": 1e-2}


def error(y: np.ndarray, ref: np.ndarray) -> float:
    """Largest error relative to the reference's largest magnitude."""
    return float(np.abs(y - ref).max() / max(float(np.abs(ref).max()), 1e-30))


_TORCH = []


def _torch():
    if not _TORCH:
        try:
            import torch
            _TORCH.append(torch if torch.cuda.is_available() else None)
        except ImportError:
            _TORCH.append(None)
    return _TORCH[0]


def _median_wall(op) -> float:
    op()
    t0 = time.perf_counter()
    op()
    one = time.perf_counter() - t0
    times = []
    for _ in range(max(5, min(MAX_CALLS, int(BUDGET_S / max(one, 1e-6))))):
        t0 = time.perf_counter()
        op()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


def _replayed_us(torch, op, calls: int) -> float | None:
    """us per ``op``, replaying a CUDA graph of ``calls`` of them back to
    back (CUDA events over GRAPH_REPLAYS replays); None where torch cannot
    capture it."""
    try:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm up off the default stream, as capture asks
            for _ in range(3):
                op()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(calls):
                op()
        graph.replay()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(GRAPH_REPLAYS):
            graph.replay()
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end) * 1e3 / (calls * GRAPH_REPLAYS)
    except RuntimeError:
        return None


def torch_us(point: dict, x: np.ndarray, w: np.ndarray) -> float | None:
    """torch's cuda kernel time, us per call: back to back in a replayed
    CUDA graph, or eager calls where the capture fails (CUDA events)."""
    torch = _torch()
    if torch is None:
        return None
    # A mixed point's is torch's own f16 (bf16) product, which accumulates in f32.
    dt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[mlir_type(point["dtype"])]
    xt = torch.from_numpy(as_float(x, point["dtype"])).cuda().to(dt)
    wt = torch.from_numpy(as_float(w, point["dtype"])).cuda().to(dt)
    op = _product(torch, point, xt, wt)
    for _ in range(3):
        op()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    op()
    torch.cuda.synchronize()
    one = time.perf_counter() - t0
    calls = max(5, min(MAX_CALLS, int(BUDGET_S / max(one, 1e-6))))
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(calls):
        op()
    end.record()
    torch.cuda.synchronize()
    eager = start.elapsed_time(end) * 1e3 / calls
    replayed = _replayed_us(torch, op, calls)
    return eager if replayed is None else replayed


class Module:
    """One loaded vmfb on one device."""

    def __init__(self, vmfb: str, device: str, parameters: dict[str, np.ndarray] | None = None):
        """``parameters``: the module's named parameters (PARAMETER_SCOPE),
        kept alive with it."""
        import iree.runtime as rt
        self.rt = rt
        self.config = rt.Config(device)
        self.ctx = rt.SystemContext(config=self.config)
        self.parameters = {name: np.ascontiguousarray(a) for name, a in (parameters or {}).items()}
        if self.parameters:
            index = rt.ParameterIndex()
            for name, a in self.parameters.items():
                index.add_buffer(name, a)
            self.ctx.add_vm_module(rt.create_io_parameters_module(
                self.config.vm_instance, index.create_provider(scope=PARAMETER_SCOPE)))
        with open(vmfb, "rb") as f:
            self.ctx.add_vm_module(rt.VmModule.copy_buffer(self.config.vm_instance, f.read()))
        self.functions = self.ctx.modules.module

    def upload(self, a: np.ndarray, dtype: str):
        if mlir_type(dtype) != "bf16":
            return self.rt.asdevicearray(self.config.device, a)
        device = self.config.device
        return device.allocator.allocate_buffer_copy(
            memory_type=self.rt.MemoryType.DEVICE_LOCAL, allowed_usage=self.rt.BufferUsage.DEFAULT, device=device,
            buffer=np.ascontiguousarray(a), element_type=self.rt.HalElementType.BFLOAT_16)

    def result(self, out, dtype: str) -> np.ndarray:
        """The output on the host; bf16 (no numpy type) as its bits, copied
        on the device's queue into host-visible memory (cuda's results are
        device-local, which the host cannot map)."""
        if mlir_type(dtype) != "bf16":
            return np.asarray(out.to_host(), np.float32)
        rt = self.rt
        bv = out if isinstance(out, rt.HalBufferView) else out._buffer_view
        device, source = self.config.device, bv.get_buffer()
        host = device.allocator.allocate_buffer(
            memory_type=int(rt.MemoryType.HOST_LOCAL | rt.MemoryType.DEVICE_VISIBLE),
            allowed_usage=int(rt.BufferUsage.TRANSFER | rt.BufferUsage.MAPPING), allocation_size=source.byte_length())
        sem = device.create_semaphore(0)
        device.queue_copy(source, host, wait_semaphores=rt.HalFence.create_at(sem, 0),
                          signal_semaphores=rt.HalFence.create_at(sem, 1))
        rt.HalFence.create_at(sem, 1).wait()
        count = int(np.prod(bv.shape))
        bits = np.array(host.map().asarray([count], np.dtype(np.uint16)), copy=True).reshape(tuple(bv.shape))
        return _bf16_value(bits)

    def median_us(self, fn, args) -> float:
        return _median_wall(lambda: fn(*args))


def floor_us(vmfb: str, device: str) -> float:
    """The median call of one tiny dispatch, not repeated."""
    mod = Module(vmfb, device)
    return mod.median_us(mod.functions["tiny"], [mod.upload(np.arange(4, dtype=np.float32), "f32")])


def _weights(parameters: list[dict], seed: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each parameter's name -> its point's (x, W), from the seed."""
    return {q["name"]: inputs(q["point"], seed) for q in parameters}


def measure(vmfb: str, entries: list[dict], device: str, seed: int, floor: float, out,
            parameters: list[dict] | None = None) -> None:
    """The worker: one JSON line per entry of ``entries`` (a ``start`` line
    before each), into ``out``. ``parameters`` ({name, point}): the
    module's weights, every one, whichever entries are left; an entry
    with a ``weight`` takes x alone."""
    made = _weights(parameters or [], seed)
    mod = Module(vmfb, device, {name: w for name, (_, w) in made.items()})
    cache: dict = {}
    for e in entries:
        p = e["point"]
        key = json.dumps(p, sort_keys=True)
        if key not in cache:
            cache.clear()
            x, w = made[e["weight"]] if "weight" in e else inputs(p, seed)
            ref = reference(p, x, w)
            args = [mod.upload(x, p["dtype"])] + ([] if "weight" in e else [mod.upload(w, p["dtype"])])
            # torch's CPU time comes with the entry (or is None: no torch).
            cache[key] = (args, ref, e.get("torch_us") if e.get("target") == "cpu" else torch_us(p, x, w))
        args, ref, torch_time = cache[key]
        print(json.dumps({"start": e["function"]}), file=out, flush=True)
        fn = mod.functions[e["function"]]
        err = error(mod.result(fn(*args), p["dtype"]), ref)
        call = mod.median_us(fn, args)
        row = dict(e, error=err, call_us=call, kernel_us=max(call - floor, 0.0) / e["repeat"], torch_us=torch_time)
        print(json.dumps(row), file=out, flush=True)


def worker_main(argv: list[str]) -> int:
    """``python -m bench.kernel_timing MODULES.json DEVICE SEED FLOOR OUT.jsonl``:
    MODULES.json lists {vmfb, entries} (and optionally their own device,
    floor and parameters), measured in turn."""
    modules, device, seed, floor, out = argv
    with open(modules) as f:
        todo = json.load(f)
    with open(out, "a") as f:
        for m in todo:
            measure(m["vmfb"], m["entries"], m.get("device", device), int(seed), float(m.get("floor", floor)), f,
                    m.get("parameters"))
    return 0


if __name__ == "__main__":
    sys.exit(worker_main(sys.argv[1:]))
