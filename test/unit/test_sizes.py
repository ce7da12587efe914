"""The bytes of a tensor type (passes/analysis/sizes.py), read off the type:
what the residence rule weighs an operand by, and what the reports print."""

from __future__ import annotations

import pytest
from iree.compiler import ir

from mdc.passes.analysis.sizes import Extent, _size_of, static_bytes
from mdc.pipeline.ireec import Compiler


@pytest.fixture(scope="module")
def context():
    compiler = Compiler([])
    with compiler.context:
        yield compiler.context


@pytest.mark.parametrize("text, expected", [
    ("tensor<4x8xf32>", 128),
    ("tensor<f64>", 8),
    ("tensor<3xbf16>", 6),
    ("tensor<5xi1>", 5),  # a sub-byte element takes a byte
    ("tensor<5xi4>", 5),
    ("tensor<2xsi8>", 2),
    ("tensor<2xf8E4M3FN>", 2),
    ("tensor<2xtf32>", 8),  # stored in 32 bits
    ("tensor<0x4xf32>", 0),
    ("tensor<4xf32, 1 : i64>", 16),  # an encoding changes no bytes
    ("tensor<?x8xf32>", None),
    ("tensor<4xindex>", None),
    ("tensor<4xcomplex<f32>>", None),
    ("tensor<*xf32>", None),
    ("!hal.buffer_view", None),
    ("i32", None),
])
def test_static_bytes(context, text, expected):
    assert static_bytes(ir.Type.parse(text)) == expected


def test_dynamic_dimensions_take_the_given_extents(context):
    d = Extent(1, ())
    size = _size_of(ir.Type.parse("tensor<?x4x?xf16>"), [Extent(3), d])
    assert size.encoding == "tensor<?x4x?xf16>"
    assert size.dims == (Extent(3), Extent(4), d)
    assert size.bytes == Extent(24)
    missing = _size_of(ir.Type.parse("tensor<?x4x?xf16>"), [Extent(3)])
    assert missing.encoding == "tensor<?x4x?xf16>" and missing.bytes is None
