"""The machine profile format (contract/machine_profile.py): a profile
survives to_json/from_json, every malformed file is one ProfileError line
naming the file and what is wrong, names override kinds, and the built-in
default profile has every number for every kind it promises."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest

from mdc.contract.machine_profile import (BYTE_CLASSES, MATMUL_DTYPES, CrossingCosts, DeviceCosts,
                                          MachineProfile, ProfileError, Provenance, default_profile,
                                          load_profile)
from mdc.passes.infra.diagnostics import MdcError


def _device(scale: float = 1.0, dispatch: float = 1e-6, call: float = 1e-5, memory=None) -> DeviceCosts:
    return DeviceCosts(matmul_flops_per_s={"f32": 1e11 * scale, "f16": 2e11 * scale, "other": 5e10 * scale},
                       bytes_per_s={c: 1e10 * scale for c in BYTE_CLASSES},
                       seconds_per_dispatch=dispatch, seconds_per_call=call, memory_bytes=memory)


def _profile() -> MachineProfile:
    return MachineProfile(
        devices={"local": _device(), "cuda": _device(100, 5e-6, 1.3e-4, 80 << 30), "gpu": _device(10)},
        crossings={("local", "cuda"): CrossingCosts(3.5e-5, 2.7e10), ("cuda", "local"): CrossingCosts(3.5e-5, 5e10),
                   ("local", "local"): CrossingCosts(6e-6, 3e9)},
        source=Provenance("test machine", "2026-12-06", "by hand"))


def _document() -> dict:
    return json.loads(_profile().to_json())


def _write(tmp_path, document) -> str:
    path = tmp_path / "machine.json"
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    return str(path)


def test_round_trip_through_json_and_a_file(tmp_path):
    profile = _profile()
    assert MachineProfile.from_json(profile.to_json()) == profile
    assert load_profile(_write(tmp_path, profile.to_json())) == profile
    assert load_profile(_write(tmp_path, profile.to_json())).devices["cuda"].memory_bytes == 80 << 30


def test_profile_error_is_an_mdc_error_of_one_line():
    assert issubclass(ProfileError, MdcError)


def _error(tmp_path, document) -> str:
    path = _write(tmp_path, document)
    with pytest.raises(ProfileError) as e:
        load_profile(path)
    message = e.value.message
    assert "\n" not in message and message.startswith(f"machine profile {path}: "), message
    return message[len(f"machine profile {path}: "):]


def test_a_missing_file(tmp_path):
    with pytest.raises(ProfileError, match=r"machine profile .*nothere.json: no such file$"):
        load_profile(str(tmp_path / "nothere.json"))


def test_not_json(tmp_path):
    assert _error(tmp_path, "{not json").startswith("not JSON (line 1")
    assert _error(tmp_path, "[1, 2]") == "the profile is not a JSON object"


def test_another_format_or_version(tmp_path):
    doc = _document()
    doc["version"] = 2
    assert _error(tmp_path, doc) == "format version 2, this mdc reads version 1"
    doc = _document()
    doc["format"] = "something else"
    assert "not a machine profile" in _error(tmp_path, doc)


@pytest.mark.parametrize("path", [
    ("source",), ("source", "date"), ("devices",), ("crossings",), ("devices", "local", "seconds_per_call"),
    ("devices", "cuda", "seconds_per_dispatch"), ("devices", "local", "matmul_flops_per_s"),
    ("devices", "local", "matmul_flops_per_s", "f16"), ("devices", "gpu", "bytes_per_s", "gather"),
])
def test_every_missing_field_is_named(tmp_path, path):
    doc = _document()
    entry = doc
    for key in path[:-1]:
        entry = entry[key]
    del entry[path[-1]]
    assert _error(tmp_path, doc) == f"missing field {'.'.join(path)}"


def test_a_missing_crossing_field_is_named(tmp_path):
    doc = _document()
    del doc["crossings"][1]["latency_s"]
    assert _error(tmp_path, doc) == "missing field crossings[1].latency_s"


@pytest.mark.parametrize("value, why", [(-1e-6, "is negative (-1e-06)"), ("fast", "is not a finite number ('fast')"),
                                        (True, "is not a finite number (True)")])
def test_a_negative_or_wrong_number(tmp_path, value, why):
    doc = _document()
    doc["devices"]["cuda"]["seconds_per_call"] = value
    assert _error(tmp_path, doc) == f"devices.cuda.seconds_per_call {why}"


def test_a_rate_of_zero_and_a_negative_crossing(tmp_path):
    doc = _document()
    doc["devices"]["local"]["bytes_per_s"]["copy"] = 0
    assert _error(tmp_path, doc) == "devices.local.bytes_per_s.copy is 0 (a rate must be positive)"
    doc = _document()
    doc["crossings"][0]["bytes_per_s"] = -5
    assert _error(tmp_path, doc) == "crossings[0].bytes_per_s is negative (-5)"
    doc = _document()
    doc["devices"]["local"]["seconds_per_dispatch"] = 0  # a fixed cost may be 0
    assert load_profile(_write(tmp_path, doc)).devices["local"].seconds_per_dispatch == 0


def test_a_name_overrides_its_kind():
    profile = _profile()
    assert profile.device("gpu", "local") is profile.devices["gpu"]  # the CPU pair's second device, made fast
    assert profile.device("cpu", "local") is profile.devices["local"]
    assert profile.device("x", "vulkan") is None
    assert profile.crossing(("cpu", "local"), ("gpu", "local")) == CrossingCosts(6e-6, 3e9)
    named = MachineProfile(devices=profile.devices,
                           crossings={**profile.crossings, ("local", "gpu"): CrossingCosts(1e-6, 1e12)},
                           source=profile.source)
    assert named.crossing(("cpu", "local"), ("gpu", "local")) == CrossingCosts(1e-6, 1e12)
    assert named.crossing(("gpu", "local"), ("cpu", "local")) == CrossingCosts(6e-6, 3e9)


def test_other_dtypes_use_the_other_rate():
    d = _device()
    assert d.flops_rate("f32") == 1e11 and d.flops_rate("f16") == 2e11
    assert d.flops_rate("i8") == d.flops_rate("bf16") == 5e10


def test_the_default_profile_is_complete():
    profile = default_profile()
    assert profile.source.machine and profile.source.date and profile.source.tool
    for kind in ("local", "cuda", "vulkan", "hip"):
        d = profile.devices[kind]
        for dtype in MATMUL_DTYPES:
            assert math.isfinite(d.matmul_flops_per_s[dtype]) and d.matmul_flops_per_s[dtype] > 0, (kind, dtype)
        for op_class in BYTE_CLASSES:
            assert math.isfinite(d.bytes_per_s[op_class]) and d.bytes_per_s[op_class] > 0, (kind, op_class)
        assert 0 < d.seconds_per_dispatch < 1e-3 and 0 < d.seconds_per_call < 1e-2, kind
        for pair in (("local", kind), (kind, "local")):
            c = profile.crossings[pair]
            assert 0 < c.latency_s < 1e-1 and c.bytes_per_s > 1e8, pair
    # The numbers docs/DESIGN.md cites: IREE's ~130 us a call on cuda, its f16 matmul faster than f32.
    assert profile.devices["cuda"].seconds_per_call == pytest.approx(130e-6)
    assert profile.devices["cuda"].flops_rate("f16") > profile.devices["cuda"].flops_rate("f32")
    assert MachineProfile.from_json(profile.to_json()) == profile


def test_free_memory_round_trips_and_an_older_profile_without_it_still_loads(tmp_path):
    """free_bytes (what mdc-profile found free before opening the device)
    survives the file; a profile written before the field (none at all,
    or null) loads with it unknown; a reader ignores fields it does not
    know, so an older mdc reads a newer profile of the same version."""
    measured = dataclasses.replace(_profile().devices["cuda"], free_bytes=79 << 30, reserved_bytes=520 << 20)
    profile = dataclasses.replace(_profile(), devices={**_profile().devices, "cuda": measured})
    again = load_profile(_write(tmp_path, profile.to_json()))
    assert again == profile and again.devices["cuda"].free_bytes == 79 << 30
    assert json.loads(profile.to_json())["devices"]["cuda"]["free_bytes"] == 79 << 30
    old = _document()
    for entry in old["devices"].values():
        del entry["free_bytes"]
    old["devices"]["local"]["a_field_of_later"] = 1
    assert all(d.free_bytes is None for d in load_profile(_write(tmp_path, old)).devices.values())


@pytest.mark.parametrize("free, why", [(-1, "devices.cuda.free_bytes is negative (-1)"),
                                       ("lots", "devices.cuda.free_bytes is not a finite number ('lots')"),
                                       ((81 << 30), f"devices.cuda.free_bytes ({81 << 30}) is more than "
                                                    f"devices.cuda.memory_bytes ({80 << 30})")])
def test_a_wrong_free_memory_is_named(tmp_path, free, why):
    doc = _document()
    doc["devices"]["cuda"]["free_bytes"] = free
    assert _error(tmp_path, doc) == why


def test_the_default_profile_counts_opening_the_accelerators():
    """Opening a GPU takes memory before any buffer is placed (a CUDA
    context; lavapipe's 64 MiB block): the built-in profile counts it, and
    records no machine's free memory (--gpu-memory=auto needs a profile
    of the machine)."""
    profile = default_profile()
    assert profile.devices["cuda"].reserved_bytes >= 520 << 20
    assert profile.devices["vulkan"].reserved_bytes >= 64 << 20
    assert profile.devices["local"].reserved_bytes == 0
    assert all(d.free_bytes is None for d in profile.devices.values())
