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


def _copy(indent: str, tag: str, device: str, wait: str, src: str, dst: str, chunks: int, what: str) -> str:
    """A copy of %length bytes, in ``chunks`` concurrent pieces, then a host wait."""
    if chunks <= 1:
        return f"""
{indent}%{tag}_done = hal.fence.create device({device} : !hal.device) flags("None") : !hal.fence
{indent}hal.device.queue.copy<{device} : !hal.device> affinity(%any_queue) wait({wait}) signal(%{tag}_done) source({src} : !hal.buffer)[%c0] target({dst} : !hal.buffer)[%c0] length(%length) flags("None")
{indent}%{tag}_status = hal.fence.await until([%{tag}_done]) timeout_millis(%forever) flags("None") : i32
{indent}util.status.check_ok %{tag}_status, "{what}"
"""
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
{indent}  %status = hal.fence.await until([%done]) timeout_millis(%forever) flags("None") : i32
{indent}  util.status.check_ok %status, "{what}"
{indent}}}
"""


def _allocate_destination() -> str:
    """``%dst``: a new buffer of the destination device, allocated on its
    queue (stream-ordered: IREE serves it from the device's pool, where an
    allocator allocation is a cuMemAlloc now and a cuMemFree when released);
    the copy into it waits on ``%dst_ready``."""
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
{_copy("  ", "in", "%src_device", "%src_ready", "%src", "%staging", src_chunks, "mdc: copy into staging memory failed")}
{_allocate_destination()}{_copy("  ", "out", "%dst_device", "%dst_ready", "%staging", "%dst", dst_chunks, "mdc: copy out of staging memory failed")}
  %i8 = hal.element_type<i8> : i32
  %dense = hal.encoding_type<dense_row_major> : i32
  %view = hal.buffer_view.create buffer(%dst : !hal.buffer)[%c0, %length] shape([%length]) type(%i8) encoding(%dense) : !hal.buffer_view
  util.return %view : !hal.buffer_view
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
  %i8 = hal.element_type<i8> : i32
  %dense = hal.encoding_type<dense_row_major> : i32
  %view = hal.buffer_view.create buffer(%staging : !hal.buffer)[%c0, %length] shape([%length]) type(%i8) encoding(%dense) : !hal.buffer_view
  util.return %staging, %view : !hal.buffer, !hal.buffer_view
}}
"""


def site_view_function_text(name: str, cache: str, shared: str) -> str:
    """``@name(%length, %owner) -> view``: one crossing site's pinned buffer,
    kept in global ``cache`` and handed out by ``shared``
    (pinned_view_function_text), with a declaration of ``shared`` so the
    text verifies on its own."""
    return cache_global_text(cache) + f"""
util.func private @{shared}(%cached: !hal.buffer, %length: index, %owner: !hal.device) -> (!hal.buffer, !hal.buffer_view)
util.func private @{name}(%length: index, %owner: !hal.device) -> !hal.buffer_view attributes {{inlining_policy = #util.inline.never}} {{
  %cached = util.global.load @{cache} : !hal.buffer
  %buffer, %view = util.call @{shared}(%cached, %length, %owner) : (!hal.buffer, index, !hal.device) -> (!hal.buffer, !hal.buffer_view)
  util.global.store %buffer, @{cache} : !hal.buffer
  util.return %view : !hal.buffer_view
}}
"""


def stage_from_pinned_function_text(name: str) -> str:
    """``@name(%pinned_view, %ready, %dst_device) -> view``: the value is
    already in pinned memory (written there by the source device, done when
    ``%ready``, a source-device fence, is); wait for it on the host, then
    copy it on the destination queue into the destination's memory."""
    return f"""
util.func private @{name}(%src_view: !hal.buffer_view, %src_ready: !hal.fence, %dst_device: !hal.device) -> !hal.buffer_view attributes {{inlining_policy = #util.inline.never}} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %any_queue = arith.constant -1 : i64
  %forever = arith.constant -1 : i32
  %length = hal.buffer_view.dim<%src_view : !hal.buffer_view>[0] : index
  %staging = hal.buffer_view.buffer<%src_view : !hal.buffer_view> : !hal.buffer
  %ready_status = hal.fence.await until([%src_ready]) timeout_millis(%forever) flags("None") : i32
  util.status.check_ok %ready_status, "mdc: the value written into staging memory failed"
{_allocate_destination()}{_copy("  ", "out", "%dst_device", "%dst_ready", "%staging", "%dst", 1, "mdc: copy out of staging memory failed")}
  %i8 = hal.element_type<i8> : i32
  %dense = hal.encoding_type<dense_row_major> : i32
  %view = hal.buffer_view.create buffer(%dst : !hal.buffer)[%c0, %length] shape([%length]) type(%i8) encoding(%dense) : !hal.buffer_view
  util.return %view : !hal.buffer_view
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


def await_function_text(name: str) -> str:
    """``@name(%fence)``: waits on the host until ``%fence`` (null: no wait)."""
    return f"""
util.func private @{name}(%fence: !hal.fence) attributes {{inlining_policy = #util.inline.never}} {{
  %forever = arith.constant -1 : i32
  %none = util.null : !hal.fence
  %is_none = util.cmp.eq %fence, %none : !hal.fence
  scf.if %is_none {{
  }} else {{
    %status = hal.fence.await until([%fence]) timeout_millis(%forever) flags("None") : i32
    util.status.check_ok %status, "mdc: a copy through staging memory failed"
  }}
  util.return
}}
"""


def copy_into_pinned_function_text(name: str) -> str:
    """``@name(%src_view, %src_ready, %pinned_view, %src_device)``: on the
    source (GPU) queue, after ``%src_ready``, copies the value into the
    pinned buffer; waits on the host."""
    return f"""
util.func private @{name}(%src_view: !hal.buffer_view, %src_ready: !hal.fence, %pinned_view: !hal.buffer_view, %src_device: !hal.device) attributes {{inlining_policy = #util.inline.never}} {{
  %c0 = arith.constant 0 : index
  %any_queue = arith.constant -1 : i64
  %forever = arith.constant -1 : i32
  %length = hal.buffer_view.dim<%src_view : !hal.buffer_view>[0] : index
  %src = hal.buffer_view.buffer<%src_view : !hal.buffer_view> : !hal.buffer
  %staging = hal.buffer_view.buffer<%pinned_view : !hal.buffer_view> : !hal.buffer
{_copy("  ", "in", "%src_device", "%src_ready", "%src", "%staging", 1, "mdc: copy into staging memory failed")}
  util.return
}}
"""


# Pieces a CPU writes a value into pinned memory in (mdc-compile
# --staging-pieces). One: with more, each piece's DMA overlaps the CPU's copy
# of the next (256 MiB arguments 21 -> 27 GB/s on the H200), but calls
# stall, within a few thousand, under IREE 3.13 (test/e2e/gpu_stall.py;
# docs/PERFORMANCE.md); one piece never did.
STAGING_CHUNKS = 1
CHUNK_ALIGNMENT = 64


def stage_from_pinned_chunks_function_text(name: str, chunks: int) -> str:
    """``@name(%pinned_view, %ready_0..%ready_{chunks-1}, %chunk, %dst_device)
    -> view``: the value is being written into pinned memory in ``chunks``
    pieces of ``%chunk`` bytes (the last ones shorter or empty), piece ``i``
    done when ``%ready_i`` (a source-device fence) is. For each piece in
    turn: wait for it on the host, then start its copy on the destination
    queue, so the DMA of one piece overlaps the CPU's copy of the next. Waits
    on the host for all the copies."""
    readies = ", ".join(f"%ready_{i}: !hal.fence" for i in range(chunks))
    pieces = []
    for i in range(chunks):
        pieces.append(f"""  %start_{i} = arith.muli %chunk, %c{i} : index
  %offset_{i} = arith.minui %start_{i}, %length : index
  %stop_{i} = arith.addi %offset_{i}, %chunk : index
  %end_{i} = arith.minui %stop_{i}, %length : index
  %bytes_{i} = arith.subi %end_{i}, %offset_{i} : index
  %ready_status_{i} = hal.fence.await until([%ready_{i}]) timeout_millis(%forever) flags("None") : i32
  util.status.check_ok %ready_status_{i}, "mdc: the value written into staging memory failed"
  %done_{i} = hal.fence.create device(%dst_device : !hal.device) flags("None") : !hal.fence
  hal.device.queue.copy<%dst_device : !hal.device> affinity(%any_queue) wait(%dst_ready) signal(%done_{i}) source(%staging : !hal.buffer)[%offset_{i}] target(%dst : !hal.buffer)[%offset_{i}] length(%bytes_{i}) flags("None")
""")
    constants = "".join(f"  %c{i} = arith.constant {i} : index\n" for i in range(chunks))
    done = ", ".join(f"%done_{i}" for i in range(chunks))
    return f"""
util.func private @{name}(%src_view: !hal.buffer_view, {readies}, %chunk: index, %dst_device: !hal.device) -> !hal.buffer_view attributes {{inlining_policy = #util.inline.never}} {{
{constants}  %any_queue = arith.constant -1 : i64
  %forever = arith.constant -1 : i32
  %length = hal.buffer_view.dim<%src_view : !hal.buffer_view>[0] : index
  %staging = hal.buffer_view.buffer<%src_view : !hal.buffer_view> : !hal.buffer
{_allocate_destination()}{"".join(pieces)}  %copied = hal.fence.await until([{done}]) timeout_millis(%forever) flags("None") : i32
  util.status.check_ok %copied, "mdc: copy out of staging memory failed"
  %i8 = hal.element_type<i8> : i32
  %dense = hal.encoding_type<dense_row_major> : i32
  %view = hal.buffer_view.create buffer(%dst : !hal.buffer)[%c0, %length] shape([%length]) type(%i8) encoding(%dense) : !hal.buffer_view
  util.return %view : !hal.buffer_view
}}
"""
