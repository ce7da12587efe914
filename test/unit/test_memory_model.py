"""The memory model alone (passes/analysis/memory_model.py): which device pairs
share memory and which stage through the host, who owns the staging
memory, what --link overrides change, and when two models are one."""

from __future__ import annotations

import pytest

from mdc.contract.manifest_record import Device
from mdc.passes.infra.diagnostics import MdcError
from mdc.passes.analysis.memory_model import MemoryModel


def _devices(*specs: str) -> dict[str, Device]:
    """``name=driver`` each, in order."""
    out = {}
    for i, spec in enumerate(specs):
        name, driver = spec.split("=")
        out[name] = Device(name, driver, i)
    return out


def _link(a: str, b: str, mode: str, owner: str | None = None) -> dict:
    return {frozenset((a, b)): (mode, owner, f"{a}:{b}={mode}")}


def test_shared_pairs():
    model = MemoryModel(_devices("cpu=local", "cpu2=local", "g1=cuda", "g2=cuda"))
    for a, b in [("cpu", "cpu"), ("cpu", "cpu2"), ("g1", "g2"), ("g2", "g1")]:
        assert model.policy(a, b).mode == "shared", (a, b)
    assert not model.policy("cpu", "cpu2").is_staged


def test_cpu_and_gpu_are_staged_both_ways_the_gpu_owning_the_memory():
    model = MemoryModel(_devices("cpu=local", "gpu=vulkan"))
    there, back = model.policy("cpu", "gpu"), model.policy("gpu", "cpu")
    assert (there.mode, there.owner) == ("staged", "gpu")
    assert (back.mode, back.owner) == ("staged", "gpu")
    assert [(s, d) for s, d, _ in model.staged_pairs()] == [("cpu", "gpu"), ("gpu", "cpu")]
    assert model.anything_staged and model.needs_staging


def test_gpus_of_two_drivers_stage_via_the_first_local_device():
    model = MemoryModel(_devices("a=cuda", "h1=local", "b=vulkan", "h2=local"))
    policy = model.policy("a", "b")
    assert (policy.mode, policy.via, policy.owner) == ("staged-via-host", "h1", None)
    assert policy.is_staged


def test_gpus_of_two_drivers_without_a_local_device():
    model = MemoryModel(_devices("a=cuda", "b=vulkan"))
    with pytest.raises(MdcError, match="declares no local device"):
        model.policy("a", "b")
    # No pair can be staged, yet the module needs staging (and fails at its
    # first crossing).
    assert model.staged_pairs() == []
    assert not model.anything_staged
    assert model.needs_staging


def test_all_shared_needs_no_staging():
    model = MemoryModel(_devices("a=local", "b=local", "c=local"))
    assert model.staged_pairs() == [] and not model.anything_staged and not model.needs_staging


def test_undeclared_device_is_an_error():
    model = MemoryModel(_devices("a=local", "b=cuda"))
    with pytest.raises(MdcError, match="'nowhere', which the module does not declare"):
        model.policy("a", "nowhere")


def test_link_forces_staging_with_its_owner():
    model = MemoryModel(_devices("a=local", "b=local"), _link("a", "b", "staged", "b"))
    for src, dst in [("a", "b"), ("b", "a")]:
        policy = model.policy(src, dst)
        assert (policy.mode, policy.owner) == ("staged", "b")
        assert "--link" in policy.reason
    assert model.anything_staged


def test_link_shared_on_a_sharing_pair_stands():
    model = MemoryModel(_devices("g1=cuda", "g2=cuda"), _link("g1", "g2", "shared"))
    assert model.policy("g1", "g2").reason == "forced by --link"


def test_link_shared_across_memories_is_refused():
    with pytest.raises(MdcError, match="--link=a:b=shared is impossible"):
        MemoryModel(_devices("a=local", "b=cuda"), _link("a", "b", "shared"))


def test_link_to_a_device_the_module_dropped_governs_nothing():
    # IREE dropped device c: its override is left out, even an impossible one.
    links = {**_link("a", "c", "shared"), **_link("a", "b", "staged", "a")}
    model = MemoryModel(_devices("a=local", "b=local"), links)
    assert list(model.overrides) == [frozenset(("a", "b"))]
    assert model.policy("a", "b").owner == "a"


def test_key_is_names_drivers_order_and_governing_links():
    devices = _devices("a=local", "b=cuda")
    moved = {n: Device(n, d.kind, d.ordinal + 5, location="elsewhere") for n, d in devices.items()}
    assert MemoryModel.key(devices) == MemoryModel.key(moved)
    assert MemoryModel.key(devices) != MemoryModel.key(dict(reversed(list(devices.items()))))
    assert MemoryModel.key(devices) != MemoryModel.key(_devices("a=local", "b=vulkan"))
    forced = _link("a", "b", "staged", "a")
    assert MemoryModel.key(devices) != MemoryModel.key(devices, forced)
    assert MemoryModel.key(devices) == MemoryModel.key(devices, _link("a", "gone", "staged", "a"))


def test_staged_pairs_are_computed_once():
    model = MemoryModel(_devices("cpu=local", "gpu=cuda"))
    calls = []
    policy = model.policy
    model.policy = lambda s, d: calls.append((s, d)) or policy(s, d)
    model.staged_pairs()
    model.staged_pairs()
    assert model.anything_staged
    assert calls == [("cpu", "gpu"), ("gpu", "cpu")]
