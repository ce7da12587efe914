"""bench placement with local devices standing in for the GPU (--smoke):
small stacks with no device named and their weights as named parameters,
compiled per budget with --place=auto, greedy fill and every class of
contiguous split, then run through mdc.runtime_shim.load with a parameter
archive made from the seed; every result is checked against numpy, and a
wrong one fails the run. Its times mean nothing here; docs/PERFORMANCE.md
has the GPU's."""

import gzip
import json
import os
import re
import subprocess

import numpy as np

from harness.bench_cli import assert_refuses_missing_kit, bench

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _bench(*args):
    return bench(*args, timeout=900)


def _check_workload_variant(entry: dict) -> None:
    """One variant of the 4-block workload built with --fits 0,4."""
    rows = {row["name"]: row for row in entry["budgets"]}
    assert list(rows) == ["n0", "n4", "cost", "all"]
    assert rows["n0"]["bytes"] == 0 and rows["all"]["bytes"] > rows["n4"]["bytes"] > rows["cost"]["bytes"] > 0
    # 4 blocks: a chain of 6 parts, 21 runs and the empty one, 3 * 4 + 4 classes.
    assert entry["runs"] == {"every": 22, "classes": 16, "compiled": 16}
    for row in rows.values():
        for placed in [*row["placements"].values(), *row["splits"]]:
            assert placed["estimate_seconds"] > 0 and placed["estimates"] is None  # modelled: no costs
            assert placed["gpu_bytes"] <= row["bytes"]  # --smoke reserves nothing
        assert row["classes_fit"] == len(row["splits"]) <= row["runs_fit"]
    # Budget 0: everything on the CPU, whoever places it, and the one split that fits is all-CPU.
    assert {p["blocks"] for p in rows["n0"]["placements"].values()} == {0}
    assert [s["run"] for s in rows["n0"]["splits"]] == ["cpu"] and rows["n0"]["runs_fit"] == 1
    # The budget that fits all 4 blocks and the head: llama.cpp's -ngl 4
    # with the head (0-3H), whose bytes the budget is, and without it (0-3),
    # are among its splits, and each class once (blocks 2-3 for two blocks
    # alone, the end nearest the head); the table and every block (E0-3H,
    # all-GPU) is not.
    n4 = {s["run"]: s for s in rows["n4"]["splits"]}
    assert {"cpu", "0-3H", "0-3", "H", "E", "E0-2", "2-3"} <= set(n4) and "gpu" not in n4
    assert (n4["0-3H"]["blocks"], n4["0-3H"]["head"], n4["0-3H"]["embedding"]) == (4, True, False)
    assert n4["0-3H"]["gpu_bytes"] == rows["n4"]["bytes"]
    # Greedy fill spends it on the table first (4 blocks, no head).
    greedy = rows["n4"]["placements"]["greedy"]
    assert (greedy["blocks"], greedy["head"], greedy["embedding"]) == (4, False, True)
    # The cost budget is greedy fill's shape: the table and 4 blocks; the
    # split of all 4 blocks without the head fits it too.
    cost = rows["cost"]
    assert cost["placements"]["greedy"]["embedding"] and cost["placements"]["greedy"]["blocks"] == 4
    assert "0-3" in {s["run"] for s in cost["splits"]}
    # The all budget holds every run, all-GPU among them.
    assert rows["all"]["runs_fit"] == 22 and "gpu" in {s["run"] for s in rows["all"]["splits"]}
    # Two calls in flight: the budget that fits half the blocks or more
    # (n4 here), its program bytes three times (two lanes and the
    # module's own context), the latency module of n4 beside the
    # throughput objective's own, whose three copies fit.
    (two,) = entry["throughput"]
    assert two["name"] == "n4" and two["bytes"] == 3 * rows["n4"]["bytes"]
    latency, auto = two["placements"]["latency"], rows["n4"]["placements"]["auto"]
    same = [k for k in latency if k not in ("file", "estimate_seconds")]  # the table's estimate: throughput's
    assert {k: latency[k] for k in same} == {k: auto[k] for k in same}
    assert 3 * two["placements"]["throughput"]["gpu_bytes"] <= two["bytes"]


def test_bench_placement_smoke(tmp_path):
    # A folder with no kit: one line, no traceback, before anything runs.
    assert_refuses_missing_kit("placement", "placement.json", str(tmp_path), "--smoke")
    built = _bench("placement", "build", str(tmp_path), "--smoke", "--fits", "0,4", "--models", "workload",
                   "--dtypes", "f32")
    assert built.returncode == 0, built.stdout + built.stderr
    kit = json.loads((tmp_path / "placement.json").read_text())
    assert sorted(kit["variants"]) == ["workload_f32_b1", "workload_f32_b4"]
    for entry in kit["variants"].values():
        _check_workload_variant(entry)
        for row in entry["budgets"] + entry["throughput"]:
            for placed in [*row["placements"].values(), *row.get("splits", [])]:
                assert (tmp_path / placed["file"]).is_file()
    # The splits and greedy fill are given to mdc-compile as assignment
    # files, kept with every report in build.json.gz (the run needs neither).
    with gzip.open(tmp_path / "build.json.gz", "rt") as f:
        made = json.load(f)
    placed = made["assignments"]["workload_f32_b1_split_0-3H"]
    assert {u["device"] for u in placed["units"]} == {"cpu", "gpu"}
    assert made["reports"]["workload_f32_b1_auto_n4"]["placement"]["function"] == "forward_b1"
    assert not list(tmp_path.glob("*.report.json")) and not list(tmp_path.glob("*.place.json"))

    ran = _bench("placement", "run", str(tmp_path), "--smoke", "--calls", "2", "--batch-calls", "1")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    rows = re.findall(r"^\s+(workload_f32_b[14])\s+(n0|n4|cost|all)\s+[\d.]+ \|.*\s(True|False)$", ran.stdout, re.M)
    assert [(v, n) for v, n, _ in rows] == [(f"workload_f32_b{b}", n) for b in "14"
                                            for n in ("n0", "n4", "cost", "all")], ran.stdout
    assert {ok for _, _, ok in rows} == {"True"}, ran.stdout
    # Every module once, its estimate beside its measurement: the 16
    # classes' runs and what auto and greedy fill chose beyond them.
    modules = re.findall(r"^\s+workload_f32_b1\s+(\S+)\s+[\d.]+ \|\s+[\d.]+\s+[\d.]+\s+[\d.]+x\s+(True|False) \|"
                         r"\s+model \|.*\s+True\s+(.*)$", ran.stdout, re.M)
    # The kit holds only the modules its tables name (an auto module that
    # another budget's auto already is goes).
    made = {b: {f for f in os.listdir(tmp_path) if f.startswith(f"workload_f32_b{b}_") and f.endswith(".vmfb")
                and "throughput" not in f} for b in "14"}
    assert len(modules) == len(made["1"]) >= 16, ran.stdout
    assert sum(as_.startswith("split") for _, _, as_ in modules) == 16, ran.stdout
    assert "every result right" in ran.stdout
    targets = re.search(r"^targets: estimates within 1\.5x of measurement at \d+ of (\d+) \(worst [\d.e+-]+x\); "
                        r"auto within 1\.05x of the best at \d of 8 lines \(.*\); .* at \d of 2 cost lines$",
                        ran.stdout, re.M)
    assert targets and int(targets.group(1)) == len(made["1"]) + len(made["4"]), ran.stdout
    assert "est: the --report's estimate (modelled from the machine profile)" in ran.stdout
    streams = re.findall(r"^\s+(workload_f32_b[14])\s+n4\s+[\d.]+\s+\S+/\S+ \|.*\|\s+[\d.]+x \|.*\s(True|False)$",
                         ran.stdout, re.M)
    assert streams == [("workload_f32_b1", "True"), ("workload_f32_b4", "True")], ran.stdout
    assert re.search(r"^throughput targets: .* at \d of 2 lines; .*$", ran.stdout, re.M), ran.stdout

    # A part of the kit: --tokens picks its variants, and runs with only
    # their files (a kit carried to the GPU in parts); a variant whose file
    # is missing, or one the kit lacks, is one line.
    b1 = sorted(f for f in os.listdir(tmp_path) if f.startswith("workload_f32_b1_") and f.endswith(".vmfb"))[0]
    os.rename(tmp_path / b1, tmp_path / f"{b1}.away")
    part = _bench("placement", "run", str(tmp_path), "--smoke", "--calls", "1", "--batch-calls", "1", "--tokens", "4")
    assert part.returncode == 0 and "placement: 1 of the kit's 2 variants (workload_f32_b4)" in part.stdout
    lacking = _bench("placement", "run", str(tmp_path), "--smoke", "--tokens", "1")
    assert lacking.returncode == 1 and "Traceback" not in lacking.stderr, lacking.stdout + lacking.stderr
    assert re.fullmatch(rf"bench: error: the kit in \S+ lacks {re.escape(b1)}; build it again\n", lacking.stderr), \
        lacking.stderr
    os.rename(tmp_path / f"{b1}.away", tmp_path / b1)
    none = _bench("placement", "run", str(tmp_path), "--smoke", "--models", "swiglu")
    assert none.returncode == 1 and "Traceback" not in none.stderr, none.stdout + none.stderr
    assert re.fullmatch(r"bench: error: the kit in \S+ has no variant of --models swiglu --dtypes f32,f16 \(it has "
                        r"workload_f32_b1, workload_f32_b4\)\n", none.stderr), none.stderr

    # A reference that is not the program's result fails the run.
    expected = tmp_path / "expected_workload_f32_b4.npy"
    np.save(expected, np.load(expected) + 1.0)
    wrong = _bench("placement", "run", str(tmp_path), "--smoke", "--calls", "1", "--batch-calls", "1")
    assert wrong.returncode == 1, wrong.stdout + wrong.stderr
    assert "WRONG results above" in wrong.stdout
    assert re.search(r"^\s+workload_f32_b4\s+n4\s.*\sFalse$", wrong.stdout, re.M), wrong.stdout


def test_bench_placement_program_kits_measure_the_kits_programs(tmp_path):
    """build --program-kits: each variant's program and its mdc-profile
    --program kit; timed (here on the CPU pair, as the GPU machine times
    them), the costs files are for the very graphs the kit places (their
    digests match): the SwiGLU stack in f16 built with --place-costs gets
    every module's estimate measured, and runs right."""
    kits, kit = tmp_path / "kits", tmp_path / "kit"
    grid = ["--smoke", "--models", "swiglu", "--dtypes", "f16", "--tokens", "1,4"]
    built = _bench("placement", "build", str(kits), *grid, "--program-kits")
    assert built.returncode == 0, built.stdout + built.stderr
    assert re.search(r"^  swiglu_f16_b1: \d+ units \(\d+ functions\), \d+ crossing sizes; about \d+ s$", built.stdout,
                     re.M), built.stdout
    # The GPU machine's script, on the CPU pair (no wheel to install, no
    # nvidia-smi: it says so and goes on); one variant alone, then all.
    script = ["bash", "bench/gpu_placement_costs.sh", str(kits), "120"]
    env = {**os.environ, "OUT": str(kits)}
    one = subprocess.run([*script, "swiglu_f16_b4"], cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)
    assert "swiglu_f16_b4: exit status 0" in one.stdout and "swiglu_f16_b1:" not in one.stdout, one.stdout + one.stderr
    timed = subprocess.run(script, cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)
    assert "swiglu_f16_b1: exit status 0" in timed.stdout, timed.stdout + timed.stderr
    assert (kits / "costs_swiglu_f16_b4.json").is_file()

    lacking = _bench("placement", "build", str(kit), "--smoke", "--models", "swiglu", "--dtypes", "f32",
                     f"--place-costs={kits}")
    assert lacking.returncode == 1 and "lacks costs_swiglu_f32_b1.json" in lacking.stdout, lacking.stdout

    # The kit of one of them (its costs file alone is needed).
    built = _bench("placement", "build", str(kit), *grid[:-1], "4", f"--place-costs={kits}")
    assert built.returncode == 0, built.stdout + built.stderr
    made = json.loads((kit / "placement.json").read_text())
    assert made["costs"] and sorted(made["variants"]) == ["swiglu_f16_b4"]
    for entry in made["variants"].values():
        assert entry["runs"] == {"every": 11, "classes": 10, "compiled": 10}  # 2 blocks: 4 parts
        for row in entry["budgets"]:
            for placed in [*row["placements"].values(), *row["splits"]]:
                units, crossings = placed["estimates"]["units"], placed["estimates"]["crossings"]
                assert units["modelled"] == 0 and units["measured"] > 0 and crossings["modelled"] == 0
    ran = _bench("placement", "run", str(kit), "--smoke", "--calls", "1", "--batch-calls", "1")
    assert ran.returncode == 0 and "every result right" in ran.stdout, ran.stdout + ran.stderr
    assert re.search(r"^\s+swiglu_f16_b4\s+\S+\s+[\d.]+ \|.*\|\s+u \d+/\d+ c \d+/\d+ \|", ran.stdout, re.M), ran.stdout
    assert "measured where the kit's costs files have a unit or crossing" in ran.stdout


def test_bench_placement_gpt2_style_stack(tmp_path):
    """The third model, the GPT-2-style stack (bench/gpt2_mlp.py: LayerNorm
    as one two-result reduction, biases, tanh-GELU): its units split into
    the embedding, blocks and head (placement_plan.layout_of), each class
    of contiguous split compiles, and every placement's result in f16 is
    numpy's."""
    built = _bench("placement", "build", str(tmp_path), "--smoke", "--models", "gpt2mlp", "--dtypes", "f16",
                   "--tokens", "4", "--fits", "0,1")
    assert built.returncode == 0, built.stdout + built.stderr
    made = json.loads((tmp_path / "placement.json").read_text())
    (entry,) = made["variants"].values()
    assert entry["runs"] == {"every": 11, "classes": 10, "compiled": 10}  # 2 blocks: 4 parts
    assert [row["name"] for row in entry["budgets"]] == ["n0", "n1", "cost", "all"]
    ran = _bench("placement", "run", str(tmp_path), "--smoke", "--calls", "1", "--batch-calls", "1")
    assert ran.returncode == 0 and "every result right" in ran.stdout, ran.stdout + ran.stderr
    rows = re.findall(r"^\s+gpt2mlp_f16_b4\s+(n0|n1|cost|all)\s+[\d.]+ \|.*\s(True|False)$", ran.stdout, re.M)
    assert rows == [(n, "True") for n in ("n0", "n1", "cost", "all")], ran.stdout
