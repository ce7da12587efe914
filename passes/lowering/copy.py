"""The copy lowering, the one every staged crossing can take
(``--staging=copy``, crossings in initializers, pairs emplace does not
serve): export on the source device, host staging through pinned memory
(``@__mdc_stage_*``, stock HAL VM ops only; staging_library.mlir), import on
the destination. Each hop copies on the source queue, after the value's own
timepoint, into pinned host memory from the owner's allocator, waits on the
host, copies on the destination queue into a buffer from the destination's
allocator, and waits on the host: every queue only sees fences of its own
device and buffers it can use. ``staged-via-host`` pairs take two hops.
"""

from __future__ import annotations

from iree.compiler import ir
from iree.compiler.dialects import util

from ..ir import ir_adapter as irx
from . import staging_template
from .base import Lowering, Site
from .emitter import Emitter, STAGE_FUNCTION, staging_call


class HostHopCopy(Lowering):
    """Export, one staging call per hop, import."""

    name = "copy"

    def __init__(self, emit: Emitter):
        self.emit = emit
        self._functions: dict[tuple, str] = {}  # (owner, src is local, dst is local) -> function
        self._caches: dict[str, str] = {}  # owner -> its pinned buffer cache global

    def _stage_function(self, src: str, dst: str, owner: str) -> str:
        """The staging function for one direction and owner (see
        staging_template.py); local queues get chunked copies."""
        src_local = self.emit.model.devices[src].uses_host_memory
        dst_local = self.emit.model.devices[dst].uses_host_memory
        key = (owner, src_local, dst_local)
        if key not in self._functions:
            new_cache = owner not in self._caches
            if new_cache:
                self._caches[owner] = self.emit.symbols.unique(f"{STAGE_FUNCTION}_pinned_{owner}")
            cache = self._caches[owner]
            kinds = f"{'local' if src_local else 'gpu'}_to_{'local' if dst_local else 'gpu'}"
            name = self.emit.symbols.unique(f"{STAGE_FUNCTION}_{kinds}_via_{owner}")
            self.emit.instantiate(staging_template.stage_helper(src_local, dst_local),
                                  {"pinned_cache": cache, f"stage_{kinds}": name}, with_globals=new_cache)
            self._functions[key] = name
        return self._functions[key]

    def applies(self, site: Site) -> bool:
        return True

    def lower(self, site: Site) -> ir.Value:
        """Emits, at the current insertion point, the staged copy of
        ``value`` (``size`` bytes, living on ``src``) onto ``dst``."""
        value, size, src, dst, policy = site.value, site.size, site.src, site.dst, site.policy
        view, ready = self.emit.export(value, size, src)
        hops = [(src, dst, policy.owner)]
        if policy.mode == "staged-via-host":
            hops = [(src, policy.via, src), (policy.via, dst, dst)]
        for hop_src, hop_dst, owner in hops:
            view = staging_call(
                [view.type], self._stage_function(hop_src, hop_dst, owner),
                [view, ready, self.emit.device(hop_src), self.emit.device(hop_dst), self.emit.device(owner)],
            ).results[0]
            # A hop returns after the host saw its last copy finish.
            ready = util.NullOp(irx.fence_type()).result
        return self.emit.imported(view, size, dst, site.result_type, site.carried)
