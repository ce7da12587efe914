"""bench generate (issue 46 item 4) on a staged CPU pair (--smoke): the tiny
generation export (2 blocks of width 64, its committed parameters) compiled
with --place=auto under the budgets that fit one block and both, under a
profile whose second device is fast, so that the budget decides; the run
generates with each module in a process of its own and checks its ids
against the committed torch ids. Its times mean nothing here;
docs/PERFORMANCE.md says what the GPU machine's run measures."""

import json
import os
import re
import sys

from harness.bench_cli import assert_refuses_missing_kit, bench

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

ROW = r"^\s+(0\.50|1\.00)\s+[\d.]+ mdc auto\s+(\S+)\s+[\d.]+\s+[\d.]+\s+n/a\s+n/a\s+n/a\s+n/a (yes|no.*)$"


def test_bench_generate_smoke(tmp_path):
    # A folder with no kit: one line, no traceback, before anything runs.
    assert_refuses_missing_kit("generate", "kit.json", str(tmp_path), "--smoke")

    built = bench("generate", "build", str(tmp_path), "--smoke")
    assert built.returncode == 0, built.stdout + built.stderr
    kit = json.loads((tmp_path / "kit.json").read_text())
    rows = {r["name"]: r for r in kit["budgets"]}
    assert list(rows) == ["n1", "n2"] and kit["prompt_tokens"] == 12
    s = kit["sizes"]
    # The budgets: one block and its cache with the working allowance; then
    # both and the rest of the model (the smoke profile reserves nothing).
    assert rows["n1"]["bytes"] == s["working"] + s["block"] + s["kv"]
    assert rows["n2"]["bytes"] == s["working"] + 2 * (s["block"] + s["kv"]) + s["embedding"] + s["head"]
    assert rows["n1"]["weights_bytes"] == s["block"] and kit["reserved_bytes"] == 0
    for row in rows.values():
        assert (tmp_path / row["file"]).is_file() and (tmp_path / row["report"]).is_file()
        assert 0 < row["placed"]["gpu_bytes"] <= row["bytes"]
    # One block's budget splits the model; both blocks' puts all of it there.
    one, both = rows["n1"]["placed"], rows["n2"]["placed"]
    assert 1 <= one["blocks"] + one["split"] and one["blocks"] < 2 and not one["embedding"]
    assert (both["blocks"], both["split"], both["embedding"], both["head"]) == (2, 0, True, True)

    ran = bench("generate", "run", str(tmp_path), "--smoke", "--new-tokens", "16")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    lines = re.findall(ROW, ran.stdout, re.M)
    assert [(b, ids) for b, _, ids in lines] == [("0.50", "yes"), ("1.00", "yes")], ran.stdout
    assert lines[1][1] == "2EH", ran.stdout
    assert re.search(r"^\[1/2\] mdc-n1: prefill [\d.]+ ms, decode [\d.]+ tokens/s, ids same \(the same 16 ids\)",
                     ran.stdout, re.M), ran.stdout
    assert len(re.findall(r"^target: ", ran.stdout, re.M)) == 4, ran.stdout
    assert ran.stdout.rstrip().endswith("every result right"), ran.stdout

    # A budget the kit lacks is refused, in one line.
    other = bench("generate", "run", str(tmp_path), "--smoke", "--budgets", "0.25")
    assert other.returncode == 1 and "Traceback" not in other.stderr, other.stdout + other.stderr
    assert "--budgets: the kit has no budget 0.25 (it has 0.5, 1.0)" in other.stderr, other.stderr


def test_budgets_fit_the_blocks_of_tinyllama():
    """The TinyLlama-sized budgets from its own sizes: f32 blocks of 168 MiB
    and 0.5 MiB of cache, the fractions' block counts rounded half up."""
    from bench import generate_kit

    lw = generate_kit.llama_weights()
    s = generate_kit.sizes_of(lw.CONFIGS["tinyllama"], "f32", lw.PROMPT_TOKENS, lw.MAX_CONTEXT)
    assert (s.blocks, s.block, s.kv) == (22, 176177152, 2 * 4 * 256 * 64 * 4)
    assert s.embedding == s.head - 2048 * 4 == 32000 * 2048 * 4
    assert [s.fits(f) for f in generate_kit.FRACTIONS] == [0, 6, 11, 17, 22]
    total = sum(4 * int.__mul__(*shape) if len(shape) == 2 else 4 * shape[0]
                for shape in lw.weight_shapes(lw.CONFIGS["tinyllama"]).values())
    assert s.weights(22) == total and s.budget(0, 1 << 25) == 0
    assert s.budget(6, 1 << 25) == (1 << 25) + s.working + 6 * (s.block + s.kv)


def test_table_says_wrong_ids_and_failures(capsys):
    """A line whose ids are not torch's, or that failed, makes the run
    wrong, and the table says which."""
    from bench import generate, generate_table

    kit = {"smoke": False, "sizes": {"blocks": 2, "block": 1, "embedding": 1, "head": 1}, "prompt_tokens": 4,
           "devices": ["local-task", "cuda"], "f16_gpu": None,
           "budgets": [{"fraction": 0.5, "fits": 1, "name": "n1", "bytes": 100, "weights_bytes": 1, "file": "a",
                        "placed": {"blocks": 1, "split": 0, "embedding": False, "head": False}}]}
    lines = generate.plan_lines(kit, "", list(generate.TOOLS), None)
    assert [line.key for line in lines] == ["torch-f32", "torch-f16", "mdc-n1", "hand-n1", "accelerate-n1"]
    ok = {"prefill_s": 0.01, "decode_s": 0.1, "grown": 50, "held": 80, "ids": "same", "ids_same": True}
    results = {"mdc-n1": ok, "hand-n1": {**ok, "decode_s": 0.2, "placed": "1"},
               "accelerate-n1": {**ok, "decode_s": 0.2, "grown": 101, "placed": "0 (+rest streamed)"}}
    assert generate_table.table(kit, lines, results, 5)
    out = capsys.readouterr().out
    assert re.search(r"mdc auto\s+1\s+10\.0\s+40\.0\s+2\.00x\s+2\.00x", out), out
    assert "met at 1 of 1 budgets" in out
    assert ("mdc's peak GPU memory within the budget at every line (budgets above 0): met at 1 of 1 lines "
            "(torch's hand split and accelerate, which hold no budget: 1 of 2)") in out
    results["hand-n1"] = {**ok, "ids": "from 3", "ids_same": False, "ids_note": "first divergence at new token 3"}
    results["accelerate-n1"] = {"failed": "took over 240 s (timed out)"}
    assert not generate_table.table(kit, lines, results, 5)
    out = capsys.readouterr().out
    assert "WRONG ids: hand-n1 (first divergence at new token 3)" in out and "FAILED: accelerate-n1: took over" in out
