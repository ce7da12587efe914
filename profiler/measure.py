"""Measuring one device through the stock runtime (iree.runtime): the probe
module (probes.py) compiled for the device's kind, each function timed
with its arguments already on the device, and the crossings to and from
the host timed with the runtime's own buffer transfers.

How each number is made (every time is a median of repeated runs):

* seconds per dispatch: (@chain - @tiny) / (CHAIN_LENGTH - 1), @chain
  being CHAIN_LENGTH dependent 4 x 4 matmuls in one command buffer and @tiny
  one (@chain / CHAIN_LENGTH where noise makes @chain no slower): a dispatch
  inside a call's command buffer, as a placed program's units run;
* seconds per call: @tiny less one dispatch: what a call that runs any
  work costs before its dispatches (on cuda, building, submitting and
  waiting for a command buffer: most of IREE's ~130 us); at least
  @identity, a call that returns its argument and runs nothing;
* a probe's kernel time: its call less @tiny (at least a tenth of the
  call, so that noise cannot make a rate infinite); a matmul's flops/s is
  2 N^3 over it, every other rate bytes read and written over it; the
  MATVEC_LAYERS 1 x K by K x K matmuls in a row give the matmul class's
  bytes/s;
* host->device: the bytes copied into a pinned (host-local,
  device-visible) buffer, then the device's queue copy into device memory,
  waited for (what a staged crossing of an argument in CPU memory does);
  device->host: the device's queue copy into a pinned buffer, waited for
  (the result lands there, as mdc's result storage does). Latency: the
  4-byte transfer; bandwidth: the extra bytes of the large transfer over
  its extra time.

A device's memory, and what opening it costs, open_cost.py measures.
"""

from __future__ import annotations

import itertools
import statistics
import time
from typing import Callable

import numpy as np

import iree.runtime as rt

from mdc.contract.machine_profile import BYTE_CLASSES, CrossingCosts, DeviceCosts

from . import probes


class Timer:
    """Runs a body until ``seconds`` have passed (and at least
    ``min_runs`` times) after one warm-up run; the median time."""

    def __init__(self, seconds: float, min_runs: int):
        self.seconds = seconds
        self.min_runs = min_runs

    def median(self, body: Callable[[], object]) -> float:
        body()
        times: list[float] = []
        spent = 0.0
        while len(times) < self.min_runs or spent < self.seconds:
            start = time.perf_counter()
            body()
            times.append(time.perf_counter() - start)
            spent += times[-1]
        return statistics.median(times)


def compile_probes(kind: str, sizes: probes.ProbeSizes, target_cpu: str = "host") -> bytes:
    """The probe module for one device of ``kind``, compiled by
    iree.compiler (imported here: measuring needs only the runtime)
    with probes.compile_flags(kind, target_cpu)."""
    import iree.compiler as compiler

    text = probes.program(sizes, f16=kind not in probes.NO_F16_MATMUL)
    return compiler.compile_str(text, extra_args=list(probes.compile_flags(kind, target_cpu)))


class DeviceProbe:
    """One opened device of kind ``kind``, measured with probe sizes
    ``sizes`` by ``vmfb``, compile_probes's module for them."""

    def __init__(self, device: rt.HalDevice, kind: str, sizes: probes.ProbeSizes, timer: Timer, vmfb: bytes):
        self.device = device
        self.kind = kind
        self.sizes = sizes
        self.timer = timer
        self.f16 = kind not in probes.NO_F16_MATMUL
        config = rt.Config(device=device)
        module = rt.VmModule.copy_buffer(config.vm_instance, vmfb)
        self.functions = rt.SystemContext(vm_modules=[module], config=config).modules.module

    def costs(self) -> DeviceCosts:
        """The device's DeviceCosts, its memory unknown (DeviceMemory
        measures that)."""
        per_call = self.time_call("identity", [np.ones(4, np.float32)])
        step = [np.full(probes.STEP_SHAPE, 0.25, np.float32)] * 2
        tiny = self.time_call("tiny", step)
        chain = self.time_call("chain", step)
        dispatch = per_dispatch(tiny, chain)
        work = probes.work_of(self.sizes)

        def kernel(name: str, arguments: list[np.ndarray]) -> float:
            call = self.time_call(name, arguments)
            return max(call - tiny, call / 10)

        n, k, s = self.sizes.matmul, self.sizes.matvec, self.sizes
        rng = np.random.default_rng(0)
        f32 = work["matmul_f32"].flops / kernel("matmul_f32", [_random(rng, (n, n))] * 2)
        f16 = (work["matmul_f16"].flops / kernel("matmul_f16", [_random(rng, (n, n), np.float16)] * 2)
               if self.f16 else f32)
        table = _random(rng, (s.table_rows, s.columns))
        ids = rng.integers(0, s.table_rows, s.gathered, dtype=np.int64)
        matrix = _random(rng, (s.rows, s.columns))
        rates = {
            "matmul": work["matvec_f32"].bytes / kernel(
                "matvec_f32", [_random(rng, (1, k)), *(_random(rng, (k, k)) for _ in range(probes.MATVEC_LAYERS))]),
            "elementwise": work["elementwise"].bytes / kernel("elementwise", [_random(rng, (s.elements,))]),
            "reduction": work["reduction"].bytes / kernel("reduction", [matrix]),
            "gather": work["gather"].bytes / kernel("gather", [table, ids]),
            "copy": work["copy"].bytes / kernel("copy", [matrix]),
        }
        assert set(rates) == set(BYTE_CLASSES)
        return DeviceCosts(matmul_flops_per_s={"f32": f32, "f16": f16, "other": min(f32, f16)},
                           bytes_per_s=rates, seconds_per_dispatch=dispatch,
                           seconds_per_call=max(tiny - dispatch, per_call))

    def time_call(self, name: str, arguments: list[np.ndarray], once: bool = False) -> float:
        """The median seconds of one call of ``name``, its arguments placed
        on the device beforehand (``once``: one call, untimed, 0)."""
        if once:
            self.functions[name](*[rt.asdevicearray(self.device, a) for a in arguments])
            return 0.0
        return self.time_calls(name, [arguments])

    def time_calls(self, name: str, argument_sets: list[list[np.ndarray]]) -> float:
        """The median seconds of one call of ``name``, each call reading
        the next of ``argument_sets`` in turn, every set placed on the
        device beforehand."""
        placed = itertools.cycle([[rt.asdevicearray(self.device, a) for a in arguments]
                                  for arguments in argument_sets])
        function = self.functions[name]
        return self.timer.median(lambda: function(*next(placed)))

    def crossings(self) -> tuple[CrossingCosts, CrossingCosts]:
        """(host->device, device->host)."""
        small, large = 4, self.sizes.transfer
        to_device = _line(small, self.time_transfer(small, to_device=True),
                          large, self.time_transfer(large, to_device=True))
        to_host = _line(small, self.time_transfer(small, to_device=False),
                        large, self.time_transfer(large, to_device=False))
        return to_device, to_host

    def time_transfer(self, nbytes: int, to_device: bool) -> float:
        return time_transfer(self.device, self.timer, nbytes, to_device)


def time_transfer(device: rt.HalDevice, timer: Timer, nbytes: int, to_device: bool) -> float:
    """The median seconds of one crossing of ``nbytes`` between the host
    and ``device``: into it (``to_device``) or out of it (the module's doc)."""
    allocator = device.allocator
    pinned = allocator.allocate_buffer(
        memory_type=int(rt.MemoryType.HOST_LOCAL | rt.MemoryType.DEVICE_VISIBLE),
        allowed_usage=int(rt.BufferUsage.TRANSFER | rt.BufferUsage.MAPPING_SCOPED), allocation_size=nbytes)
    on_device = allocator.allocate_buffer(memory_type=int(rt.MemoryType.DEVICE_LOCAL),
                                          allowed_usage=int(rt.BufferUsage.DEFAULT), allocation_size=nbytes)
    mapped = pinned.map().asarray((nbytes,), np.dtype(np.uint8))
    source = np.ones(nbytes, np.uint8)
    semaphore = device.create_semaphore(0)
    step = [0]

    def copy_and_wait(src, dst):
        wait = rt.HalFence.create_at(semaphore, step[0])
        step[0] += 1
        signal = rt.HalFence.create_at(semaphore, step[0])
        device.queue_copy(src, dst, wait_semaphores=wait, signal_semaphores=signal)
        signal.wait()

    def upload():
        np.copyto(mapped, source)
        copy_and_wait(pinned, on_device)

    return timer.median(upload if to_device else lambda: copy_and_wait(on_device, pinned))


def per_dispatch(tiny: float, chain: float) -> float:
    """One more dispatch's seconds: @chain's extra time over @tiny's per
    extra dispatch; where noise makes @chain no slower (a loaded machine),
    @chain's whole time per dispatch, an upper bound that includes the call."""
    extra = chain - tiny
    return extra / (probes.CHAIN_LENGTH - 1) if extra > 0 else chain / probes.CHAIN_LENGTH


def _line(small: int, small_s: float, large: int, large_s: float) -> CrossingCosts:
    """Latency and bandwidth through two (bytes, seconds) points; where
    noise makes the large transfer no slower, its bytes over its whole time."""
    extra = large_s - small_s
    bandwidth = (large - small) / extra if extra > 0 else large / large_s
    return CrossingCosts(latency_s=small_s, bytes_per_s=bandwidth)


def _random(rng: np.random.Generator, shape: tuple[int, ...], dtype=np.float32) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)
