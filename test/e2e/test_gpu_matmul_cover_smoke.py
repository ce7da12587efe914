"""The cover part of gpu_matmul_configs.py (test/harness/gpu_matmul_cover.py)
without a GPU: a few of its cases (a batch matmul as the named op and as
the generic, a linear layer of dynamic M called at every M) built for a
local device and run on local-task, each against the reference. The pass
changes nothing for a CPU: this is the kit's plumbing, not the configs."""

from __future__ import annotations

import re

from harness import gpu_matmul_cover

SOME = {"qk_f32_s16", "qk_generic_f16_s1", "linear_dynamic_f32_nt"}


def test_cover_kit_builds_and_runs_right_on_a_cpu(tmp_path):
    assert gpu_matmul_cover.build(str(tmp_path), device="local", only=SOME) == 0
    rows, right = gpu_matmul_cover.run(str(tmp_path), device="local-task")
    assert right, rows
    table = gpu_matmul_cover.table(rows)
    found = re.findall(r"^\| (\w+) \| (\d+) \| IREE default \| [\d.]+ us, err [\d.e+-]+ \| [\d.]+ us, err", table, re.M)
    assert sorted(found) == sorted([("qk_f32_s16", "16"), ("qk_generic_f16_s1", "1")]
                                   + [("linear_dynamic_f32_nt", str(m)) for m in (1, 7, 16, 100, 1024)]), table
