"""examples/pytorch/export.py --check's comparison, without torch: torch's
float outputs may move within a stated tolerance on another CPU (another
summation order); the MLIR, index.json, the inputs and integer outputs must
match byte for byte."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def export():
    spec = importlib.util.spec_from_file_location("mdc_example_export", REPO / "examples/pytorch/export.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # imports no torch: that happens only when exporting
    return module


def _pair(folder, name, old, new):
    """``name`` written as ``old`` into folder/old and as ``new`` into folder/new."""
    for side, a in (("old", old), ("new", new)):
        (folder / side).mkdir(parents=True, exist_ok=True)
        if isinstance(a, str):
            (folder / side / name).write_text(a)
        else:
            np.save(folder / side / name, a, allow_pickle=False)
    return folder / "new", folder / "old"


def test_the_stated_tolerance_is_the_tests_one(export):
    assert (export.OUTPUT_RTOL, export.OUTPUT_ATOL) == (1e-5, 1e-6)


def test_float_output_within_tolerance_is_the_same(export, tmp_path):
    old = np.linspace(-3, 3, 40, dtype=np.float32).reshape(4, 10)
    new = old * np.float32(1 + 3e-6)  # another CPU's summation order, a few ulps
    assert old.tobytes() != new.tobytes()
    new_dir, old_dir = _pair(tmp_path, "m.output0.npy", old, new)
    assert export.differing_files(str(new_dir), str(old_dir)) == []


def test_float_output_beyond_tolerance_differs(export, tmp_path):
    old = np.linspace(-3, 3, 40, dtype=np.float32).reshape(4, 10)
    new = old.copy()
    new[1, 2] += np.float32(1e-3)
    new_dir, old_dir = _pair(tmp_path, "m.size7.output0.npy", old, new)
    assert export.differing_files(str(new_dir), str(old_dir)) == ["m.size7.output0.npy"]


def test_float_output_of_another_shape_or_dtype_differs(export, tmp_path):
    old = np.zeros((4, 10), np.float32)
    for k, new in enumerate((np.zeros((10, 4), np.float32), np.zeros((4, 10), np.float64))):
        new_dir, old_dir = _pair(tmp_path / str(k), "m.output0.npy", old, new)
        assert export.differing_files(str(new_dir), str(old_dir)) == ["m.output0.npy"], new.dtype


def test_integer_output_and_inputs_compare_exactly(export, tmp_path):
    ids = np.arange(10, dtype=np.int64)
    new_dir, old_dir = _pair(tmp_path / "ints", "m.output0.npy", ids, ids + (ids == 3))
    assert export.differing_files(str(new_dir), str(old_dir)) == ["m.output0.npy"]
    x = np.linspace(-3, 3, 40, dtype=np.float32)
    new_dir, old_dir = _pair(tmp_path / "inputs", "m.input0.npy", x, x * np.float32(1 + 3e-6))
    assert export.differing_files(str(new_dir), str(old_dir)) == ["m.input0.npy"]


def test_mlir_and_index_compare_byte_for_byte(export, tmp_path):
    new_dir, old_dir = _pair(tmp_path, "m.mlir", "func.func @main()\n", "func.func @main() \n")
    _pair(tmp_path, "index.json", "{}\n", "{}\n")
    assert export.differing_files(str(new_dir), str(old_dir)) == ["m.mlir"]


def test_a_file_missing_from_the_committed_folder_differs(export, tmp_path):
    new_dir, old_dir = _pair(tmp_path, "m.output0.npy", np.zeros(3, np.float32), np.zeros(3, np.float32))
    np.save(new_dir / "m.output1.npy", np.zeros(3, np.float32))
    assert export.differing_files(str(new_dir), str(old_dir)) == ["m.output1.npy"]
