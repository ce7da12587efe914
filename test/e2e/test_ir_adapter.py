"""The IR adapter (passes/ir/ir_adapter.py) alone: what it reads off printed
IREE attributes, function visibility, the symbol table, and the staging
library it clones helpers from."""

from __future__ import annotations

from iree.compiler import ir

from mdc.passes.ir import ir_adapter as irx
from mdc.passes.lowering import staging_template
from mdc.pipeline.ireec import Compiler

_MODULE = """
util.global private @dev : !hal.device = #hal.device.target<"cuda", {ordinal = 1 : index}, [#hal.executable.target<"cuda", "cuda-nvptx-fb">]> : !hal.device
util.func private @hidden() {
  util.return
}
util.func public @shown() {
  util.return
}
util.func @plain() {
  util.return
}
"""


def _parsed(text: str):
    compiler = Compiler([])
    return compiler, compiler.parse_text(text, "adapter.mlir")


def test_affinity_reads_devices():
    compiler, _ = _parsed("")
    with compiler.context:
        one = ir.Attribute.parse("#hal.device.affinity<@device_a>")
        two = ir.Attribute.parse("#hal.device.optimal<[#hal.device.affinity<@a>, #hal.device.affinity<@b>]>")
        assert irx.Affinity.of_attr(one) == irx.Affinity(("device_a",))
        assert irx.Affinity.of_attr(one).single == "device_a"
        assert irx.Affinity.of_attr(two).devices == ("a", "b")
        assert irx.Affinity.of_attr(two).single is None
        assert irx.Affinity.of_attr(None).single is None
        assert str(irx.affinity_attr("device_b")) == "#hal.device.affinity<@device_b>"


def test_device_targets_read_once():
    text = '#hal.device.target<"cuda", {ordinal = 1 : index}, [#hal.executable.target<"cuda", "cuda-nvptx-fb">]>'
    assert irx.target_device(text) == ("cuda", 1)
    assert irx.target_device('#hal.device.target<"local">') == ("local", 0)
    assert irx.target_device("#hal.device.alias<\"local\">") is None
    assert irx.defined_device('#hal.device.alias<"vulkan"[2]>') == ("vulkan", 2)
    assert irx.defined_device('#hal.device.target<"local">') == ("local", None)
    assert irx.executable_formats(text) == ["cuda-nvptx-fb"]
    assert "ordinal" not in irx.without_ordinals(text)
    assert irx.targets_named(f"device not found: {text}") == [("cuda", 1)]
    assert irx.declared_affinity_device("tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@dev_b>}") == "dev_b"
    assert irx.declared_affinity_device("tensor<4xf32>") is None


def test_visibility_and_symbols():
    compiler, module = _parsed(_MODULE)
    with compiler.context:
        functions = {irx.symbol_name(op): op for op in irx.top_level_ops(module) if irx.is_function(op)}
        assert [name for name, op in functions.items() if irx.is_public(op)] == ["shown", "plain"]
        assert irx.visibility(functions["hidden"]) == "private"
        names = irx.SymbolNames(module)
        assert "dev" in names
        assert names.unique("shown") == "shown_1"
        assert names.unique("shown") == "shown_2"  # taken once made, before any op has it
        assert names.unique("fresh") == "fresh"
        assert irx.SymbolNames(module).unique("shown") == "shown_1"  # a fresh read of the module


def test_fixed_types_parsed_once_per_context():
    compiler, module = _parsed(_MODULE)
    with compiler.context:
        fence = irx.fence_type()
        assert irx.fence_type() is fence  # cached
        assert str(fence) == "!hal.fence"
        assert irx.is_type(ir.Type.parse("!hal.fence"), irx.FENCE)
        assert not irx.is_type(ir.Type.parse("!hal.buffer"), irx.FENCE)
        assert all(irx.is_resource_type(irx.resource_type(lifetime)) for lifetime in ("*", "external", "staging"))
        assert not irx.is_resource_type(irx.timepoint_type())
        assert irx.is_list_type(ir.Type.parse("!util.list<i32>"))
        assert irx.is_tensor_type(irx.bytes_tensor_type()) and irx.is_tensor_type(ir.Type.parse("tensor<*xf32>"))
        assert irx.index_constant(ir.Attribute.parse("-3 : index")) == -3
        assert irx.index_constant(ir.Attribute.parse("3 : i32")) is None
        device = next(op for op in irx.top_level_ops(module) if op.name == irx.UTIL_GLOBAL)
        assert irx.is_device_global(device)
    other, _ = _parsed("")
    with other.context:  # another context's types: parsed anew in it
        assert irx.fence_type() is not fence and irx.fence_type().context is other.context
    # A comparison needs no current context: it takes the compared type's.
    assert irx.is_type(fence, irx.FENCE)


_READERS = """
util.func public @f(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>,
                                        affine_map<(i, j, k) -> (i, j)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<4x8xf32>, tensor<8x4xf32>) outs(%c : tensor<4x4xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %z, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  util.return %r : tensor<4x4xf32>
}
"""


def test_typed_readers_of_types_and_enums():
    compiler, module = _parsed(_READERS)
    with compiler.context:
        generic = next(op for op in irx.walk(module) if op.name == irx.LINALG_GENERIC)
        assert irx.iterator_types(generic) == ["parallel", "parallel", "reduction"]
        assert irx.iterator_types(irx.top_level_ops(module)[0]) == []
        assert irx.fixed_attr("#linalg.iterator_type<reduction>") is irx.fixed_attr("#linalg.iterator_type<reduction>")
        for text in ("i32", "index", "f8E4M3FN", "complex<f32>", "vector<4xf32>", "tensor<?xf32>", "tensor<*xi8>",
                     "memref<4xf32>", "tuple<i32>", "none"):
            assert irx.is_builtin_type(ir.Type.parse(text)), text
        for text in (irx.FENCE, irx.BUFFER_VIEW, "!stream.resource<*>", "!util.list<?>"):
            assert not irx.is_builtin_type(ir.Type.parse(text)), text
        memory = ir.StringAttr.get("HostVisible|DeviceLocal")
        assert irx.enum_names_any(memory, "HostLocal", "HostVisible")
        assert not irx.enum_names_any(memory, "HostLocal")
        target = ir.Attribute.parse('#hal.executable.target<"cuda", "cuda-nvptx-fb">')
        assert irx.executable_target_format(target) == "cuda-nvptx-fb"
        assert irx.executable_target_format(ir.Attribute.parse("unit")) is None


def test_staging_library_instantiates_renamed():
    compiler, module = _parsed(_MODULE)
    with compiler.context, ir.Location.unknown():
        staging_template.instantiate(module, staging_template.stage_helper(True, False),
                                     {"pinned_cache": "__cache", "stage_local_to_gpu": "__stage"})
        staging_template.instantiate(module, staging_template.helper("await"), {"await": "__wait"},
                                     message="mdc: said otherwise")
        ops = irx.top_level_ops(module)
        assert irx.symbol_name(ops[0]) == "__cache"  # globals first
        assert [irx.symbol_name(op) for op in ops[-2:]] == ["__stage", "__wait"]
        text = str(module)
        assert "util.global.load @__cache" in text and "@pinned_cache" not in text
        assert '"mdc: said otherwise"' in text and staging_template.AWAIT_MESSAGE not in text
        assert module.verify()


def test_staging_library_polled_waits(monkeypatch):
    # HOST_WAIT_POLL (test/e2e/gpu_stall.py) rewrites every host wait of
    # the library into a polling loop that names the wait that timed out.
    monkeypatch.setattr(staging_template, "HOST_WAIT_POLL", (5, 3))
    compiler, module = _parsed("")
    with compiler.context, ir.Location.unknown():
        staging_template.instantiate(module, staging_template.helper("pieces_arrived"), {"pieces_arrived": "__arrived"})
        text = str(module)
        assert "timeout_millis(%c-1_i32)" not in text and "scf.while" in text
        assert '"mdc: copy out of staging memory failed (copied timed out)"' in text
        assert module.verify()
