"""The GPU scripts' oracles, on a machine with no GPU (fast, CPU only):
gpu_random.py's result check counts results, its triage tells mdc's wrong
answers from IREE's own and its build gives each program a stock oracle,
gpu_kit.py's stock cuda canaries compute numpy's answer where IREE is
right (a CPU), and an explicit run of
gpu_kit.py, gpu_random.py, gpu_torch.py, gpu_matmul.py or `python -m bench` with no cuda device says so
and fails (exit status 2) instead of passing with "skipping"."""

import os
import subprocess
import sys

import numpy as np
import pytest

from harness import gpu_kit, gpu_matmul, gpu_random

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


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


I32_REFERENCE = _reference([39, 26, -19], "i32")
RIGHT, WRONG = np.array([39, 26, -19], np.int32), np.array([39, 26, 0], np.int32)


def _answering(answer):
    """A function that returns ``answer``, or raises it if an exception."""
    def fn(*inputs):
        if isinstance(answer, Exception):
            raise answer
        return answer
    return fn


def _call(label, answer, stock):
    """A gpu_random.Call answering ``answer`` whose triage oracle answers
    ``stock``; a string or None is the oracle as Call.stock takes it."""
    oracle = stock if stock is None or isinstance(stock, str) else lambda: _answering(stock)
    return gpu_random.Call(label, _answering(answer), [], [I32_REFERENCE], oracle)


def _unloadable():
    raise RuntimeError("no such module")


def test_gpu_random_triage():
    calls = [
        _call("right", RIGHT, WRONG),
        _call("iree-same", WRONG, WRONG),  # stock gives mdc's wrong answer: IREE's own
        _call("iree-other", WRONG, np.array([0, 0, 0], np.int32)),  # stock wrong otherwise: IREE's own
        _call("mdc", WRONG, RIGHT),  # stock right: mdc's
        _call("no-oracle", WRONG, "stock iree-compile, every device cuda[0], failed: unrealized_conversion_cast"),
        _call("unchecked", WRONG, None),  # a kit built without oracles
        gpu_random.Call("stock-does-not-load", _answering(WRONG), [], [I32_REFERENCE], _unloadable),
        _call("stock-call-fails", WRONG, RuntimeError("stock call failed")),
        _call("mdc-call-fails", RuntimeError("CUDA_ERROR_ILLEGAL_ADDRESS"), WRONG),
    ]
    failures, iree_own = gpu_random.check_calls(calls, timeout=60)
    failed, own = dict(failures), dict(iree_own)
    assert set(own) == {"iree-same", "iree-other"}
    assert set(failed) == {"mdc", "no-oracle", "unchecked", "stock-does-not-load", "stock-call-fails",
                           "mdc-call-fails"}
    # IREE's own: said so, with the stock answer beside mdc's.
    assert own["iree-same"] == ("result 0: 1 of 3 elements differ; first at [2]: got 0, reference -19; "
                                "stock IREE, every device the GPU, gives mdc's answer: "
                                "result 0: mdc [39 26 0], stock [39 26 0], reference [39 26 -19]")
    assert "is wrong too (" in own["iree-other"] and "stock [0 0 0]" in own["iree-other"]
    # mdc's: why, and what the oracle said.
    assert failed["mdc"].endswith("stock IREE, every device the GPU, is right")
    assert "no stock answer to compare: stock iree-compile, every device cuda[0], failed: " \
        "unrealized_conversion_cast" in failed["no-oracle"]
    assert failed["unchecked"] == "result 0: 1 of 3 elements differ; first at [2]: got 0, reference -19"
    assert "the stock module does not load: no such module" in failed["stock-does-not-load"]
    assert "no stock answer to compare: call failed: RuntimeError: stock call failed" in failed["stock-call-fails"]
    assert failed["mdc-call-fails"] == "call failed: RuntimeError: CUDA_ERROR_ILLEGAL_ADDRESS"


def test_gpu_random_build_gives_each_program_a_stock_oracle(tmp_path, monkeypatch):
    """A batch stock iree-compile refuses is built one program at a time,
    and the program it still refuses says why (no compiler runs here)."""
    from harness import progen

    progs = [progen.generate(4122026, i) for i in (41, 43)]
    compiled = []

    def fake_compile(src, out, names, model, gpu, mdc_flags=(), all_on_gpu=False):
        compiled.append((os.path.basename(out), all_on_gpu, list(mdc_flags)))
        with open(src) as f:
            refused = "@p43(" in f.read()
        return subprocess.CompletedProcess([], 1 if refused else 0, "", "error: unrealized_conversion_cast\n")

    monkeypatch.setattr(gpu_random, "_compile", fake_compile)
    got = gpu_random._stock_builds(str(tmp_path), "m", progs, ("device_a", "device_b"), "async-internal", "cuda",
                                   ["--staging=copy", "--iree-stream-resource-alias-mutable-bindings=false"])
    assert got == {41: {"module": "m_p41.stock.vmfb"},
                   43: {"error": "stock iree-compile, every device cuda[0], failed: error: unrealized_conversion_cast"}}
    assert [c[0] for c in compiled] == ["m.stock.vmfb", "m_p41.stock.vmfb", "m_p43.stock.vmfb"]
    assert all(c[1] for c in compiled)


def test_gpu_random_stock_compile_takes_only_iree_flags(monkeypatch):
    """The oracle is stock iree-compile, every device the GPU: mdc's own
    flags (--staging=copy) stay out, --iree-* flags go in."""
    ran = []
    monkeypatch.setattr(gpu_random.subprocess, "run", lambda cmd, **kw: ran.append(cmd))
    gpu_random._compile("x.mlir", "x.vmfb", ("device_a", "device_b"), "async-internal", "cuda",
                        ["--staging=copy", "--iree-foo=1"], all_on_gpu=True)
    (cmd,) = ran
    assert cmd[0] == "iree-compile" and "--iree-foo=1" in cmd and "--staging=copy" not in cmd
    assert "--iree-hal-target-device=device_a=cuda[0]" in cmd and "--iree-hal-target-device=device_b=cuda[0]" in cmd


def _run_local(vmfb: str, inputs: list) -> np.ndarray:
    """@f of a one-device CPU module, on local-task."""
    import iree.runtime as rt

    config = rt.Config("local-task")
    ctx = rt.SystemContext(config=config)
    ctx.add_vm_module(rt.VmModule.mmap(config.vm_instance, vmfb))
    return np.asarray(ctx.modules.module["f"](*inputs))


def test_gpu_kit_stock_cuda_canaries_are_right_on_a_cpu(tmp_path):
    """Each canary's source, built by stock iree-compile for a CPU, gives
    numpy's answer (so a wrong GPU answer is the GPU's code), each maxsi
    input has negative maxima, and mdc-compile's warning names exactly the
    variants of the measured pattern (a dynamic shape; the H200 gave wrong
    answers for the dynamic middle and last dimension, right for static)."""
    for name, (source, inputs, expected) in gpu_kit.stock_cuda_canaries().items():
        src, vmfb = tmp_path / f"{name}.mlir", str(tmp_path / f"{name}.vmfb")
        src.write_text(source)
        built = subprocess.run(["iree-compile", str(src), "--iree-hal-target-device=local",
                                "--iree-hal-local-target-device-backends=llvm-cpu", "-o", vmfb],
                               capture_output=True, text=True)
        assert built.returncode == 0, built.stderr
        got = _run_local(vmfb, inputs)
        assert got.dtype == expected.dtype and np.array_equal(got, expected), name
        if name.startswith("canary_maxsi_"):
            assert (expected < 0).any() and (expected > 0).any(), name
            warned = subprocess.run(["mdc-compile", str(src), "--device=a=cuda[0]", "--compile-to=stream",
                                     "-o", str(tmp_path / "stream.mlir")], capture_output=True, text=True)
            assert warned.returncode == 0, warned.stderr
            shape, reduced, _ = gpu_kit.MAXSI_VARIANTS[name[len("canary_maxsi_"):]]
            assert ("warning: linalg.generic on cuda device" in warned.stderr) == ("?" in shape), name


no_cuda = pytest.mark.skipif(gpu_kit.cuda_available(), reason="this machine has a cuda device")


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
