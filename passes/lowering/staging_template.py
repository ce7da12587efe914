"""The staging helpers lowerings call, from a checked-in MLIR library
(staging_library.mlir, beside this file), parsed once per context and
cloned into a module under the names the module gets.

    @__mdc_stage*(%src_view, %src_ready, %src_device, %dst_device, %owner_device) -> view

Stock HAL VM ops only (plus util/scf/arith):

1. Take pinned staging memory (``HostLocal|DeviceVisible``, from the owner's
   allocator). The buffer is cached in a module global per owner and only
   reallocated when a larger value comes through, so steady-state calls
   allocate no pinned memory (``cuMemHostAlloc`` of a large buffer costs far
   more than the copy).
2. On the source queue, copy the value into staging, waiting on
   ``%src_ready`` (a fence of the source device, or null); wait on the host.
3. Allocate the destination on the destination's queue; on that queue,
   copy staging into it; wait on the host.

A copy issued to a *local* device's queue is a host memcpy; it is split into
CHUNKS_ON_LOCAL_QUEUE chunks issued together, so the task system runs them
on several workers instead of one thread. GPU queues get one copy (their
DMA engine gains nothing from splitting).

Every queue only sees fences of its own device and buffers it can use. The
staging buffer is reused only after the host has seen both copies finish,
so calls may not overlap on one module context (IREE's synchronous calls
never do). The library says what each helper does; ``Helper`` names the
library's symbols a helper is made of. The byte-copy executable alone is
still made from text (copy_executable_text).
"""

from __future__ import annotations

import dataclasses
import importlib.resources
import re

from iree.compiler import ir

from ..ir.ir_adapter import UTIL_GLOBAL, UTIL_STATUS_CHECK_OK, walk

# The chunking the library's ``@stage_local_to_*`` functions have.
CHUNKS_ON_LOCAL_QUEUE = 8
MIN_CHUNK_BYTES = 1 << 20

# A value a CPU writes into pinned memory goes on to a GPU in pieces, each
# piece's DMA overlapping the CPU's copy of the next: by default one piece
# per PIECE_BYTES, at most MAX_PIECES (mdc-compile --staging-pieces=N: N).
# On the H200 (docs/PERFORMANCE.md, run 24) pieces of 16-64 MiB did best and
# pieces of 2 MiB or less cost more than they gave. The first lowering of
# pieces chained the CPU's piece copies on its queue (piece i+1's execute
# waiting on piece i's fence) and stalled within a few thousand calls under
# IREE 3.13's local-task, with no cuda involved (test/e2e/gpu_stall.py); the
# host now starts each piece (the library's ``@piece_onto``).
PIECE_BYTES = 16 << 20
MAX_PIECES = 16
CHUNK_ALIGNMENT = 64

# Host waits on a fence. None: wait without a deadline (the lowering). For the
# stall investigation (test/e2e/gpu_stall.py): (millis, tries) waits
# ``millis`` at a time, re-checking the fence after each timeout, and fails
# naming the wait after ``tries`` timeouts (None: never fails).
HOST_WAIT_POLL: tuple[int, int | None] | None = None

LIBRARY = "staging_library.mlir"
# What the library's ``@await`` says when its wait fails; a caller may say more.
AWAIT_MESSAGE = "mdc: a copy through staging memory failed"


@dataclasses.dataclass(frozen=True)
class Helper:
    """A staging helper: the library symbols it is made of, in the order
    they go into a module (globals first in the module, functions at its
    end), and the one a caller calls."""

    symbols: tuple[str, ...]


def helper(symbol: str) -> Helper:
    """A helper of one library function."""
    return Helper((symbol,))


def stage_helper(src_is_local: bool, dst_is_local: bool) -> Helper:
    """``@stage_*``: through the owner's pinned buffer (``pinned_cache``)."""
    kinds = f"{'local' if src_is_local else 'gpu'}_to_{'local' if dst_is_local else 'gpu'}"
    return Helper(("pinned_cache", f"stage_{kinds}"))


def site_helper(read_in_place: bool, read_if_in_place: bool = False) -> Helper:
    """A crossing site's view function (calling ``@pinned_view``) and its
    buffer's global; ``read_in_place``: and the global and function that
    record the fence of its reads (``read_if_in_place``: only where read in
    place)."""
    if not read_in_place:
        return Helper(("site_cache", "site_view"))
    if read_if_in_place:
        return Helper(("in_place_site_cache", "in_place_site_reads", "in_place_site_view", "record_read_if_in_place"))
    return Helper(("released_site_cache", "released_site_reads", "released_site_view", "record_read"))


_libraries: dict = {}  # (context, HOST_WAIT_POLL) -> the parsed library


def library(context: ir.Context) -> dict[str, ir.Operation]:
    """The library's top-level ops by symbol, parsed once per context."""
    key = (context, HOST_WAIT_POLL)
    if key not in _libraries:
        text = importlib.resources.files(__package__).joinpath(LIBRARY).read_text()
        if HOST_WAIT_POLL is not None:
            text = _DEFAULT_WAIT.sub(lambda m: _polled_wait(m["indent"], m["status"], m["fences"], m["what"]), text)
        module = ir.Module.parse(text, context)
        _libraries[key] = (module, {ir.StringAttr(op.attributes["sym_name"]).value: op
                                    for op in [o.operation for o in module.body.operations]})
    return _libraries[key][1]


def instantiate(module, helper: Helper, names: dict[str, str], with_globals: bool = True,
                message: str | None = None) -> None:
    """Clones ``helper``'s library ops into ``module``, each library symbol
    renamed to ``names[symbol]`` (nested ones too): globals before the
    module's first op (none with ``with_globals=False``, when the module
    has them already), functions at its end. ``message``: what a failed
    wait says instead of AWAIT_MESSAGE."""
    ops = library(module.context)
    body = module.regions[0].blocks[0]
    for symbol in helper.symbols:
        op = ops[symbol]
        if op.name == UTIL_GLOBAL:
            if not with_globals:
                continue
            clone = op.clone(ip=ir.InsertionPoint(body.operations[0]))
        else:
            clone = op.clone(ip=ir.InsertionPoint(body))
        for nested in [clone, *walk(clone)]:
            if "sym_name" in nested.attributes:
                old = ir.StringAttr(nested.attributes["sym_name"]).value
                if old in names:
                    ir.SymbolTable.set_symbol_name(nested, names[old])
            if message is not None and nested.name == UTIL_STATUS_CHECK_OK:
                said = ir.StringAttr(nested.attributes["message"]).value.replace(AWAIT_MESSAGE, message)
                nested.attributes["message"] = ir.StringAttr.get(said)
        for old, new in names.items():
            ir.SymbolTable.replace_all_symbol_uses(old, new, clone)


def copy_executable_text(name: str) -> str:
    """``stream.executable @name`` with ``@name_bytes``: a byte copy as a
    dispatch (export names must be unique across executables), of
    ``%length`` bytes from ``%offset`` of a ``%total``-byte source.
    A CPU device runs a dispatch on all its workers, whereas a local-task
    queue copy runs on one thread (bench components: 8-10 GB/s at 256 MiB
    whatever the worker count, against 26-32 GB/s for 8 host threads). The
    load is stored as is: IREE then tiles it 4 KiB per workgroup, where a
    linalg.copy between them got 64-byte tiles copied a byte at a time. The
    source is bound whole and read at ``%offset``: a slice of it as operand
    made IREE copy the slice on the queue first. Text, not the library's:
    an executable's locations reach the CPU kernel's debug info, and so
    the vmfb, and these are the locations it always had."""
    tensor = "!iree_tensor_ext.dispatch.tensor"
    return f"""
stream.executable private @{name} {{
  stream.executable.export public @{name}_bytes workgroups(%n: index) -> (index, index, index) {{
    %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice(%n)
    stream.return %x, %y, %z : index, index, index
  }}
  builtin.module {{
    func.func @{name}_bytes(%source: !stream.binding, %total_arg: index, %offset_arg: index, %length: index, %target: !stream.binding) {{
      %c0 = arith.constant 0 : index
      %n = iree_tensor_ext.dispatch.workload.ordinal %length, 0 : index
      %in = stream.binding.subspan %source[%c0] : !stream.binding -> {tensor}<readonly:tensor<?xi8>>{{%total_arg}}
      %out = stream.binding.subspan %target[%c0] : !stream.binding -> {tensor}<writeonly:tensor<?xi8>>{{%n}}
      %bytes = iree_tensor_ext.dispatch.tensor.load %in, offsets = [%offset_arg], sizes = [%n], strides = [1] : {tensor}<readonly:tensor<?xi8>>{{%total_arg}} -> tensor<?xi8>
      iree_tensor_ext.dispatch.tensor.store %bytes, %out, offsets = [0], sizes = [%n], strides = [1] : tensor<?xi8> -> {tensor}<writeonly:tensor<?xi8>>{{%n}}
      return
    }}
  }}
}}
"""


# The library's host wait: ``%status`` until all ``fences`` are reached; a
# failure stops the call with ``what``. The check sits in an scf.if: when
# IREE's IPO proves every fence null (an argument given in pinned memory
# needs no wait), the await folds to status 0, and a bare
# util.status.check_ok of a constant 0 is not folded away but becomes a
# vm.cond_fail that IREE 3.13's verifier rejects ("status is 0; expected to
# not be OK").
_DEFAULT_WAIT = re.compile(
    r'(?P<indent> *)%(?P<status>\w+) = hal\.fence\.await until\(\[(?P<fences>[^\]]*)\]\) '
    r'timeout_millis\(%forever\) flags\("None"\) : i32\n'
    r'(?P=indent)%(?P=status)_ok = arith\.constant 0 : i32\n'
    r'(?P=indent)%(?P=status)_failed = arith\.cmpi ne, %(?P=status), %(?P=status)_ok : i32\n'
    r'(?P=indent)scf\.if %(?P=status)_failed \{\n'
    r'(?P=indent)  util\.status\.check_ok %(?P=status), "(?P<what>[^"]*)"\n'
    r'(?P=indent)\}\n')


def _polled_wait(indent: str, status: str, fences: str, what: str) -> str:
    """The host wait with HOST_WAIT_POLL: ``millis`` at a time, failing
    after ``tries`` timeouts."""
    millis, tries = HOST_WAIT_POLL
    v = f"%{status}"
    late = f"{v}_late"  # IREE_STATUS_DEADLINE_EXCEEDED
    if tries is None:
        more = f"{indent}  {v}_again = arith.cmpi eq, {v}_s, {late} : i32\n"
    else:
        more = (f"{indent}  {v}_is_late = arith.cmpi eq, {v}_s, {late} : i32\n"
                f"{indent}  {v}_left = arith.cmpi ult, {v}_k, {v}_tries : index\n"
                f"{indent}  {v}_again = arith.andi {v}_is_late, {v}_left : i1\n")
    return f"""{indent}{late} = arith.constant 4 : i32
{indent}{v}_poll = arith.constant {millis} : i32
{indent}{v}_tries = arith.constant {tries or 0} : index
{indent}{v}_zero = arith.constant 0 : index
{indent}{v}_one = arith.constant 1 : index
{indent}{v}:2 = scf.while ({v}_s = {late}, {v}_k = {v}_zero) : (i32, index) -> (i32, index) {{
{more}{indent}  scf.condition({v}_again) {v}_s, {v}_k : i32, index
{indent}}} do {{
{indent}^bb0({v}_s2: i32, {v}_k2: index):
{indent}  {v}_r = hal.fence.await until([{fences}]) timeout_millis({v}_poll) flags("None") : i32
{indent}  {v}_k3 = arith.addi {v}_k2, {v}_one : index
{indent}  scf.yield {v}_r, {v}_k3 : i32, index
{indent}}}
{indent}util.status.check_ok {v}#0, "{what} ({status} timed out)"
"""
