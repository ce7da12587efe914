"""End-to-end tests of runtime_shim (Python API and mdc-run) on CPU device pairs."""

from __future__ import annotations

import json
import re
import shutil
import sys

import numpy as np
import pytest

import iree.runtime as rt
from mdc.runtime_shim import ShimError, load
from mdc.runtime_shim.manifest import parse_declaration

SEED_INPUT = "4xf32=10,11,12,13"
SEED_OUTPUT = "EXEC @multi_device_mul\nresult[0]: hal.buffer_view\n4xf32=0 55 144 273\n"


# The modules under test are built by mdc-compile (conftest.compile_mlir)
# from these flags, and their manifests are checked against the flags.
TWO_LOCAL = ("a=local[0]", "b=local[1]")
STAGED_LINK = ("a:b=staged",)  # staging between the two CPU devices, device_b owning it
# The same two devices for stock iree-compile (--iree-hal-target-device=NAME=SPEC).
STOCK_TWO_LOCAL = {"device_a": "local[0]", "device_b": "local[1]"}


def manifest_from_flags(devices, links=(), twins=None) -> dict:
    """The mdc.manifest that `--device` and `--link` flags call for, as
    mdc-compile --help documents them: `a` names the program's @device_a
    (these programs name no bare @a), SPEC is KIND[ORDINAL] (ordinal 0 if
    left out); CPU devices share memory, and so do two devices of one GPU
    driver; a local+GPU pair is staged with the GPU owning the staging
    memory, two GPUs of different drivers through the (first) local device;
    --link=X:Y=staged stages both ways with Y owning the staging memory.
    ``twins``: {function: its host entry point}, which the program's
    affinities decide, on the first local device. The default device is the
    name that sorts first (IREE 3.13's rule, which mdc follows)."""
    def symbol(name):
        return name if name.startswith("device_") else f"device_{name}"

    listed = []
    for flag in devices:
        name, spec = flag.split("=", 1)
        kind, _, ordinal = spec.rstrip("]").partition("[")
        listed.append({"name": symbol(name), "spec": spec, "kind": kind, "ordinal": int(ordinal or 0)})
    kinds = {d["name"]: d["kind"] for d in listed}
    hosts = [name for name, kind in kinds.items() if kind == "local"]
    linked = {}
    for link in links:
        pair, mode = link.split("=")
        x, y = map(symbol, pair.split(":"))
        assert mode == "staged", link
        linked[frozenset((x, y))] = y
    staging = []
    for x in kinds:
        for y in kinds:
            if x == y:
                continue
            if frozenset((x, y)) in linked:
                staging.append({"from": x, "to": y, "owner": linked[frozenset((x, y))]})
            elif kinds[x] == kinds[y]:
                continue
            elif "local" in (kinds[x], kinds[y]):
                staging.append({"from": x, "to": y, "owner": x if kinds[x] != "local" else y})
            else:
                staging.append({"from": x, "to": y, "owner": None, "via": hosts[0]})
    twins = {"host": hosts[0], "host_entry_points": twins} if twins else {}
    # The default device is IREE's: the device name that sorts first (none of
    # these compiles gives --iree-hal-default-device). None of the programs
    # checked keeps state of its own.
    return {"format": "mdc.manifest/1", "devices": listed, "default": min(kinds),
            "staging": sorted(staging, key=lambda e: (e["from"], e["to"])), **twins, "mutable_globals": []}


def written_manifests(path) -> dict[str, dict]:
    """{public function: the mdc.manifest in its reflection, parsed}, read
    from the .vmfb with the runtime alone (no runtime_shim)."""
    instance = rt.VmInstance()
    vm_module = rt.VmModule.mmap(instance, str(path))  # VmFunction does not retain it
    out = {}
    for name in vm_module.function_names:
        if not name.startswith("__"):
            out[name] = json.loads(vm_module.lookup_function(name).reflection["mdc.manifest"])
    return out


def assert_manifest_follows_flags(path, devices, links=(), twins=None):
    """Every public function carries the one manifest the flags call for."""
    want = manifest_from_flags(devices, links, twins)
    written = written_manifests(path)
    assert written
    for function, got in written.items():
        got = dict(got, staging=sorted(got["staging"], key=lambda e: (e["from"], e["to"])))
        # Where results declared on no device live is the program's doing,
        # not the flags' (test_undeclared_results.py checks it).
        got.pop("result_devices", None)
        assert got == want, function


def assert_read_as_flags_say(read, devices, links=()):
    """What runtime_shim read (`read`, a mdc.runtime_shim.manifest.Manifest) is
    the manifest the flags call for, taken from the module, not scanned."""
    want = manifest_from_flags(devices, links)
    assert read.source == "mdc.manifest"
    assert [(d.name, d.spec, d.kind, d.ordinal) for d in read.devices] == [
        (d["name"], f"{d['kind']}[{d['ordinal']}]", d["kind"], d["ordinal"]) for d in want["devices"]]
    assert sorted((s.src, s.dst, s.owner, s.via) for s in read.staging) == [
        (e["from"], e["to"], e["owner"], e.get("via")) for e in want["staging"]]
    assert read.pinned_arguments == ()


def assert_loaded_as_flags_say(m, devices, links=()):
    """A loaded module (`m`) passed its mdc seal check and runs on the
    manifest the flags call for."""
    assert m.sealed
    assert_read_as_flags_say(m.manifest, devices, links)


# Hand-written manifests, only for the tests of the reader alone (runtime_shim's
# parser and device binding): malformed manifests, which mdc-compile does not
# write, and devices these tests cannot open.
def manifest(devices, staging=()):
    return {"format": "mdc.manifest/1",
            "devices": [{"name": n, "spec": s, "kind": s.split("[")[0],
                         "ordinal": int(s.split("[")[1].rstrip("]"))} for n, s in devices],
            "staging": [{"from": a, "to": b, "owner": o} for a, b, o in staging]}


def reflection_attr(m: dict) -> str:
    """`m` spliced into a function's reflection, where mdc-compile puts it
    (for a stock iree-compile module: the reader-only tests)."""
    text = json.dumps(m).replace("\\", "\\\\").replace('"', '\\"')
    return f'attributes {{iree.reflection = {{mdc.manifest = "{text}"}}}}'


def seed_program(m=None) -> str:
    attrs = reflection_attr(m) if m is not None else ""
    return f"""
func.func public @multi_device_mul(%input: tensor<4xf32> {{iree.abi.affinity = #hal.device.promise<@device_a>}}) -> (tensor<4xf32> {{iree.abi.affinity = #hal.device.promise<@device_a>}}) {attrs} {{
  %scale_a = arith.constant dense<[0.0, 1.0, 2.0, 3.0]> : tensor<4xf32>
  %on_a = arith.mulf %input, %scale_a : tensor<4xf32>
  %moved = flow.tensor.transfer %on_a : tensor<4xf32> to #hal.device.promise<@device_b>
  %scale_b = arith.constant dense<[4.0, 5.0, 6.0, 7.0]> : tensor<4xf32>
  %on_b = arith.mulf %moved, %scale_b : tensor<4xf32>
  %back = flow.tensor.transfer %on_b : tensor<4xf32> to #hal.device.promise<@device_a>
  return %back : tensor<4xf32>
}}
"""


PLACEMENT = f"""
func.func public @on_b(%x: tensor<3x5xf32> {{iree.abi.affinity = #hal.device.promise<@device_b>}}) -> (tensor<3x5xf32> {{iree.abi.affinity = #hal.device.promise<@device_b>}}) {{
  %0 = arith.addf %x, %x : tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}}
func.func public @a_to_b(%x: tensor<8xi32> {{iree.abi.affinity = #hal.device.promise<@device_a>}}) -> (tensor<8xi32> {{iree.abi.affinity = #hal.device.promise<@device_b>}}) {{
  %0 = arith.muli %x, %x : tensor<8xi32>
  return %0 : tensor<8xi32>
}}
func.func public @across(%x: tensor<2x3xf32> {{iree.abi.affinity = #hal.device.promise<@device_a>}}, %y: tensor<2x3xf32> {{iree.abi.affinity = #hal.device.promise<@device_b>}}) -> (tensor<2x3xf32> {{iree.abi.affinity = #hal.device.promise<@device_a>}}) {{
  %0 = arith.subf %x, %y : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}}
func.func public @split(%x: tensor<?xf32> {{iree.abi.affinity = #hal.device.promise<@device_a>}}) -> (tensor<?xf32> {{iree.abi.affinity = #hal.device.promise<@device_a>}}, tensor<?xf32> {{iree.abi.affinity = #hal.device.promise<@device_b>}}) {{
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %0 = arith.addf %x, %x : tensor<?xf32>
  %1 = flow.tensor.transfer %x : tensor<?xf32>{{%n}} to #hal.device.promise<@device_b>
  %2 = arith.mulf %1, %1 : tensor<?xf32>
  return %0, %2 : tensor<?xf32>, tensor<?xf32>
}}
"""


def placement_expected(name, *args):
    x = args[0]
    return {"on_b": lambda: x + x, "a_to_b": lambda: x * x,
            "across": lambda: x - args[1], "split": lambda: (x + x, x * x)}[name]()


# Every element type and shape kind iree-run-module prints, on one device.
TYPES = """
func.func public @f16(%a: tensor<4xf16>) -> tensor<4xf16> { %0 = arith.addf %a, %a : tensor<4xf16> return %0 : tensor<4xf16> }
func.func public @bf16(%a: tensor<4xbf16>) -> tensor<4xbf16> { %0 = arith.addf %a, %a : tensor<4xbf16> return %0 : tensor<4xbf16> }
func.func public @f64(%a: tensor<4xf64>) -> tensor<4xf64> { %0 = arith.addf %a, %a : tensor<4xf64> return %0 : tensor<4xf64> }
func.func public @f32(%a: tensor<2x3xf32>) -> tensor<2x3xf32> { %0 = arith.addf %a, %a : tensor<2x3xf32> return %0 : tensor<2x3xf32> }
func.func public @nan(%a: tensor<4xf32>) -> tensor<4xf32> { %z = arith.constant dense<0.0> : tensor<4xf32> %0 = arith.mulf %a, %z : tensor<4xf32> return %0 : tensor<4xf32> }
func.func public @i8(%a: tensor<4xi8>) -> tensor<4xi8> { %0 = arith.addi %a, %a : tensor<4xi8> return %0 : tensor<4xi8> }
func.func public @ui8(%a: tensor<4xui8>) -> tensor<4xui8> { return %a : tensor<4xui8> }
func.func public @i64(%a: tensor<2x2xi64>) -> tensor<2x2xi64> { %0 = arith.addi %a, %a : tensor<2x2xi64> return %0 : tensor<2x2xi64> }
func.func public @positive(%a: tensor<4xi8>) -> tensor<4xi1> { %c = arith.constant dense<0> : tensor<4xi8> %0 = arith.cmpi sgt, %a, %c : tensor<4xi8> return %0 : tensor<4xi1> }
func.func public @bool_not(%a: tensor<4xi1>) -> tensor<4xi1> { %t = arith.constant dense<true> : tensor<4xi1> %0 = arith.xori %a, %t : tensor<4xi1> return %0 : tensor<4xi1> }
func.func public @dyn(%a: tensor<?xf32>) -> tensor<?xf32> { %0 = arith.addf %a, %a : tensor<?xf32> return %0 : tensor<?xf32> }
func.func public @dyn2(%a: tensor<?x3xi32>) -> tensor<?x3xi32> { %0 = arith.addi %a, %a : tensor<?x3xi32> return %0 : tensor<?x3xi32> }
func.func public @scalar(%a: tensor<f32>) -> tensor<f32> { %0 = arith.addf %a, %a : tensor<f32> return %0 : tensor<f32> }
func.func public @two(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi32>) { %0 = arith.addf %a, %a : tensor<4xf32> %1 = arith.fptosi %a : tensor<4xf32> to tensor<4xi32> return %0, %1 : tensor<4xf32>, tensor<4xi32> }
func.func public @d3(%a: tensor<2x2x2xf32>) -> tensor<2x2x2xf32> { %0 = arith.negf %a : tensor<2x2x2xf32> return %0 : tensor<2x2x2xf32> }
func.func public @big(%a: tensor<2000xf32>) -> tensor<2000xf32> { %0 = arith.addf %a, %a : tensor<2000xf32> return %0 : tensor<2000xf32> }
func.func public @big2(%a: tensor<40x40xf32>) -> tensor<40x40xf32> { %0 = arith.addf %a, %a : tensor<40x40xf32> return %0 : tensor<40x40xf32> }
func.func public @scalars(%a: i32, %b: f32, %c: index, %d: i64, %e: f64) -> (i32, f32, index, i64, f64) { return %a, %b, %c, %d, %e : i32, f32, index, i64, f64 }
"""
# No affinities in TYPES: the full symbol, since `a` resolves to @device_a
# only in a program that names @device_a.
ONE_LOCAL = ("device_a=local[0]",)
TYPES_FLAGS = ("--iree-llvmcpu-target-cpu=host", "--iree-input-demote-f64-to-f32=false")

# device_a is local[1] and device_b local[0]: binding by kind and ordinal,
# not by declaration order.
SWAPPED_DEVICES = ("a=local[1]", "b=local[0]")
SWAPPED = f"""
func.func public @twice_on_b(%x: tensor<4096xf32> {{iree.abi.affinity = #hal.device.promise<@device_b>}}) -> (tensor<4096xf32> {{iree.abi.affinity = #hal.device.promise<@device_b>}}) {{
  %0 = arith.addf %x, %x : tensor<4096xf32>
  return %0 : tensor<4096xf32>
}}
func.func public @twice_on_a(%x: tensor<4096xf32> {{iree.abi.affinity = #hal.device.promise<@device_a>}}) -> (tensor<4096xf32> {{iree.abi.affinity = #hal.device.promise<@device_a>}}) {{
  %0 = arith.addf %x, %x : tensor<4096xf32>
  return %0 : tensor<4096xf32>
}}
"""

MODELS = [False, True]
MODEL_IDS = ["async-internal", "async-external"]


@pytest.fixture(scope="module")
def seed(build_vmfb):
    return lambda ext=False: build_vmfb("seed", seed_program(), TWO_LOCAL, links=STAGED_LINK,
                                        async_external=ext)


@pytest.fixture(scope="module")
def placement(build_vmfb):
    """placement(ext, links): without links the two CPU devices share memory."""
    return lambda ext=False, links=(): build_vmfb("placement", PLACEMENT, TWO_LOCAL, links=links,
                                                  async_external=ext)


@pytest.fixture(scope="module")
def types(build_vmfb):
    return build_vmfb("types", TYPES, ONE_LOCAL, flags=TYPES_FLAGS)


def assert_user_error(proc, *needles):
    """Exit status 2, nothing on stdout, one line on stderr, no traceback."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("mdc-run: error: "), proc.stderr
    assert "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


# -- manifest and declaration -------------------------------------------------


def test_manifest_survives_to_reflection(seed):
    for ext in MODELS:
        assert_manifest_follows_flags(seed(ext), TWO_LOCAL, STAGED_LINK)
        instance = rt.VmInstance()
        vm_module = rt.VmModule.mmap(instance, str(seed(ext)))  # VmFunction does not retain it
        reflection = vm_module.lookup_function("multi_device_mul").reflection
        sig = parse_declaration(reflection["iree.abi.declaration"])
        assert sig.is_async == ext
        assert [v.affinity for v in sig.args + sig.results] == ["device_a", "device_a"]
        assert str(sig.args[0].type) == "tensor<4xf32>"


# -- running the seed program ---------------------------------------------------


@pytest.mark.parametrize("ext", MODELS, ids=MODEL_IDS)
@pytest.mark.parametrize("devices", [["local-task", "local-sync"], ["local-sync", "local-task"],
                                     ["local-task", "local-task"]])
def test_api_seed(seed, ext, devices):
    with load(seed(ext), devices) as m:
        assert_loaded_as_flags_say(m, TWO_LOCAL, STAGED_LINK)
        assert m.binding == {"device_a": 0, "device_b": 1}
        np.testing.assert_array_equal(m.multi_device_mul(np.array([10, 11, 12, 13], np.float32)),
                                      [0, 55, 144, 273])
        x = np.random.default_rng(0).standard_normal(4).astype(np.float32)
        y = m.multi_device_mul(x)
        np.testing.assert_allclose(y, x * np.float32([0, 1, 2, 3]) * np.float32([4, 5, 6, 7]),
                                   rtol=1e-6)
        assert y.dtype == np.float32


@pytest.mark.parametrize("ext", MODELS, ids=MODEL_IDS)
def test_cli_seed(seed, mdc_run, ext):
    proc = mdc_run(f"--module={seed(ext)}", "--device=local-task", "--device=local-sync",
                   "--function=multi_device_mul", f"--input={SEED_INPUT}")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, SEED_OUTPUT, "")


def test_plain_module_without_manifest(build_stock_vmfb, mdc_run):
    """Stock iree-compile output: the devices come from the module's own text."""
    for ext in MODELS:
        path = build_stock_vmfb("seed_plain", seed_program(), STOCK_TWO_LOCAL, async_external=ext)
        with load(path, ["local-sync", "local-task"]) as m:
            assert m.manifest.source == "module" and not m.sealed
            assert [(d.name, d.spec) for d in m.manifest.devices] == [
                ("device_a", "local[0]"), ("device_b", "local[1]")]
            np.testing.assert_array_equal(
                m.multi_device_mul(np.float32([1, 2, 3, 4])), [0, 10, 36, 84])
        proc = mdc_run(f"--module={path}", "--device=local-task", "--device=local-task",
                       f"--input={SEED_INPUT}")
        assert (proc.returncode, proc.stdout) == (0, SEED_OUTPUT)
        assert_user_error(mdc_run(f"--module={path}", "--device=local-task", f"--input={SEED_INPUT}"),
                          "'device_b' (local[1]) has no matching runtime device")


# -- placement on device_b, both execution models --------------------------------


PLACEMENT_CASES = {
    "on_b": lambda r: (r.standard_normal((3, 5)).astype(np.float32),),
    "a_to_b": lambda r: (r.integers(-1000, 1000, 8).astype(np.int32),),
    "across": lambda r: (r.standard_normal((2, 3)).astype(np.float32),
                         r.standard_normal((2, 3)).astype(np.float32)),
    "split": lambda r: (r.standard_normal(37).astype(np.float32),),
}


@pytest.mark.parametrize("links", [(), STAGED_LINK], ids=["shared-link", "staged-link"])
@pytest.mark.parametrize("staged", [False, True], ids=["direct", "staged"])
@pytest.mark.parametrize("ext", MODELS, ids=MODEL_IDS)
def test_api_placement(placement, ext, staged, links):
    """Arguments and results declared on device_b. `staged` moves every value
    the way the shim moves it for a GPU (pinned buffer + queue copy); `links`
    are the module's: the CPUs share memory, or mdc-compile stages between
    them."""
    rng = np.random.default_rng(1)
    with load(placement(ext, links), ["local-task", "local-sync"], staged_transfers=staged) as m:
        assert_loaded_as_flags_say(m, TWO_LOCAL, links)
        for name, make in PLACEMENT_CASES.items():
            args = make(rng)
            got = m.function(name)(*args)
            want = placement_expected(name, *args)
            if isinstance(want, tuple):
                assert isinstance(got, tuple) and len(got) == len(want)
                for g, w in zip(got, want):
                    np.testing.assert_array_equal(g, w)
            else:
                np.testing.assert_array_equal(got, want)
                assert got.dtype == want.dtype


@pytest.mark.parametrize("ext", MODELS, ids=MODEL_IDS)
def test_cli_placement(placement, mdc_run, ext):
    proc = mdc_run(f"--module={placement(ext)}", "--device=local-sync", "--device=local-task",
                   "--function=across", "--input=2x3xf32=[1 2 3][4 5 6]", "--input=2x3xf32=0.5")
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == "EXEC @across\nresult[0]: hal.buffer_view\n2x3xf32=[0.5 1.5 2.5][3.5 4.5 5.5]\n"
    proc = mdc_run(f"--module={placement(ext)}", "--device=local-sync", "--device=local-task",
                   "--function=split", "--input=3xf32=1,2,3")
    assert proc.stdout == ("EXEC @split\nresult[0]: hal.buffer_view\n3xf32=2 4 6\n"
                           "result[1]: hal.buffer_view\n3xf32=1 4 9\n")


# -- binding by kind and ordinal -------------------------------------------------


def test_bind_by_kind_and_ordinal():
    # The binder alone, on hand-written manifests: CUDA and HIP devices that
    # a module built here could not run on.
    from mdc.runtime_shim.devices import bind
    from mdc.runtime_shim.manifest import parse_manifest

    mixed = parse_manifest(json.dumps(manifest([("a", "local[0]"), ("b", "cuda[0]")])))
    assert bind(mixed, ["local-task", "cuda"]) == {"a": 0, "b": 1}
    assert bind(mixed, ["cuda://1", "local-sync"]) == {"a": 1, "b": 0}
    two = parse_manifest(json.dumps(manifest([("a", "local[1]"), ("b", "hip[0]"), ("c", "local[0]")])))
    assert bind(two, ["local-sync", "hip", "local-task"]) == {"a": 2, "b": 1, "c": 0}
    with pytest.raises(ShimError, match=r"'b' \(cuda\[0\]\) has no matching runtime device"):
        bind(mixed, ["local-task", "local-sync"])
    with pytest.raises(ShimError, match="wrong device count"):
        bind(mixed, ["local-task"])


@pytest.mark.parametrize("devices", [["local-task", "local-sync"], ["local-sync", "local-task"]])
def test_binding_agrees_with_iree(build_vmfb, devices):
    """IREE allocates device_b's values on the runtime device the shim bound
    device_b to. Allocator statistics are per driver, so the two devices use
    different drivers and only the bound one may see new allocations."""
    path = build_vmfb("swapped", SWAPPED, SWAPPED_DEVICES)
    assert_manifest_follows_flags(path, SWAPPED_DEVICES)
    x = np.arange(4096, dtype=np.float32)
    with load(path, devices, staged_transfers=True) as m:
        assert_loaded_as_flags_say(m, SWAPPED_DEVICES)
        assert m.binding == {"device_a": 1, "device_b": 0}
        for name, bound in (("twice_on_b", 0), ("twice_on_a", 1)):
            before = [d.allocator.statistics["device_bytes_allocated"] for d in m._session.devices]
            np.testing.assert_array_equal(m.function(name)(x), x + x)
            grown = [d.allocator.statistics["device_bytes_allocated"] - b
                     for d, b in zip(m._session.devices, before)]
            assert grown[bound] > 0 and grown[1 - bound] == 0, (name, grown)


# -- user errors: one line, exit status 2 ---------------------------------------------


def test_cli_user_errors(seed, build_vmfb, mdc_run, tmp_path):
    mod = f"--module={seed()}"
    two = ["--device=local-task", "--device=local-sync"]
    cases = [
        ([mod, "--device=local-task", f"--input={SEED_INPUT}"], "wrong device count"),
        ([mod, *two, "--function=nope", f"--input={SEED_INPUT}"], "unknown function 'nope'"),
        ([mod, *two, "--input=4xf32=1,2,x,4"], "bad input literal"),
        ([mod, *two, "--input=4xq32=1"], "unknown element type 'q32'"),
        ([mod, *two, "--input=3xf32=1,2"], "2 values for shape 3"),
        ([mod, *two, "--input=5xf32=1"], "input 0 (%input0: tensor<4xf32>): shape mismatch, expected 4, got 5"),
        ([mod, *two, "--input=2x2xf32=1"], "shape mismatch, expected 4, got 2x2"),
        ([mod, *two, "--input=4xi32=1"], "dtype mismatch"),
        ([mod, *two], "takes 1 input(s), 0 --input given"),
        ([mod, *two, f"--input={SEED_INPUT}", f"--input={SEED_INPUT}"], "takes 1 input(s)"),
        ([f"--module={tmp_path / 'missing.vmfb'}", *two], "module file not found"),
        ([mod, "--device=local-task", "--device=vulkan", f"--input={SEED_INPUT}"],
         "declared device 'device_b' (local[1]) has no matching runtime device"),
        ([mod, *two, f"--input=@{tmp_path / 'none.npy'}"], "cannot read"),
        ([mod, *two, f"--input={SEED_INPUT}", "--output=@a.npy", "--output=@b.npy"],
         "2 --output given"),
        ([mod, *two, f"--input={SEED_INPUT}", "--output=a.npy"], "expected @file.npy"),
        ([mod, *two, "--task_topology_group_count=x"], "task_topology_group_count"),
        ([mod, *two, "--benchmark=-3"], "--benchmark"),
        ([mod, *two, "--no_such_flag=1"], "unrecognized arguments"),
        ([*two, f"--input={SEED_INPUT}"], "--module"),
    ]
    for argv, needle in cases:
        assert_user_error(mdc_run(*argv), needle)

    bad_file = tmp_path / "not_a_module.vmfb"
    bad_file.write_bytes(b"not a flatbuffer at all")
    assert_user_error(mdc_run(f"--module={bad_file}", "--device=local-task"), "cannot load module")


CUDA_ONLY = """
func.func public @f32(%a: tensor<2x3xf32>) -> tensor<2x3xf32> { %0 = arith.addf %a, %a : tensor<2x3xf32> return %0 : tensor<2x3xf32> }
"""


CUDA_DEVICES = ("device_a=cuda",)  # no ordinal: cuda[0]; no affinities, so the full symbol


def test_missing_driver(build_vmfb, mdc_run):
    """A module for cuda, on a machine with no CUDA driver library."""
    path = build_vmfb("cuda_only", CUDA_ONLY, CUDA_DEVICES, flags=())  # mdc-compile's default sm_80
    assert_manifest_follows_flags(path, CUDA_DEVICES)
    assert_user_error(mdc_run(f"--module={path}", "--device=cuda", "--input=2x3xf32=1"),
                      "device 'cuda': the 'cuda' driver is not available here")
    assert_user_error(mdc_run(f"--module={path}", "--device=hip", "--input=2x3xf32=1"),
                      "'device_a' (cuda[0]) has no matching runtime device")
    if "cuda" not in rt.query_available_drivers():
        pytest.skip("this runtime build has no cuda driver")
    with pytest.raises(ShimError, match="'cuda' driver is not available"):
        load(path, ["cuda://1"])


# Two GPUs of different drivers and a local device the program never names
# (so its full name): mdc-compile stages between the GPUs through it.
RELAY_DEVICES = ("a=cuda[0]", "b=hip[0]", "device_host=local[0]")
RELAY = """
func.func public @cuda_to_hip(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %0 = arith.addf %x, %x : tensor<4xf32>
  %1 = flow.tensor.transfer %0 : tensor<4xf32> to #hal.device.promise<@device_b>
  return %1 : tensor<4xf32>
}
"""


def test_relayed_pairs_reach_the_reader(build_vmfb):
    """The relayed pairs (owner null, via the local device) that mdc-compile
    writes are read as written. Read without opening devices: this machine
    runs neither GPU."""
    from mdc.runtime_shim.manifest import check_seal
    from mdc.runtime_shim.module import read_signatures

    path = build_vmfb("relay", RELAY, RELAY_DEVICES, flags=())  # mdc-compile's default targets
    # The program takes a value on cuda and returns one on hip: both GPUs.
    assert_manifest_follows_flags(path, RELAY_DEVICES, twins={"cuda_to_hip": "cuda_to_hip$host"})
    assert check_seal(str(path))
    instance = rt.VmInstance()
    _, read = read_signatures(rt.VmModule.mmap(instance, str(path)))
    assert_read_as_flags_say(read, RELAY_DEVICES)
    assert sorted((s.src, s.dst) for s in read.staging if s.via) == [("device_a", "device_b"),
                                                                  ("device_b", "device_a")]


def test_staging_owner_must_be_given(build_stock_vmfb, mdc_run):
    # The reader on manifests mdc-compile never writes (it refuses a --link
    # to an undeclared device): hand-written, spliced into stock iree-compile
    # modules, which carry no seal to break.
    bad_owner = manifest([("device_a", "local[0]"), ("device_b", "local[1]")],
                         [("device_a", "device_b", "device_c")])
    path = build_stock_vmfb("bad_owner", seed_program(bad_owner), STOCK_TWO_LOCAL)
    assert_user_error(mdc_run(f"--module={path}", "--device=local-task", "--device=local-sync"),
                      "staging owner 'device_c'", "not among the given devices")
    bad_link = manifest([("device_a", "local[0]"), ("device_b", "local[1]")],
                        [("device_a", "device_x", "device_b")])
    with pytest.raises(ShimError, match="'to' device 'device_x' is not declared"):
        load(build_stock_vmfb("bad_link", seed_program(bad_link), STOCK_TWO_LOCAL),
             ["local-task", "local-sync"])


def test_manifest_parsing():
    # The parser alone, on hand-written manifests: malformed ones, which
    # mdc-compile does not write, and a pair relayed through a local device
    # (via), which only modules for GPUs of two drivers carry.
    from mdc.runtime_shim.manifest import parse_manifest

    relayed = dict(manifest([("a", "cuda[0]"), ("b", "hip[0]"), ("c", "local[0]")]),
                   staging=[{"from": "a", "to": "b", "owner": None, "via": "c"},
                            {"from": "a", "to": "c", "owner": "a"}])
    m = parse_manifest(json.dumps(relayed))
    assert [(s.src, s.dst, s.owner, s.via) for s in m.staging] == [
        ("a", "b", None, "c"), ("a", "c", "a", None)]
    assert m.default_device == "a" and m.devices[1].spec == "hip[0]"
    only_spec = {"format": "mdc.manifest/1", "devices": [{"name": "x", "spec": "local[2]"}]}
    assert parse_manifest(json.dumps(only_spec)).devices[0].ordinal == 2
    pinned = parse_manifest(json.dumps(dict(relayed, pinned_arguments={"f": {"0": "a", "2": "b"}, "g": {"1": "a"}})))
    assert pinned.pinned("f") == {0: "a", 2: "b"} and pinned.pinned("g") == {1: "a"} and pinned.pinned("h") == {}
    assert m.pinned("f") == {}
    from mdc.runtime_shim.manifest import parse_declaration
    # "result_devices": a result declared on no device goes where it says;
    # one the declaration places, or it does not list, stays.
    placed = parse_manifest(json.dumps(dict(relayed, result_devices={"f": {"0": "b", "1": "b"}})))
    sig = placed.placed_results(parse_declaration(
        "sync func @f() -> (%output0: tensor<4xf32>, %output1: tensor<4xf32> "
        "{iree.abi.affinity = #hal.device.promise<@c>}, %output2: tensor<4xf32>)"))
    assert [v.affinity for v in sig.results] == ["b", "c", None]
    # Tied dimensions: read per function; none for a manifest without the
    # entry (an older mdc-compile) or a function it does not list.
    f = parse_declaration("sync func @f(%input0: tensor<?x8xf32>, %input1: tensor<?xf32>, %input2: i32) -> ()")
    tied = parse_manifest(json.dumps(dict(relayed, tied_dims={"f": [[[0, 0], [1, 0]]]})))
    assert tied.tied(f) == (((0, 0), (1, 0)),) and m.tied(f) == ()
    for group, needle in [([[0, 0], [2, 0]], "dimension 0 of input 2"),  # a scalar
                          ([[0, 2], [1, 0]], "dimension 2 of input 0"), ([[0, 0], [3, 0]], "dimension 0 of input 3")]:
        with pytest.raises(ShimError, match=f"ties {needle} of @f, which has no such dimension"):
            parse_manifest(json.dumps(dict(relayed, tied_dims={"f": [group]}))).tied(f)
    for bad, needle in [(json.dumps(dict(relayed, tied_dims={"f": [[[0, 0]]]})), "fewer than two"),
                        (json.dumps(dict(relayed, tied_dims={"f": [[[0, -1], [1, 0]]]})), "negative"),
                        (json.dumps(dict(relayed, tied_dims={"f": [[0, 1]]})), "malformed"),
                        ("{", "not valid JSON"), ('{"format": "mdc.manifest/2"}', "unsupported"),
                        ('{"format": "mdc.manifest/1", "devices": []}', "no devices"),
                        (json.dumps(dict(relayed, staging=[{"from": "a", "to": "b", "owner": None}])),
                         "neither owner nor via"),
                        (json.dumps(dict(relayed, pinned_arguments={"f": {"0": "z"}})),
                         "pins arguments in device 'z', which it does not declare"),
                        (json.dumps(dict(relayed, pinned_arguments={"f": {"first": "a"}})), "malformed"),
                        (json.dumps(dict(relayed, result_devices={"f": {"0": "z"}})),
                         "places results on device 'z', which it does not declare"),
                        (json.dumps(dict(relayed, result_devices={"f": {"out": "a"}})), "malformed"),
                        (json.dumps(dict(relayed, pinned_arguments=["f"])), "malformed")]:
        with pytest.raises(ShimError, match=needle):
            parse_manifest(bad)


def test_no_host_entry_point_reason():
    """The refusal of a function with a value on a GPU and no host twin says
    what the module lacks, never which mdc-compile made it (the manifest
    does not record that): a manifest naming no twin for it, or a value
    that is neither a tensor nor a scalar."""
    from mdc.runtime_shim.manifest import parse_manifest
    from mdc.runtime_shim.native import entry_point

    m = parse_manifest(json.dumps(dict(manifest([("a", "local[0]"), ("b", "vulkan[0]")],
                                                 [("a", "b", "b"), ("b", "a", "b")]), default="a")))
    binding, uris = {"a": 0, "b": 1}, ["local-task", "vulkan"]
    plain = parse_declaration("sync func @f(%input0: tensor<4xf32>, %input1: f32) -> "
                              "(%output0: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@b>})")
    odd = parse_declaration("sync func @g(%input0: tensor<4xf32>, %input1: !hal.buffer) -> "
                            "(%output0: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@b>})")
    with pytest.raises(ShimError, match=r"@f has values on b \(vulkan\).*no host entry point for it: "
                                        r"its mdc manifest names none for @f: compile it again") as e:
        entry_point(m, {"f": plain}, "f", binding, uris)
    assert "older" not in str(e.value)
    with pytest.raises(ShimError, match=r"all tensors or scalars \(%input1 not\)"):
        entry_point(m, {"g": odd}, "g", binding, uris)


def test_api_errors(seed):
    with load(seed(), ["local-task", "local-sync"]) as m:
        with pytest.raises(ShimError, match="dtype mismatch, expected float32"):
            m.multi_device_mul(np.zeros(4, np.float64))
        with pytest.raises(ShimError, match="shape mismatch, expected 4, got 2x2"):
            m.multi_device_mul(np.zeros((2, 2), np.float32))
        with pytest.raises(ShimError, match="takes 1 input"):
            m.multi_device_mul()
        with pytest.raises(ShimError, match="unknown function 'nope'"):
            m.function("nope")
        with pytest.raises(AttributeError):
            m.nope
        # Lists are converted to the declared dtype.
        np.testing.assert_array_equal(m.multi_device_mul([1, 2, 3, 4]), [0, 10, 36, 84])
    with pytest.raises(ShimError, match="module file not found"):
        load("/nonexistent/x.vmfb", ["local-task"])


# -- values: printing as iree-run-module, literals, npy in and out -----------------


FORMAT_CASES = [
    ("f16", ["4xf16=1.5,2.25,-3,1000.125"]),
    ("bf16", ["4xbf16=1.5,2.25,-3,1000.125"]),
    ("f64", ["4xf64=1.5,2.25,-3,0.1"]),
    ("f32", ["2x3xf32=[1 2 3][4.5 5 0.1]"]),
    ("f32", ["2x3xf32=1e-7,2,3,4,5,123456789"]),
    ("f32", ["2x3xf32=1e20,-1e-30,inf,-inf,3.14159265,65504"]),
    ("nan", ["4xf32=1,inf,-inf,nan"]),
    ("i8", ["4xi8=1,-2,100,3"]),
    ("ui8", ["4xui8=1,2,255,3"]),
    ("i64", ["2x2xi64=[1 -2][3 4000000000]"]),
    ("positive", ["4xi8=0,1,0,1"]),
    ("dyn", ["3xf32=1,2,3"]),
    ("dyn2", ["2x3xi32=[1 2 3][4 5 6]"]),
    ("scalar", ["f32=2.5"]),
    ("two", ["4xf32=1.5,2,3,4"]),
    ("d3", ["2x2x2xf32=[[1 2][3 4]][[5 6][7 8]]"]),
    ("big", ["2000xf32=1.5"]),
    ("big2", ["40x40xf32=2"]),
    ("scalars", ["3", "1e-7", "7", "-9", "123456789.5"]),
]


@pytest.mark.parametrize("function,inputs", FORMAT_CASES,
                         ids=[f"{f}-{i}" for i, (f, _) in enumerate(FORMAT_CASES)])
def test_output_identical_to_iree_run_module(types, run_tool, mdc_run, function, inputs):
    flags = [f"--module={types}", "--device=local-task", f"--function={function}",
             *(f"--input={i}" for i in inputs)]
    stock = run_tool([shutil.which("iree-run-module"), *flags])
    assert stock.returncode == 0, stock.stderr
    ours = mdc_run(*flags)
    assert (ours.returncode, ours.stderr) == (0, "")
    assert ours.stdout == stock.stdout


def test_known_spellings(types, mdc_run):
    def out(function, *inputs):
        proc = mdc_run(f"--module={types}", "--device=local-sync", f"--function={function}",
                       *(f"--input={i}" for i in inputs))
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.splitlines()[2:]

    assert out("positive", "4xi8=0,1,0,1") == ["4xi1=00 01 00 01"]
    # iree-run-module rejects i1 literals; mdc-run takes 0/1/true/false.
    assert out("bool_not", "4xi1=1,0,true,false") == ["4xi1=00 01 00 01"]
    assert out("f16", "4xf16=0.1,1,2,3") == ["4xf16=0.199951 2 4 6"]
    assert out("nan", "4xf32=1,inf,-inf,nan") == ["4xf32=0 -NAN -NAN NAN"]
    assert out("i64", "2x2xi64=-9223372036854775808,1,2,3") == ["2x2xi64=[0 2][4 6]"]


def test_types_api(types, capsys):
    with load(types, ["local-task"]) as m:
        assert_loaded_as_flags_say(m, ONE_LOCAL)
        x = np.float16([0.5, -1, 2, 65504 / 4])
        np.testing.assert_array_equal(m.f16(x), x + x)
        b = np.array([True, False, False, True])
        got = m.bool_not(b)
        assert got.dtype == np.bool_
        np.testing.assert_array_equal(got, ~b)
        np.testing.assert_array_equal(m.positive(np.int8([-1, 0, 5, 127])), [False, False, True, True])
        i = np.array([[2**40, -3], [7, -(2**62)]], np.int64)
        np.testing.assert_array_equal(m.i64(i), i + i)
        for n in (1, 5, 1000):
            d = np.arange(n, dtype=np.float32)
            np.testing.assert_array_equal(m.dyn(d), d + d)
        d2 = np.arange(21, dtype=np.int32).reshape(7, 3)
        np.testing.assert_array_equal(m.dyn2(d2), d2 + d2)
        with pytest.raises(ShimError, match="shape mismatch"):
            m.dyn2(np.zeros((3, 4), np.int32))
        with pytest.raises(ShimError, match="shape mismatch"):
            m.dyn(np.zeros((2, 2), np.float32))
        assert m.scalar(np.float32(1.25)).shape == ()
        assert float(m.scalar(np.float32(1.25))) == 2.5
        f, i32 = m.two(np.float32([1.5, -2.5, 3, 4]))
        np.testing.assert_array_equal(f, [3, -5, 6, 8])
        np.testing.assert_array_equal(i32, [1, -2, 3, 4])
        assert i32.dtype == np.int32
        got = m.scalars(3, 2.5, 7, -9, 0.1)
        assert got == (3, 2.5, 7, -9, 0.1)
        assert [type(v) for v in got] == [np.int32, np.float32, np.int64, np.int64, np.float64]
        with pytest.raises(ShimError, match="expected a i32 scalar"):
            m.scalars(1.5, 2.5, 7, -9, 0.1)
        assert m.describe() is None
        assert "sync func @dyn(%input0: tensor<?xf32>)" in capsys.readouterr().out


def test_output_and_input_npy(types, mdc_run, tmp_path):
    out_a, out_b = tmp_path / "a.npy", tmp_path / "b.npy"
    proc = mdc_run(f"--module={types}", "--device=local-task", "--function=two",
                   "--input=4xf32=1.5,-2,3,4", f"--output=@{out_a}", f"--output=@{out_b}")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "EXEC @two\n", "")
    np.testing.assert_array_equal(np.load(out_a), np.float32([3, -4, 6, 8]))
    np.testing.assert_array_equal(np.load(out_b), np.int32([1, -2, 3, 4]))
    assert np.load(out_b).dtype == np.int32
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.npy", "b.npy"]  # no temp files left

    proc = mdc_run(f"--module={types}", "--device=local-task", "--function=two",
                   "--input=4xf32=1", "--output=", "--output=-")
    assert proc.stdout == "EXEC @two\nhal.buffer_view\n4xi32=1 1 1 1\n"

    x = np.random.default_rng(2).standard_normal((7, 3)).astype(np.float32)
    np.save(tmp_path / "x.npy", np.arange(21, dtype=np.int32).reshape(7, 3))
    proc = mdc_run(f"--module={types}", "--device=local-task", "--function=dyn2",
                   f"--input=@{tmp_path / 'x.npy'}", f"--output=@{out_a}")
    assert proc.returncode == 0, proc.stderr
    np.testing.assert_array_equal(np.load(out_a), 2 * np.arange(21).reshape(7, 3))
    np.save(tmp_path / "f.npy", x)
    assert_user_error(mdc_run(f"--module={types}", "--device=local-task", "--function=dyn2",
                              f"--input=@{tmp_path / 'f.npy'}"), "dtype mismatch")
    assert_user_error(mdc_run(f"--module={types}", "--device=local-task", "--function=two",
                              "--input=4xf32=1", f"--output=@{tmp_path / 'no' / 'dir.npy'}",
                              "--output="), "cannot write")


def test_benchmark(seed, mdc_run):
    proc = mdc_run(f"--module={seed(True)}", "--device=local-task", "--device=local-sync",
                   f"--input={SEED_INPUT}", "--benchmark=25", "--task_topology_group_count=1")
    assert proc.returncode == 0, proc.stderr
    head, bench = proc.stdout[:len(SEED_OUTPUT)], proc.stdout[len(SEED_OUTPUT):]
    assert head == SEED_OUTPUT
    m = re.fullmatch(r"BENCHMARK @multi_device_mul: 25 calls, per call min ([\d.]+) ms, "
                     r"median ([\d.]+) ms, max ([\d.]+) ms\n", bench)
    assert m, bench
    lo, mid, hi = map(float, m.groups())
    assert 0 < lo <= mid <= hi


def test_list_functions(placement, mdc_run):
    proc = mdc_run(f"--module={placement()}", "--device=local-task", "--device=local-sync",
                   "--list_functions")
    assert proc.returncode == 0, proc.stderr
    assert "device_b=local[1] -> local-sync" in proc.stdout
    assert "sync func @split(%input0: tensor<?xf32>" in proc.stdout
    assert_user_error(mdc_run(f"--module={placement()}", "--device=local-task",
                              "--device=local-sync"), "--function is required")


# -- memory: zero-copy import, alignment, no compiler ------------------------------


def test_zero_copy_import_only_when_aligned():
    from mdc.runtime_shim import values

    device = rt.get_driver("local-task").create_default_device()
    aligned = values.aligned_array(np.arange(16, dtype=np.float32))
    assert aligned.ctypes.data % 64 == 0
    view = values.to_device(device, True, aligned, int(rt.HalElementType.FLOAT_32), False, 10)
    aligned[0] = 42  # visible through the buffer: it is the same memory
    assert values.to_host(device, view, False, 10)[0] == 42

    raw = np.zeros(17, np.float32)
    unaligned = raw[1:] if raw.ctypes.data % 64 == 0 else raw[:16]
    if unaligned.ctypes.data % 64 == 0:
        unaligned = raw[1:]
    assert unaligned.ctypes.data % 64 != 0
    view = values.to_device(device, True, unaligned, int(rt.HalElementType.FLOAT_32), False, 10)
    unaligned[0] = 42  # a copy: the buffer does not change
    assert values.to_host(device, view, False, 10)[0] == 0
    del view


def test_imported_array_is_kept_by_the_buffer_object_not_the_view():
    """IREE 3.13's binding: import_host_allocation keeps the array alive
    through the HalBuffer object it returns, and a buffer view made from
    that buffer does not. Whoever keeps only the view must keep the array
    (runtime_shim.Placed does); if this test fails, IREE changed and that
    can be simplified."""
    import gc
    import weakref

    from mdc.runtime_shim import values

    device = rt.get_driver("local-task").create_default_device()
    array = values.aligned_array(np.arange(1 << 14, dtype=np.float32))
    alive = weakref.ref(array)
    buffer = device.allocator.import_host_allocation(
        array, memory_type=int(rt.MemoryType.HOST_LOCAL | rt.MemoryType.DEVICE_VISIBLE),
        allowed_usage=int(rt.BufferUsage.DEFAULT))
    view = rt.HalBufferView(buffer, list(array.shape), int(rt.HalElementType.FLOAT_32))
    del array
    gc.collect()
    assert alive() is not None, "the HalBuffer object should hold the array"
    del buffer
    gc.collect()
    assert alive() is None, "the view alone now keeps the array alive"
    del view


def test_unaligned_and_readonly_inputs_run(types, run_tool):
    """Importing a misaligned array would segfault the dispatch; the shim copies
    it. Run in a child process so a crash fails this test only."""
    code = f"""
import numpy as np
from mdc.runtime_shim import load
with load({str(types)!r}, ["local-task"]) as m:
    raw = np.zeros(4096 + 16, np.uint8)
    start = (-raw.ctypes.data) % 64 + 4
    x = raw[start:start + 4000].view(np.float32)
    x[:] = np.arange(1000)
    assert x.ctypes.data % 64 == 4
    assert np.array_equal(m.dyn(x), 2 * np.arange(1000, dtype=np.float32))
    ro = np.arange(1000, dtype=np.float32); ro.flags.writeable = False
    assert np.array_equal(m.dyn(ro), 2 * ro)
    strided = np.arange(2000, dtype=np.float32)[::2]
    assert np.array_equal(m.dyn(strided), 2 * strided)
print("ok")
"""
    proc = run_tool([sys.executable, "-c", code])
    assert (proc.returncode, proc.stdout) == (0, "ok\n"), proc.stderr


def test_runs_without_iree_compiler(seed, run_tool):
    code = f"""
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name == "iree.compiler" or name.startswith("iree.compiler."):
            raise ImportError("iree.compiler is blocked")
sys.meta_path.insert(0, Block())
from mdc.runtime_shim import cli
rc = cli.main(["--module={seed()}", "--device=local-task", "--device=local-sync",
               "--input={SEED_INPUT}"])
assert not any(m.startswith("iree.compiler") for m in sys.modules)
sys.exit(rc)
"""
    proc = run_tool([sys.executable, "-c", code])
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, SEED_OUTPUT, "")


# -- the GPU check script, exercised on CPU devices ----------------------------------



@pytest.fixture(scope="module")
def gpu_cases(seed, placement, types, tmp_path_factory):
    d = tmp_path_factory.mktemp("gpu_cases")
    shutil.copy(seed(True), d / "seed.vmfb")
    shutil.copy(placement(), d / "placement.vmfb")
    shutil.copy(types, d / "types.vmfb")
    x = np.float32([10, 11, 12, 13])
    np.save(d / "seed_in.npy", x)
    np.save(d / "seed_out.npy", np.float32([0, 55, 144, 273]))
    np.save(d / "seed_wrong.npy", np.float32([0, 55, 144, 274]))
    v = np.arange(5, dtype=np.float32)
    np.save(d / "v.npy", v)
    np.save(d / "split0.npy", v + v)
    np.save(d / "split1.npy", v * v)
    cases = [
        {"name": "seed", "module": "seed.vmfb", "function": "multi_device_mul",
         "devices": ["local-task", "local-sync"], "inputs": ["seed_in.npy"],
         "expected": ["seed_out.npy"]},
        {"name": "split", "module": "placement.vmfb", "function": "split",
         "devices": ["local-sync", "local-task"], "inputs": ["v.npy"],
         "expected": ["split0.npy", "split1.npy"]},
    ]
    (d / "cases.json").write_text(json.dumps({"cases": cases}))
    return d, cases


def gpu_script():
    from pathlib import Path
    return Path(__file__).with_name("gpu_runtime_shim.py")


def test_gpu_script_skips_without_cuda(gpu_cases, run_tool):
    if "cuda" in rt.query_available_drivers():
        try:
            rt.get_driver("cuda").create_default_device()
            pytest.skip("a CUDA device is present")
        except Exception:
            pass
    d, _ = gpu_cases
    proc = run_tool([sys.executable, gpu_script(), "cases", d])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("SKIP: the cuda driver is not available here")


def test_gpu_script_cases_on_cpu(gpu_cases, run_tool):
    d, cases = gpu_cases
    proc = run_tool([sys.executable, gpu_script(), "cases", d, "--skip-unless-driver=local-task"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = [line.split() for line in proc.stdout.splitlines()]
    assert rows == [["case", "api", "cli"], ["seed", "ok", "ok"], ["split", "ok", "ok"]]

    cases[0]["expected"] = ["seed_wrong.npy"]
    cases[1]["devices"] = ["local-task"]  # wrong device count
    (d / "cases.json").write_text(json.dumps({"cases": cases}))
    proc = run_tool([sys.executable, gpu_script(), "cases", d, "--skip-unless-driver=local-task"])
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert lines[1].split()[:4] == ["seed", "mismatch:", "result", "0"]
    assert "wrong device count" in lines[2] and "error" in lines[2]

    # gpu_kit.py's format: a bare list, inputs as --input flags, one expected file.
    for i, v in enumerate([np.int32(3), np.float32(2.5), np.int64(7), np.int64(-9), np.float64(0.1)]):
        np.save(d / f"sc{i}.npy", v)
    kit = [{"name": "seed_kit", "module": "seed.vmfb", "function": "multi_device_mul",
            "devices": ["local-task", "local-sync"], "inputs": ["--input=@seed_in.npy"],
            "expected": "seed_out.npy", "runner": "shim"},
           {"name": "scalars", "module": "types.vmfb", "function": "scalars",
            "devices": ["local-task"], "inputs": ["--input=3", "2.5", "7", "-9", "0.1"],
            "expected": [f"sc{i}.npy" for i in range(5)]}]
    (d / "cases.json").write_text(json.dumps(kit))
    proc = run_tool([sys.executable, gpu_script(), "cases", d, "--skip-unless-driver=local-task"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [line.split() for line in proc.stdout.splitlines()][1:] == [
        ["seed_kit", "ok", "ok"], ["scalars", "ok", "ok"]]


def test_gpu_script_stability_on_cpu(gpu_cases, run_tool):
    d, _ = gpu_cases
    proc = run_tool([sys.executable, gpu_script(), "stability", f"--module={d / 'seed.vmfb'}",
                     "--function=multi_device_mul", "--device=local-task", "--device=local-sync",
                     f"--input={d / 'seed_in.npy'}", f"--expected={d / 'seed_out.npy'}",
                     "--calls=300", "--warmup=100", "--skip-unless-driver=local-task"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "300 calls after 100 warm-up calls" in out
    m = re.search(r"host RSS: start ([\d.]+) MiB, end ([\d.]+) MiB, growth ([-+][\d.]+) %", out)
    assert m and float(m.group(1)) > 0, out
    assert "device memory used:" in out and "results: ok" in out


def test_task_topology_group_count_reaches_the_runtime(seed, run_tool):
    """--task_topology_group_count sets the number of local-task worker threads."""
    def threads(n):
        code = f"""
import os, sys
from mdc.runtime_shim import cli
import iree.runtime as rt
rc = cli.main(["--module={seed()}", "--device=local-task", "--device=local-task",
               "--input={SEED_INPUT}", "--task_topology_group_count={n}"])
device = rt.get_driver("local-task").create_default_device()  # the driver cli.main made
print(rc, len(os.listdir("/proc/self/task")))
"""
        proc = run_tool([sys.executable, "-c", code])
        assert proc.returncode == 0, proc.stderr
        rc, count = proc.stdout.splitlines()[-1].split()
        assert rc == "0"
        return int(count)

    assert threads(3) - threads(1) == 2
