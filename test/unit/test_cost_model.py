"""The placement cost model (passes/assignment/cost_model.py): seconds of a
unit, a crossing and a call from a machine profile, by the formulas its
docstring and docs/DESIGN.md state."""

from __future__ import annotations

import pytest

from mdc.contract.machine_profile import (BYTE_CLASSES, CrossingCosts, DeviceCosts, MachineProfile,
                                          ProfileError, Provenance, default_profile)
from mdc.passes.assignment.cost_model import CostModel
from mdc.passes.assignment.work_graph import Unit

SOURCE = Provenance("test", "2026-12-06", "by hand")


def _device(flops: float, bytes_per_s: float, dispatch: float, call: float) -> DeviceCosts:
    return DeviceCosts(matmul_flops_per_s={"f32": flops, "f16": 2 * flops, "other": flops / 2},
                       bytes_per_s={c: bytes_per_s * (i + 1) for i, c in enumerate(BYTE_CLASSES)},
                       seconds_per_dispatch=dispatch, seconds_per_call=call)


def _profile() -> MachineProfile:
    return MachineProfile(
        devices={"local": _device(1e10, 1e9, 1e-6, 2e-6), "cuda": _device(1e12, 1e11, 5e-6, 1e-4),
                 "vulkan": _device(1e11, 1e10, 2e-5, 1e-5)},
        crossings={("local", "cuda"): CrossingCosts(3e-5, 2e10), ("cuda", "local"): CrossingCosts(4e-5, 4e10),
                   ("local", "vulkan"): CrossingCosts(1e-5, 1e9), ("vulkan", "local"): CrossingCosts(2e-5, 2e9),
                   ("local", "local"): CrossingCosts(6e-6, 3e9)},
        source=SOURCE)


def _unit(op_class="matmul", dtype="f32", flops=0, nbytes=0) -> Unit:
    return Unit(id=0, label="u", op_class=op_class, dtype=dtype, flops=flops, bytes_moved=nbytes)


CPU_GPU = {"cpu": "local", "gpu": "cuda"}


def test_a_unit_is_a_dispatch_plus_the_slower_of_arithmetic_and_memory():
    model = CostModel.of(_profile(), CPU_GPU)
    compute_bound = _unit(flops=2 * 10 ** 9, nbytes=10 ** 6)  # 0.2 s of arithmetic on the CPU, 1 ms of bytes
    assert model.unit_seconds(compute_bound, "cpu") == pytest.approx(1e-6 + 0.2)
    assert model.unit_seconds(compute_bound, "gpu") == pytest.approx(5e-6 + 2e-3)
    memory_bound = _unit(flops=10 ** 6, nbytes=10 ** 9)  # matmul class: the first bytes rate
    assert model.unit_seconds(memory_bound, "cpu") == pytest.approx(1e-6 + 1.0)


def test_the_dtype_picks_the_matmul_rate():
    model = CostModel.of(_profile(), CPU_GPU)
    assert model.unit_seconds(_unit(dtype="f16", flops=10 ** 10), "cpu") == pytest.approx(1e-6 + 0.5)
    assert model.unit_seconds(_unit(dtype="i8", flops=10 ** 10), "cpu") == pytest.approx(1e-6 + 2.0)


@pytest.mark.parametrize("index, op_class", list(enumerate(BYTE_CLASSES)))
def test_each_class_has_its_own_bytes_rate(index, op_class):
    model = CostModel.of(_profile(), CPU_GPU)
    assert model.unit_seconds(_unit(op_class, nbytes=10 ** 9), "cpu") == pytest.approx(1e-6 + 1.0 / (index + 1))


def test_a_view_costs_nothing():
    model = CostModel.of(_profile(), CPU_GPU)
    assert model.unit_seconds(_unit("view", flops=10 ** 9, nbytes=10 ** 9), "cpu") == 0.0


def test_a_crossing_is_latency_plus_bytes_over_bandwidth_and_nothing_on_one_device():
    model = CostModel.of(_profile(), CPU_GPU)
    assert model.crossing_seconds(2 * 10 ** 9, "cpu", "gpu") == pytest.approx(3e-5 + 0.1)
    assert model.crossing_seconds(4 * 10 ** 9, "gpu", "cpu") == pytest.approx(4e-5 + 0.1)
    assert model.crossing_seconds(10 ** 9, "gpu", "gpu") == 0.0
    assert model.crossing_seconds(0, "cpu", "gpu") == pytest.approx(3e-5)


def test_two_local_devices_pay_a_host_copy():
    model = CostModel.of(_profile(), {"cpu": "local", "cpu2": "local"})
    assert model.crossing_seconds(3 * 10 ** 9, "cpu", "cpu2") == pytest.approx(6e-6 + 1.0)


def test_two_accelerators_cross_through_the_host():
    model = CostModel.of(_profile(), {"gpu": "cuda", "vk": "vulkan"})
    assert model.crossing_seconds(4 * 10 ** 9, "gpu", "vk") == pytest.approx(4e-5 + 0.1 + 1e-5 + 4.0)
    with_pair = MachineProfile(devices=_profile().devices,
                               crossings={**_profile().crossings, ("cuda", "vulkan"): CrossingCosts(1e-6, 1e12)},
                               source=SOURCE)
    direct = CostModel.of(with_pair, {"gpu": "cuda", "vk": "vulkan"})
    assert direct.crossing_seconds(10 ** 12, "gpu", "vk") == pytest.approx(1e-6 + 1.0)


def test_call_seconds_are_the_devices_fixed_cost():
    model = CostModel.of(_profile(), CPU_GPU)
    assert model.call_seconds("cpu") == 2e-6 and model.call_seconds("gpu") == 1e-4


def test_a_name_overrides_its_kind_on_a_cpu_pair():
    fast = _device(1e13, 1e12, 1e-7, 1e-7)
    profile = MachineProfile(devices={**_profile().devices, "gpu": fast},
                             crossings={**_profile().crossings, ("local", "gpu"): CrossingCosts(1e-7, 1e12)},
                             source=SOURCE)
    model = CostModel.of(profile, {"cpu": "local", "gpu": "local"})
    work = _unit(flops=10 ** 10)
    assert model.unit_seconds(work, "gpu") == pytest.approx(1e-7 + 1e-3)
    assert model.unit_seconds(work, "cpu") == pytest.approx(1e-6 + 1.0)
    assert model.crossing_seconds(10 ** 12, "cpu", "gpu") == pytest.approx(1e-7 + 1.0)
    assert model.crossing_seconds(3 * 10 ** 9, "gpu", "cpu") == pytest.approx(6e-6 + 1.0)  # local->local


def test_a_device_or_crossing_the_profile_lacks_is_a_profile_error():
    with pytest.raises(ProfileError, match=r"no entry for device 'npu' \(kind hip\)"):
        CostModel.of(_profile(), {"cpu": "local", "npu": "hip"})
    lacking = MachineProfile(devices=_profile().devices, crossings={("local", "cuda"): CrossingCosts(1e-5, 1e9)},
                             source=SOURCE)
    with pytest.raises(ProfileError, match="no crossing from cuda to local"):
        CostModel.of(lacking, CPU_GPU)


def test_the_model_is_deterministic_and_the_default_profile_serves_every_pair():
    devices = {"cpu": "local", "gpu": "cuda"}
    a, b = CostModel.of(default_profile(), devices), CostModel.of(default_profile(), dict(reversed(devices.items())))
    unit = _unit(flops=2 * 32 * 2048 * 2048, nbytes=3 * 2048 * 2048 * 4)
    assert a == b and a.unit_seconds(unit, "gpu") == b.unit_seconds(unit, "gpu")
    for kinds in ({"c": "local", "g": "cuda"}, {"c": "local", "g": "vulkan"}, {"c": "local", "g": "hip"},
                  {"c": "local", "g": "local"}):
        model = CostModel.of(default_profile(), kinds)
        assert model.crossing_seconds(1 << 20, "c", "g") > 0 and model.crossing_seconds(1 << 20, "g", "c") > 0
    # By the default numbers, a 32x2048x2048 f32 matmul is far faster on cuda than on this CPU.
    assert a.unit_seconds(unit, "gpu") * 10 < a.unit_seconds(unit, "cpu")
