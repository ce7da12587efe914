"""``bench workload run DIR``: the split model of model.py on the GPU machine
(runtime wheel and numpy; torch when present), per split k.

Per-call latency at batch 1 and throughput at the kit's larger batch, each
call from token ids in host memory to logits in host memory, the weights
placed on their devices once: mdc's split (``mdc.runtime_shim``, each
execution model in the kit), torch eager doing the same split with
``.to()``, and everything on the GPU with torch and with stock IREE (the
kit's iree-compile module on iree.runtime alone). Every result is checked
against the kit's numpy reference; every ratio is within this run.
"""

from __future__ import annotations

import dataclasses
import gc
import os
import statistics
import time

import numpy as np

from . import model
from .common import Config, gpu_or_none, torch_cuda
from .kitframe import KitError, incomplete, read_manifest, require_files, verdict
from .workload_kit import FORMAT

CPU = "local-task"


@dataclasses.dataclass(frozen=True)
class Kit:
    path: str
    stack: model.Stack
    modules: tuple[dict, ...]  # {"file", "k", "model"}
    stock: str
    batches: dict  # batch size -> (ids, expected logits)
    weights_sha256: str
    smoke: bool
    built_with: str = ""  # the CPU target and further mdc-compile flags of the split modules

    @property
    def splits(self) -> list[int]:
        return sorted({m["k"] for m in self.modules})

    @property
    def models(self) -> list[str]:
        return list(dict.fromkeys(m["model"] for m in self.modules))


def read_kit(path: str) -> Kit:
    """The kit in ``path``; KitError saying what is wrong with it."""
    kit = read_manifest(path, "workload.json", build=f"python -m bench workload build {path}", kind="workload",
                        fmt=FORMAT)
    try:
        batches = {int(b): _batch(path, entry) for b, entry in kit["batches"].items()}
        # A kit written before the stack had a layout holds in x out weights.
        stack = model.Stack(**{"layout": "in_out", **kit["stack"]})
        result = Kit(path, stack, tuple(kit["modules"]), kit["stock"], batches,
                     kit["weights_sha256"], bool(kit["smoke"]),
                     " ".join([f"--iree-llvmcpu-target-cpu={kit.get('cpu', 'generic')}", *kit.get("mdc_flags", [])]))
        files = [m["file"] for m in result.modules] + [result.stock]
    except (KeyError, TypeError, ValueError) as e:
        raise incomplete(path, "workload.json", e) from None
    require_files(path, files)
    return result


def _batch(path: str, entry: dict) -> tuple[np.ndarray, np.ndarray]:
    """(token ids, expected logits) of one batch size."""
    try:
        expected = np.load(os.path.join(path, entry["expected"]))
    except OSError as e:
        raise KitError(f"the kit's reference {entry['expected']} cannot be read: {e}") from None
    return model.aligned_copy(np.array(entry["ids"], np.int64)), expected.astype(np.float64)


# -- one measurement ------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Measured:
    seconds: float  # median per call
    right: bool
    error: float  # largest difference relative to the reference's largest magnitude


def measure(forward, want: np.ndarray, calls: int, ids: np.ndarray, tolerance: float, warmup: int = 2) -> Measured:
    """Median seconds of ``calls`` calls of ``forward(ids)`` (ids in, logits
    out, in host memory) after ``warmup``; every result is checked. Between
    calls, untimed, the garbage collector runs: iree.runtime's to_host
    registers each result's memory with CUDA, and a registration left to a
    later collection fails the call that gets the same address
    (CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, common.RawIree.manual);
    every row gets the same pause."""
    right, error = True, 0.0
    times = []
    for i in range(warmup + calls):
        began = time.perf_counter()
        got = forward(ids)
        if i >= warmup:
            times.append(time.perf_counter() - began)
        ok, err = model.check(got, want, tolerance)
        right, error = right and ok, max(error, err)
        del got
        gc.collect()
    return Measured(statistics.median(times), right, error)


def mdc_split(config: Config, kit: Kit, entry: dict, b: int, params, calls: int) -> Measured:
    """mdc's module for split ``entry["k"]``, through the public API: the
    weights placed once (Function.place), each call numpy in and out."""
    from mdc.runtime_shim import load

    ids, want = kit.batches[b]
    with load(os.path.join(kit.path, entry["file"]), [CPU, config.gpu]) as m:
        f = m.function(f"forward_b{b}")
        placed = [f.place(1 + i, w) for i, w in enumerate(params)]
        return measure(lambda x: f(x, *placed), want, calls, ids, kit.stack.tolerance)


def stream(forward_stream, want: np.ndarray, items: int, tolerance: float) -> Measured:
    """Seconds per item of the best of 3 streams of ``items`` calls
    (``forward_stream(items)`` yields each call's logits), after one
    untimed stream; every result is checked."""
    right, error = True, 0.0
    times = []
    for i in range(4):
        began = time.perf_counter()
        for got in forward_stream(items):
            ok, err = model.check(got, want, tolerance)
            right, error = right and ok, max(error, err)
            del got
        if i:
            times.append((time.perf_counter() - began) / items)
        gc.collect()
    return Measured(min(times), right, error)


def mdc_stream(config: Config, kit: Kit, entry: dict, params, items: int, depth: int) -> Measured:
    """A stream of batch-1 calls of mdc's module for split ``entry["k"]``:
    one call after another (``depth`` 1) or pipelined, ``depth`` calls in
    flight (Function.map, runtime_shim/pipelined.py), the weights placed
    once."""
    import itertools

    from mdc.runtime_shim import load

    ids, want = kit.batches[1]
    with load(os.path.join(kit.path, entry["file"]), [CPU, config.gpu]) as m:
        f = m.function("forward_b1")
        placed = [f.place(1 + i, w) for i, w in enumerate(params)]
        if depth == 1:
            return stream(lambda n: (f(ids, *placed) for _ in range(n)), want, items, kit.stack.tolerance)
        return stream(lambda n: f.map(itertools.repeat(ids, n), *(itertools.repeat(p, n) for p in placed),
                                      depth=depth), want, items, kit.stack.tolerance)


def stock_gpu(config: Config, kit: Kit, b: int, params, calls: int) -> Measured:
    """The kit's iree-compile module, everything on the GPU, on stock
    iree.runtime: weights uploaded once (asdevicearray), ids uploaded and
    logits read back (to_host) by each call."""
    import iree.runtime as rt

    ids, want = kit.batches[b]
    runtime = rt.Config(config.gpu)
    context = rt.SystemContext(config=runtime)
    vm_module = rt.VmModule.mmap(runtime.vm_instance, os.path.join(kit.path, kit.stock))
    context.add_vm_module(vm_module)
    f = context.modules[vm_module.name][f"forward_b{b}"]
    weights = [rt.asdevicearray(runtime.device, w) for w in params]
    return measure(lambda x: f(x, *weights).to_host(), want, calls, ids, kit.stack.tolerance)


# -- torch ------------------------------------------------------------------------------


class TorchStack:
    """The same stack in torch eager: the embedding and blocks 0..k-1 on the
    CPU, the rest on the GPU (``gpu``, a torch device: "cuda"), the
    activation moved there with ``.to(gpu)`` at block k; ``k`` None:
    everything on the GPU, the ids moved there."""

    def __init__(self, torch, stack: model.Stack, params, k: int | None, gpu: str = "cuda"):
        self.torch, self.stack, self.k, self.gpu = torch, stack, k, gpu
        self.w = []
        for (_, _, block), w in zip(stack.weights(), params):
            on_cpu = k is not None and stack.on_cpu(block, k)
            self.w.append(torch.from_numpy(w) if on_cpu else torch.from_numpy(w).to(gpu))

    def _rmsnorm(self, h, gain):
        return h * self.torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + model.EPS) * gain

    def _linear(self, x, w):
        """As the kit's layout says: torch.nn.Linear's (w out x in) or x @ w."""
        return self.torch.nn.functional.linear(x, w) if self.stack.out_in else x @ w

    def __call__(self, ids: np.ndarray) -> np.ndarray:
        torch, stack, k = self.torch, self.stack, self.k
        with torch.inference_mode():
            index = torch.from_numpy(ids)
            h = self.w[0][index if k is not None else index.to(self.gpu)]
            for i in range(stack.blocks):
                if i == k:
                    h = h.to(self.gpu)
                u = self._linear(self._rmsnorm(h, self.w[1 + 2 * i]), self.w[2 + 2 * i])
                h = h + torch.nn.functional.silu(u)
            logits = self._linear(self._rmsnorm(h, self.w[-2]), self.w[-1])
            return logits.cpu().numpy()


@dataclasses.dataclass(frozen=True)
class Torch:
    """torch, and the torch device playing the GPU: "cuda"; "cpu" with
    --smoke, where a local device plays the GPU for mdc."""

    module: object
    gpu: str


def find_torch(config: Config) -> tuple[Torch | None, str | None]:
    """(Torch, None), or (None, why torch is not measured)."""
    if config.gpu == "cuda":
        torch, why = torch_cuda()
        return (Torch(torch, "cuda"), None) if torch is not None else (None, why)
    try:
        import torch
    except ImportError as e:
        return None, f"torch is not importable ({e})"
    return Torch(torch, "cpu"), None


def torch_measure(torch: Torch, kit: Kit, b: int, params, k: int | None, calls: int) -> Measured:
    ids, want = kit.batches[b]
    result = measure(TorchStack(torch.module, kit.stack, params, k, torch.gpu), want, calls, ids,
                     kit.stack.tolerance)
    if torch.gpu == "cuda":
        torch.module.cuda.empty_cache()  # the stack's weights on the GPU are gone with it
    return result


# -- the tables ---------------------------------------------------------------------------


def _cell(m: Measured | None, b: int, per_token: bool) -> str:
    if m is None:
        return f"{'n/a':>11}"
    return f"{b / m.seconds:11.1f}" if per_token else f"{m.seconds * 1e3:11.3f}"


def _ratio(mdc: Measured, reference: Measured | None) -> str:
    return f"{'n/a':>12}" if reference is None else f"{mdc.seconds / reference.seconds:11.2f}x"


def _references(config: Config, kit: Kit, torch: Torch | None, b: int, params, calls: int) -> dict:
    refs = {"stock": stock_gpu(config, kit, b, params, calls),
            "torch": torch_measure(torch, kit, b, params, None, calls) if torch else None}
    for name, label in (("stock", "stock IREE (iree.runtime)"), ("torch", "torch")):
        m = refs[name]
        text = "not measured (no torch)" if m is None else (
            f"{_cell(m, b, b > 1).strip()} {'tokens/s' if b > 1 else 'ms'}, "
            f"{'right' if m.right else 'WRONG'} (error {m.error:.1e})")
        print(f"  everything on the GPU, {label}: {text}", flush=True)
    return refs


def _table(config: Config, kit: Kit, torch: Torch | None, b: int, params, calls: int) -> bool:
    """One batch size's table, printed as it is measured; -> every result right."""
    per_token = b > 1
    what = f"throughput at batch {b}, tokens/s" if per_token else "per-call latency at batch 1, ms"
    print(f"\n{what} (median of {calls} calls after 2; ids in, logits out, in host memory; weights placed once)")
    print(f"  ratios: mdc's ({kit.models[0]}) time over the reference's, below 1.00x mdc is faster")
    refs = _references(config, kit, torch, b, params, calls)
    heads = [f"mdc {name}" for name in kit.models] + ["torch split", "/torch split", "/stock GPU", "/torch GPU"]
    print(f"  {'k':>4} " + " ".join(f"{h:>11}" if not h.startswith("/") else f"{h:>12}" for h in heads)
          + "  correct  max error")
    right = all(m.right for m in refs.values() if m is not None)
    for k in kit.splits:
        row = {e["model"]: mdc_split(config, kit, e, b, params, calls) for e in kit.modules if e["k"] == k}
        split = torch_measure(torch, kit, b, params, k, calls) if torch else None
        every = [*row.values(), *([split] if split else [])]
        ok = all(m.right for m in every)
        mdc = row[kit.models[0]]
        cells = [_cell(row[name], b, per_token) for name in kit.models] + [_cell(split, b, per_token)]
        cells += [_ratio(mdc, split), _ratio(mdc, refs["stock"]), _ratio(mdc, refs["torch"])]
        print(f"  {k:>4} " + " ".join(cells) + f"  {str(ok):>7}  {max(m.error for m in every):9.1e}", flush=True)
        right = right and ok
    return right


def _stream_table(config: Config, kit: Kit, torch: Torch | None, params, items: int, depth: int) -> bool:
    """Target 2's table: throughput over a stream of batch-1 inputs, one call
    after another and pipelined; -> every result right."""
    print(f"\nstream of {items} batch-1 inputs, items/s (best of 3 streams after 1; ids in, logits out, in "
          f"host memory; weights placed once); pipelined: Function.map with {depth} calls in flight")
    print(f"  ratios: throughput over torch split's, above 1.00x mdc is faster (target 2: pipelined >= 1.50x)")
    heads = ([f"{name} one by one" for name in kit.models] + [f"{name} pipelined" for name in kit.models]
             + ["torch split"] + [f"{name} pip/torch" for name in kit.models])
    print(f"  {'k':>4} " + " ".join(f"{h:>16}" for h in heads) + "  correct  max error")
    right = True
    for k in kit.splits:
        entries = {e["model"]: e for e in kit.modules if e["k"] == k}
        one = {name: mdc_stream(config, kit, entries[name], params, items, 1) for name in kit.models}
        piped = {name: mdc_stream(config, kit, entries[name], params, items, depth) for name in kit.models}
        split = None
        if torch:
            ids, want = kit.batches[1]
            forward = TorchStack(torch.module, kit.stack, params, k, torch.gpu)
            split = stream(lambda n: (forward(ids) for _ in range(n)), want, items, kit.stack.tolerance)
            del forward
            if torch.gpu == "cuda":
                torch.module.cuda.empty_cache()
        every = [*one.values(), *piped.values(), *([split] if split else [])]
        ok = all(m.right for m in every)
        cells = [f"{1 / one[name].seconds:16.1f}" for name in kit.models]
        cells += [f"{1 / piped[name].seconds:16.1f}" for name in kit.models]
        cells += [f"{1 / split.seconds:16.1f}" if split else f"{'n/a':>16}"]
        cells += [f"{split.seconds / piped[name].seconds:15.2f}x" if split else f"{'n/a':>16}"
                  for name in kit.models]
        print(f"  {k:>4} " + " ".join(cells) + f"  {str(ok):>7}  {max(m.error for m in every):9.1e}", flush=True)
        right = right and ok
    return right


def seeded_weights(kit) -> list[np.ndarray]:
    """The weights of a workload or placement kit, made from its seed;
    KitError unless they are the ones its reference was computed with."""
    params = model.weights(kit.stack)
    if model.digest(params) != kit.weights_sha256:
        raise KitError("the weights made here from the kit's seed differ from the ones its reference was "
                       "computed with (sha256); build the kit with this checkout's bench/model.py")
    return params


def for_this_run(kit, config: Config):
    """``kit`` (a workload or placement kit); KitError unless it was built
    for the devices of this run (--smoke or not)."""
    if kit.smoke != (config.gpu != "cuda"):
        raise KitError(f"the kit was built {'with' if kit.smoke else 'without'} --smoke; run it "
                       f"{'with' if kit.smoke else 'without'} --smoke")
    return kit


def _weights(kit: Kit) -> list[np.ndarray]:
    """The weights (seeded_weights), said with the time they took."""
    began = time.perf_counter()
    params = seeded_weights(kit)
    print(f"weights: {kit.stack.weight_bytes / 2**20:.1f} MiB of {kit.stack.dtype} made from seed {kit.stack.seed} in "
          f"{time.perf_counter() - began:.1f} s, sha256 as the kit's", flush=True)
    return params


def _describe(config: Config, kit: Kit, torch: Torch | None, why: str | None) -> None:
    s = kit.stack
    print(f"workload: {s.blocks} blocks (matmul {s.hidden}x{s.hidden}, rmsnorm, silu), hidden {s.hidden}, "
          f"vocab {s.vocab}, {s.dtype}, weights {s.layout.replace('_', ' x ')}; blocks 0..k-1 on the CPU ({CPU}), the rest and the head on the GPU "
          f"({config.gpu}); k = N: all on the CPU; execution models: {', '.join(kit.models)}; "
          f"split modules built with {kit.built_with}")
    if torch is None:
        print(f"torch: not measured ({why})")
    else:
        t = torch.module
        gpu = f"{torch.gpu} ({t.cuda.get_device_name(0)})" if torch.gpu == "cuda" else torch.gpu
        print(f"torch {t.__version__}: {t.get_num_threads()} CPU threads, its GPU {gpu}, "
              f"TF32 matmul {t.backends.cuda.matmul.allow_tf32}")


def run(config: Config, path: str, calls: int, batch_calls: int, stream_items: int = 32, depth: int = 2) -> int:
    if gpu_or_none(config) is None:
        return config.no_gpu_status()
    kit = for_this_run(read_kit(os.path.abspath(path)), config)
    torch, why = find_torch(config)
    _describe(config, kit, torch, why)
    params = _weights(kit)
    right = True
    for b in sorted(kit.batches):
        right = _table(config, kit, torch, b, params, calls if b == 1 else batch_calls) and right
    if stream_items:
        right = _stream_table(config, kit, torch, params, stream_items, depth) and right
    return verdict(right)
