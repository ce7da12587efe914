"""``bench sizes DIR``: one crossing of every size, each way, through mdc's
default path against torch's faster pageable path, with the floors stock
IREE sets in the same run, so each row says whether mdc loses to torch and,
where it does, how much of the loss stock IREE's runtime already has.

CPU->GPU columns (microseconds per call, median):

* ``torch``: the faster of ``x.cuda()`` and ``copy_`` from an existing
  pageable tensor, each followed by ``torch.cuda.synchronize()``;
* ``mdc``: ``f.call_on_devices(x)`` of bench/programs/to_gpu.mlir with x a
  numpy array (the shim places it), the result left on the GPU;
* ``placed``: the same with x placed on the CPU device beforehand;
* ``vm``: that call made with stock ``iree.runtime`` alone (a VmContext of
  the HAL module and the vmfb, the same buffer view). It is not the shim's
  cost subtracted: stock iree.runtime frees each dropped result with a
  synchronous cuMemFree, which the shim steps around
  (runtime_shim/cuda_free.py), so ``vm`` can exceed ``placed``;
* ``sync``: ``placed`` with the CPU device run by local-sync, not
  local-task (the CPU's copy on the calling thread: no worker hand-off);
* ``floor``: stock IREE's steps the lowering is made of, with the runtime
  API and no VM: a local-task queue copy into the GPU's pinned memory,
  waited for, then the GPU's queue copy out of it, waited for;
* ``dma``: the GPU's queue copy pinned -> device alone, waited for: what
  any path that starts in pinned memory pays.

GPU->CPU columns: ``torch`` (the faster of ``y.cpu()`` and ``copy_`` into
an existing pageable tensor), ``mdc`` (``f(y)``, the default API, numpy
out, y placed on the GPU beforehand, each result dropped before the next
call) and ``dma`` (queue copy device -> pinned, waited for).

A second table times the moves the shim makes itself, outside a
program, against the same torch paths: ``place`` (``Function.place`` of
an input declared on the GPU, from numpy: torch's ``x.cuda()``) and
``to_host`` (``DeviceValue.to_host()`` of a result left on the GPU:
``y.cpu()``), each through the module's pooled memory
(runtime_shim/staging.py) and, as ``alloc``, through a new pinned buffer
of the GPU's allocator per move (``values.to_device`` and
``values.to_host``, what the shim did before the pool). ``syncfree``:
``place`` through the pool with its GPU buffer from the allocator, which
cuda frees with a synchronous ``cuMemFree`` when it is dropped, where
``place`` takes it from the queue and gives it back with a queue dealloca
(runtime_shim/cuda_free.py).

Every mdc result is checked against its input. The first line says what
giving up a GPU result costs in stock IREE (``result_free_costs``).
"""

from __future__ import annotations

import os

import numpy as np

from .common import (Config, LocalDevice, RawIree, gpu_or_none, median_time, resident_call, size_name,
                     torch_rows, values_aligned)

KIB = 1 << 10
DEFAULT_SIZES = tuple(4 * KIB * 4 ** i for i in range(10))  # 4 KiB .. 1 GiB, powers of 4


def _calls(nbytes: int) -> int:
    return 200 if nbytes <= 256 * KIB else 30 if nbytes <= 16 << 20 else 5


def _torch_best(nbytes: int) -> tuple[float, float]:
    """Seconds of torch's faster pageable path each way, (h2d, d2h): the
    faster of ``x.cuda()`` and ``copy_`` from an existing pageable tensor
    (``y.cpu()`` and ``copy_`` into one); nan without torch and CUDA."""
    rows = torch_rows(nbytes, _calls(nbytes))
    if rows is None:
        return float("nan"), float("nan")
    (h2d_copy, d2h_copy), (h2d_new, d2h_new) = rows["pageable"], rows["new"]
    return min(h2d_copy, h2d_new), min(d2h_copy, d2h_new)


class _StockContext:
    """A vmfb run with stock iree.runtime alone, on devices made here."""

    def __init__(self, rt, path: str, drivers: list[str], function: str):
        self.rt = rt
        self.instance = rt.VmInstance()
        self.devices = [rt.get_driver(d).create_default_device() for d in drivers]
        hal = rt.create_hal_module(self.instance, devices=self.devices)
        self.module = rt.VmModule.mmap(self.instance, path)
        self.context = rt.VmContext(self.instance, [hal, self.module])
        self.function = self.module.lookup_function(function)

    def call(self, view) -> None:
        rt = self.rt
        args, results = rt.VmVariantList(1), rt.VmVariantList(1)
        args.push_ref(view.ref)
        self.context.invoke(self.function, args, results)


def _mdc_h2d(config: Config, kit: str, host: np.ndarray, cpu: str) -> tuple[float, float, float, bool]:
    """Seconds of to_gpu from numpy and placed, and through stock
    iree.runtime on the shim's placed view (cpu: the CPU device's driver);
    whether the result came back right."""
    from mdc.runtime_shim import load

    m = load(os.path.join(kit, "to_gpu_emplace.vmfb"), [cpu, config.gpu])
    f = m.function("to_gpu")
    reps = _calls(host.nbytes)
    placed = f.place(0, host)
    t_numpy = median_time(resident_call(f, host), reps)
    t_placed = median_time(resident_call(f, placed), reps)
    ok = bool(np.array_equal(f(host), host))
    t_vm = float("nan")
    if cpu == "local-task":
        import iree.runtime as rt

        stock = _StockContext(rt, os.path.join(kit, "to_gpu_emplace.vmfb"), [cpu, config.gpu], "to_gpu")
        view = stock.devices[0].allocator.allocate_buffer_copy(
            memory_type=int(rt.MemoryType.DEVICE_LOCAL | rt.MemoryType.HOST_VISIBLE),
            allowed_usage=int(rt.BufferUsage.DEFAULT), device=stock.devices[0], buffer=host,
            element_type=rt.HalElementType.INT_8)
        t_vm = median_time(lambda: stock.call(view), reps)
        del view, stock
    m.close()
    return t_numpy, t_placed, t_vm, ok


def _mdc_d2h(config: Config, kit: str, host: np.ndarray) -> tuple[float, bool]:
    from mdc.runtime_shim import load

    m = load(os.path.join(kit, "to_cpu_emplace.vmfb"), ["local-task", config.gpu])
    f = m.function("to_cpu")
    placed = f.place(0, host)
    t = median_time(lambda: f(placed), _calls(host.nbytes))
    ok = bool(np.array_equal(f(placed), host))
    m.close()
    return t, ok


def _shim_moves(config: Config, kit: str, host: np.ndarray) -> tuple[float, float, float, float, float, bool]:
    """Seconds of the shim's own moves of ``host`` between numpy and the
    GPU: (place, place through the allocator, place with a buffer cuda
    frees synchronously, to_host, to_host through the allocator), and
    whether every move came back right."""
    from mdc.runtime_shim import load, result_storage, staging, values

    reps = _calls(host.nbytes)
    kind = values.hal_type_for_dtype(host.dtype)
    m = load(os.path.join(kit, "to_cpu_emplace.vmfb"), ["local-task", config.gpu])
    f = m.function("to_cpu")
    gpu = m.devices[1]
    t_place = median_time(lambda: f.place(0, host).release(), reps)
    ok = True
    t_place_alloc = median_time(lambda: values.to_device(gpu, False, host, kind, False, None), reps)
    pool = result_storage.ResultPool()
    t_place_sync = median_time(lambda: staging.place(pool, 1, gpu, host, kind, None, stream_ordered=False), reps)
    ok &= bool(np.array_equal(values.to_host(gpu, staging.place(pool, 1, gpu, host, kind, None), False, None), host))
    pool.close()
    ok &= bool(np.array_equal(f(f.place(0, host)), host))
    ok &= bool(np.array_equal(values.to_host(gpu, values.to_device(gpu, False, host, kind, False, None),
                                             False, None), host))
    m.close()
    m = load(os.path.join(kit, "to_gpu_emplace.vmfb"), ["local-task", config.gpu])
    (y,) = m.function("to_gpu").call_on_devices(host)
    gpu = m.devices[1]
    t_to_host = median_time(y.to_host, reps)
    view = y.view
    t_to_host_alloc = median_time(lambda: values.to_host(gpu, view, False, None), reps)
    ok &= bool(np.array_equal(y.to_host(), host)) and bool(np.array_equal(values.to_host(gpu, view, False, None), host))
    del view, y
    m.close()
    return t_place, t_place_alloc, t_place_sync, t_to_host, t_to_host_alloc, ok


def _floors(iree: RawIree, nbytes: int) -> tuple[float, float, float]:
    """Seconds of the stock steps: (local copy into pinned then the GPU's
    copy out of it, the GPU's copy alone h2d, alone d2h)."""
    local = LocalDevice(iree.rt)
    src, pinned, dev = local.buffer(nbytes), iree.pinned(nbytes), iree.device_buffer(nbytes)
    reps = _calls(nbytes)

    def two_steps():
        local.copy(src, pinned)
        iree.copy_waited(pinned, dev)

    return (median_time(two_steps, reps), median_time(lambda: iree.copy_waited(pinned, dev), reps),
            median_time(lambda: iree.copy_waited(dev, pinned), reps))


def result_free_costs(gpu: str, nbytes: int = 1 << 20) -> dict[str, float]:
    """Seconds of a queue alloca of ``nbytes`` waited for and its buffer
    then given up, with iree.runtime alone on a new device: dropped (how a
    caller gives up a result: IREE then frees it with cuMemFree), and given
    back with a queue dealloca (how runtime_shim.cuda_free gives it up)."""
    import iree.runtime as rt

    device = rt.get_driver(gpu).create_default_device()

    def alloca():
        done = rt.HalFence.create_at(device.create_semaphore(0), 1)
        buffer = device.queue_alloca(nbytes, rt.HalFence(0), done)
        done.wait()
        return buffer

    def dealloca():
        buffer = alloca()
        done = rt.HalFence.create_at(device.create_semaphore(0), 1)
        device.queue_dealloca(buffer, rt.HalFence(0), done)
        done.wait()

    return {"dropped": median_time(alloca, 100), "given back with a queue dealloca": median_time(dealloca, 100)}


def sizes(config: Config, kit: str, byte_sizes) -> int:
    kit = os.path.abspath(kit)
    iree = gpu_or_none(config)
    if iree is None:
        return config.no_gpu_status()
    costs = result_free_costs(config.gpu)
    print("stock IREE, a 1 MiB queue alloca waited for, then: "
          + ", ".join(f"{how} {t * 1e6:.1f} us" for how, t in costs.items()))
    head = (f"{'size':>5} | {'torch':>8} {'mdc':>8} {'ratio':>6} {'placed':>8} {'vm':>8} {'sync':>8} "
            f"{'floor':>8} {'dma':>8} {'flr/tch':>7} | {'torch':>8} {'mdc':>8} {'ratio':>6} {'dma':>8}  correct")
    print("one crossing of each size, us per call (median); ratio: torch's time / mdc's (>= 1: mdc as fast "
          "or faster); flr/tch: stock IREE's floor / torch")
    print(f"{'':>5} | {'CPU -> GPU':^88} | {'GPU -> CPU':^34}")
    print(head, flush=True)
    moves = []
    for n in byte_sizes:
        host = values_aligned(n)
        torch_up, torch_down = _torch_best(n)
        moves.append((n, torch_up, torch_down, _shim_moves(config, kit, host)))
        numpy_up, placed_up, vm_up, ok_up = _mdc_h2d(config, kit, host, "local-task")
        _, sync_up, _, ok_sync = _mdc_h2d(config, kit, host, "local-sync")
        down, ok_down = _mdc_d2h(config, kit, host)
        floor_up, dma_up, dma_down = _floors(iree, n)
        us = [t * 1e6 for t in (torch_up, numpy_up, placed_up, vm_up, sync_up, floor_up, dma_up)]
        print(f"{size_name(n):>5} | {us[0]:8.1f} {us[1]:8.1f} {torch_up / numpy_up:6.2f} {us[2]:8.1f} {us[3]:8.1f} "
              f"{us[4]:8.1f} {us[5]:8.1f} {us[6]:8.1f} {floor_up / torch_up:7.2f} | {torch_down * 1e6:8.1f} "
              f"{down * 1e6:8.1f} {torch_down / down:6.2f} {dma_down * 1e6:8.1f}  {ok_up and ok_sync and ok_down}",
              flush=True)
    print("\nthe shim's own moves, us per call (median); ratio: torch's time / the shim's")
    print(f"{'size':>5} | {'torch':>8} {'place':>8} {'ratio':>6} {'alloc':>8} {'syncfree':>8} | "
          f"{'torch':>8} {'to_host':>8} {'ratio':>6} {'alloc':>8}  correct")
    for n, torch_up, torch_down, (place, place_alloc, place_sync, to_host, to_host_alloc, ok) in moves:
        print(f"{size_name(n):>5} | {torch_up * 1e6:8.1f} {place * 1e6:8.1f} {torch_up / place:6.2f} "
              f"{place_alloc * 1e6:8.1f} {place_sync * 1e6:8.1f} | {torch_down * 1e6:8.1f} {to_host * 1e6:8.1f} "
              f"{torch_down / to_host:6.2f} {to_host_alloc * 1e6:8.1f}  {ok}", flush=True)
    return 0
