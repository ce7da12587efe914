"""bench placement with local devices standing in for the GPU (--smoke): a
small stack with no device named and its weights as named parameters,
compiled per budget with --place=auto, the hand splits and greedy fill,
then run through mdc.runtime_shim.load with a parameter archive made from
the seed; every result is checked against numpy, and a wrong one fails
the run. Its times mean nothing here; docs/PERFORMANCE.md has the GPU's."""

import json
import os
import re
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _bench(*args):
    return subprocess.run([sys.executable, "-m", "bench", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)


def test_bench_placement_smoke(tmp_path):
    # A folder with no kit: one line, no traceback, before anything runs.
    empty = _bench("placement", "run", str(tmp_path), "--smoke")
    assert empty.returncode == 1 and "Traceback" not in empty.stderr, empty.stdout + empty.stderr
    assert re.fullmatch(r"bench: error: \S+placement\.json: No such file or directory; build the kit with "
                        r"python -m bench placement build \S+\n", empty.stderr), empty.stderr
    built = _bench("placement", "build", str(tmp_path), "--smoke", "--fits", "0,4")
    assert built.returncode == 0, built.stdout + built.stderr
    kit = json.loads((tmp_path / "placement.json").read_text())
    assert sorted(kit["batches"]) == ["1", "4"]
    for entry in kit["batches"].values():
        rows = {row["name"]: row for row in entry["budgets"]}
        assert list(rows) == ["n0", "n4", "cost"]
        assert rows["n0"]["bytes"] == 0 and rows["n4"]["bytes"] > rows["cost"]["bytes"] > 0
        for row in rows.values():
            for placed in row["placements"].values():
                assert (tmp_path / placed["file"]).is_file() and placed["estimate_seconds"] > 0
                assert placed["gpu_bytes"] <= row["bytes"]
        # Budget 0: everything on the CPU, whoever places it.
        assert {p["blocks"] for p in rows["n0"]["placements"].values()} == {0}
        # The budget that fits all 4 blocks: the hand split has them all and
        # the head; greedy fill spends it on the table first (4 blocks, no head).
        n4 = rows["n4"]["placements"]
        assert (n4["hand_head"]["blocks"], n4["hand_head"]["head"], n4["hand_head"]["embedding"]) == (4, True, False)
        assert (n4["greedy"]["blocks"], n4["greedy"]["head"], n4["greedy"]["embedding"]) == (4, False, True)
        # The cost budget is greedy fill's shape: the table and 4 blocks; the
        # hand split with the head on the CPU fits all 4 blocks without it.
        cost = rows["cost"]["placements"]
        assert cost["greedy"]["embedding"] and cost["greedy"]["blocks"] == 4
        assert not cost["hand_blocks"]["embedding"] and cost["hand_blocks"]["blocks"] == 4
        # Two calls in flight: the budget that fits half the blocks or more
        # (n4 here), its program bytes three times (two lanes and the
        # module's own context), the latency module of n4 beside the
        # throughput objective's own, whose three copies fit.
        (two,) = entry["throughput"]
        assert two["name"] == "n4" and two["bytes"] == 3 * rows["n4"]["bytes"]  # --smoke reserves nothing
        latency, auto = two["placements"]["latency"], rows["n4"]["placements"]["auto"]
        assert (tmp_path / latency["file"]).is_file()
        same = [k for k in auto if k not in ("file", "estimate_seconds")]  # the table's estimate: throughput's
        assert {k: latency[k] for k in same} == {k: auto[k] for k in same}
        mine = two["placements"]["throughput"]
        assert (tmp_path / mine["file"]).is_file() and 3 * mine["gpu_bytes"] <= two["bytes"]
    # The hand splits are given to mdc-compile as assignment files.
    placed = json.loads(next(tmp_path.glob("hand_head_b1_n4.place.json")).read_text())
    assert {u["device"] for u in placed["units"]} == {"cpu", "gpu"}

    ran = _bench("placement", "run", str(tmp_path), "--smoke", "--calls", "2", "--batch-calls", "1")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    first, streamed = ran.stdout.split("\ntwo calls in flight", 1)
    rows = re.findall(r"^\s+(1|4)\s+(n0|n4|cost)\s.*\|.*\s(True|False)$", first, re.M)
    assert [(b, n) for b, n, _ in rows] == [(b, n) for b in "14" for n in ("n0", "n4", "cost")], ran.stdout
    assert {ok for _, _, ok in rows} == {"True"}, ran.stdout
    assert "every result right" in ran.stdout
    assert re.search(r"^targets: auto <= 1\.05x the best hand split at \d of 6 lines; .* at \d of 2 cost lines; "
                     r"estimates within 1\.5x of their measurement at \d+ of 18 \(worst [\d.e+-]+x\)$",
                     ran.stdout, re.M), ran.stdout
    assert "est: the --report's estimate (modelled from the machine profile)" in ran.stdout
    streams = re.findall(r"^\s+(1|4)\s+n4\s.*\|\s+[\d.]+x \|.*\s(True|False)$", streamed, re.M)
    assert streams == [("1", "True"), ("4", "True")], ran.stdout
    assert re.search(r"^throughput targets: .* at \d of 2 lines; .*$", ran.stdout, re.M), ran.stdout

    # A reference that is not the program's result fails the run.
    expected = tmp_path / "expected_b4.npy"
    np.save(expected, np.load(expected) + 1.0)
    wrong = _bench("placement", "run", str(tmp_path), "--smoke", "--calls", "1", "--batch-calls", "1")
    assert wrong.returncode == 1, wrong.stdout + wrong.stderr
    assert "WRONG results above" in wrong.stdout
    assert re.search(r"^\s+4\s+n4\s.*\sFalse$", wrong.stdout, re.M), wrong.stdout


def test_bench_placement_program_kits_measure_the_kits_programs(tmp_path):
    """build --program-kits: each batch's program and its mdc-profile
    --program kit; timed (here on the CPU pair, as the GPU machine times
    them), the costs files are for the very graphs the kit places
    (their digests match), and with --place-costs every compile gets one."""
    from bench import model, placement_kit

    built = _bench("placement", "build", str(tmp_path), "--smoke", "--program-kits")
    assert built.returncode == 0, built.stdout + built.stderr
    # The GPU machine's script, on the CPU pair (no wheel to install, no nvidia-smi: it says so and goes on).
    timed = subprocess.run(["bash", "bench/gpu_placement_costs.sh", str(tmp_path), "120"], cwd=ROOT,
                           capture_output=True, text=True, timeout=600, env={**os.environ, "OUT": str(tmp_path)})
    assert "b1: exit status 0" in timed.stdout and "b4: exit status 0" in timed.stdout, timed.stdout + timed.stderr
    plan = placement_kit.Plan(model.Stack(hidden=64, blocks=4, vocab=256), (1, 4), (0, 4), smoke=True,
                              costs=str(tmp_path))
    out = tmp_path / "kit"
    out.mkdir()
    batch = placement_kit._Batch(plan, str(out), 4)
    assert type(batch.cost).__name__ == "MeasuredCostModel"
    job = next(iter(batch.auto_jobs().values()))
    assert f"--place-costs={tmp_path / 'costs_b4.json'}" in job
