"""IREE 3.13 gives mutable globals with one initial value one storage.

programs/splat_globals_alias.mlir: @a and @b, both ``dense<0.0>``, each
updated in place (``tensor.insert_slice`` into its loaded value) by @fill.
Built by stock iree-compile and by mdc-compile, after @fill both globals
read back @b's update: what IREE does, not what the program says. It is
why examples/pytorch/llama_generate.py computes each KV cache anew rather
than writing into it (a prefill's slice, a decode's ``index_copy_``): its
cache globals all start as zeros. The test holds today's behaviour so that
an IREE that stops doing this fails here, and the workaround can go; the
same program with @b starting at ones keeps the two apart, so the rule is
the shared initial value.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from conftest import compile_mlir, compile_mlir_with_stock_iree

PROGRAM = Path(os.path.dirname(os.path.abspath(__file__))) / "programs" / "splat_globals_alias.mlir"
X, Y = np.arange(1, 5, dtype=np.float32), np.arange(10, 14, dtype=np.float32)
WRITTEN_Y = np.concatenate([Y, np.zeros(4, np.float32)])


def _fill_and_peek(vmfb) -> list[np.ndarray]:
    from mdc.runtime_shim import load

    with load(str(vmfb), "local-task") as m:
        m.fill(X, Y)
        return list(m.peek())


def test_stock_iree_gives_both_globals_one_storage(tmp_path):
    vmfb = tmp_path / "stock.vmfb"
    compile_mlir_with_stock_iree(PROGRAM, vmfb, {"cpu": "local[0]"})
    a, b = _fill_and_peek(vmfb)
    np.testing.assert_array_equal(b, WRITTEN_Y)
    np.testing.assert_array_equal(a, WRITTEN_Y)  # the program wrote X into @a


def test_mdc_compile_does_the_same(tmp_path):
    vmfb = tmp_path / "mdc.vmfb"
    compile_mlir(PROGRAM, vmfb, ("cpu=local[0]",))
    a, b = _fill_and_peek(vmfb)
    np.testing.assert_array_equal(b, WRITTEN_Y)
    np.testing.assert_array_equal(a, WRITTEN_Y)


def test_another_initial_value_keeps_its_own_storage(tmp_path):
    source = tmp_path / "distinct.mlir"
    source.write_text(PROGRAM.read_text().replace("@b = dense<0.0>", "@b = dense<1.0>"))
    vmfb = tmp_path / "distinct.vmfb"
    compile_mlir(source, vmfb, ("cpu=local[0]",))
    a, b = _fill_and_peek(vmfb)
    np.testing.assert_array_equal(a, np.concatenate([X, np.zeros(4, np.float32)]))
    np.testing.assert_array_equal(b, np.concatenate([Y, np.ones(4, np.float32)]))
