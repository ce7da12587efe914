"""The benchmark harness (python -m bench), with local devices standing in
for the GPU (--smoke): it builds, runs, and finds every mdc result right.
Its numbers mean nothing here; docs/PERFORMANCE.md has the H200's."""

import json
import re

import numpy as np

from harness.bench_cli import bench


def test_bench_smoke(tmp_path):
    built = bench("build", str(tmp_path), "--smoke")
    assert built.returncode == 0, built.stdout + built.stderr
    ran = bench("run", str(tmp_path), "--smoke", "--sizes", "1", "--retain-host-memory")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    out = ran.stdout
    assert "freed host memory retained: True" in out
    rows = re.findall(r"^\s+1 .*\s(True|False)$", out, re.M)
    # The bandwidth row and the computed-value rows (CPU->GPU, GPU->CPU),
    # all checked against numpy.
    assert rows == ["True", "True", "True"], out
    for staging in ("copy", "emplace"):
        assert re.search(rf"mdc local\+cuda, {staging}\s+[\d.]+ ms", out), out
    # The seed call by CPU driver in interleaved rounds, with a baseline kit
    # (here the same one): every row a median, min, max and ratio.
    timed = bench("latency", str(tmp_path), "--smoke", "--rounds", "2", "--calls", "20",
                   "--baseline", str(tmp_path))
    assert timed.returncode == 0, timed.stdout + timed.stderr
    for name in ("mdc local-task+local-sync, emplace", "mdc local-sync+local-sync, copy",
                 "baseline mdc local-task+local-sync, emplace", "stock local-task+local-task"):
        assert re.search(rf"^\s+{re.escape(name)}(\s+[\d.]+){{3}}\s+[\d.]+x$", timed.stdout, re.M), timed.stdout
    # One crossing of each size each way: a row per size, every column a
    # number but torch's (none here), every result right.
    every = bench("sizes", str(tmp_path), "--smoke", "--sizes", "4K,1M")
    assert every.returncode == 0, every.stdout + every.stderr
    for size in ("4K", "1M"):
        assert re.search(rf"^\s+{size} \|\s+nan(\s+[\d.]+)\s+nan(\s+[\d.]+){{5}}\s+nan \|\s+nan\s+[\d.]+\s+nan"
                         rf"\s+[\d.]+\s+True$", every.stdout, re.M), every.stdout
        # The shim's own moves: place and to_host, pooled and through the
        # allocator, and place with a buffer freed synchronously.
        assert re.search(rf"^\s+{size} \|\s+nan\s+[\d.]+\s+nan\s+[\d.]+\s+[\d.]+ \|\s+nan\s+[\d.]+\s+nan\s+[\d.]+\s+True$",
                         every.stdout, re.M), every.stdout
    # The piece-count sweep: one row, every piece count's result right.
    swept = bench("pieces", str(tmp_path), "--smoke", "--sizes", "1")
    assert swept.returncode == 0, swept.stdout + swept.stderr
    assert re.search(r"^\s+1(\s+[\d.]+){7}\s+True$", swept.stdout, re.M), swept.stdout
    # Arguments in pinned memory: default, pinned, +copy, +register and the
    # limit measured (no torch here), the results right.
    given = bench("pinned", str(tmp_path), "--smoke", "--sizes", "1")
    assert given.returncode == 0, given.stdout + given.stderr
    assert re.search(r"^\s+1(\s+[\d.]+){5}\s+nan\s+nan\s+True$", given.stdout, re.M), given.stdout
    # And back into an output argument: default, into, pinned, limit.
    assert re.search(r"^\s+1(\s+[\d.]+){4}\s+nan\s+nan\s+True$", given.stdout, re.M), given.stdout


def test_components_smoke():
    """bench components, including the host copy and the DMA timed alone
    and at once (the DMA in a second process): every row has a number."""
    ran = bench("components", "--smoke", "--mib", "1")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert re.search(r"^\s+host copy\s+alone\s+[\d.]+\s+with the DMA running\s+[\d.]+ \(\d+ copies\)$",
                     ran.stdout, re.M), ran.stdout
    assert re.search(r"^\s+queue_copy pinned->device\s+alone\s+[\d.]+\s+with the host copying\s+[\d.]+ "
                     r"\([1-9]\d* copies\)$", ran.stdout, re.M), ran.stdout


def test_queue_latency_smoke():
    """bench queue-latency: a number for every chain on both CPU drivers."""
    ran = bench("queue-latency", "--smoke", "--calls", "20")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    for chain in ("1 copy", "8 copies", "1 copy after a signalled fence", "queue_alloca, then 2 copies"):
        assert re.search(rf"^\s+{re.escape(chain)}\s+[\d.]+\s+[\d.]+$", ran.stdout, re.M), ran.stdout


def test_workload_smoke(tmp_path):
    """bench workload: the kit builds (tiny sizes, a second local device
    for the GPU), every split's result and the references are right, and
    every row is there. A wrong reference in the kit is found wrong, and a
    kit whose weights cannot be made again is refused in one line."""
    kit = tmp_path / "kit"
    built = bench("workload", "build", str(kit), "--smoke", "--splits", "0,2,4",
                   "--mdc-flag=--iree-llvmcpu-enable-ukernels=all")
    assert built.returncode == 0, built.stdout + built.stderr
    spec = json.loads((kit / "workload.json").read_text())
    assert spec["mdc_flags"] == ["--iree-llvmcpu-enable-ukernels=all"], spec
    assert spec["stack"]["layout"] == "out_in", spec  # torch.nn.Linear's, by default
    bogus = bench("workload", "build", str(tmp_path / "bogus"), "--smoke", "--splits", "0",
                   "--mdc-flag=--no-such-flag-of-iree")
    assert bogus.returncode != 0 and "--no-such-flag-of-iree" in bogus.stdout + bogus.stderr, bogus
    assert sorted((m["k"], m["model"]) for m in spec["modules"]) == [
        (k, model) for k in (0, 2, 4) for model in ("async", "sync")]
    ran = bench("workload", "run", str(kit), "--smoke", "--calls", "3", "--batch-calls", "2", "--stream", "4",
                 "--workers", "2", "--runtime-flag=--task_worker_spin_us=50")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    out = ran.stdout
    assert re.search(r"^host: .*local-task workers 2, .*runtime flags: --task_worker_spin_us=50$", out, re.M), out
    assert "split modules built with --iree-llvmcpu-target-cpu=generic --iree-llvmcpu-enable-ukernels=all" in out, out
    assert "weights out x in;" in out, out
    for unit in ("ms", "tokens/s"):
        stock = rf"^  everything on the GPU, stock IREE \(iree.runtime\): [\d.]+ {unit}, right "
        assert re.search(stock, out, re.M), out
    assert re.search(r"^  everything on the GPU, torch: ([\d.]+ (ms|tokens/s), right|not measured)", out, re.M), out
    assert "torch: not measured" in out or re.search(r"^torch \S+: \d+ CPU threads", out, re.M), out
    number = r"\s+(?:[\d.]+|n/a)"
    for batch in ("latency at batch 1", "throughput at batch 4"):
        table = out.split(batch, 1)[1].split("\n\n", 1)[0]
        rows = re.findall(rf"^\s+(\d+)\s+[\d.]+\s+[\d.]+{number}(?:\s+(?:[\d.]+x|n/a)){{3}}\s+(True|False)\s+\S+$",
                          table, re.M)
        assert rows == [("0", "True"), ("2", "True"), ("4", "True")], table
    table = out.split("stream of 4 batch-1 inputs", 1)[1].split("\n\n", 1)[0]
    assert "pipelined: Function.map with 2 calls in flight" in table, table
    rows = re.findall(rf"^\s+(\d+)(?:\s+[\d.]+){{4}}{number}(?:\s+(?:[\d.]+x|n/a)){{2}}\s+(True|False)\s+\S+$",
                      table, re.M)
    assert rows == [("0", "True"), ("2", "True"), ("4", "True")], table
    assert out.rstrip().endswith("every result right"), out

    expected = kit / "expected_b1.npy"
    np.save(expected, np.load(expected) * 1.5)
    wrong = bench("workload", "run", str(kit), "--smoke", "--calls", "1", "--batch-calls", "1", "--stream", "2")
    assert wrong.returncode == 1 and "WRONG results above" in wrong.stdout, wrong.stdout + wrong.stderr
    assert re.search(r"^\s+0\s.*\sFalse\s", wrong.stdout.split("throughput")[0], re.M), wrong.stdout

    spec["stack"]["seed"] += 1
    (kit / "workload.json").write_text(json.dumps(spec))
    refused = bench("workload", "run", str(kit), "--smoke")
    assert refused.returncode == 1 and "Traceback" not in refused.stderr, refused.stderr
    assert refused.stderr.startswith("bench: error: the weights made here from the kit's seed differ"), refused.stderr
    missing = bench("workload", "run", str(tmp_path / "nothing"), "--smoke")
    assert missing.returncode == 1 and missing.stderr.count("\n") == 1, missing.stderr
    assert "workload.json: No such file or directory; build the kit with" in missing.stderr


def test_bench_refuses_what_it_cannot_run_in_one_line(tmp_path):
    """A runtime flag IREE does not take, a flag not in IREE's form and a
    folder that is no kit each end in one error line naming the cause,
    no traceback, and no measurement (a folder is looked at once a GPU is
    there: with none, the measuring commands say that, exit status 2)."""
    for args, words in [(["workload", "run", str(tmp_path), "--smoke", "--runtime-flag=--no_such_flag=1"],
                         "flag 'no_such_flag' not recognized"),
                        (["run", str(tmp_path), "--smoke", "--runtime-flag=spin"], "as --name=value, got 'spin'"),
                        (["run", str(tmp_path / "none"), "--smoke"], "not a whole kit"),
                        (["sizes", str(tmp_path), "--smoke", "--sizes", "4K,12"], "expected sizes such as 4K,1M,1G"),
                        (["latency", str(tmp_path), "--smoke"], "build it here with python -m bench build")]:
        r = bench(*args)
        assert r.returncode != 0 and words in r.stderr, (args, r.stdout, r.stderr)
        assert "Traceback" not in r.stderr and "MiB" not in r.stdout, (args, r.stdout, r.stderr)


def test_workload_smoke_in_out_layout(tmp_path):
    """The first kits' layout (y = x @ W, W in x out) still builds and runs,
    every result checked against numpy's."""
    kit = tmp_path / "kit"
    built = bench("workload", "build", str(kit), "--smoke", "--splits", "2", "--layout", "in_out")
    assert built.returncode == 0, built.stdout + built.stderr
    assert json.loads((kit / "workload.json").read_text())["stack"]["layout"] == "in_out"
    ran = bench("workload", "run", str(kit), "--smoke", "--calls", "2", "--batch-calls", "1", "--stream", "0")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "weights in x out;" in ran.stdout and ran.stdout.rstrip().endswith("every result right"), ran.stdout


def test_workload_smoke_f16(tmp_path):
    """--dtype f16: every tensor of the program and the weights is f16 (the
    weights half the bytes) but rmsnorm's sums of squares, which accumulate
    in f32 as f16 inference does, the run says so, and every result is
    checked against numpy's at f16's tolerance."""
    kit = tmp_path / "kit"
    built = bench("workload", "build", str(kit), "--smoke", "--splits", "2", "--dtype", "f16")
    assert built.returncode == 0, built.stdout + built.stderr
    assert json.loads((kit / "workload.json").read_text())["stack"]["dtype"] == "f16"
    source = (kit / "workload_k2.mlir").read_text()
    assert "xf16>" in source and not re.search(r"x\d+xf32>", source), "a 2-D f32 tensor in an f16 stack"
    head = source[source.index("func.func"):source.index("{", source.index(") -> ("))]
    assert "f32" not in head, head  # every argument and result f16
    assert "arith.extf" in source and "arith.truncf" in source  # rmsnorm's f32 accumulation
    ran = bench("workload", "run", str(kit), "--smoke", "--calls", "2", "--batch-calls", "1", "--stream", "0")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "MiB of f16 made" in ran.stdout and ", f16, weights" in ran.stdout, ran.stdout
    assert ran.stdout.rstrip().endswith("every result right"), ran.stdout
