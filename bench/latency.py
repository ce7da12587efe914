"""``bench latency DIR``: the seed program's per-call latency by CPU driver,
in interleaved rounds, against stock IREE's cuda+cuda and local+local
modules (and a baseline kit's mdc modules, when given); and the same with
its size known at run time only (``seed_dynamic``), whose small CPU -> GPU
crossing the helpers read in place at run time; with ``--dynamic-sizes``,
the seed_dynamic rows again at each of those sizes, where its crossings
are no longer small."""

from __future__ import annotations

import os
import statistics

import numpy as np

from .common import STAGINGS, Config, gpu_or_none, median_time, resident_call, size_name


DYNAMIC = ", size at run time"  # the rows of seed_dynamic


def _seed_result(name: str, x: np.ndarray) -> np.ndarray:
    """What module ``name`` (the seed, or seed_dynamic) computes from ``x``."""
    if name.startswith("seed_dynamic"):
        return 2 * x * x
    return x * np.arange(4, dtype=np.float32) * np.arange(4, 8, dtype=np.float32)


def seed_latency(kit: str, name: str, devices: list[str], calls: int = 300, elements: int = 4) -> float:
    """Median seconds per call of the seed program in ``kit``/``name``, its
    argument placed and its result left on its device; its result checked.
    ``elements``: the argument's length (the static seed takes 4 only)."""
    from mdc.runtime_shim import load

    m = load(os.path.join(kit, name), devices)
    f = m.function("multi_device_mul")
    x = np.arange(10, 10 + elements, dtype=np.float32) % 1000
    out = f(x)
    assert np.array_equal(out, _seed_result(name, x)), (name, out[:8])
    t = median_time(resident_call(f, f.place(0, x)), calls, warmup=min(20, calls))
    m.close()
    return t


def _configs(config: Config, kit: str, baseline: str | None) -> dict[str, tuple]:
    """Row name -> (kit, module, runtime devices)."""
    gpu = config.gpu
    configs = {
        **{f"mdc {cpu}+{gpu}, {staging}": (kit, f"seed_mdc_{staging}.vmfb", [cpu, gpu])
           for cpu in ("local-task", "local-sync") for staging in STAGINGS},
        **{f"mdc local-task+{gpu}, {staging}{DYNAMIC}": (kit, f"seed_dynamic_mdc_{staging}.vmfb", ["local-task", gpu])
           for staging in STAGINGS},
        f"stock {gpu}+{gpu}": (kit, "seed_cuda_cuda.vmfb", [gpu, gpu]),
        f"stock {gpu}+{gpu}{DYNAMIC}": (kit, "seed_dynamic_cuda_cuda.vmfb", [gpu, gpu]),
        "stock local-task+local-task": (kit, "seed_local_local.vmfb", ["local-task", "local-task"]),
        "stock local-sync+local-sync": (kit, "seed_local_local.vmfb", ["local-sync", "local-sync"]),
    }
    if baseline:
        folder = os.path.abspath(baseline)
        for staging in STAGINGS:
            for module, tail in ((f"seed_mdc_{staging}.vmfb", ""), (f"seed_dynamic_mdc_{staging}.vmfb", DYNAMIC)):
                if os.path.isfile(os.path.join(folder, module)):  # (an older kit may lack the dynamic seed)
                    configs[f"baseline mdc local-task+{gpu}, {staging}{tail}"] = (folder, module, ["local-task", gpu])
    return configs


def latency(config: Config, kit: str, rounds: int, calls: int, baseline: str | None = None,
            dynamic_sizes: list[int] = ()) -> int:
    """The seed program's call latency by CPU driver, in interleaved rounds;
    ``baseline``: a kit built from another commit, whose mdc modules are
    measured in the same rounds (before/after a change, side by side);
    ``dynamic_sizes``: bytes per value at which the seed_dynamic rows are
    measured again (fewer calls where a call moves much)."""
    kit = os.path.abspath(kit)
    if gpu_or_none(config) is None:
        return config.no_gpu_status()
    gpu = config.gpu
    configs = _configs(config, kit, baseline)
    stock = f"stock {gpu}+{gpu}"
    per_round = _interleaved(configs, list(configs), rounds, calls)
    print(f"\nseed program (4xf32) per call: median over {rounds} rounds of the median of {calls} calls, us")
    print(f"  {'':64} {'median':>8} {'min':>8} {'max':>8} {'/ stock ' + gpu + '+' + gpu:>16} (same program)")
    _rows(per_round, lambda name: per_round[stock + DYNAMIC if name.endswith(DYNAMIC) else stock])  # the same program's
    for nbytes in dynamic_sizes:
        names = [name for name in configs if name.endswith(DYNAMIC)]
        sized_calls = max(5, min(calls, (64 << 20) // nbytes))
        per_round = _interleaved(configs, names, rounds, sized_calls, elements=max(1, nbytes // 4))
        print(f"\nseed_dynamic with {size_name(nbytes)} per value: median over {rounds} rounds of the median of "
              f"{sized_calls} calls, us")
        print(f"  {'':64} {'median':>8} {'min':>8} {'max':>8} {'/ stock ' + gpu + '+' + gpu:>16}")
        _rows(per_round, lambda name: per_round[stock + DYNAMIC])
    return 0


def _interleaved(configs: dict[str, tuple], names: list[str], rounds: int, calls: int,
                 elements: int = 4) -> dict[str, list[float]]:
    """Row name -> seconds per call in each round, for ``names`` of
    ``configs``, a different one first each round."""
    per_round = {name: [] for name in names}
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            per_round[name].append(seed_latency(*configs[name], calls, elements=elements))
    return per_round


def _rows(per_round: dict[str, list[float]], reference) -> None:
    """A row per name: median, min, max (us) and the median ratio to
    ``reference(name)``'s times in the same rounds."""
    for name, t in per_round.items():
        ratio = statistics.median(a / b for a, b in zip(t, reference(name)))
        print(f"  {name:64} {statistics.median(t) * 1e6:8.1f} {min(t) * 1e6:8.1f} {max(t) * 1e6:8.1f} {ratio:15.2f}x")
