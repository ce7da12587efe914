"""generate-entry-point: ``@generate``, a greedy generation loop in the module,
added to a module whose ``@prefill`` and ``@decode`` follow mdc.generate's
convention (docs/mdc-generate.md).

mdc.generate calls ``@prefill`` once and ``@decode`` once a new token, and
the KV cache lives in the module's mutable globals between the calls. A
module that runs in stock ``iree-run-module`` (a Vulkan device beside
another one: runtime_shim/native.py) runs each call in a process of its
own, so nothing of the cache outlives a call. ``@generate`` makes the whole
generation one call:

    util.func public @generate(%ids: tensor<1xNxI>, %length: tensor<1xI>, %count: i64)
        -> (tensor<?xI>, tensor<?xVxF>)

the new ids (``count`` of them) and each one's logits: ``@prefill``, then
``count - 1`` calls of ``@decode``, each new id the argmax of the logits
(the first on a tie, as mdc.generate's and torch's), fed back at position
``length + i - 1``. A count below 1 fails the call with a status.

It calls each of the two in IREE's coarse-fences ABI, with a fence of its
own that the result's import waits on, each argument exported and the
result imported on the device the callee's import and export name (what
--place wrote there; else the module's default device, named: left
unnamed, the import of a result made on a GPU is read wherever its first
reader runs, the host in @generate's host twin): an iree-turbine export's ``@prefill$async`` (its
``@prefill`` a sync wrapper of it), or for a plain tensor function a
private never-inlined wrapper ``@prefill$generate`` this pass adds, in the
same ABI. Three stock IREE 3.13 bugs shape this (docs/DESIGN.md section 8):

* calling a sync wrapper in a loop hangs: stream scheduling moves its
  ``hal.fence.await`` above the call that signals the fence
  (test/lit/regress/iree_loop_fence_await_before_call.test); a fence the
  result's import waits on is ordered by the values themselves;
* a global stored before a loop whose body loads and stores it has its
  store moved after the loop (iree-util-simplify-global-accesses;
  iree_global_store_sunk_past_loop.test): a plain function inlined into
  the loop would lose prefill's cache to the first decode step; a call
  of a never-inlined function is a barrier to that motion;
* a loop carrying two dynamically sized tensors (the ids and the logits)
  packs them into one allocation and drops the offset of one, which then
  reads the other's bytes (iree_loop_two_dynamic_results.test, the family
  of iree_loop_init_packed_offset.test): each carried tensor starts and
  is yielded as a buffer of its own (exported, behind an optimization
  barrier on the buffer view, imported), at offset 0, as
  loop-init-isolation does for staged loops. IREE waits on the host for
  it, once a step, as it waits for the call.

Runs at the input level after assign-devices, so ``@generate`` is not
placed: its argmaxes and copies run on the default device (they are tiny);
the model's work keeps the placement of ``@prefill`` and ``@decode``.
Before host-entry-points, which gives it a host twin where its values live
on a device the CPU cannot use. A module without both functions, or whose
functions take other types (ids of i64 or i32 throughout, logits of f16,
bf16, f32 or f64, as the convention has them), is left as it is; a module
that already defines ``@generate`` (or a wrapper's name) is an error
(rename it, or compile with ``--no-generate-entry-point``), as a twin's
name taken is.
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir

from mdc.contract.manifest import MODEL_COARSE_FENCES

from ..assignment.boundary import ABI_AFFINITY, OP_AFFINITY, boundary_of, promise
from ..infra.diagnostics import MdcError
from ..infra.pass_base import CompileSettings, Fact, ModulePass
from ..ir import ir_adapter as irx
from ..ir.ir_util import symbol_ref, top_level_ops
from ..ir.module_facts import module_default_device

PREFILL, DECODE, GENERATE = "prefill", "decode", "generate"
ASYNC_SUFFIX = "$async"
WRAPPER_SUFFIX = "$generate"  # the coarse-fences wrapper of a plain @prefill or @decode
FLAG = "--no-generate-entry-point"
IDS = ("i64", "i32")
# -inf of each logits type, as the bits MLIR's float constants take.
LOWEST = {"f16": "0xFC00", "bf16": "0xFF80", "f32": "0xFF800000", "f64": "0xFFF0000000000000"}
STATUS_INVALID_ARGUMENT = 3  # iree_status_code_t


@dataclasses.dataclass(frozen=True)
class GenerateEntryPointOptions:
    """``add``: whether to add ``@generate`` (not --no-generate-entry-point);
    ``default``: the module's default device, where the callees' values
    that name no device live (None: the module's own attribute says)."""

    add: bool = True
    default: str | None = None

    @classmethod
    def of(cls, settings: CompileSettings) -> "GenerateEntryPointOptions":
        return cls(settings.generate_entry_point, settings.default)


@dataclasses.dataclass(frozen=True)
class Callee:
    """How ``@generate`` calls ``@prefill`` or ``@decode``: ``symbol``, the
    coarse-fences function it calls (two buffer views, then a wait and a
    signal fence; one buffer view back); the tensor types of its two
    arguments and its result; the devices (``#hal.device.*`` attributes,
    or None) it imports them and exports that on. ``plain``: for a tensor
    function, its name: ``symbol`` is then a private coarse-fences wrapper
    of it that this pass adds (``wrapper_text``)."""

    symbol: str
    arguments: tuple
    result: ir.Type
    argument_affinities: tuple = (None, None)
    result_affinity: ir.Attribute | None = None
    plain: str | None = None


def _function_type(op) -> ir.FunctionType:
    return ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)


def _coarse_fences(op) -> bool:
    model = irx.get_attr(op, "iree.abi.model")
    types = _function_type(op)
    inputs, results = list(types.inputs), list(types.results)
    return (model is not None and ir.StringAttr(model).value == MODEL_COARSE_FENCES and len(inputs) == 4
            and all(irx.is_type(t, irx.BUFFER_VIEW) for t in [*inputs[:2], *results])
            and all(irx.is_type(t, irx.FENCE) for t in inputs[2:]) and len(results) == 1)


def _declared(op, key: str, count: int) -> tuple:
    """Each value's ``iree.abi.affinity`` in ``op``'s ``arg_attrs`` or
    ``res_attrs`` (``key``), or None."""
    attrs = irx.get_attr(op, key)
    found = []
    for i in range(count):
        entry = ir.DictAttr(attrs[i]) if attrs is not None and i < len(attrs) else None
        found.append(entry[ABI_AFFINITY] if entry is not None and ABI_AFFINITY in entry else None)
    return tuple(found)


def callee(functions: dict, name: str, default: str | None = None) -> Callee | None:
    """``@name`` as ``@generate`` would call it: a public tensor function
    of two arguments and one result (through a wrapper), or the sync
    wrapper of a coarse-fences ``@name$async`` whose two arguments are
    imported and whose result is exported; else None. A value that names
    no device is on ``default`` (IREE's rule for a public function's),
    named so: unnamed in @generate, the import of a result on the GPU
    would be read wherever its first reader runs."""
    found = _callee(functions, name)
    if found is None or default is None:
        return found
    fill = promise(default)
    return dataclasses.replace(found, argument_affinities=tuple(a or fill for a in found.argument_affinities),
                               result_affinity=found.result_affinity or fill)


def _callee(functions: dict, name: str) -> Callee | None:
    op = functions.get(name)
    if op is None:
        return None
    types = _function_type(op)
    inputs, results = list(types.inputs), list(types.results)
    if len(inputs) == 2 and len(results) == 1 and all(irx.is_tensor_type(t) for t in [*inputs, *results]):
        return Callee(f"{name}{WRAPPER_SUFFIX}", tuple(inputs), results[0], _declared(op, "arg_attrs", 2),
                      _declared(op, "res_attrs", 1)[0], plain=name)
    fenced = functions.get(name + ASYNC_SUFFIX)
    if fenced is None or not _coarse_fences(fenced):
        return None
    boundary = boundary_of(fenced)
    if sorted(boundary.imports) != [0, 1] or len(boundary.exports) != 1 or boundary.exports[0] is None:
        return None
    imports = [boundary.imports[0], boundary.imports[1]]
    return Callee(name + ASYNC_SUFFIX, tuple(op.results[0].type for op in imports),
                  boundary.results[0].type, tuple(irx.get_attr(op, OP_AFFINITY) for op in imports),
                  irx.get_attr(boundary.exports[0], OP_AFFINITY))


@dataclasses.dataclass(frozen=True)
class Convention:
    """The sizes and types of a pair that follows the convention: the
    prompt's capacity N, the ids' type I, the vocabulary V, the logits'
    type F (as MLIR prints them)."""

    capacity: int
    ids: str
    vocab: int
    logits: str


def _shape(t: ir.Type) -> tuple | None:
    if not isinstance(t, ir.RankedTensorType) or not t.has_static_shape:
        return None
    return tuple(t.shape)


def _element(t: ir.Type) -> str:
    return str(ir.RankedTensorType(t).element_type)


def convention(prefill: Callee, decode: Callee) -> Convention | None:
    """The pair's Convention, or None where a type is not the convention's
    (docs/mdc-generate.md): ids [1, N], length [1], token [1, 1], position
    [1], all of one integer type of IDS; logits [1, V] of one float type of
    LOWEST from both."""
    shapes = [_shape(t) for t in (*prefill.arguments, *decode.arguments, prefill.result, decode.result)]
    if None in shapes:
        return None
    ids, length, token, position, logits, step_logits = shapes
    if len(ids) != 2 or ids[0] != 1 or length != (1,) or token != (1, 1) or position != (1,):
        return None
    if len(logits) != 2 or logits[0] != 1 or logits != step_logits:
        return None
    elements = {_element(t) for t in (*prefill.arguments, *decode.arguments)}
    floats = {_element(prefill.result), _element(decode.result)}
    if len(elements) != 1 or len(floats) != 1 or not elements <= set(IDS) or not floats <= set(LOWEST):
        return None
    return Convention(ids[1], elements.pop(), logits[1], floats.pop())


# The argmax of %{src} (tensor<1xVxF>) as %{out}_m#1: tensor<1xI>, the
# first index of the greatest logit (a strict > keeps the first on a tie).
_ARGMAX = """  %{out}_ve = tensor.empty() : tensor<1x{F}>
  %{out}_ie = tensor.empty() : tensor<1x{I}>
  %{out}_v0 = linalg.fill ins(%lowest : {F}) outs(%{out}_ve : tensor<1x{F}>) -> tensor<1x{F}>
  %{out}_i0 = linalg.fill ins(%first : {I}) outs(%{out}_ie : tensor<1x{I}>) -> tensor<1x{I}>
  %{out}_m:2 = linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}} ins(%{src} : tensor<1x{V}x{F}>) outs(%{out}_v0, %{out}_i0 : tensor<1x{F}>, tensor<1x{I}>) {{
  ^bb0(%in: {F}, %best: {F}, %at: {I}):
    %k = linalg.index 1 : index
    %ki = arith.index_cast %k : index to {I}
    %gt = arith.cmpf ogt, %in, %best : {F}
    %nb = arith.select %gt, %in, %best : {F}
    %na = arith.select %gt, %ki, %at : {I}
    linalg.yield %nb, %na : {F}, {I}
  }} -> (tensor<1x{F}>, tensor<1x{I}>)
"""

# A carried tensor %{src} as %{out}, a buffer of its own (the module
# docstring says why).
_OWN = """  %{out}_bv = hal.tensor.export %{src} : {T}{{%n}} -> !hal.buffer_view
  %{out}_kept = util.optimization_barrier %{out}_bv : !hal.buffer_view
  %{out} = hal.tensor.import %{out}_kept : !hal.buffer_view -> {T}{{%n}}
"""

_HEAD = """util.func public {generate}(%ids: tensor<1x{N}x{I}>, %length: tensor<1x{I}>, %count: i64) -> (tensor<?x{I}>, tensor<?x{V}x{F}>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1 : i64
  %lowest = arith.constant {lowest} : {F}
  %first = arith.constant 0 : {I}
  %s_ok = arith.constant 0 : i32
  %s_bad = arith.constant {bad} : i32
  %enough = arith.cmpi sge, %count, %one : i64
  %status = arith.select %enough, %s_ok, %s_bad : i32
  util.status.check_ok %status, "@generate: count must be at least 1"
  %n = arith.index_cast %count : i64 to index
  %len = tensor.extract %length[%c0] : tensor<1x{I}>
"""

_START = """  %ids_e = tensor.empty(%n) : tensor<?x{I}>
  %rows_e = tensor.empty(%n) : tensor<?x{V}x{F}>
  %ids_s = tensor.insert_slice %t0_m#1 into %ids_e[0] [1] [1] : tensor<1x{I}> into tensor<?x{I}>
  %rows_s = tensor.insert_slice %l0 into %rows_e[0, 0] [1, {V}] [1, 1] : tensor<1x{V}x{F}> into tensor<?x{V}x{F}>
"""

_LOOP = """  %r:3 = scf.for %i = %c1 to %n step %c1 iter_args(%tok = %t0_m#1, %out = %ids_0, %rows = %rows_0) -> (tensor<1x{I}>, tensor<?x{I}>, tensor<?x{V}x{F}>) {{
    %back = arith.subi %i, %c1 : index
    %back_i = arith.index_cast %back : index to {I}
    %p = arith.addi %len, %back_i : {I}
    %pos = tensor.from_elements %p : tensor<1x{I}>
    %token = tensor.expand_shape %tok [[0, 1]] output_shape [1, 1] : tensor<1x{I}> into tensor<1x1x{I}>
"""

_STEP = """  %out_n = tensor.insert_slice %t_m#1 into %out[%i] [1] [1] : tensor<1x{I}> into tensor<?x{I}>
  %rows_n = tensor.insert_slice %l into %rows[%i, 0] [1, {V}] [1, 1] : tensor<1x{V}x{F}> into tensor<?x{V}x{F}>
"""

_TAIL = """    scf.yield %t_m#1, %out_1, %rows_1 : tensor<1x{I}>, tensor<?x{I}>, tensor<?x{V}x{F}>
  }}
  util.return %r#1, %r#2 : tensor<?x{I}>, tensor<?x{V}x{F}>
}}
"""


def _on(affinity) -> str:
    return f"on({affinity}) " if affinity is not None else ""


def _call(c: Callee, arguments: tuple, out: str) -> str:
    """Lines that call ``c`` with the tensors ``arguments``, its result as
    ``%out``: buffer views, and a fence of the call's own that the result's
    import waits on."""
    types = [str(t) for t in c.arguments]
    result = str(c.result)
    lines = [f"  %{out}_a{k} = hal.tensor.export {_on(a)}{v} : {t} -> !hal.buffer_view"
             for k, (v, t, a) in enumerate(zip(arguments, types, c.argument_affinities))]
    lines += [f"  %{out}_dev = hal.devices.get %c0 : !hal.device",
              f"  %{out}_done = hal.fence.create device(%{out}_dev : !hal.device) flags(\"None\") : !hal.fence",
              f"  %{out}_none = util.null : !hal.fence",
              f"  %{out}_bv = util.call {symbol_ref(c.symbol)}(%{out}_a0, %{out}_a1, %{out}_none, %{out}_done) : "
              "(!hal.buffer_view, !hal.buffer_view, !hal.fence, !hal.fence) -> !hal.buffer_view",
              f"  %{out} = hal.tensor.import {_on(c.result_affinity)}wait(%{out}_done) => %{out}_bv : "
              f"!hal.buffer_view -> {result}"]
    return "\n".join(lines) + "\n"


def _indent(text: str) -> str:
    return "".join("  " + line + "\n" for line in text.splitlines())


def generate_text(prefill: Callee, decode: Callee, shape: Convention) -> str:
    """``@generate`` as MLIR text (the module docstring says what it does)."""
    f = dict(generate=symbol_ref(GENERATE), N=shape.capacity, I=shape.ids, V=shape.vocab, F=shape.logits,
             lowest=LOWEST[shape.logits], bad=STATUS_INVALID_ARGUMENT)
    ids_t, rows_t = f"tensor<?x{shape.ids}>", f"tensor<?x{shape.vocab}x{shape.logits}>"
    text = _HEAD.format(**f) + _call(prefill, ("%ids", "%length"), "l0")
    text += _ARGMAX.format(src="l0", out="t0", **f) + _START.format(**f)
    text += _OWN.format(src="ids_s", out="ids_0", T=ids_t) + _OWN.format(src="rows_s", out="rows_0", T=rows_t)
    body = _call(decode, ("%token", "%pos"), "l") + _ARGMAX.format(src="l", out="t", **f) + _STEP.format(**f)
    body += _OWN.format(src="out_n", out="out_1", T=ids_t) + _OWN.format(src="rows_n", out="rows_1", T=rows_t)
    return text + _LOOP.format(**f) + _indent(body) + _TAIL.format(**f)


_FENCED = "(!hal.buffer_view, !hal.buffer_view, !hal.fence, !hal.fence) -> !hal.buffer_view"

# The coarse-fences wrapper of a plain function, as IREE's torch input
# conversion makes $async, never inlined: @generate calls it in a loop, and
# stock IREE 3.13 moves a global's store in front of a loop to after it
# when the body that stores it is inlined there (the module docstring).
_WRAPPER = """util.func private {wrapper}(%a: !hal.buffer_view, %b: !hal.buffer_view, %wait: !hal.fence, %signal: !hal.fence) -> !hal.buffer_view attributes {{inlining_policy = #util.inline.never}} {{
  %x = hal.tensor.import {on_a}wait(%wait) => %a : !hal.buffer_view -> {A}
  %y = hal.tensor.import {on_b}wait(%wait) => %b : !hal.buffer_view -> {B}
  %r = util.call {plain}(%x, %y) : ({A}, {B}) -> {R}
  %done = hal.tensor.barrier join(%r : {R}) => %signal : !hal.fence
  %v = hal.tensor.export {on_r}%done : {R} -> !hal.buffer_view
  util.return %v : !hal.buffer_view
}}
"""


def wrapper_text(c: Callee) -> str:
    """The coarse-fences wrapper of ``c``'s plain function."""
    (a, b), (on_a, on_b) = c.arguments, c.argument_affinities
    return _WRAPPER.format(wrapper=symbol_ref(c.symbol), plain=symbol_ref(c.plain), A=a, B=b, R=c.result,
                           on_a=_on(on_a), on_b=_on(on_b), on_r=_on(c.result_affinity))


def _declaration(c: Callee) -> str:
    """A declaration of the function ``c`` calls, for the parser to verify
    the call against."""
    return f"util.func private {symbol_ref(c.symbol)}{_FENCED}\n"


def _plain_declaration(c: Callee) -> str:
    return (f"util.func private {symbol_ref(c.plain)}({', '.join(str(t) for t in c.arguments)}) -> "
            f"{c.result}\n")


def _parse(text: str, declarations: str) -> ir.Operation:
    """The last function of ``text``, parsed after ``declarations`` (for
    the parser to verify its calls), taken out of that scratch module.
    Text, as the twins are (twins.parse_beside): its ops are located in
    this text, and a host function's locations reach the vmfb."""
    scratch = ir.Module.parse(declarations + text)
    op = list(scratch.body.operations)[-1].operation
    op.detach_from_parent()
    return op


def parse_generate(prefill: Callee, decode: Callee, shape: Convention) -> list:
    """``@generate`` and the wrappers it calls, parsed (``_parse``)."""
    ops = [_parse(wrapper_text(c), _plain_declaration(c)) for c in (prefill, decode) if c.plain is not None]
    return ops + [_parse(generate_text(prefill, decode, shape), _declaration(prefill) + _declaration(decode))]


def public_functions(module) -> dict:
    """The module's public util.func definitions, by name."""
    return {irx.symbol_name(op): op for op in top_level_ops(module)
            if op.name == irx.UTIL_FUNC and irx.is_public(op) and len(op.regions[0].blocks)}


def add_generate(module, default: str | None = None) -> str | None:
    """Adds ``@generate`` where the module's ``@prefill`` and ``@decode``
    follow the convention; returns its name, or None where it adds none.
    ``default``: the module's default device (None: its attribute's)."""
    functions = public_functions(module)
    default = default or module_default_device(module)
    prefill, decode = callee(functions, PREFILL, default), callee(functions, DECODE, default)
    shape = convention(prefill, decode) if prefill is not None and decode is not None else None
    if shape is None:
        return None
    names = irx.SymbolNames(module)
    for name in [GENERATE, *(c.symbol for c in (prefill, decode) if c.plain is not None)]:
        if name in names:
            taken = next(op for op in top_level_ops(module) if irx.symbol_name(op) == name)
            raise MdcError(f"the program defines '@{name}', a name of the generation loop mdc adds for "
                           f"'@{PREFILL}' and '@{DECODE}' (docs/mdc-generate.md)", location=taken.location,
                           notes=[f"rename the function, or compile with {FLAG}"])
    where = ir.InsertionPoint(module.regions[0].blocks[0])
    for op in parse_generate(prefill, decode, shape):
        where.insert(op)
    return GENERATE


class GenerateEntryPoint(ModulePass):
    """Adds ``@generate``: prefill and every decode step in one call."""

    name = "generate-entry-point"
    level = "input"
    summary = ("add @generate, greedy generation in one call (@prefill, then @decode a token, the ids and "
               "logits returned), to a module whose @prefill and @decode follow docs/mdc-generate.md")
    Options = GenerateEntryPointOptions
    # After assign-devices (it calls what --place placed, on the devices of
    # the callees' imports and exports), before host-entry-points (which
    # gives it a twin where it needs one).
    needs = (Fact.DEVICES_ASSIGNED,)
    provides = (Fact.GENERATE_ENTRY,)

    def apply(self, module, options: GenerateEntryPointOptions) -> None:
        if options.add:
            add_generate(module, options.default)
