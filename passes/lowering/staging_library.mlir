// The staging helpers mdc's lowerings call; passes/lowering/staging_template.py
// clones them into a module under the names it gives them (the names here
// are the library's own). Stock HAL VM ops only, plus util/scf/arith. Every
// host wait checks its status in an scf.if: when IREE's IPO proves every
// fence null (an argument given in pinned memory needs no wait), the await
// folds to status 0, and a bare util.status.check_ok of a constant 0 is not
// folded away but becomes a vm.cond_fail that IREE 3.13's verifier rejects
// ("status is 0; expected to not be OK"). A copy on a local device's queue
// is cut into 8 chunks of at least 1 MiB, issued together
// (staging_template.CHUNKS_ON_LOCAL_QUEUE), so the task system runs them on
// several workers instead of one thread; a GPU queue gets one copy.

// ``@<helper>(%fence)``: waits on the host until ``%fence`` (null: no wait);
// a failure stops the call (its message, where the caller says another). The one host wait mdc emits
// (lowerings, and host-fences for the caller's wait fence).
util.func private @await(%fence: !hal.fence) attributes {inlining_policy = #util.inline.never} {
  %forever = arith.constant -1 : i32
  %none = util.null : !hal.fence
  %is_none = util.cmp.eq %fence, %none : !hal.fence
  scf.if %is_none {
  } else {
    %status = hal.fence.await until([%fence]) timeout_millis(%forever) flags("None") : i32
    %status_ok = arith.constant 0 : i32
    %status_failed = arith.cmpi ne, %status, %status_ok : i32
    scf.if %status_failed {
      util.status.check_ok %status, "mdc: a copy through staging memory failed"
    }
  }
  util.return
}

// ``@<helper>(%fence, %view) -> view``: waits on the host until ``%fence``
// (null: no wait), then returns ``%view``. A device that reads what the
// host waited for must import the view this returns, not the one passed
// in: a ``stream.tensor.import`` has no side effects, and IREE's stream
// scheduling moves it, and the work reading it, above a call that returns
// nothing (random programs seed 20261201 index 247: the CPU copied a
// GPU's result out of pinned memory before the GPU's copy into it, and
// returned zeros). A returned value is a dependency IREE keeps, if it is
// a new one: IREE's inter-procedural optimization replaces a result that
// is an argument passed through with that argument, and the dependency
// with it, so the view returned is a new view of the same bytes.
util.func private @await_view(%fence: !hal.fence, %view: !hal.buffer_view) -> !hal.buffer_view attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 0 : index
  %forever = arith.constant -1 : i32
  %none = util.null : !hal.fence
  %is_none = util.cmp.eq %fence, %none : !hal.fence
  scf.if %is_none {
  } else {
    %status = hal.fence.await until([%fence]) timeout_millis(%forever) flags("None") : i32
    %status_ok = arith.constant 0 : i32
    %status_failed = arith.cmpi ne, %status, %status_ok : i32
    scf.if %status_failed {
      util.status.check_ok %status, "mdc: a copy through staging memory failed"
    }
  }
  %length = hal.buffer_view.dim<%view : !hal.buffer_view>[0] : index
  %again_buffer = hal.buffer_view.buffer<%view : !hal.buffer_view> : !hal.buffer
  %i8 = hal.element_type<i8> : i32
  %dense = hal.encoding_type<dense_row_major> : i32
  %again = hal.buffer_view.create buffer(%again_buffer : !hal.buffer)[%c0, %length] shape([%length]) type(%i8) encoding(%dense) : !hal.buffer_view
  util.return %again : !hal.buffer_view
}

// ``@<helper>(%cached, %length, %owner) -> (buffer, view)``: a crossing
// site's own pinned staging buffer (``%cached``, null the first time;
// reallocated when too small) and a ``%length``-byte view of it, for a CPU
// producer to write into directly. The caller keeps the buffer in the
// site's global: two crossings never share one, since IREE may run their
// producers together (random programs seed 4242 index 41).
util.func private @pinned_view(%cached: !hal.buffer, %length: index, %owner_device: !hal.device) -> (!hal.buffer, !hal.buffer_view) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 0 : index
  %any_queue = arith.constant -1 : i64
  %owner_allocator = hal.device.allocator<%owner_device : !hal.device> : !hal.allocator
  %pinned_type = hal.memory_type<"HostLocal|DeviceVisible"> : i32
  %pinned_usage = hal.buffer_usage<"Transfer|Mapping|MappingPersistent|DispatchStorage"> : i32
  %no_buffer = util.null : !hal.buffer
  %empty = util.cmp.eq %cached, %no_buffer : !hal.buffer
  %staging = scf.if %empty -> (!hal.buffer) {
    %new = hal.allocator.allocate<%owner_allocator : !hal.allocator> affinity(%any_queue) type(%pinned_type) usage(%pinned_usage) : !hal.buffer{%length}
    scf.yield %new : !hal.buffer
  } else {
    %have = hal.buffer.length<%cached : !hal.buffer> : index
    %too_small = arith.cmpi ult, %have, %length : index
    %grown = scf.if %too_small -> (!hal.buffer) {
    %new = hal.allocator.allocate<%owner_allocator : !hal.allocator> affinity(%any_queue) type(%pinned_type) usage(%pinned_usage) : !hal.buffer{%length}
      scf.yield %new : !hal.buffer
    } else {
      scf.yield %cached : !hal.buffer
    }
    scf.yield %grown : !hal.buffer
  }
  %i8 = hal.element_type<i8> : i32
  %dense = hal.encoding_type<dense_row_major> : i32
  %view = hal.buffer_view.create buffer(%staging : !hal.buffer)[%c0, %length] shape([%length]) type(%i8) encoding(%dense) : !hal.buffer_view
  util.return %staging, %view : !hal.buffer, !hal.buffer_view
}

// @stage_*(%src_view, %src_ready, %src_device, %dst_device, %owner_device) -> view: through the
// owner's pinned buffer @pinned_cache (grown when too small): a copy on the source queue after
// %src_ready, a host wait, a copy on the destination queue into a buffer it allocates, a host wait.
util.global private mutable @pinned_cache : !hal.buffer

// @stage_gpu_to_gpu
util.func private @stage_gpu_to_gpu(%src_view: !hal.buffer_view, %src_ready: !hal.fence, %src_device: !hal.device, %dst_device: !hal.device, %owner_device: !hal.device) -> !hal.buffer_view attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %any_queue = arith.constant -1 : i64
  %forever = arith.constant -1 : i32
  %length = hal.buffer_view.dim<%src_view : !hal.buffer_view>[0] : index
  %src = hal.buffer_view.buffer<%src_view : !hal.buffer_view> : !hal.buffer
  %owner_allocator = hal.device.allocator<%owner_device : !hal.device> : !hal.allocator
  %pinned_type = hal.memory_type<"HostLocal|DeviceVisible"> : i32
  %pinned_usage = hal.buffer_usage<"Transfer|Mapping|MappingPersistent|DispatchStorage"> : i32
  %cached = util.global.load @pinned_cache : !hal.buffer
  %no_buffer = util.null : !hal.buffer
  %empty = util.cmp.eq %cached, %no_buffer : !hal.buffer
  %staging = scf.if %empty -> (!hal.buffer) {
    %new = hal.allocator.allocate<%owner_allocator : !hal.allocator> affinity(%any_queue) type(%pinned_type) usage(%pinned_usage) : !hal.buffer{%length}
    util.global.store %new, @pinned_cache : !hal.buffer
    scf.yield %new : !hal.buffer
  } else {
    %have = hal.buffer.length<%cached : !hal.buffer> : index
    %too_small = arith.cmpi ult, %have, %length : index
    %grown = scf.if %too_small -> (!hal.buffer) {
    %new = hal.allocator.allocate<%owner_allocator : !hal.allocator> affinity(%any_queue) type(%pinned_type) usage(%pinned_usage) : !hal.buffer{%length}
    util.global.store %new, @pinned_cache : !hal.buffer
      scf.yield %new : !hal.buffer
    } else {
      scf.yield %cached : !hal.buffer
    }
    scf.yield %grown : !hal.buffer
  }
  %dst_type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
  %dst_usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
  %dst_pool = arith.constant 0 : i64
  %no_wait = util.null : !hal.fence
  %dst_ready = hal.fence.create device(%dst_device : !hal.device) flags("None") : !hal.fence
  %dst = hal.device.queue.alloca<%dst_device : !hal.device> affinity(%any_queue) wait(%no_wait) signal(%dst_ready) pool(%dst_pool) type(%dst_type) usage(%dst_usage) flags("None") : !hal.buffer{%length}

  %in_done = hal.fence.create device(%src_device : !hal.device) flags("None") : !hal.fence
  hal.device.queue.copy<%src_device : !hal.device> affinity(%any_queue) wait(%src_ready) signal(%in_done) source(%src : !hal.buffer)[%c0] target(%staging : !hal.buffer)[%c0] length(%length) flags("None")
  %in_status = hal.fence.await until([%in_done]) timeout_millis(%forever) flags("None") : i32
  %in_status_ok = arith.constant 0 : i32
  %in_status_failed = arith.cmpi ne, %in_status, %in_status_ok : i32
  scf.if %in_status_failed {
    util.status.check_ok %in_status, "mdc: copy into staging memory failed"
  }


  %out_done = hal.fence.create device(%dst_device : !hal.device) flags("None") : !hal.fence
  hal.device.queue.copy<%dst_device : !hal.device> affinity(%any_queue) wait(%dst_ready) signal(%out_done) source(%staging : !hal.buffer)[%c0] target(%dst : !hal.buffer)[%c0] length(%length) flags("None")
  %out_status = hal.fence.await until([%out_done]) timeout_millis(%forever) flags("None") : i32
  %out_status_ok = arith.constant 0 : i32
  %out_status_failed = arith.cmpi ne, %out_status, %out_status_ok : i32
  scf.if %out_status_failed {
    util.status.check_ok %out_status, "mdc: copy out of staging memory failed"
  }

  %i8 = hal.element_type<i8> : i32
  %dense = hal.encoding_type<dense_row_major> : i32
  %view = hal.buffer_view.create buffer(%dst : !hal.buffer)[%c0, %length] shape([%length]) type(%i8) encoding(%dense) : !hal.buffer_view
  util.return %view : !hal.buffer_view
}

// @stage_gpu_to_local
util.func private @stage_gpu_to_local(%src_view: !hal.buffer_view, %src_ready: !hal.fence, %src_device: !hal.device, %dst_device: !hal.device, %owner_device: !hal.device) -> !hal.buffer_view attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %any_queue = arith.constant -1 : i64
  %forever = arith.constant -1 : i32
  %length = hal.buffer_view.dim<%src_view : !hal.buffer_view>[0] : index
  %src = hal.buffer_view.buffer<%src_view : !hal.buffer_view> : !hal.buffer
  %owner_allocator = hal.device.allocator<%owner_device : !hal.device> : !hal.allocator
  %pinned_type = hal.memory_type<"HostLocal|DeviceVisible"> : i32
  %pinned_usage = hal.buffer_usage<"Transfer|Mapping|MappingPersistent|DispatchStorage"> : i32
  %cached = util.global.load @pinned_cache : !hal.buffer
  %no_buffer = util.null : !hal.buffer
  %empty = util.cmp.eq %cached, %no_buffer : !hal.buffer
  %staging = scf.if %empty -> (!hal.buffer) {
    %new = hal.allocator.allocate<%owner_allocator : !hal.allocator> affinity(%any_queue) type(%pinned_type) usage(%pinned_usage) : !hal.buffer{%length}
    util.global.store %new, @pinned_cache : !hal.buffer
    scf.yield %new : !hal.buffer
  } else {
    %have = hal.buffer.length<%cached : !hal.buffer> : index
    %too_small = arith.cmpi ult, %have, %length : index
    %grown = scf.if %too_small -> (!hal.buffer) {
    %new = hal.allocator.allocate<%owner_allocator : !hal.allocator> affinity(%any_queue) type(%pinned_type) usage(%pinned_usage) : !hal.buffer{%length}
    util.global.store %new, @pinned_cache : !hal.buffer
      scf.yield %new : !hal.buffer
    } else {
      scf.yield %cached : !hal.buffer
    }
    scf.yield %grown : !hal.buffer
  }
  %dst_type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
  %dst_usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
  %dst_pool = arith.constant 0 : i64
  %no_wait = util.null : !hal.fence
  %dst_ready = hal.fence.create device(%dst_device : !hal.device) flags("None") : !hal.fence
  %dst = hal.device.queue.alloca<%dst_device : !hal.device> affinity(%any_queue) wait(%no_wait) signal(%dst_ready) pool(%dst_pool) type(%dst_type) usage(%dst_usage) flags("None") : !hal.buffer{%length}

  %in_done = hal.fence.create device(%src_device : !hal.device) flags("None") : !hal.fence
  hal.device.queue.copy<%src_device : !hal.device> affinity(%any_queue) wait(%src_ready) signal(%in_done) source(%src : !hal.buffer)[%c0] target(%staging : !hal.buffer)[%c0] length(%length) flags("None")
  %in_status = hal.fence.await until([%in_done]) timeout_millis(%forever) flags("None") : i32
  %in_status_ok = arith.constant 0 : i32
  %in_status_failed = arith.cmpi ne, %in_status, %in_status_ok : i32
  scf.if %in_status_failed {
    util.status.check_ok %in_status, "mdc: copy into staging memory failed"
  }


  %out_parts = arith.constant 8 : index
  %out_min = arith.constant 1048576 : index
  %out_even = arith.ceildivui %length, %out_parts : index
  %out_chunk = arith.maxui %out_even, %out_min : index
  %out_count = arith.ceildivui %length, %out_chunk : index
  %out_fences = util.list.create %out_count : !util.list<?>
  util.list.resize %out_fences, %out_count : !util.list<?>
  scf.for %i = %c0 to %out_count step %c1 {
    %offset = arith.muli %i, %out_chunk : index
    %rest = arith.subi %length, %offset : index
    %bytes = arith.minui %rest, %out_chunk : index
    %done = hal.fence.create device(%dst_device : !hal.device) flags("None") : !hal.fence
    hal.device.queue.copy<%dst_device : !hal.device> affinity(%any_queue) wait(%dst_ready) signal(%done) source(%staging : !hal.buffer)[%offset] target(%dst : !hal.buffer)[%offset] length(%bytes) flags("None")
    util.list.set %out_fences[%i], %done : !hal.fence -> !util.list<?>
  }
  scf.for %i = %c0 to %out_count step %c1 {
    %done = util.list.get %out_fences[%i] : !util.list<?> -> !hal.fence
    %status = hal.fence.await until([%done]) timeout_millis(%forever) flags("None") : i32
    %status_ok = arith.constant 0 : i32
    %status_failed = arith.cmpi ne, %status, %status_ok : i32
    scf.if %status_failed {
      util.status.check_ok %status, "mdc: copy out of staging memory failed"
    }
  }

  %i8 = hal.element_type<i8> : i32
  %dense = hal.encoding_type<dense_row_major> : i32
  %view = hal.buffer_view.create buffer(%dst : !hal.buffer)[%c0, %length] shape([%length]) type(%i8) encoding(%dense) : !hal.buffer_view
  util.return %view : !hal.buffer_view
}

// @stage_local_to_gpu
util.func private @stage_local_to_gpu(%src_view: !hal.buffer_view, %src_ready: !hal.fence, %src_device: !hal.device, %dst_device: !hal.device, %owner_device: !hal.device) -> !hal.buffer_view attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %any_queue = arith.constant -1 : i64
  %forever = arith.constant -1 : i32
  %length = hal.buffer_view.dim<%src_view : !hal.buffer_view>[0] : index
  %src = hal.buffer_view.buffer<%src_view : !hal.buffer_view> : !hal.buffer
  %owner_allocator = hal.device.allocator<%owner_device : !hal.device> : !hal.allocator
  %pinned_type = hal.memory_type<"HostLocal|DeviceVisible"> : i32
  %pinned_usage = hal.buffer_usage<"Transfer|Mapping|MappingPersistent|DispatchStorage"> : i32
  %cached = util.global.load @pinned_cache : !hal.buffer
  %no_buffer = util.null : !hal.buffer
  %empty = util.cmp.eq %cached, %no_buffer : !hal.buffer
  %staging = scf.if %empty -> (!hal.buffer) {
    %new = hal.allocator.allocate<%owner_allocator : !hal.allocator> affinity(%any_queue) type(%pinned_type) usage(%pinned_usage) : !hal.buffer{%length}
    util.global.store %new, @pinned_cache : !hal.buffer
    scf.yield %new : !hal.buffer
  } else {
    %have = hal.buffer.length<%cached : !hal.buffer> : index
    %too_small = arith.cmpi ult, %have, %length : index
    %grown = scf.if %too_small -> (!hal.buffer) {
    %new = hal.allocator.allocate<%owner_allocator : !hal.allocator> affinity(%any_queue) type(%pinned_type) usage(%pinned_usage) : !hal.buffer{%length}
    util.global.store %new, @pinned_cache : !hal.buffer
      scf.yield %new : !hal.buffer
    } else {
      scf.yield %cached : !hal.buffer
    }
    scf.yield %grown : !hal.buffer
  }
  %dst_type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
  %dst_usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
  %dst_pool = arith.constant 0 : i64
  %no_wait = util.null : !hal.fence
  %dst_ready = hal.fence.create device(%dst_device : !hal.device) flags("None") : !hal.fence
  %dst = hal.device.queue.alloca<%dst_device : !hal.device> affinity(%any_queue) wait(%no_wait) signal(%dst_ready) pool(%dst_pool) type(%dst_type) usage(%dst_usage) flags("None") : !hal.buffer{%length}

  %in_parts = arith.constant 8 : index
  %in_min = arith.constant 1048576 : index
  %in_even = arith.ceildivui %length, %in_parts : index
  %in_chunk = arith.maxui %in_even, %in_min : index
  %in_count = arith.ceildivui %length, %in_chunk : index
  %in_fences = util.list.create %in_count : !util.list<?>
  util.list.resize %in_fences, %in_count : !util.list<?>
  scf.for %i = %c0 to %in_count step %c1 {
    %offset = arith.muli %i, %in_chunk : index
    %rest = arith.subi %length, %offset : index
    %bytes = arith.minui %rest, %in_chunk : index
    %done = hal.fence.create device(%src_device : !hal.device) flags("None") : !hal.fence
    hal.device.queue.copy<%src_device : !hal.device> affinity(%any_queue) wait(%src_ready) signal(%done) source(%src : !hal.buffer)[%offset] target(%staging : !hal.buffer)[%offset] length(%bytes) flags("None")
    util.list.set %in_fences[%i], %done : !hal.fence -> !util.list<?>
  }
  scf.for %i = %c0 to %in_count step %c1 {
    %done = util.list.get %in_fences[%i] : !util.list<?> -> !hal.fence
    %status = hal.fence.await until([%done]) timeout_millis(%forever) flags("None") : i32
    %status_ok = arith.constant 0 : i32
    %status_failed = arith.cmpi ne, %status, %status_ok : i32
    scf.if %status_failed {
      util.status.check_ok %status, "mdc: copy into staging memory failed"
    }
  }


  %out_done = hal.fence.create device(%dst_device : !hal.device) flags("None") : !hal.fence
  hal.device.queue.copy<%dst_device : !hal.device> affinity(%any_queue) wait(%dst_ready) signal(%out_done) source(%staging : !hal.buffer)[%c0] target(%dst : !hal.buffer)[%c0] length(%length) flags("None")
  %out_status = hal.fence.await until([%out_done]) timeout_millis(%forever) flags("None") : i32
  %out_status_ok = arith.constant 0 : i32
  %out_status_failed = arith.cmpi ne, %out_status, %out_status_ok : i32
  scf.if %out_status_failed {
    util.status.check_ok %out_status, "mdc: copy out of staging memory failed"
  }

  %i8 = hal.element_type<i8> : i32
  %dense = hal.encoding_type<dense_row_major> : i32
  %view = hal.buffer_view.create buffer(%dst : !hal.buffer)[%c0, %length] shape([%length]) type(%i8) encoding(%dense) : !hal.buffer_view
  util.return %view : !hal.buffer_view
}

// @stage_local_to_local
util.func private @stage_local_to_local(%src_view: !hal.buffer_view, %src_ready: !hal.fence, %src_device: !hal.device, %dst_device: !hal.device, %owner_device: !hal.device) -> !hal.buffer_view attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %any_queue = arith.constant -1 : i64
  %forever = arith.constant -1 : i32
  %length = hal.buffer_view.dim<%src_view : !hal.buffer_view>[0] : index
  %src = hal.buffer_view.buffer<%src_view : !hal.buffer_view> : !hal.buffer
  %owner_allocator = hal.device.allocator<%owner_device : !hal.device> : !hal.allocator
  %pinned_type = hal.memory_type<"HostLocal|DeviceVisible"> : i32
  %pinned_usage = hal.buffer_usage<"Transfer|Mapping|MappingPersistent|DispatchStorage"> : i32
  %cached = util.global.load @pinned_cache : !hal.buffer
  %no_buffer = util.null : !hal.buffer
  %empty = util.cmp.eq %cached, %no_buffer : !hal.buffer
  %staging = scf.if %empty -> (!hal.buffer) {
    %new = hal.allocator.allocate<%owner_allocator : !hal.allocator> affinity(%any_queue) type(%pinned_type) usage(%pinned_usage) : !hal.buffer{%length}
    util.global.store %new, @pinned_cache : !hal.buffer
    scf.yield %new : !hal.buffer
  } else {
    %have = hal.buffer.length<%cached : !hal.buffer> : index
    %too_small = arith.cmpi ult, %have, %length : index
    %grown = scf.if %too_small -> (!hal.buffer) {
    %new = hal.allocator.allocate<%owner_allocator : !hal.allocator> affinity(%any_queue) type(%pinned_type) usage(%pinned_usage) : !hal.buffer{%length}
    util.global.store %new, @pinned_cache : !hal.buffer
      scf.yield %new : !hal.buffer
    } else {
      scf.yield %cached : !hal.buffer
    }
    scf.yield %grown : !hal.buffer
  }
  %dst_type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
  %dst_usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
  %dst_pool = arith.constant 0 : i64
  %no_wait = util.null : !hal.fence
  %dst_ready = hal.fence.create device(%dst_device : !hal.device) flags("None") : !hal.fence
  %dst = hal.device.queue.alloca<%dst_device : !hal.device> affinity(%any_queue) wait(%no_wait) signal(%dst_ready) pool(%dst_pool) type(%dst_type) usage(%dst_usage) flags("None") : !hal.buffer{%length}

  %in_parts = arith.constant 8 : index
  %in_min = arith.constant 1048576 : index
  %in_even = arith.ceildivui %length, %in_parts : index
  %in_chunk = arith.maxui %in_even, %in_min : index
  %in_count = arith.ceildivui %length, %in_chunk : index
  %in_fences = util.list.create %in_count : !util.list<?>
  util.list.resize %in_fences, %in_count : !util.list<?>
  scf.for %i = %c0 to %in_count step %c1 {
    %offset = arith.muli %i, %in_chunk : index
    %rest = arith.subi %length, %offset : index
    %bytes = arith.minui %rest, %in_chunk : index
    %done = hal.fence.create device(%src_device : !hal.device) flags("None") : !hal.fence
    hal.device.queue.copy<%src_device : !hal.device> affinity(%any_queue) wait(%src_ready) signal(%done) source(%src : !hal.buffer)[%offset] target(%staging : !hal.buffer)[%offset] length(%bytes) flags("None")
    util.list.set %in_fences[%i], %done : !hal.fence -> !util.list<?>
  }
  scf.for %i = %c0 to %in_count step %c1 {
    %done = util.list.get %in_fences[%i] : !util.list<?> -> !hal.fence
    %status = hal.fence.await until([%done]) timeout_millis(%forever) flags("None") : i32
    %status_ok = arith.constant 0 : i32
    %status_failed = arith.cmpi ne, %status, %status_ok : i32
    scf.if %status_failed {
      util.status.check_ok %status, "mdc: copy into staging memory failed"
    }
  }


  %out_parts = arith.constant 8 : index
  %out_min = arith.constant 1048576 : index
  %out_even = arith.ceildivui %length, %out_parts : index
  %out_chunk = arith.maxui %out_even, %out_min : index
  %out_count = arith.ceildivui %length, %out_chunk : index
  %out_fences = util.list.create %out_count : !util.list<?>
  util.list.resize %out_fences, %out_count : !util.list<?>
  scf.for %i = %c0 to %out_count step %c1 {
    %offset = arith.muli %i, %out_chunk : index
    %rest = arith.subi %length, %offset : index
    %bytes = arith.minui %rest, %out_chunk : index
    %done = hal.fence.create device(%dst_device : !hal.device) flags("None") : !hal.fence
    hal.device.queue.copy<%dst_device : !hal.device> affinity(%any_queue) wait(%dst_ready) signal(%done) source(%staging : !hal.buffer)[%offset] target(%dst : !hal.buffer)[%offset] length(%bytes) flags("None")
    util.list.set %out_fences[%i], %done : !hal.fence -> !util.list<?>
  }
  scf.for %i = %c0 to %out_count step %c1 {
    %done = util.list.get %out_fences[%i] : !util.list<?> -> !hal.fence
    %status = hal.fence.await until([%done]) timeout_millis(%forever) flags("None") : i32
    %status_ok = arith.constant 0 : i32
    %status_failed = arith.cmpi ne, %status, %status_ok : i32
    scf.if %status_failed {
      util.status.check_ok %status, "mdc: copy out of staging memory failed"
    }
  }

  %i8 = hal.element_type<i8> : i32
  %dense = hal.encoding_type<dense_row_major> : i32
  %view = hal.buffer_view.create buffer(%dst : !hal.buffer)[%c0, %length] shape([%length]) type(%i8) encoding(%dense) : !hal.buffer_view
  util.return %view : !hal.buffer_view
}

// ``@<helper>(%length, %owner) -> view``: one crossing site's pinned buffer,
// kept in global ``cache`` and handed out by ``shared``
// (@pinned_view), with a declaration of ``shared`` so the
// text verifies on its own. ``reads``: the destination reads the buffer
// asynchronously (no host wait after the reads); the function first waits
// on the host for the fence in global ``reads`` (null until the first
// read), and ``@record(%fence)`` stores there the fence of the reads just
// issued. So the source never writes the buffer again before the
// destination has read it. ``read_if_in_place``: ``@record(%fence,
// %in_place)`` stores ``%fence`` only where ``%in_place`` (what the helper
// that chose said: a value small enough at run time to be read in place),
// and null otherwise (the destination read its own copy, which the host
// waited for). The helper says so with a flag, not by comparing buffers:
// a view IREE exports from an imported buffer is of a buffer of its own.
util.global private mutable @site_cache : !hal.buffer

util.func private @site_view(%length: index, %owner: !hal.device) -> !hal.buffer_view attributes {inlining_policy = #util.inline.never} {
  %cached = util.global.load @site_cache : !hal.buffer
  %buffer, %view = util.call @pinned_view(%cached, %length, %owner) : (!hal.buffer, index, !hal.device) -> (!hal.buffer, !hal.buffer_view)
  util.global.store %buffer, @site_cache : !hal.buffer
  util.return %view : !hal.buffer_view
}

// A site read asynchronously: @released_site_view waits for the fence @record_read recorded.
util.global private mutable @released_site_cache : !hal.buffer
util.global private mutable @released_site_reads : !hal.fence

util.func private @released_site_view(%length: index, %owner: !hal.device) -> !hal.buffer_view attributes {inlining_policy = #util.inline.never} {
  %forever = arith.constant -1 : i32
  %fence = util.global.load @released_site_reads : !hal.fence
  %none = util.null : !hal.fence
  %is_none = util.cmp.eq %fence, %none : !hal.fence
  scf.if %is_none {
  } else {
    %status = hal.fence.await until([%fence]) timeout_millis(%forever) flags("None") : i32
    %status_ok = arith.constant 0 : i32
    %status_failed = arith.cmpi ne, %status, %status_ok : i32
    scf.if %status_failed {
      util.status.check_ok %status, "mdc: an earlier read of staging memory failed"
    }
  }
  %cached = util.global.load @released_site_cache : !hal.buffer
  %buffer, %view = util.call @pinned_view(%cached, %length, %owner) : (!hal.buffer, index, !hal.device) -> (!hal.buffer, !hal.buffer_view)
  util.global.store %buffer, @released_site_cache : !hal.buffer
  util.return %view : !hal.buffer_view
}
util.func private @record_read(%fence: !hal.fence) attributes {inlining_policy = #util.inline.never} {
  util.global.store %fence, @released_site_reads : !hal.fence
  util.return
}

// Likewise, the fence recorded only where the value was read in place.
util.global private mutable @in_place_site_cache : !hal.buffer
util.global private mutable @in_place_site_reads : !hal.fence

util.func private @in_place_site_view(%length: index, %owner: !hal.device) -> !hal.buffer_view attributes {inlining_policy = #util.inline.never} {
  %forever = arith.constant -1 : i32
  %fence = util.global.load @in_place_site_reads : !hal.fence
  %none = util.null : !hal.fence
  %is_none = util.cmp.eq %fence, %none : !hal.fence
  scf.if %is_none {
  } else {
    %status = hal.fence.await until([%fence]) timeout_millis(%forever) flags("None") : i32
    %status_ok = arith.constant 0 : i32
    %status_failed = arith.cmpi ne, %status, %status_ok : i32
    scf.if %status_failed {
      util.status.check_ok %status, "mdc: an earlier read of staging memory failed"
    }
  }
  %cached = util.global.load @in_place_site_cache : !hal.buffer
  %buffer, %view = util.call @pinned_view(%cached, %length, %owner) : (!hal.buffer, index, !hal.device) -> (!hal.buffer, !hal.buffer_view)
  util.global.store %buffer, @in_place_site_cache : !hal.buffer
  util.return %view : !hal.buffer_view
}
util.func private @record_read_if_in_place(%fence: !hal.fence, %in_place: i1) attributes {inlining_policy = #util.inline.never} {
  %kept = scf.if %in_place -> (!hal.fence) {
    scf.yield %fence : !hal.fence
  } else {
    %no_fence = util.null : !hal.fence
    scf.yield %no_fence : !hal.fence
  }
  util.global.store %kept, @in_place_site_reads : !hal.fence
  util.return
}

// ``@<helper>(%pinned_view, %ready, %dst_device) -> view``: the value is
// already in pinned memory (written there by the source device, done when
// ``%ready``, a source-device fence, is); wait for it on the host, then
// copy it on the destination queue into the destination's memory.
// ``in_place``: ``@<helper>(..., %in_place_max) -> (view, in place)`` returns,
// for a value of at most ``%in_place_max`` bytes, a new view of the pinned
// bytes themselves, for the destination to read there, and says which it
// did.
util.func private @from_pinned(%src_view: !hal.buffer_view, %src_ready: !hal.fence, %dst_device: !hal.device) -> !hal.buffer_view attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %any_queue = arith.constant -1 : i64
  %forever = arith.constant -1 : i32
  %length = hal.buffer_view.dim<%src_view : !hal.buffer_view>[0] : index
  %staging = hal.buffer_view.buffer<%src_view : !hal.buffer_view> : !hal.buffer
  %dst_type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
  %dst_usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
  %dst_pool = arith.constant 0 : i64
  %no_wait = util.null : !hal.fence
  %dst_ready = hal.fence.create device(%dst_device : !hal.device) flags("None") : !hal.fence
  %dst = hal.device.queue.alloca<%dst_device : !hal.device> affinity(%any_queue) wait(%no_wait) signal(%dst_ready) pool(%dst_pool) type(%dst_type) usage(%dst_usage) flags("None") : !hal.buffer{%length}
  %ready_status = hal.fence.await until([%src_ready]) timeout_millis(%forever) flags("None") : i32
  %ready_status_ok = arith.constant 0 : i32
  %ready_status_failed = arith.cmpi ne, %ready_status, %ready_status_ok : i32
  scf.if %ready_status_failed {
    util.status.check_ok %ready_status, "mdc: the value written into staging memory failed"
  }

  %out_done = hal.fence.create device(%dst_device : !hal.device) flags("None") : !hal.fence
  hal.device.queue.copy<%dst_device : !hal.device> affinity(%any_queue) wait(%dst_ready) signal(%out_done) source(%staging : !hal.buffer)[%c0] target(%dst : !hal.buffer)[%c0] length(%length) flags("None")
  %out_status = hal.fence.await until([%out_done]) timeout_millis(%forever) flags("None") : i32
  %out_status_ok = arith.constant 0 : i32
  %out_status_failed = arith.cmpi ne, %out_status, %out_status_ok : i32
  scf.if %out_status_failed {
    util.status.check_ok %out_status, "mdc: copy out of staging memory failed"
  }

  %i8 = hal.element_type<i8> : i32
  %dense = hal.encoding_type<dense_row_major> : i32
  %view = hal.buffer_view.create buffer(%dst : !hal.buffer)[%c0, %length] shape([%length]) type(%i8) encoding(%dense) : !hal.buffer_view
  util.return %view : !hal.buffer_view
}

// @from_pinned_or_in_place(..., %in_place_max) -> (view, in place)
util.func private @from_pinned_or_in_place(%src_view: !hal.buffer_view, %src_ready: !hal.fence, %dst_device: !hal.device, %in_place_max: index) -> (!hal.buffer_view, i1) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %any_queue = arith.constant -1 : i64
  %forever = arith.constant -1 : i32
  %length = hal.buffer_view.dim<%src_view : !hal.buffer_view>[0] : index
  %staging = hal.buffer_view.buffer<%src_view : !hal.buffer_view> : !hal.buffer
  %small = arith.cmpi ule, %length, %in_place_max : index
  %view = scf.if %small -> (!hal.buffer_view) {
    %ready_status = hal.fence.await until([%src_ready]) timeout_millis(%forever) flags("None") : i32
    %ready_status_ok = arith.constant 0 : i32
    %ready_status_failed = arith.cmpi ne, %ready_status, %ready_status_ok : i32
    scf.if %ready_status_failed {
      util.status.check_ok %ready_status, "mdc: the value written into staging memory failed"
    }
  %i8 = hal.element_type<i8> : i32
  %dense = hal.encoding_type<dense_row_major> : i32
  %in_place = hal.buffer_view.create buffer(%staging : !hal.buffer)[%c0, %length] shape([%length]) type(%i8) encoding(%dense) : !hal.buffer_view
    scf.yield %in_place : !hal.buffer_view
  } else {
  %dst_type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
  %dst_usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
  %dst_pool = arith.constant 0 : i64
  %no_wait = util.null : !hal.fence
  %dst_ready = hal.fence.create device(%dst_device : !hal.device) flags("None") : !hal.fence
  %dst = hal.device.queue.alloca<%dst_device : !hal.device> affinity(%any_queue) wait(%no_wait) signal(%dst_ready) pool(%dst_pool) type(%dst_type) usage(%dst_usage) flags("None") : !hal.buffer{%length}
    %ready_status = hal.fence.await until([%src_ready]) timeout_millis(%forever) flags("None") : i32
    %ready_status_ok = arith.constant 0 : i32
    %ready_status_failed = arith.cmpi ne, %ready_status, %ready_status_ok : i32
    scf.if %ready_status_failed {
      util.status.check_ok %ready_status, "mdc: the value written into staging memory failed"
    }

    %out_done = hal.fence.create device(%dst_device : !hal.device) flags("None") : !hal.fence
    hal.device.queue.copy<%dst_device : !hal.device> affinity(%any_queue) wait(%dst_ready) signal(%out_done) source(%staging : !hal.buffer)[%c0] target(%dst : !hal.buffer)[%c0] length(%length) flags("None")
    %out_status = hal.fence.await until([%out_done]) timeout_millis(%forever) flags("None") : i32
    %out_status_ok = arith.constant 0 : i32
    %out_status_failed = arith.cmpi ne, %out_status, %out_status_ok : i32
    scf.if %out_status_failed {
      util.status.check_ok %out_status, "mdc: copy out of staging memory failed"
    }

  %i8 = hal.element_type<i8> : i32
  %dense = hal.encoding_type<dense_row_major> : i32
  %copied = hal.buffer_view.create buffer(%dst : !hal.buffer)[%c0, %length] shape([%length]) type(%i8) encoding(%dense) : !hal.buffer_view
    scf.yield %copied : !hal.buffer_view
  }
  util.return %view, %small : !hal.buffer_view, i1
}

// ``@<helper>(%src_view, %src_ready, %pinned_view, %src_device) -> view``:
// on the source (GPU) queue, after ``%src_ready``, copies the value into
// the pinned buffer; waits on the host; returns a new view of the pinned
// bytes, which is what the destination must import (see
// @await_view). ``output``: the pinned buffer is the
// caller's output storage (an output argument given in the source
// device's pinned memory), first checked to be host-visible memory that
// can take the value: IREE checks a storage it imports, but this one is
// written before any import of it.
util.func private @copy_into_pinned(%src_view: !hal.buffer_view, %src_ready: !hal.fence, %pinned_view: !hal.buffer_view, %src_device: !hal.device) -> !hal.buffer_view attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 0 : index
  %any_queue = arith.constant -1 : i64
  %forever = arith.constant -1 : i32
  %length = hal.buffer_view.dim<%src_view : !hal.buffer_view>[0] : index
  %src = hal.buffer_view.buffer<%src_view : !hal.buffer_view> : !hal.buffer
  %staging = hal.buffer_view.buffer<%pinned_view : !hal.buffer_view> : !hal.buffer

  %in_done = hal.fence.create device(%src_device : !hal.device) flags("None") : !hal.fence
  hal.device.queue.copy<%src_device : !hal.device> affinity(%any_queue) wait(%src_ready) signal(%in_done) source(%src : !hal.buffer)[%c0] target(%staging : !hal.buffer)[%c0] length(%length) flags("None")
  %in_status = hal.fence.await until([%in_done]) timeout_millis(%forever) flags("None") : i32
  %in_status_ok = arith.constant 0 : i32
  %in_status_failed = arith.cmpi ne, %in_status, %in_status_ok : i32
  scf.if %in_status_failed {
    util.status.check_ok %in_status, "mdc: copy into staging memory failed"
  }

  %i8 = hal.element_type<i8> : i32
  %dense = hal.encoding_type<dense_row_major> : i32
  %again = hal.buffer_view.create buffer(%staging : !hal.buffer)[%c0, %length] shape([%length]) type(%i8) encoding(%dense) : !hal.buffer_view
  util.return %again : !hal.buffer_view
}

// @copy_into_output: likewise, into the caller's output storage, checked first.
util.func private @copy_into_output(%src_view: !hal.buffer_view, %src_ready: !hal.fence, %pinned_view: !hal.buffer_view, %src_device: !hal.device) -> !hal.buffer_view attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 0 : index
  %any_queue = arith.constant -1 : i64
  %forever = arith.constant -1 : i32
  %length = hal.buffer_view.dim<%src_view : !hal.buffer_view>[0] : index
  %src = hal.buffer_view.buffer<%src_view : !hal.buffer_view> : !hal.buffer
  %output = hal.buffer_view.buffer<%pinned_view : !hal.buffer_view> : !hal.buffer
  %allocator = hal.device.allocator<%src_device : !hal.device> : !hal.allocator
  hal.buffer.assert<%output : !hal.buffer> message("mdc: output storage") allocator(%allocator : !hal.allocator) minimum_length(%length) type(HostVisible) usage("TransferTarget")

  %out_done = hal.fence.create device(%src_device : !hal.device) flags("None") : !hal.fence
  hal.device.queue.copy<%src_device : !hal.device> affinity(%any_queue) wait(%src_ready) signal(%out_done) source(%src : !hal.buffer)[%c0] target(%output : !hal.buffer)[%c0] length(%length) flags("None")
  %out_status = hal.fence.await until([%out_done]) timeout_millis(%forever) flags("None") : i32
  %out_status_ok = arith.constant 0 : i32
  %out_status_failed = arith.cmpi ne, %out_status, %out_status_ok : i32
  scf.if %out_status_failed {
    util.status.check_ok %out_status, "mdc: copy into output storage failed"
  }

  %i8 = hal.element_type<i8> : i32
  %dense = hal.encoding_type<dense_row_major> : i32
  %again = hal.buffer_view.create buffer(%output : !hal.buffer)[%c0, %length] shape([%length]) type(%i8) encoding(%dense) : !hal.buffer_view
  util.return %again : !hal.buffer_view
}

// ``@<helper>(%length, %dst_device) -> (view, ready)``: a new
// ``%length``-byte buffer of the destination device, usable once
// ``ready`` (a destination fence) is reached, for pieces to be copied
// into. ``in_place``: ``@<helper>(..., %pinned_view, %in_place_max) -> (view,
// ready, in place)`` returns, for at most ``%in_place_max`` bytes, a new
// view of the pinned buffer itself, a null fence and true: piece_onto then
// copies nothing, and the destination reads the value there.
util.func private @pieces_destination(%length: index, %dst_device: !hal.device) -> (!hal.buffer_view, !hal.fence) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 0 : index
  %any_queue = arith.constant -1 : i64
  %dst_type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
  %dst_usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
  %dst_pool = arith.constant 0 : i64
  %no_wait = util.null : !hal.fence
  %dst_ready = hal.fence.create device(%dst_device : !hal.device) flags("None") : !hal.fence
  %dst = hal.device.queue.alloca<%dst_device : !hal.device> affinity(%any_queue) wait(%no_wait) signal(%dst_ready) pool(%dst_pool) type(%dst_type) usage(%dst_usage) flags("None") : !hal.buffer{%length}
  %i8 = hal.element_type<i8> : i32
  %dense = hal.encoding_type<dense_row_major> : i32
  %view = hal.buffer_view.create buffer(%dst : !hal.buffer)[%c0, %length] shape([%length]) type(%i8) encoding(%dense) : !hal.buffer_view
  util.return %view, %dst_ready : !hal.buffer_view, !hal.fence
}

// ``@<helper>(%pinned_view, %ready, %offset, %bytes, %dst_view, %dst_ready,
// %dst_device) -> (pinned view, done)``: one piece, ``%bytes`` bytes at
// ``%offset``, is being written into pinned memory by the source device
// (done when ``%ready``, a source fence, is). The host waits for it, then
// starts its copy on the destination queue into the same range of
// ``%dst_view`` (after ``%dst_ready``), signalling ``done``. Returns a new
// view of the pinned buffer, so that the source device's next piece, which
// writes into that view, is issued only after this call: its queue then
// never waits on a fence of its own earlier piece. ``in_place``: ``@<helper>(
// ..., %in_place)``; where ``%in_place`` (``%dst_view`` views the pinned
// buffer itself: @pieces_destination's in-place answer),
// nothing is copied and ``done`` is null.
util.func private @piece_onto(%pinned_view: !hal.buffer_view, %ready: !hal.fence, %offset: index, %bytes: index, %dst_view: !hal.buffer_view, %dst_ready: !hal.fence, %dst_device: !hal.device) -> (!hal.buffer_view, !hal.fence) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 0 : index
  %any_queue = arith.constant -1 : i64
  %forever = arith.constant -1 : i32
  %length = hal.buffer_view.dim<%pinned_view : !hal.buffer_view>[0] : index
  %staging = hal.buffer_view.buffer<%pinned_view : !hal.buffer_view> : !hal.buffer
  %dst = hal.buffer_view.buffer<%dst_view : !hal.buffer_view> : !hal.buffer
  %ready_status = hal.fence.await until([%ready]) timeout_millis(%forever) flags("None") : i32
  %ready_status_ok = arith.constant 0 : i32
  %ready_status_failed = arith.cmpi ne, %ready_status, %ready_status_ok : i32
  scf.if %ready_status_failed {
    util.status.check_ok %ready_status, "mdc: the value written into staging memory failed"
  }
  %done = hal.fence.create device(%dst_device : !hal.device) flags("None") : !hal.fence
  hal.device.queue.copy<%dst_device : !hal.device> affinity(%any_queue) wait(%dst_ready) signal(%done) source(%staging : !hal.buffer)[%offset] target(%dst : !hal.buffer)[%offset] length(%bytes) flags("None")
  %i8 = hal.element_type<i8> : i32
  %dense = hal.encoding_type<dense_row_major> : i32
  %again = hal.buffer_view.create buffer(%staging : !hal.buffer)[%c0, %length] shape([%length]) type(%i8) encoding(%dense) : !hal.buffer_view
  util.return %again, %done : !hal.buffer_view, !hal.fence
}

// ``@<helper>(%dst_view, %dones) -> view``: waits on the host for every
// piece's copy (``%dones``, a list of destination fences), in order, then
// returns a new view of the destination buffer (new, so nothing reads it
// before this call). ``in_place``: a null fence (a piece read in place)
// is not waited for.
util.func private @pieces_arrived(%dst_view: !hal.buffer_view, %dones: !util.list<?>) -> !hal.buffer_view attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %forever = arith.constant -1 : i32
  %count = util.list.size %dones : !util.list<?>
  scf.for %i = %c0 to %count step %c1 {
    %done = util.list.get %dones[%i] : !util.list<?> -> !hal.fence
    %copied = hal.fence.await until([%done]) timeout_millis(%forever) flags("None") : i32
    %copied_ok = arith.constant 0 : i32
    %copied_failed = arith.cmpi ne, %copied, %copied_ok : i32
    scf.if %copied_failed {
      util.status.check_ok %copied, "mdc: copy out of staging memory failed"
    }
  }
  %length = hal.buffer_view.dim<%dst_view : !hal.buffer_view>[0] : index
  %dst = hal.buffer_view.buffer<%dst_view : !hal.buffer_view> : !hal.buffer
  %i8 = hal.element_type<i8> : i32
  %dense = hal.encoding_type<dense_row_major> : i32
  %view = hal.buffer_view.create buffer(%dst : !hal.buffer)[%c0, %length] shape([%length]) type(%i8) encoding(%dense) : !hal.buffer_view
  util.return %view : !hal.buffer_view
}

// @pieces_destination_or_in_place
util.func private @pieces_destination_or_in_place(%length: index, %dst_device: !hal.device, %pinned_view: !hal.buffer_view, %in_place_max: index) -> (!hal.buffer_view, !hal.fence, i1) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 0 : index
  %any_queue = arith.constant -1 : i64
  %small = arith.cmpi ule, %length, %in_place_max : index
  %view, %ready = scf.if %small -> (!hal.buffer_view, !hal.fence) {
    %pinned = hal.buffer_view.buffer<%pinned_view : !hal.buffer_view> : !hal.buffer
  %i8 = hal.element_type<i8> : i32
  %dense = hal.encoding_type<dense_row_major> : i32
  %in_place = hal.buffer_view.create buffer(%pinned : !hal.buffer)[%c0, %length] shape([%length]) type(%i8) encoding(%dense) : !hal.buffer_view
    %no_fence = util.null : !hal.fence
    scf.yield %in_place, %no_fence : !hal.buffer_view, !hal.fence
  } else {
  %dst_type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
  %dst_usage = hal.buffer_usage<"Transfer|DispatchStorage"> : i32
  %dst_pool = arith.constant 0 : i64
  %no_wait = util.null : !hal.fence
  %dst_ready = hal.fence.create device(%dst_device : !hal.device) flags("None") : !hal.fence
  %dst = hal.device.queue.alloca<%dst_device : !hal.device> affinity(%any_queue) wait(%no_wait) signal(%dst_ready) pool(%dst_pool) type(%dst_type) usage(%dst_usage) flags("None") : !hal.buffer{%length}
  %i8 = hal.element_type<i8> : i32
  %dense = hal.encoding_type<dense_row_major> : i32
  %copied = hal.buffer_view.create buffer(%dst : !hal.buffer)[%c0, %length] shape([%length]) type(%i8) encoding(%dense) : !hal.buffer_view
    scf.yield %copied, %dst_ready : !hal.buffer_view, !hal.fence
  }
  util.return %view, %ready, %small : !hal.buffer_view, !hal.fence, i1
}

// @piece_onto_or_in_place
util.func private @piece_onto_or_in_place(%pinned_view: !hal.buffer_view, %ready: !hal.fence, %offset: index, %bytes: index, %dst_view: !hal.buffer_view, %dst_ready: !hal.fence, %dst_device: !hal.device, %in_place: i1) -> (!hal.buffer_view, !hal.fence) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 0 : index
  %any_queue = arith.constant -1 : i64
  %forever = arith.constant -1 : i32
  %length = hal.buffer_view.dim<%pinned_view : !hal.buffer_view>[0] : index
  %staging = hal.buffer_view.buffer<%pinned_view : !hal.buffer_view> : !hal.buffer
  %dst = hal.buffer_view.buffer<%dst_view : !hal.buffer_view> : !hal.buffer
  %ready_status = hal.fence.await until([%ready]) timeout_millis(%forever) flags("None") : i32
  %ready_status_ok = arith.constant 0 : i32
  %ready_status_failed = arith.cmpi ne, %ready_status, %ready_status_ok : i32
  scf.if %ready_status_failed {
    util.status.check_ok %ready_status, "mdc: the value written into staging memory failed"
  }
  %done = scf.if %in_place -> (!hal.fence) {
    %no_fence = util.null : !hal.fence
    scf.yield %no_fence : !hal.fence
  } else {
    %copied = hal.fence.create device(%dst_device : !hal.device) flags("None") : !hal.fence
    hal.device.queue.copy<%dst_device : !hal.device> affinity(%any_queue) wait(%dst_ready) signal(%copied) source(%staging : !hal.buffer)[%offset] target(%dst : !hal.buffer)[%offset] length(%bytes) flags("None")
    scf.yield %copied : !hal.fence
  }
  %i8 = hal.element_type<i8> : i32
  %dense = hal.encoding_type<dense_row_major> : i32
  %again = hal.buffer_view.create buffer(%staging : !hal.buffer)[%c0, %length] shape([%length]) type(%i8) encoding(%dense) : !hal.buffer_view
  util.return %again, %done : !hal.buffer_view, !hal.fence
}

// @pieces_arrived_or_in_place
util.func private @pieces_arrived_or_in_place(%dst_view: !hal.buffer_view, %dones: !util.list<?>) -> !hal.buffer_view attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %forever = arith.constant -1 : i32
  %count = util.list.size %dones : !util.list<?>
  scf.for %i = %c0 to %count step %c1 {
    %done = util.list.get %dones[%i] : !util.list<?> -> !hal.fence
    %none = util.null : !hal.fence
    %is_none = util.cmp.eq %done, %none : !hal.fence
    scf.if %is_none {
    } else {
      %status = hal.fence.await until([%done]) timeout_millis(%forever) flags("None") : i32
      %status_ok = arith.constant 0 : i32
      %status_failed = arith.cmpi ne, %status, %status_ok : i32
      scf.if %status_failed {
        util.status.check_ok %status, "mdc: copy out of staging memory failed"
      }
    }
  }
  %length = hal.buffer_view.dim<%dst_view : !hal.buffer_view>[0] : index
  %dst = hal.buffer_view.buffer<%dst_view : !hal.buffer_view> : !hal.buffer
  %i8 = hal.element_type<i8> : i32
  %dense = hal.encoding_type<dense_row_major> : i32
  %view = hal.buffer_view.create buffer(%dst : !hal.buffer)[%c0, %length] shape([%length]) type(%i8) encoding(%dense) : !hal.buffer_view
  util.return %view : !hal.buffer_view
}
