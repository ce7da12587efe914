"""mdc-run and the Python shim where a new user met them (issue 47): a
closed stdout, a module run on fewer devices than it declares, ``place``
on a module run by iree-run-module, and --benchmark there."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys

import numpy as np
import pytest

from mdc.runtime_shim import ShimError, load

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(REPO, "examples", "multi_device_mul.mlir")
MLP = os.path.join(REPO, "examples", "placement", "mlp.mlir")
BIN = os.path.dirname(sys.executable)  # the venv's tools: mdc-compile, iree-run-module, ...


def _env(**extra):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [REPO, env.get("PYTHONPATH")]))
    env["PATH"] = os.pathsep.join([BIN, env.get("PATH", "")])
    env.update(extra)
    return env


def _compile(tmp_path, name, source, *flags):
    out = tmp_path / f"{name}.vmfb"
    r = subprocess.run([os.path.join(BIN, "mdc-compile"), source, *flags, "-o", out], capture_output=True,
                       text=True, timeout=300, env=_env())
    assert r.returncode == 0, r.stderr
    return out


def _mdc_run(*flags, **kw):
    return subprocess.run([sys.executable, "-m", "mdc.runtime_shim", *map(str, flags)], capture_output=True,
                          text=True, timeout=120, env=_env(), **kw)


# -- 1. a closed stdout -------------------------------------------------------------


def _to_closed_pipe(argv, env):
    """argv run with stdout a pipe nobody reads any more (as `| head -c 0`
    leaves it): (returncode, stderr)."""
    read, write = os.pipe()
    os.close(read)
    try:
        r = subprocess.run(argv, stdout=write, stderr=subprocess.PIPE, timeout=120, env=env)
    finally:
        os.close(write)
    return r.returncode, r.stderr.decode()


@pytest.mark.parametrize("fork", ["forked", "MDC_NO_FORK"])
def test_closed_stdout_ends_mdc_run_as_it_ends_cat(tmp_path, fork):
    """No message, killed by SIGPIPE (a shell shows 141), as cat and the
    wheel's iree-run-module binary end. (The wheel's `iree-run-module`
    Python wrapper turns that death into exit status 243, also silently.)"""
    vmfb = _compile(tmp_path, "pair", EXAMPLE, "--device=a=local[0]", "--device=b=local[1]")
    env = _env(**({"MDC_NO_FORK": "1"} if fork == "MDC_NO_FORK" else {}))
    assert _to_closed_pipe(["cat", EXAMPLE], env) == (-signal.SIGPIPE, "")
    argv = [sys.executable, "-m", "mdc.runtime_shim", f"--module={vmfb}", "--device=local-task",
            "--device=local-sync", "--input=4xf32=10,11,12,13"]
    assert _to_closed_pipe(argv, env) == (-signal.SIGPIPE, "")
    assert _to_closed_pipe([*argv, "--list_functions"], env) == (-signal.SIGPIPE, "")
    # A user error still says so, on stderr, whatever became of stdout.
    code, err = _to_closed_pipe([*argv, "--input=4xf32=1,2,3,4"], env)
    assert code == 2 and err.startswith("mdc-run: error: @multi_device_mul takes 1 input(s), 2"), err


# -- 2. fewer devices than declared -----------------------------------------------


def test_module_that_left_its_gpu_unused_runs_on_the_cpu_alone(tmp_path, capsys):
    """--place=auto put nothing on the GPU, so IREE dropped it: stock
    iree-run-module runs the module with --device=local-task alone, and so
    do mdc-run and load, with the same numbers."""
    vmfb = _compile(tmp_path, "mlp", MLP, "--device=cpu=local[0]", "--device=gpu=vulkan[0]", "--place=auto",
                    "--gpu-memory=0")
    x = "--input=4x8xf32=[1 2 3 4 5 6 7 8][0 1 0 1 0 1 0 1][-1 -2 -3 -4 -5 -6 -7 -8][1 1 1 1 1 1 1 1]"
    stock = subprocess.run([os.path.join(BIN, "iree-run-module"), f"--module={vmfb}", "--device=local-task",
                            "--function=main", x], capture_output=True, text=True, timeout=120, env=_env())
    assert stock.returncode == 0, stock.stderr
    for devices in (["local-task"], ["local-sync", "local-task"]):  # the second: no vulkan among two
        r = _mdc_run(f"--module={vmfb}", *[f"--device={d}" for d in devices], x)
        assert r.returncode == 0, r.stderr
        assert r.stdout == stock.stdout
    with load(vmfb, "local-task") as m:
        m.describe()
        assert "gpu=vulkan[0] -> none (the program never uses it)" in capsys.readouterr().out
        got = m.main(np.ones((4, 8), np.float32))
        assert got.shape == (4, 4)
        assert "gpu" not in m.binding and m.binding["cpu"] == 0
    # The CPU device it does use must still be given.
    r = _mdc_run(f"--module={vmfb}", "--device=vulkan", x)
    assert r.returncode == 2 and "'cpu' (local[0]) has no matching runtime device" in r.stderr, r.stderr


def test_module_that_uses_both_devices_needs_both(tmp_path):
    """Stock fails such a module at __init (INCOMPATIBLE); mdc-run says why
    before, in one line, exit 2."""
    vmfb = _compile(tmp_path, "pair", EXAMPLE, "--device=a=local[0]", "--device=b=vulkan[0]")
    r = _mdc_run(f"--module={vmfb}", "--device=local-task", "--input=4xf32=1,2,3,4")
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
    assert r.stderr.startswith("mdc-run: error: wrong device count: the module declares 2 device(s)"), r.stderr
    with pytest.raises(ShimError, match="wrong device count"):
        load(vmfb, "local-task")


def test_bind_leaves_out_only_devices_the_program_never_uses():
    from mdc.runtime_shim.devices import bind
    from mdc.runtime_shim.manifest import parse_manifest

    three = parse_manifest(json.dumps({"format": "mdc.manifest/1", "default": "a", "staging": [],
                                       "mutable_globals": [],
                                       "devices": [{"name": n, "spec": s, "kind": s.split("[")[0],
                                                    "ordinal": int(s[-2])}
                                                   for n, s in (("a", "local[0]"), ("b", "cuda[0]"),
                                                                ("c", "local[1]"))]}))
    assert bind(three, ["local-task"], used={"a"}) == {"a": 0}
    assert bind(three, ["cuda", "local-task"], used={"a", "b"}) == {"a": 1, "b": 0}
    with pytest.raises(ShimError, match=r"declares 3 device\(s\) .* and the program uses 2 of them \(a, c\) "
                                        r"but 1 runtime device\(s\) given"):
        bind(three, ["local-task"], used={"a", "c"})
    with pytest.raises(ShimError, match=r"'a' \(local\[0\]\) has no matching runtime device"):
        bind(three, ["cuda"], used={"a"})
    with pytest.raises(ShimError, match="wrong device count"):  # used unknown: all of them
        bind(three, ["local-task"])


# -- 6. and 7. a module run by iree-run-module (Vulkan beside a CPU) ---------------

PLACED_BOTH_WAYS = """
func.func public @both(%x: tensor<5xf32> {iree.abi.affinity = #hal.device.promise<@device_b>},
                       %y: tensor<3xi32> {iree.abi.affinity = #hal.device.promise<@device_a>})
    -> (tensor<5xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
        tensor<3xi32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %x2 = arith.mulf %x, %x : tensor<5xf32>
  %on_a = flow.tensor.transfer %x2 : tensor<5xf32> to #hal.device.promise<@device_a>
  %y_b = flow.tensor.transfer %y : tensor<3xi32> to #hal.device.promise<@device_b>
  %y2 = arith.addi %y_b, %y_b : tensor<3xi32>
  return %on_a, %y2 : tensor<5xf32>, tensor<3xi32>
}
"""


@pytest.fixture
def both(tmp_path):
    src = tmp_path / "both.mlir"
    src.write_text(PLACED_BOTH_WAYS)
    return _compile(tmp_path, "both", src, "--device=a=local[0]", "--device=b=vulkan[0]")


@pytest.mark.vulkan
def test_place_on_a_native_module_is_a_shim_error(both):
    x = np.arange(5, dtype=np.float32)
    m = load(both, ["local-task", "vulkan"])
    with pytest.raises(ShimError, match=r"@both\.place: .*iree-run-module.* pass the array itself"):
        m.both.place(0, x)
    m.close()
    with pytest.raises(ShimError, match="closed"):
        m.both.place(0, x)


@pytest.mark.vulkan
def test_benchmark_on_a_native_module_prints_a_command_that_runs(both, tmp_path):
    np.save(tmp_path / "y.npy", np.array([1, -7, 40], dtype=np.int32))
    r = _mdc_run(f"--module={both.name}", "--device=vulkan", "--device=local-task",
                 "--input=5xf32=1 2 3 4 5", "--input=@y.npy", "--benchmark=3", cwd=tmp_path)
    assert r.returncode == 2 and "EXEC" not in r.stdout, r.stdout + r.stderr
    assert len(r.stderr.splitlines()) == 1, r.stderr
    command = re.search(r"time it with stock iree-benchmark-module: (iree-benchmark-module .*)$", r.stderr)
    assert command, r.stderr
    argv = shlex.split(command.group(1))
    assert argv[1:] == [f"--module={both.name}", "--function=both$host", "--device=local-task",
                        "--device=vulkan", "--input=5xf32=1 2 3 4 5", "--input=@y.npy",
                        "--benchmark_min_time=3x"], argv
    ran = subprocess.run(["bash", "-c", command.group(1)], capture_output=True, text=True, timeout=300,
                         cwd=tmp_path, env=_env())
    assert ran.returncode == 0, ran.stdout + ran.stderr
    row = next(line for line in ran.stdout.splitlines() if line.startswith("BM_both$host"))
    assert row.split()[-2] == "3", row  # iterations
