"""bench models (issue 44 item 5) with local devices standing in for the
GPU (--smoke): the workload's stack and the SwiGLU stack, tiny, their
weights named parameters, each compiled for one device per batch size;
the run makes the weights from the seeds, writes the parameter archive,
computes numpy's float64 reference and measures each module (and torch,
where it is importable) in a process of its own, every result checked.
Its times mean nothing here; docs/PERFORMANCE.md has the GPU machine's."""

import json
import re
import subprocess

from harness.bench_cli import assert_refuses_missing_kit, bench

LINE = r"^  (workload|swiglu)\s+(1|16)\s+(GPU|CPU)\s+[\d.]+\s+(?:[\d.]+|n/a)\s+(?:[\d.]+x|n/a)\s+<= ([\d.]+)x\s+" \
       r"(?:yes|no|n/a)\s+(True|False)\s"


def test_bench_models_smoke(tmp_path):
    # A folder with no kit: one line, no traceback, before anything runs.
    assert_refuses_missing_kit("models", "models.json", str(tmp_path), "--smoke")

    kit = tmp_path / "kit"
    built = bench("models", "build", str(kit), "--smoke")
    assert built.returncode == 0, built.stdout + built.stderr
    spec = json.loads((kit / "models.json").read_text())
    assert spec["batches"] == [1, 16] and [m["name"] for m in spec["models"]] == ["workload", "swiglu"]
    for m in spec["models"]:
        for side in ("gpu", "cpu"):
            for b in ("1", "16"):
                assert (kit / m["modules"][side][b]).is_file()
    # The weights are named parameters, not arguments: the function takes the ids alone.
    source = (kit / "swiglu_b16.mlir").read_text()
    assert '#flow.parameter.named<"model"::"gate1">' in source and "@forward_b16(%ids: tensor<16xi64>) ->" in source
    assert spec["models"][1]["stack"]["ffn"] == 160

    ran = bench("models", "run", str(kit), "--smoke", "--calls", "2")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    rows = re.findall(LINE, ran.stdout, re.M)
    assert [r[:3] for r in rows] == [(m, b, d) for m in ("workload", "swiglu") for b in ("1", "16")
                                     for d in ("GPU", "CPU")], ran.stdout
    assert {(d, t) for _, _, d, t, _ in rows} == {("GPU", "2.0"), ("CPU", "1.3")}, ran.stdout
    assert {r[4] for r in rows} == {"True"}, ran.stdout
    assert re.search(r"^targets \(GPU: mdc <= 2\.0x torch, CPU: <= 1\.3x\): met at \d of 8 lines", ran.stdout, re.M)
    assert "mdc on local-sync" in ran.stdout and "mdc on local-task" in ran.stdout, ran.stdout
    assert ran.stdout.rstrip().endswith("every result right"), ran.stdout

    # A module that computes something else is found wrong: the SwiGLU
    # stack with its residual subtracted, in place of the CPU's batch-1 module.
    wrong_source = tmp_path / "wrong.mlir"
    text = (kit / "swiglu_b1.mlir").read_text()
    assert text.count("%sum = arith.addf %x, %d : f32") == 2
    wrong_source.write_text(text.replace("%sum = arith.addf %x, %d : f32", "%sum = arith.subf %x, %d : f32"))
    cpu = next(m for m in spec["models"] if m["name"] == "swiglu")["modules"]["cpu"]["1"]
    compiled = subprocess.run(["mdc-compile", str(wrong_source), *spec["flags"]["cpu"], "--no-host-entry-points",
                               "-o", str(kit / cpu)], capture_output=True, text=True, timeout=300)
    assert compiled.returncode == 0, compiled.stderr
    wrong = bench("models", "run", str(kit), "--smoke", "--calls", "1")
    assert wrong.returncode == 1 and "WRONG results above" in wrong.stdout, wrong.stdout + wrong.stderr
    verdicts = {(m, b, d): ok for m, b, d, _, ok in re.findall(LINE, wrong.stdout, re.M)}
    assert verdicts.pop(("swiglu", "1", "CPU")) == "False", wrong.stdout
    assert set(verdicts.values()) == {"True"}, wrong.stdout

    # A kit built for the GPU is refused with --smoke, in one line.
    spec["smoke"] = False
    (kit / "models.json").write_text(json.dumps(spec))
    refused = bench("models", "run", str(kit), "--smoke")
    assert refused.returncode == 1 and refused.stderr.startswith("bench: error: the kit was built without --smoke")
