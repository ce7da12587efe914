"""The unplaced PyTorch exports (examples/pytorch/exported_unplaced: no
device named anywhere, the programs automatic placement is shown on) are
right before any placement: each compiles and matches torch's outputs

* built by mdc-compile for one local device, run by mdc-run and ``load``;
* built by stock iree-compile, run by stock iree-run-module;
* built by mdc-compile with a CPU pair declared and no placement asked
  for (``--device=cpu=local[0] --device=gpu=local[1]``): everything is on
  the default device, ``cpu`` (the name that sorts first), arguments and
  results included, and runs there; the same with local + Vulkan
  (lavapipe) declared, run through the host twin (each model at its
  exported shapes).

gpt2 and llama (a transformers GPT2LMHeadModel and LlamaForCausalLM) take
their weights from NAME.irpa, ``--parameters=model=NAME.irpa`` (index.json's
"parameters"). Tolerance:
test_pytorch_exports.py's, ``rtol=1e-5, atol=1e-6``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from mdc.runtime_shim import load
from mdc.runtime_shim.native import iree_run_module

REPO = Path(__file__).resolve().parents[2]
EXPORTED = REPO / "examples" / "pytorch" / "exported_unplaced"
INDEX = json.loads((EXPORTED / "index.json").read_text())
RTOL, ATOL = 1e-5, 1e-6

ONE_CPU = ("cpu=local[0]",)
CPU_PAIR = ("cpu=local[0]", "gpu=local[1]")
VULKAN_PAIR = ("cpu=local[0]", "gpu=vulkan[0]")


def _cases():
    """(id, model, input files, output files): each model at its exported
    shapes, and the dynamic batch at its other sizes."""
    out = []
    for name, entry in INDEX.items():
        out.append((name, name, [i["file"] for i in entry["inputs"]], [o["file"] for o in entry["outputs"]]))
        for sized in entry.get("other_sizes", []):
            out.append((f"{name}-size{sized['size']}", name, [i["file"] for i in sized["inputs"]],
                        [o["file"] for o in sized["outputs"]]))
    return out


CASES = _cases()
IDS = [c[0] for c in CASES]
# One case a model, at its exported shapes (for the slower local + Vulkan runs).
MODEL_CASES = [c for c in CASES if c[0] == c[1]]


def _parameters(name: str) -> list[str]:
    """``SCOPE=FILE`` for each parameter archive of ``name`` (none when its
    weights are inlined)."""
    p = INDEX[name].get("parameters")
    return [f"{p['scope']}={EXPORTED / p['file']}"] if p else []


def _assert_matches_torch(got, want_files, where):
    assert len(got) == len(want_files), (where, len(got))
    for k, (g, f) in enumerate(zip(got, want_files)):
        w = np.load(EXPORTED / f)
        assert g.dtype == w.dtype and g.shape == w.shape, (where, k, g.dtype, g.shape, w.dtype, w.shape)
        np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL, err_msg=f"{where}: result {k}")


def _mdc_run(mdc_run, vmfb, devices, case, tmp_path):
    """mdc-run's results of @main for ``case`` (with its parameters)."""
    _, name, inputs, outputs = case
    outs = [tmp_path / f"out{k}.npy" for k in range(len(outputs))]
    proc = mdc_run(f"--module={vmfb}", "--function=main", *(f"--device={d}" for d in devices),
                   *(f"--parameters={p}" for p in _parameters(name)), *(f"--input=@{EXPORTED / f}" for f in inputs),
                   *(f"--output=@{o}" for o in outs), timeout=300)
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    return [np.load(o) for o in outs]


def _assert_all_on_cpu_and_loads(vmfb, devices, case):
    """The manifest puts every argument and result on ``cpu``, and ``load``
    runs @main to torch's results."""
    _, name, inputs, outputs = case
    with load(vmfb, list(devices), parameters=_parameters(name)) as m:
        sig = m.main.signature
        assert {v.affinity for v in (*sig.args, *sig.results)} == {"cpu"}, sig
        _assert_matches_torch([m.main(*(np.load(EXPORTED / f) for f in inputs))], outputs, f"load on {devices}")


def _run(argv, inputs, n_out, tmp_path):
    outs = [tmp_path / f"out{k}.npy" for k in range(n_out)]
    proc = subprocess.run([str(a) for a in argv] + [f"--input=@{EXPORTED / f}" for f in inputs]
                          + [f"--output=@{o}" for o in outs], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, (argv, proc.stdout, proc.stderr)
    return [np.load(o) for o in outs]


@pytest.fixture(scope="module")
def mdc_vmfb(build_vmfb):
    return lambda name, devices: build_vmfb(f"unplaced_{name}", (EXPORTED / f"{name}.mlir").read_text(), devices)


def test_the_exports_name_no_device():
    """What makes them unplaced: no IREE device, affinity or transfer in
    the program, no argument device in the index."""
    for name, entry in INDEX.items():
        text = (EXPORTED / entry["mlir"]).read_text()
        for word in ("__device_", "affinity", "transfer_to_logical_device", "hal.device"):
            assert word not in text, (name, word)
        assert all(i["device"] is None for i in entry["inputs"]), name
    for name in ("gpt2", "llama"):
        assert INDEX[name]["parameters"] == {"file": f"{name}.irpa", "scope": "model"}
        assert "#flow.parameter.named<\"model\"::" in (EXPORTED / f"{name}.mlir").read_text()


def test_the_index_lists_every_file():
    """index.json names every file of the folder, and only files it has."""
    listed = {"index.json"}
    for entry in INDEX.values():
        listed |= {entry["mlir"], *(v["file"] for v in (*entry["inputs"], *entry["outputs"]))}
        listed |= {v["file"] for s in entry.get("other_sizes", []) for v in (*s["inputs"], *s["outputs"])}
        listed |= {entry["parameters"]["file"]} if "parameters" in entry else set()
    assert listed == {p.name for p in EXPORTED.iterdir()}


@pytest.mark.parametrize("name", ["split_mlp", "embed_head", "dynamic_batch"])
def test_the_small_models_are_the_placed_ones_unplaced(name):
    """The same seeds as exported/'s: the same inputs, and torch's outputs
    within the tolerance (the same weights; only the transfers are gone)."""
    placed_dir = EXPORTED.parent / "exported"
    placed = json.loads((placed_dir / "index.json").read_text())[name]
    entry = INDEX[name]
    pairs = [(entry, placed)] + list(zip(entry.get("other_sizes", []), placed.get("other_sizes", [])))
    for mine, theirs in pairs:
        for kind in ("inputs", "outputs"):
            assert len(mine[kind]) == len(theirs[kind]), (name, kind)
            for a, b in zip(mine[kind], theirs[kind]):
                x, y = np.load(EXPORTED / a["file"]), np.load(placed_dir / b["file"])
                if kind == "inputs":
                    np.testing.assert_array_equal(x, y)
                else:
                    np.testing.assert_allclose(x, y, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_one_device_mdc_run(case, mdc_vmfb, mdc_run, tmp_path):
    got = _mdc_run(mdc_run, mdc_vmfb(case[1], ONE_CPU), ["local-task"], case, tmp_path)
    _assert_matches_torch(got, case[3], "mdc-run, one device")


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_one_device_stock_iree(case, build_stock_vmfb, tmp_path):
    _, name, inputs, outputs = case
    vmfb = build_stock_vmfb(f"unplaced_{name}", (EXPORTED / f"{name}.mlir").read_text(), {"cpu": "local[0]"})
    got = _run([iree_run_module(), f"--module={vmfb}", "--function=main", "--device=local-task",
                *(f"--parameters={p}" for p in _parameters(name))], inputs, len(outputs), tmp_path)
    _assert_matches_torch(got, outputs, "stock iree-compile and iree-run-module")


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_cpu_pair_without_placement(case, mdc_vmfb, mdc_run, tmp_path):
    """Two devices declared, none named by the program: all on ``cpu``."""
    vmfb = mdc_vmfb(case[1], CPU_PAIR)
    devices = ("local-task", "local-task")
    _assert_matches_torch(_mdc_run(mdc_run, vmfb, devices, case, tmp_path), case[3], "mdc-run, CPU pair")
    _assert_all_on_cpu_and_loads(vmfb, devices, case)


@pytest.mark.vulkan
@pytest.mark.parametrize("case", MODEL_CASES, ids=[c[0] for c in MODEL_CASES])
def test_local_and_vulkan_without_placement(case, mdc_vmfb, mdc_run, tmp_path):
    """A Vulkan device declared beside the CPU, none named by the program:
    all on ``cpu``; mdc-run and ``load`` run it in the wheel's
    iree-run-module (the Python runtime cannot open the pair)."""
    vmfb = mdc_vmfb(case[1], VULKAN_PAIR)
    devices = ("local-task", "vulkan")
    _assert_matches_torch(_mdc_run(mdc_run, vmfb, devices, case, tmp_path), case[3], "mdc-run, local + vulkan")
    _assert_all_on_cpu_and_loads(vmfb, devices, case)
