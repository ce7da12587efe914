"""Caches of one initial value keep a buffer each (issue 46; docs/DESIGN.md
section 8): stock IREE 3.13 gives mutable globals of one type and one
initial value one buffer once they are updated in place
(test/lit/regress/iree_mutable_globals_share_initial_value.test), and mdc's
state-initial-values pass gives each its own.

A program of CACHES zeroed caches (8x4 f32, a KV cache's shape in small),
each written at a position every call gives with a row of its own, is
compiled by mdc-compile for one local device and for a staged CPU pair
with the caches on the second device, and called several times through
mdc.runtime_shim.load: after every call each cache equals numpy's, bit for
bit. Then the toy decoder of test/lit/assign (two caches, both 0.0) placed
by --place=auto with no budget, which puts both caches on one device: its
prefill and decodes equal numpy's (test_place_state.py splits them over
two devices, where IREE never merged them).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from test_place_state import PROFILE, PROGRAM, PROMPT, check_prefill_then_decodes

CACHES = 5
CALLS = 6


def _program(affinity: str) -> str:
    globals_ = "\n".join(f"  util.global private mutable @k{i}{affinity} = dense<0.0> : tensor<8x4xf32>"
                         for i in range(CACHES))
    args = ", ".join(f"%x{i}: tensor<1x4xf32>" for i in range(CACHES))
    body = "\n".join(
        f"    %k{i} = util.global.load @k{i} : tensor<8x4xf32>\n"
        f"    %n{i} = tensor.insert_slice %x{i} into %k{i}[%pos, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<8x4xf32>\n"
        f"    util.global.store %n{i}, @k{i} : tensor<8x4xf32>" for i in range(CACHES))
    types = ", ".join(["tensor<8x4xf32>"] * CACHES)
    loads = "\n".join(f"    %r{i} = util.global.load @k{i} : tensor<8x4xf32>" for i in range(CACHES))
    results = ", ".join(f"%r{i}" for i in range(CACHES))
    return (f"module {{\n{globals_}\n"
            f"  util.func public @step({args}, %pos: index) {{\n{body}\n    util.return\n  }}\n"
            f"  util.func public @read() -> ({types}) {{\n{loads}\n    util.return {results} : {types}\n  }}\n}}\n")


SETUPS = {
    "one_cpu": ("", ["--device=a=local[0]"], ["local-task"]),
    "staged_pair": (" {stream.affinity = #hal.device.promise<@b>}",
                    ["--device=a=local[0]", "--device=b=local[1]", "--link=a:b=staged"], ["local-task", "local-sync"]),
}


def _mdc_compile(source: Path, out: Path, *flags) -> Path:
    r = subprocess.run([sys.executable, "-m", "mdc.pipeline", str(source), "-o", str(out), *flags],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return out


@pytest.mark.parametrize("setup", sorted(SETUPS))
def test_each_cache_equals_numpy_after_every_call(setup, tmp_path):
    from mdc.runtime_shim import load

    affinity, devices, uris = SETUPS[setup]
    source = tmp_path / "caches.mlir"
    source.write_text(_program(affinity))
    vmfb = _mdc_compile(source, tmp_path / "caches.vmfb", *devices)
    rng = np.random.default_rng(46)
    want = [np.zeros((8, 4), np.float32) for _ in range(CACHES)]
    with load(str(vmfb), uris) as m:
        for call in range(CALLS):
            pos = int(rng.integers(0, 8))
            xs = [rng.standard_normal((1, 4)).astype(np.float32) for _ in range(CACHES)]
            m.step(*xs, pos)
            for cache, x in zip(want, xs):
                cache[pos] = x[0]
            for i, (got, expected) in enumerate(zip(m.read(), want)):
                assert np.asarray(got).tobytes() == expected.tobytes(), f"@k{i} after call {call}"


def test_toy_decoder_with_both_caches_on_one_device_equals_numpy(tmp_path):
    from mdc.runtime_shim import load

    vmfb = _mdc_compile(PROGRAM, tmp_path / "toy.vmfb", "--device=cpu=local[0]", "--device=gpu=local[1]",
                        "--link=cpu:gpu=staged", "--place=auto", f"--place-profile={PROFILE}",
                        f"--max-dim=arg0.d1={PROMPT}")
    rng = np.random.default_rng(48)
    with load(str(vmfb), ["local-task", "local-sync"]) as m:
        check_prefill_then_decodes(m, rng)


# Initial values that a fill of a float constant would get wrong (-0.0, a
# NaN's payload: IREE's VM turns the float constant -0.0 into +0.0), one
# that is not a splat, and integer and f16 ones: two caches of each.
VALUES = [("f32", "dense<-0.0>", np.full(8, -0.0, np.float32)),
          ("f32", "dense<1.5>", np.full(8, 1.5, np.float32)),
          ("f32", "dense<0x7FC00001>", np.full(8, 0x7FC00001, np.uint32).view(np.float32)),
          ("f32", "dense<[1.0, 2.0, -0.0, 0.0, 1.0, 1.0, 1.0, 4.0]>",
           np.array([1.0, 2.0, -0.0, 0.0, 1.0, 1.0, 1.0, 4.0], np.float32)),
          ("i32", "dense<-7>", np.full(8, -7, np.int32)),
          ("f16", "dense<0.0>", np.zeros(8, np.float16))]


def _values_program() -> str:
    names = [(f"g{v}_{j}", t) for v, (t, _, _) in enumerate(VALUES) for j in range(2)]
    lines = ["module {"] + [f"  util.global private mutable @{n} = {VALUES[int(n[1:].split('_')[0])][1]} : tensor<8x{t}>"
                            for n, t in names]
    lines.append(f"  util.func public @step({', '.join(f'%x_{n}: tensor<1x{t}>' for n, t in names)}, %pos: index) {{")
    for n, t in names:
        lines += [f"    %{n} = util.global.load @{n} : tensor<8x{t}>",
                  f"    %u_{n} = tensor.insert_slice %x_{n} into %{n}[%pos] [1] [1] : tensor<1x{t}> into tensor<8x{t}>",
                  f"    util.global.store %u_{n}, @{n} : tensor<8x{t}>"]
    types = ", ".join(f"tensor<8x{t}>" for _, t in names)
    lines += ["    util.return", "  }", f"  util.func public @read() -> ({types}) {{"]
    lines += [f"    %r_{n} = util.global.load @{n} : tensor<8x{t}>" for n, t in names]
    lines += [f"    util.return {', '.join(f'%r_{n}' for n, _ in names)} : {types}", "  }", "}"]
    return "\n".join(lines) + "\n"


def test_initial_values_keep_their_bits(tmp_path):
    from mdc.runtime_shim import load

    source = tmp_path / "values.mlir"
    source.write_text(_values_program())
    vmfb = _mdc_compile(source, tmp_path / "values.vmfb", "--device=a=local[0]")
    want = [VALUES[v][2].copy() for v in range(len(VALUES)) for _ in range(2)]
    with load(str(vmfb), ["local-task"]) as m:
        for i, got in enumerate(m.read()):
            assert np.asarray(got).tobytes() == want[i].tobytes(), f"initial value of cache {i}"
        for pos in range(3):
            xs = [np.array([10 * i + pos + 1]).astype(w.dtype) for i, w in enumerate(want)]
            m.step(*xs, pos)
            for w, x in zip(want, xs):
                w[pos] = x[0]
            for i, got in enumerate(m.read()):
                assert np.asarray(got).tobytes() == want[i].tobytes(), f"cache {i} after call {pos}"
