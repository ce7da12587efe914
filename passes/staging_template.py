"""The host-staging function transfer-insertion calls, as MLIR text.

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
chunks issued together, so the task system runs them on several workers
instead of one thread. GPU queues get one copy (their DMA engine gains
nothing from splitting).

Every queue only sees fences of its own device and buffers it can use. The
staging buffer is reused only after the host has seen both copies finish,
so calls may not overlap on one module context (IREE's synchronous calls
never do).
"""

from __future__ import annotations

CHUNKS_ON_LOCAL_QUEUE = 8
MIN_CHUNK_BYTES = 1 << 20

# Host waits on a fence. None: wait without a deadline (the lowering). For the
# stall investigation (test/e2e/gpu_stall.py): (millis, tries) waits
# ``millis`` at a time, re-checking the fence after each timeout, and fails
# naming the wait after ``tries`` timeouts (None: never fails).
HOST_WAIT_POLL: tuple[int, int | None] | None = None


def _host_wait(indent: str, status: str, fences: str, what: str) -> str:
    """``%status``: the host waits until all of ``fences`` are reached; a
    failure stops the call with ``what``."""
    if HOST_WAIT_POLL is None:
        # The check sits in an scf.if: when IREE's IPO proves every fence
        # null (an argument given in pinned memory needs no wait), the await
        # folds to status 0, and a bare util.status.check_ok of a constant 0
        # is not folded away but becomes a vm.cond_fail that IREE 3.13's
        # verifier rejects ("status is 0; expected to not be OK").
        return f"""{indent}%{status} = hal.fence.await until([{fences}]) timeout_millis(%forever) flags("None") : i32
{indent}%{status}_ok = arith.constant 0 : i32
{indent}%{status}_failed = arith.cmpi ne, %{status}, %{status}_ok : i32
{indent}scf.if %{status}_failed {{
{indent}  util.status.check_ok %{status}, "{what}"
{indent}}}
"""
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


def _copy(indent: str, tag: str, device: str, wait: str, src: str, dst: str, chunks: int, what: str) -> str:
    """A copy of %length bytes, in ``chunks`` concurrent pieces, then a host wait."""
    if chunks <= 1:
        return f"""
{indent}%{tag}_done = hal.fence.create device({device} : !hal.device) flags("None") : !hal.fence
{indent}hal.device.queue.copy<{device} : !hal.device> affinity(%any_queue) wait({wait}) signal(%{tag}_done) source({src} : !hal.buffer)[%c0] target({dst} : !hal.buffer)[%c0] length(%length) flags("None")
{_host_wait(indent, f"{tag}_status", f"%{tag}_done", what)}"""
    return f"""
{indent}%{tag}_parts = arith.constant {chunks} : index
{indent}%{tag}_min = arith.constant {MIN_CHUNK_BYTES} : index
{indent}%{tag}_even = arith.ceildivui %length, %{tag}_parts : index
{indent}%{tag}_chunk = arith.maxui %{tag}_even, %{tag}_min : index
{indent}%{tag}_count = arith.ceildivui %length, %{tag}_chunk : index
{indent}%{tag}_fences = util.list.create %{tag}_count : !util.list<?>
{indent}util.list.resize %{tag}_fences, %{tag}_count : !util.list<?>
{indent}scf.for %i = %c0 to %{tag}_count step %c1 {{
{indent}  %offset = arith.muli %i, %{tag}_chunk : index
{indent}  %rest = arith.subi %length, %offset : index
{indent}  %bytes = arith.minui %rest, %{tag}_chunk : index
{indent}  %done = hal.fence.create device({device} : !hal.device) flags("None") : !hal.fence
{indent}  hal.device.queue.copy<{device} : !hal.device> affinity(%any_queue) wait({wait}) signal(%done) source({src} : !hal.buffer)[%offset] target({dst} : !hal.buffer)[%offset] length(%bytes) flags("None")
{indent}  util.list.set %{tag}_fences[%i], %done : !hal.fence -> !util.list<?>
{indent}}}
{indent}scf.for %i = %c0 to %{tag}_count step %c1 {{
{indent}  %done = util.list.get %{tag}_fences[%i] : !util.list<?> -> !hal.fence
{_host_wait(indent + "  ", "status", "%done", what)}{indent}}}
"""


def _byte_view(view: str, buffer: str) -> str:
    """``%view``: a view of ``%length`` bytes of ``%buffer`` from offset 0."""
    return f"""  %i8 = hal.element_type<i8> : i32
  %dense = hal.encoding_type<dense_row_major> : i32
  %{view} = hal.buffer_view.create buffer(%{buffer} : !hal.buffer)[%c0, %length] shape([%length]) type(%i8) encoding(%dense) : !hal.buffer_view
"""


def _allocate_destination() -> str:
    """``%dst``: a new buffer of the destination device, allocated on its
    queue (stream-ordered: IREE serves it from the device's pool, where an
    allocator allocation is a cuMemAlloc now and a cuMemFree when released);
    the copy into it waits on ``%dst_ready``. The helpers ask for it before
    they wait on the host or copy: a cuda queue operation that waits on a
    fence not reached yet costs more on IREE 3.13 (a queue_alloca then a
    copy into it: 127 us, against 31 us for the copy alone; bench
    queue-latency), and by then the allocation is usually done."""
    return """  %dst_type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
  %dst_usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
  %dst_pool = arith.constant 0 : i64
  %no_wait = util.null : !hal.fence
  %dst_ready = hal.fence.create device(%dst_device : !hal.device) flags("None") : !hal.fence
  %dst = hal.device.queue.alloca<%dst_device : !hal.device> affinity(%any_queue) wait(%no_wait) signal(%dst_ready) pool(%dst_pool) type(%dst_type) usage(%dst_usage) flags("None") : !hal.buffer{%length}
"""


def _allocate_staging(cache: str | None) -> str:
    store = f"    util.global.store %new, @{cache} : !hal.buffer\n" if cache else ""
    return f"""
    %new = hal.allocator.allocate<%owner_allocator : !hal.allocator> affinity(%any_queue) type(%pinned_type) usage(%pinned_usage) : !hal.buffer{{%length}}
{store}"""


def _get_or_grow(cache: str | None) -> str:
    """``%staging``: ``%cached`` if it holds ``%length`` bytes, else a new
    pinned buffer from the owner's allocator (stored into global ``cache``
    when one is given)."""
    return f"""  %no_buffer = util.null : !hal.buffer
  %empty = util.cmp.eq %cached, %no_buffer : !hal.buffer
  %staging = scf.if %empty -> (!hal.buffer) {{{_allocate_staging(cache)}    scf.yield %new : !hal.buffer
  }} else {{
    %have = hal.buffer.length<%cached : !hal.buffer> : index
    %too_small = arith.cmpi ult, %have, %length : index
    %grown = scf.if %too_small -> (!hal.buffer) {{{_allocate_staging(cache)}      scf.yield %new : !hal.buffer
    }} else {{
      scf.yield %cached : !hal.buffer
    }}
    scf.yield %grown : !hal.buffer
  }}"""


def cache_global_text(cache: str) -> str:
    return f"util.global private mutable @{cache} : !hal.buffer\n"


def stage_function_text(name: str, cache: str, src_is_local: bool, dst_is_local: bool) -> str:
    src_chunks = CHUNKS_ON_LOCAL_QUEUE if src_is_local else 1
    dst_chunks = CHUNKS_ON_LOCAL_QUEUE if dst_is_local else 1
    return f"""
util.func private @{name}(%src_view: !hal.buffer_view, %src_ready: !hal.fence, %src_device: !hal.device, %dst_device: !hal.device, %owner_device: !hal.device) -> !hal.buffer_view attributes {{inlining_policy = #util.inline.never}} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %any_queue = arith.constant -1 : i64
  %forever = arith.constant -1 : i32
  %length = hal.buffer_view.dim<%src_view : !hal.buffer_view>[0] : index
  %src = hal.buffer_view.buffer<%src_view : !hal.buffer_view> : !hal.buffer
  %owner_allocator = hal.device.allocator<%owner_device : !hal.device> : !hal.allocator
  %pinned_type = hal.memory_type<"HostLocal|DeviceVisible"> : i32
  %pinned_usage = hal.buffer_usage<"Transfer|Mapping|MappingPersistent|DispatchStorage"> : i32
  %cached = util.global.load @{cache} : !hal.buffer
{_get_or_grow(cache)}
{_allocate_destination()}{_copy("  ", "in", "%src_device", "%src_ready", "%src", "%staging", src_chunks, "mdc: copy into staging memory failed")}
{_copy("  ", "out", "%dst_device", "%dst_ready", "%staging", "%dst", dst_chunks, "mdc: copy out of staging memory failed")}
{_byte_view("view", "dst")}  util.return %view : !hal.buffer_view
}}
"""


def pinned_view_function_text(name: str) -> str:
    """``@name(%cached, %length, %owner) -> (buffer, view)``: a crossing
    site's own pinned staging buffer (``%cached``, null the first time;
    reallocated when too small) and a ``%length``-byte view of it, for a CPU
    producer to write into directly. The caller keeps the buffer in the
    site's global: two crossings never share one, since IREE may run their
    producers together (random programs seed 4242 index 41)."""
    return f"""
util.func private @{name}(%cached: !hal.buffer, %length: index, %owner_device: !hal.device) -> (!hal.buffer, !hal.buffer_view) attributes {{inlining_policy = #util.inline.never}} {{
  %c0 = arith.constant 0 : index
  %any_queue = arith.constant -1 : i64
  %owner_allocator = hal.device.allocator<%owner_device : !hal.device> : !hal.allocator
  %pinned_type = hal.memory_type<"HostLocal|DeviceVisible"> : i32
  %pinned_usage = hal.buffer_usage<"Transfer|Mapping|MappingPersistent|DispatchStorage"> : i32
{_get_or_grow(None)}
{_byte_view("view", "staging")}  util.return %staging, %view : !hal.buffer, !hal.buffer_view
}}
"""


def site_view_function_text(name: str, cache: str, shared: str, reads: str | None = None,
                            record: str | None = None, read_if_in_place: bool = False) -> str:
    """``@name(%length, %owner) -> view``: one crossing site's pinned buffer,
    kept in global ``cache`` and handed out by ``shared``
    (pinned_view_function_text), with a declaration of ``shared`` so the
    text verifies on its own. ``reads``: the destination reads the buffer
    asynchronously (no host wait after the reads); the function first waits
    on the host for the fence in global ``reads`` (null until the first
    read), and ``@record(%fence)`` stores there the fence of the reads just
    issued. So the source never writes the buffer again before the
    destination has read it. ``read_if_in_place``: ``@record(%fence,
    %in_place)`` stores ``%fence`` only where ``%in_place`` (what the helper
    that chose said: a value small enough at run time to be read in place),
    and null otherwise (the destination read its own copy, which the host
    waited for). The helper says so with a flag, not by comparing buffers:
    a view IREE exports from an imported buffer is of a buffer of its own."""
    globals_, first, recorder = cache_global_text(cache), "", ""
    if reads is not None:
        globals_ += f"util.global private mutable @{reads} : !hal.fence\n"
        first = f"""  %forever = arith.constant -1 : i32
  %fence = util.global.load @{reads} : !hal.fence
{_wait_unless_null("  ", "%fence", "mdc: an earlier read of staging memory failed")}"""
        recorder = f"""util.func private @{record}(%fence: !hal.fence) attributes {{inlining_policy = #util.inline.never}} {{
  util.global.store %fence, @{reads} : !hal.fence
  util.return
}}
"""
        if read_if_in_place:
            recorder = f"""util.func private @{record}(%fence: !hal.fence, %in_place: i1) attributes {{inlining_policy = #util.inline.never}} {{
  %kept = scf.if %in_place -> (!hal.fence) {{
    scf.yield %fence : !hal.fence
  }} else {{
    %no_fence = util.null : !hal.fence
    scf.yield %no_fence : !hal.fence
  }}
  util.global.store %kept, @{reads} : !hal.fence
  util.return
}}
"""
    return globals_ + f"""
util.func private @{shared}(%cached: !hal.buffer, %length: index, %owner: !hal.device) -> (!hal.buffer, !hal.buffer_view)
util.func private @{name}(%length: index, %owner: !hal.device) -> !hal.buffer_view attributes {{inlining_policy = #util.inline.never}} {{
{first}  %cached = util.global.load @{cache} : !hal.buffer
  %buffer, %view = util.call @{shared}(%cached, %length, %owner) : (!hal.buffer, index, !hal.device) -> (!hal.buffer, !hal.buffer_view)
  util.global.store %buffer, @{cache} : !hal.buffer
  util.return %view : !hal.buffer_view
}}
{recorder}"""


def stage_from_pinned_function_text(name: str, in_place: bool = False) -> str:
    """``@name(%pinned_view, %ready, %dst_device) -> view``: the value is
    already in pinned memory (written there by the source device, done when
    ``%ready``, a source-device fence, is); wait for it on the host, then
    copy it on the destination queue into the destination's memory.
    ``in_place``: ``@name(..., %in_place_max) -> (view, in place)`` returns,
    for a value of at most ``%in_place_max`` bytes, a new view of the pinned
    bytes themselves, for the destination to read there, and says which it
    did."""
    written = "mdc: the value written into staging memory failed"
    if in_place:
        return f"""
util.func private @{name}(%src_view: !hal.buffer_view, %src_ready: !hal.fence, %dst_device: !hal.device, %in_place_max: index) -> (!hal.buffer_view, i1) attributes {{inlining_policy = #util.inline.never}} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %any_queue = arith.constant -1 : i64
  %forever = arith.constant -1 : i32
  %length = hal.buffer_view.dim<%src_view : !hal.buffer_view>[0] : index
  %staging = hal.buffer_view.buffer<%src_view : !hal.buffer_view> : !hal.buffer
  %small = arith.cmpi ule, %length, %in_place_max : index
  %view = scf.if %small -> (!hal.buffer_view) {{
{_host_wait("    ", "ready_status", "%src_ready", written)}{_byte_view("in_place", "staging")}    scf.yield %in_place : !hal.buffer_view
  }} else {{
{_allocate_destination()}{_host_wait("    ", "ready_status", "%src_ready", written)}{_copy("    ", "out", "%dst_device", "%dst_ready", "%staging", "%dst", 1, "mdc: copy out of staging memory failed")}
{_byte_view("copied", "dst")}    scf.yield %copied : !hal.buffer_view
  }}
  util.return %view, %small : !hal.buffer_view, i1
}}
"""
    return f"""
util.func private @{name}(%src_view: !hal.buffer_view, %src_ready: !hal.fence, %dst_device: !hal.device) -> !hal.buffer_view attributes {{inlining_policy = #util.inline.never}} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %any_queue = arith.constant -1 : i64
  %forever = arith.constant -1 : i32
  %length = hal.buffer_view.dim<%src_view : !hal.buffer_view>[0] : index
  %staging = hal.buffer_view.buffer<%src_view : !hal.buffer_view> : !hal.buffer
{_allocate_destination()}{_host_wait("  ", "ready_status", "%src_ready", "mdc: the value written into staging memory failed")}{_copy("  ", "out", "%dst_device", "%dst_ready", "%staging", "%dst", 1, "mdc: copy out of staging memory failed")}
{_byte_view("view", "dst")}  util.return %view : !hal.buffer_view
}}
"""


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
    made IREE copy the slice on the queue first."""
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


def await_function_text(name: str, what: str = "mdc: a copy through staging memory failed") -> str:
    """``@name(%fence)``: waits on the host until ``%fence`` (null: no wait);
    a failure stops the call with ``what``. The one host wait mdc emits
    (lowerings, and host-fences for the caller's wait fence)."""
    return f"""
util.func private @{name}(%fence: !hal.fence) attributes {{inlining_policy = #util.inline.never}} {{
  %forever = arith.constant -1 : i32
{_wait_unless_null("  ", "%fence", what)}  util.return
}}
"""


def await_view_function_text(name: str) -> str:
    """``@name(%fence, %view) -> view``: waits on the host until ``%fence``
    (null: no wait), then returns ``%view``. A device that reads what the
    host waited for must import the view this returns, not the one passed
    in: a ``stream.tensor.import`` has no side effects, and IREE's stream
    scheduling moves it, and the work reading it, above a call that returns
    nothing (random programs seed 20261201 index 247: the CPU copied a
    GPU's result out of pinned memory before the GPU's copy into it, and
    returned zeros). A returned value is a dependency IREE keeps, if it is
    a new one: IREE's inter-procedural optimization replaces a result that
    is an argument passed through with that argument, and the dependency
    with it, so the view returned is a new view of the same bytes."""
    return f"""
util.func private @{name}(%fence: !hal.fence, %view: !hal.buffer_view) -> !hal.buffer_view attributes {{inlining_policy = #util.inline.never}} {{
  %c0 = arith.constant 0 : index
  %forever = arith.constant -1 : i32
{_wait_unless_null("  ", "%fence", "mdc: a copy through staging memory failed")}{_same_bytes_anew("view", "again")}  util.return %again : !hal.buffer_view
}}
"""


def _same_bytes_anew(view: str, again: str) -> str:
    """``%again``: a new byte view of the bytes ``%view`` views."""
    return f"""  %length = hal.buffer_view.dim<%{view} : !hal.buffer_view>[0] : index
  %{again}_buffer = hal.buffer_view.buffer<%{view} : !hal.buffer_view> : !hal.buffer
{_byte_view(again, again + "_buffer")}"""


def _wait_unless_null(indent: str, fence: str, what: str) -> str:
    """The host waits until ``fence`` is reached, unless it is null."""
    return f"""{indent}%none = util.null : !hal.fence
{indent}%is_none = util.cmp.eq {fence}, %none : !hal.fence
{indent}scf.if %is_none {{
{indent}}} else {{
{_host_wait(indent + "  ", "status", fence, what)}{indent}}}
"""


def copy_into_pinned_function_text(name: str, output: bool = False) -> str:
    """``@name(%src_view, %src_ready, %pinned_view, %src_device) -> view``:
    on the source (GPU) queue, after ``%src_ready``, copies the value into
    the pinned buffer; waits on the host; returns a new view of the pinned
    bytes, which is what the destination must import (see
    await_view_function_text). ``output``: the pinned buffer is the
    caller's output storage (an output argument given in the source
    device's pinned memory), first checked to be host-visible memory that
    can take the value: IREE checks a storage it imports, but this one is
    written before any import of it."""
    target, tag, what, check = "%staging", "in", "mdc: copy into staging memory failed", ""
    if output:
        target, tag, what = "%output", "out", "mdc: copy into output storage failed"
        check = """  %allocator = hal.device.allocator<%src_device : !hal.device> : !hal.allocator
  hal.buffer.assert<%output : !hal.buffer> message("mdc: output storage") allocator(%allocator : !hal.allocator) minimum_length(%length) type(HostVisible) usage("TransferTarget")
"""
    return f"""
util.func private @{name}(%src_view: !hal.buffer_view, %src_ready: !hal.fence, %pinned_view: !hal.buffer_view, %src_device: !hal.device) -> !hal.buffer_view attributes {{inlining_policy = #util.inline.never}} {{
  %c0 = arith.constant 0 : index
  %any_queue = arith.constant -1 : i64
  %forever = arith.constant -1 : i32
  %length = hal.buffer_view.dim<%src_view : !hal.buffer_view>[0] : index
  %src = hal.buffer_view.buffer<%src_view : !hal.buffer_view> : !hal.buffer
  {target} = hal.buffer_view.buffer<%pinned_view : !hal.buffer_view> : !hal.buffer
{check}{_copy("  ", tag, "%src_device", "%src_ready", "%src", target, 1, what)}
{_byte_view("again", target[1:])}  util.return %again : !hal.buffer_view
}}
"""


# A value a CPU writes into pinned memory goes on to a GPU in pieces, each
# piece's DMA overlapping the CPU's copy of the next: by default one piece
# per PIECE_BYTES, at most MAX_PIECES (mdc-compile --staging-pieces=N: N).
# On the H200 (docs/PERFORMANCE.md, run 24) pieces of 16-64 MiB did best and
# pieces of 2 MiB or less cost more than they gave. The first lowering of
# pieces chained the CPU's piece copies on its queue (piece i+1's execute
# waiting on piece i's fence) and stalled within a few thousand calls under
# IREE 3.13's local-task, with no cuda involved (test/e2e/gpu_stall.py); the
# host now starts each piece (piece_onto_function_text).
PIECE_BYTES = 16 << 20
MAX_PIECES = 16
CHUNK_ALIGNMENT = 64


def pieces_destination_function_text(name: str, in_place: bool = False) -> str:
    """``@name(%length, %dst_device) -> (view, ready)``: a new
    ``%length``-byte buffer of the destination device, usable once
    ``ready`` (a destination fence) is reached, for pieces to be copied
    into. ``in_place``: ``@name(..., %pinned_view, %in_place_max) -> (view,
    ready, in place)`` returns, for at most ``%in_place_max`` bytes, a new
    view of the pinned buffer itself, a null fence and true: piece_onto then
    copies nothing, and the destination reads the value there."""
    if in_place:
        return f"""
util.func private @{name}(%length: index, %dst_device: !hal.device, %pinned_view: !hal.buffer_view, %in_place_max: index) -> (!hal.buffer_view, !hal.fence, i1) attributes {{inlining_policy = #util.inline.never}} {{
  %c0 = arith.constant 0 : index
  %any_queue = arith.constant -1 : i64
  %small = arith.cmpi ule, %length, %in_place_max : index
  %view, %ready = scf.if %small -> (!hal.buffer_view, !hal.fence) {{
    %pinned = hal.buffer_view.buffer<%pinned_view : !hal.buffer_view> : !hal.buffer
{_byte_view("in_place", "pinned")}    %no_fence = util.null : !hal.fence
    scf.yield %in_place, %no_fence : !hal.buffer_view, !hal.fence
  }} else {{
{_allocate_destination()}{_byte_view("copied", "dst")}    scf.yield %copied, %dst_ready : !hal.buffer_view, !hal.fence
  }}
  util.return %view, %ready, %small : !hal.buffer_view, !hal.fence, i1
}}
"""
    return f"""
util.func private @{name}(%length: index, %dst_device: !hal.device) -> (!hal.buffer_view, !hal.fence) attributes {{inlining_policy = #util.inline.never}} {{
  %c0 = arith.constant 0 : index
  %any_queue = arith.constant -1 : i64
{_allocate_destination()}{_byte_view("view", "dst")}  util.return %view, %dst_ready : !hal.buffer_view, !hal.fence
}}
"""


def piece_onto_function_text(name: str, in_place: bool = False) -> str:
    """``@name(%pinned_view, %ready, %offset, %bytes, %dst_view, %dst_ready,
    %dst_device) -> (pinned view, done)``: one piece, ``%bytes`` bytes at
    ``%offset``, is being written into pinned memory by the source device
    (done when ``%ready``, a source fence, is). The host waits for it, then
    starts its copy on the destination queue into the same range of
    ``%dst_view`` (after ``%dst_ready``), signalling ``done``. Returns a new
    view of the pinned buffer, so that the source device's next piece, which
    writes into that view, is issued only after this call: its queue then
    never waits on a fence of its own earlier piece. ``in_place``: ``@name(
    ..., %in_place)``; where ``%in_place`` (``%dst_view`` views the pinned
    buffer itself: pieces_destination_function_text's in-place answer),
    nothing is copied and ``done`` is null."""
    copy = """  %done = hal.fence.create device(%dst_device : !hal.device) flags("None") : !hal.fence
  hal.device.queue.copy<%dst_device : !hal.device> affinity(%any_queue) wait(%dst_ready) signal(%done) source(%staging : !hal.buffer)[%offset] target(%dst : !hal.buffer)[%offset] length(%bytes) flags("None")"""
    in_place_operand = ""
    if in_place:
        in_place_operand = ", %in_place: i1"
        copy = """  %done = scf.if %in_place -> (!hal.fence) {
    %no_fence = util.null : !hal.fence
    scf.yield %no_fence : !hal.fence
  } else {
    %copied = hal.fence.create device(%dst_device : !hal.device) flags("None") : !hal.fence
    hal.device.queue.copy<%dst_device : !hal.device> affinity(%any_queue) wait(%dst_ready) signal(%copied) source(%staging : !hal.buffer)[%offset] target(%dst : !hal.buffer)[%offset] length(%bytes) flags("None")
    scf.yield %copied : !hal.fence
  }"""
    return f"""
util.func private @{name}(%pinned_view: !hal.buffer_view, %ready: !hal.fence, %offset: index, %bytes: index, %dst_view: !hal.buffer_view, %dst_ready: !hal.fence, %dst_device: !hal.device{in_place_operand}) -> (!hal.buffer_view, !hal.fence) attributes {{inlining_policy = #util.inline.never}} {{
  %c0 = arith.constant 0 : index
  %any_queue = arith.constant -1 : i64
  %forever = arith.constant -1 : i32
  %length = hal.buffer_view.dim<%pinned_view : !hal.buffer_view>[0] : index
  %staging = hal.buffer_view.buffer<%pinned_view : !hal.buffer_view> : !hal.buffer
  %dst = hal.buffer_view.buffer<%dst_view : !hal.buffer_view> : !hal.buffer
{_host_wait("  ", "ready_status", "%ready", "mdc: the value written into staging memory failed")}{copy}
{_byte_view("again", "staging")}  util.return %again, %done : !hal.buffer_view, !hal.fence
}}
"""


def pieces_arrived_function_text(name: str, in_place: bool = False) -> str:
    """``@name(%dst_view, %dones) -> view``: waits on the host for every
    piece's copy (``%dones``, a list of destination fences), in order, then
    returns a new view of the destination buffer (new, so nothing reads it
    before this call). ``in_place``: a null fence (a piece read in place)
    is not waited for."""
    what = "mdc: copy out of staging memory failed"
    wait = _wait_unless_null("    ", "%done", what) if in_place else _host_wait("    ", "copied", "%done", what)
    return f"""
util.func private @{name}(%dst_view: !hal.buffer_view, %dones: !util.list<?>) -> !hal.buffer_view attributes {{inlining_policy = #util.inline.never}} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %forever = arith.constant -1 : i32
  %count = util.list.size %dones : !util.list<?>
  scf.for %i = %c0 to %count step %c1 {{
    %done = util.list.get %dones[%i] : !util.list<?> -> !hal.fence
{wait}  }}
  %length = hal.buffer_view.dim<%dst_view : !hal.buffer_view>[0] : index
  %dst = hal.buffer_view.buffer<%dst_view : !hal.buffer_view> : !hal.buffer
{_byte_view("view", "dst")}  util.return %view : !hal.buffer_view
}}
"""
