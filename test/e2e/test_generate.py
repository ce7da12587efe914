"""mdc.generate and mdc-generate on the committed generation exports
(examples/pytorch/exported_generate: a transformers LlamaForCausalLM of 2
blocks of width 64, its KV cache in mutable globals, functions prefill and
decode; docs/mdc-generate.md), against torch's greedy ids from
transformers' own ``generate`` for the same weights.

* f32, built by mdc-compile for one local device: the first NEW_TOKENS ids
  are torch's and each step's logits torch's within LOGITS_ATOL; a second
  generation after another prompt gives the same ids (prefill starts the
  cache afresh);
* f16: the same ids, or, at the first divergence, a near tie in torch's
  own logits (torch's logit of mdc's id within F16_TIE of its best);
* the same f32 export with a CPU pair declared and no placement (all on
  ``cpu``), on two local-task devices, and on a pair staged as for a GPU
  with everything on the staged device;
* ``--place=auto`` on a staged pair under a budget that splits the model:
  work on both devices in both functions, each cache global one device;
* a module without @prefill and @decode, and prompts it cannot take, are
  ShimErrors naming the problem;
* mdc-generate: the ids, the progress bar, the tokens/s line, --help, and
  one-line errors for a missing module and a bad --prompt-ids.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import mdc
from mdc.runtime_shim import ShimError, load
from mdc.runtime_shim.generate import describe_divergence, first_divergence

REPO = Path(__file__).resolve().parents[2]
EXPORTED = REPO / "examples" / "pytorch" / "exported_generate"
INDEX = json.loads((EXPORTED / "index.json").read_text())
PROMPT = np.load(EXPORTED / "llama_tiny.prompt.npy")
NEW_TOKENS = 16
LOGITS_ATOL = 1e-4  # f32 logits of order 1, summed in another order than torch's
F16_TIE = 4e-3  # a few f16 ulps of logits of order 1: torch's two ids tie within f16 rounding


def _parameters(name: str) -> list[str]:
    p = INDEX[name]["parameters"]
    return [f"{p['scope']}={EXPORTED / p['file']}"]


def _torch(name: str):
    entry = INDEX[name]
    return np.load(EXPORTED / entry["torch_ids"]), np.load(EXPORTED / entry["torch_logits"])


@pytest.fixture(scope="module")
def tiny(build_vmfb):
    def build(dtype: str, devices=("cpu=local[0]",), links=()):
        name = f"llama_tiny_{dtype}"
        return build_vmfb(name, (EXPORTED / f"{name}.mlir").read_text(), devices, links=links)
    return build


def test_the_index_lists_the_files():
    for name, entry in INDEX.items():
        if entry["config"] != "tiny":
            continue
        for key in ("mlir", "prompt", "torch_ids", "torch_logits"):
            assert (EXPORTED / entry[key]).is_file(), (name, key)
        assert (EXPORTED / entry["parameters"]["file"]).is_file(), name
        assert np.load(EXPORTED / entry["torch_ids"]).shape == (entry["new_tokens"],)


def test_f32_generates_torchs_ids(tiny):
    ids, logits = _torch("llama_tiny_f32")
    with load(tiny("f32"), "local-task", parameters=_parameters("llama_tiny_f32")) as m:
        got = mdc.generate(m, PROMPT, NEW_TOKENS, keep_logits=True)
        other = mdc.generate(m, PROMPT[::-1].copy(), 4)
        again = mdc.generate(m, PROMPT, NEW_TOKENS)
    assert got.ids.dtype == np.int64 and got.ids.shape == (NEW_TOKENS,)
    np.testing.assert_array_equal(got.ids, ids[:NEW_TOKENS])
    np.testing.assert_allclose(got.logits, logits[:NEW_TOKENS], rtol=0, atol=LOGITS_ATOL)
    assert not np.array_equal(other.ids, got.ids[:4])  # another prompt, other ids: the prompt is read
    np.testing.assert_array_equal(again.ids, got.ids)


def test_f16_generates_torchs_ids_or_a_near_tie(tiny):
    ids, logits = _torch("llama_tiny_f16")
    with load(tiny("f16"), "local-task", parameters=_parameters("llama_tiny_f16")) as m:
        got = mdc.generate(m, PROMPT, NEW_TOKENS, keep_logits=True)
    d = first_divergence(got.ids, got.logits, ids, logits)
    if d is not None:  # the reference's own logits must call it a tie
        gap = d["ref_logits"][d["ref_id"]] - d["ref_logits"][d["id"]]
        assert 0 <= gap <= F16_TIE, describe_divergence(d, NEW_TOKENS)


def test_cpu_pair_declared_without_placement(tiny):
    ids, _ = _torch("llama_tiny_f32")
    vmfb = tiny("f32", ("cpu=local[0]", "gpu=local[1]"))
    with load(vmfb, ["local-task", "local-task"], parameters=_parameters("llama_tiny_f32")) as m:
        assert {v.affinity for v in m.decode.signature.args} == {"cpu"}
        np.testing.assert_array_equal(mdc.generate(m, PROMPT, NEW_TOKENS).ids, ids[:NEW_TOKENS])


def test_staged_pair_all_on_the_accelerator(tiny):
    """A second CPU staged as a GPU is, named so that it is the default
    device (``gpu`` sorts before ``host``): the cache globals, the work,
    the arguments and the results all live on it."""
    ids, _ = _torch("llama_tiny_f32")
    vmfb = tiny("f32", ("gpu=local[1]", "host=local[0]"), ("host:gpu=staged",))
    with load(vmfb, ["local-task", "local-sync"], parameters=_parameters("llama_tiny_f32")) as m:
        assert {v.affinity for v in (*m.prefill.signature.args, *m.decode.signature.results)} == {"gpu"}
        np.testing.assert_array_equal(mdc.generate(m, PROMPT, NEW_TOKENS).ids, ids[:NEW_TOKENS])


def test_a_module_without_the_entry_points(build_vmfb):
    mlir = (REPO / "examples" / "pytorch" / "exported_unplaced" / "split_mlp.mlir").read_text()
    with load(build_vmfb("split_mlp_for_generate", mlir, ("cpu=local[0]",)), "local-task") as m:
        with pytest.raises(ShimError, match=r"has no function @prefill or @decode .*docs/mdc-generate\.md"):
            mdc.generate(m, PROMPT, 4)


def test_a_path_is_not_a_module(tiny):
    with pytest.raises(ShimError, match=r"takes a loaded module \(mdc\.runtime_shim\.load\), got str"):
        mdc.generate(str(tiny("f32")), PROMPT, 4)


@pytest.mark.parametrize("prompt, message", [
    (np.arange(129), r"129 tokens; @prefill takes 1 to 128"),
    (np.array([], np.int64), r"0 tokens"),
    (np.array([3, -1]), r"token ids must lie in 0\.\.1023"),
    (np.ones((2, 3), np.int64), r"one sequence of integer token ids"),
    (np.ones(3, np.float32), r"one sequence of integer token ids"),
])
def test_prompts_it_cannot_take(tiny, prompt, message):
    with load(tiny("f32"), "local-task", parameters=_parameters("llama_tiny_f32")) as m:
        with pytest.raises(ShimError, match=message):
            mdc.generate(m, prompt, 4)
        with pytest.raises(ShimError, match="max_new_tokens"):
            mdc.generate(m, PROMPT, 0)


def _cli(*args) -> subprocess.CompletedProcess:
    """mdc-generate, run as ``python -m`` (this checkout's code); its output
    decoded with no newline translation, so the bar's carriage returns stay."""
    proc = subprocess.run([sys.executable, "-m", "mdc.runtime_shim.generate_cli", *map(str, args)],
                          capture_output=True, timeout=300)
    proc.stdout, proc.stderr = proc.stdout.decode(), proc.stderr.decode()
    return proc


def test_mdc_generate_command(tiny, tmp_path):
    ids, _ = _torch("llama_tiny_f32")
    out = tmp_path / "ids.npy"
    proc = _cli(tiny("f32"), f"--parameters={_parameters('llama_tiny_f32')[0]}",
                f"--prompt-ids=@{EXPORTED / 'llama_tiny.prompt.npy'}", f"--max-new-tokens={NEW_TOKENS}",
                "--device=local-task", f"--output=@{out}")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == " ".join(str(i) for i in ids[:NEW_TOKENS])
    assert lines[1].startswith(f"prefill: {len(PROMPT)} tokens in ") and "tokens/s" in lines[1]
    assert f"decode: {NEW_TOKENS - 1} tokens in " in lines[1]
    assert f"] {NEW_TOKENS}/{NEW_TOKENS} tokens\n" in proc.stderr and "\r[" in proc.stderr
    np.testing.assert_array_equal(np.load(out), ids[:NEW_TOKENS])
    same = _cli(tiny("f32"), f"--parameters={_parameters('llama_tiny_f32')[0]}", "--no-progress",
                "--prompt-ids=" + ",".join(str(i) for i in PROMPT), "--max-new-tokens=3")
    assert same.returncode == 0 and same.stderr == "" and same.stdout.split("\n")[0].split() == \
        [str(i) for i in ids[:3]], same


def test_mdc_generate_help_and_mistakes(tmp_path):
    assert _cli("--help").returncode == 0
    missing = _cli(tmp_path / "nope.vmfb", "--prompt-ids=1,2")
    assert missing.returncode == 2
    assert missing.stderr == f"mdc-generate: error: no such module file: {tmp_path / 'nope.vmfb'}\n"
    (tmp_path / "empty.vmfb").write_bytes(b"")
    bad = _cli(tmp_path / "empty.vmfb", "--prompt-ids=1,two")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--prompt-ids" in bad.stderr


def test_placed_automatically_across_a_staged_pair(tmp_path):
    """``--place=auto`` under a budget that splits the model (a profile
    whose accelerator is fast, so that work goes there until the budget is
    spent): prefill and decode each run units on both devices, every cache
    global is state with one device in both functions, and the ids are
    torch's."""
    ids, _ = _torch("llama_tiny_f32")
    vmfb, report = tmp_path / "placed.vmfb", tmp_path / "placed.json"
    profile = REPO / "test" / "lit" / "assign" / "Inputs" / "fast_gpu_profile.json"
    subprocess.run(["mdc-compile", str(EXPORTED / "llama_tiny_f32.mlir"), "--device=cpu=local[0]",
                    "--device=gpu=local[1]", "--link=cpu:gpu=staged", "--iree-llvmcpu-target-cpu=host",
                    "--place=auto", "--gpu-memory=300KiB", f"--place-profile={profile}",
                    f"--report={report}", "-o", str(vmfb)], check=True, capture_output=True, text=True)
    functions = json.loads(report.read_text())["placement"]["functions"]
    caches = {}
    for placed in functions.values():
        assert {u["device"] for u in placed["units"]} == {"cpu", "gpu"}, placed["summary"]
        for w in placed["weights"]:
            if w["kind"] == "state":
                assert caches.setdefault(w["name"], w["device"]) == w["device"], w
    assert len(caches) == 4, caches  # one K and one V global per block
    with load(vmfb, ["local-task", "local-sync"], parameters=_parameters("llama_tiny_f32")) as m:
        np.testing.assert_array_equal(mdc.generate(m, PROMPT, NEW_TOKENS).ids, ids[:NEW_TOKENS])
