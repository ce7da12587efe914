"""The GPU scripts' oracles, on a machine with no GPU (fast, CPU only):
gpu_random.py's result check counts results, and an explicit run of
gpu_kit.py, gpu_random.py, gpu_torch.py, gpu_matmul.py or `python -m bench` with no cuda device says so
and fails (exit status 2) instead of passing with "skipping"."""

import os
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import gpu_kit  # noqa: E402
import gpu_matmul  # noqa: E402
import gpu_random  # noqa: E402


def _reference(values, dtype="f32"):
    ref = np.asarray(values, dtype=np.float64)
    return ref, np.zeros_like(ref), dtype


def test_gpu_random_counts_results():
    a, b = _reference([1.0, 2.0]), _reference([3.0, 4.0])
    got_a, got_b = np.array([1, 2], np.float32), np.array([3, 4], np.float32)
    assert gpu_random.check_results([got_a, got_b], [a, b]) is None
    # A dropped result, or one too many, fails; zip alone passed both.
    assert gpu_random.check_results([got_a], [a, b]) == "1 results, 2 references"
    assert gpu_random.check_results([], [a]) == "0 results, 1 references"
    assert gpu_random.check_results([got_a, got_b], [a]) == "2 results, 1 references"
    # And a wrong value still fails by its index.
    assert gpu_random.check_results([got_a, got_a], [a, b]).startswith("result 1: ")


no_cuda = pytest.mark.skipif(gpu_kit._cuda_available(), reason="this machine has a cuda device")


def _run(*argv):
    return subprocess.run([sys.executable, *argv], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=ROOT))


@no_cuda
@pytest.mark.parametrize("argv", [
    ["test/e2e/gpu_kit.py", "run", "KIT"],
    ["test/e2e/gpu_random.py", "run", "KIT"],
    ["test/e2e/gpu_torch.py", "run", "KIT"],
    ["test/e2e/gpu_matmul.py", "run", "KIT"],
    ["-m", "bench", "run", "KIT"],
    ["-m", "bench", "pieces", "KIT"],
    ["-m", "bench", "pinned", "KIT"],
    ["-m", "bench", "latency", "KIT"],
    ["-m", "bench", "components"],
    ["-m", "bench", "queue-latency"],
], ids=lambda argv: " ".join(argv[:-1] if argv[-1] == "KIT" else argv))
def test_no_cuda_device_is_a_failure(tmp_path, argv):
    argv = [str(tmp_path) if a == "KIT" else a for a in argv]
    ran = _run(*argv)
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert "error: no cuda device here" in ran.stderr
    assert "skipping" not in ran.stdout + ran.stderr
    assert "Traceback" not in ran.stderr
    # --allow-no-gpu: said, and a skip.
    allowed = _run(*argv, "--allow-no-gpu")
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    assert "no cuda device here" in allowed.stdout and "skipping" in allowed.stdout


@pytest.mark.parametrize("layout", gpu_matmul.LAYOUTS)
def test_gpu_matmul_program_matches_its_reference(tmp_path, layout):
    """gpu_matmul.py's matmul, with its weight laid out as the GPU run lays
    it out, computes the kit's numpy reference on the CPU."""
    import iree.runtime as rt

    src, vmfb = tmp_path / "mm.mlir", tmp_path / "mm.vmfb"
    src.write_text(gpu_matmul.program("f32", layout, None))
    subprocess.run(["iree-compile", "--iree-hal-target-device=local",
                    "--iree-hal-local-target-device-backends=llvm-cpu",
                    "--iree-llvmcpu-target-cpu=generic", str(src), "-o", str(vmfb)], check=True)
    a, b = gpu_matmul._inputs(seed=7)
    x, w = gpu_matmul.layout_inputs(a, b, "f32", layout)
    config = rt.Config("local-task")
    ctx = rt.SystemContext(config=config)
    ctx.add_vm_module(rt.VmModule.copy_buffer(config.vm_instance, vmfb.read_bytes()))
    got = ctx.modules.module["mm"](x, w).to_host()
    assert np.abs(got - gpu_matmul._reference(a, b)).max() <= gpu_matmul.TOL["f32"]
