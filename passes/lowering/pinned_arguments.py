"""The pinned-argument lowering (``--pinned-arguments``): the caller gives
every public-function argument that a CPU passes on to the device owning the
staging memory *in that device's pinned memory* (runtime_shim places it
there; the manifest lists them). Such a crossing is the destination's queue
copy straight from the argument: no host copy and no staging buffer. No
stock HAL VM op can tell pinned memory from a CPU's own at run time, so this
is a contract of the compiled function, not a guess. The same holds for an
output argument (``iree.abi.output``) that a value coming back from that
device is written into: the device's queue copies it straight into the
storage. The arguments this applied to are ``pinned``, which
stage-crossings records on the module (abi.PINNED_ARGUMENTS_ATTR).

The output arguments of a result-storage twin (result_storage_twins.py,
``@F$into``) are always given so, without the flag: that is what the twin
is for.
"""

from __future__ import annotations

from iree.compiler import ir
from iree.compiler.dialects import stream

from ..analysis.abi import function_argument, function_argument_view, import_of
from ..ir import ir_adapter as irx
from ..ir.ir_util import affinity_attr
from .base import Lowering, Site
from .emitter import Emitter, as_lifetime, in_initializer, staging_call


class PinnedArguments(Lowering):
    """Arguments and output arguments given in the GPU's pinned memory."""

    name = "pinned arguments"
    caller_buffer = "pinned argument"
    caller_buffer_into_output = "pinned output"

    def __init__(self, emit: Emitter, pinned_arguments: bool, storage_twins: frozenset[str] = frozenset()):
        self.emit = emit
        self.pinned_arguments = pinned_arguments
        # The result-storage twins, whose outputs are given pinned.
        self.storage_twins = storage_twins
        # function name -> {argument index: device whose pinned memory holds it}
        self.pinned: dict[str, dict[int, str]] = {}

    def applies(self, site: Site) -> bool:
        """--pinned-arguments applies: ``value`` is a public function's
        argument, imported on CPU ``src``, going to ``dst``, the device whose
        pinned memory the caller gives it in. An argument is pinned by the
        first such device it goes to; on its way to another it is staged."""
        value, src, dst, policy = site.value, site.src, site.dst, site.policy
        if not self.pinned_arguments or policy.mode != "staged" or policy.owner != dst:
            return False
        if not self.emit.model.devices[src].uses_host_memory or in_initializer():
            return False
        found = function_argument(value)
        return found is not None and self._pin(*found, dst)

    def _pin(self, function: str, index: int, device: str) -> bool:
        """Records argument ``index`` of ``function`` as given in
        ``device``'s pinned memory, unless it is recorded for another
        device already (the first one wins); whether it is ``device``'s."""
        return self.pinned.setdefault(function, {}).setdefault(index, device) == device

    def lower(self, site: Site) -> ir.Value:
        """``dst``'s queue copies the argument ``value`` straight out of the
        caller's pinned buffer, once ``src`` is done with what precedes."""
        value, size, src, dst = site.value, site.size, site.src, site.dst
        result_type, carried = site.result_type, site.carried
        view, ready = self.emit.export(value, size, src)
        view = staging_call(
            [view.type], self.emit.helper("from_pinned"),
            [view, ready, self.emit.device(dst)]).results[0]
        return self.emit.imported(view, size, dst, result_type, carried)

    def applies_into_output(self, site: Site, update) -> bool:
        """--pinned-arguments, coming back: ``update`` writes a value moved
        from ``src``, the staging owner, to CPU ``dst`` into an output
        argument (``iree.abi.output``), which the caller then gives in
        ``src``'s pinned memory: with --pinned-arguments, or in a
        result-storage twin (its ``$async`` variant too)."""
        src, dst, policy = site.src, site.dst, site.policy
        if policy.mode != "staged" or policy.owner != src:
            return False
        if not self.emit.model.devices[dst].uses_host_memory or in_initializer(update):
            return False
        function, index = function_argument(update.opview.target)
        if not (self.pinned_arguments or function.removesuffix("$async") in self.storage_twins):
            return False
        return self._pin(function, index, src)

    def lower_into_output(self, site: Site, update) -> ir.Value:
        """``src``'s queue copies ``value`` straight into the pinned output
        argument that ``update`` writes it into, and the host waits; returns
        that argument imported anew on ``dst``, to stand for ``update``'s
        result."""
        value, size, src, dst = site.value, site.size, site.src, site.dst
        storage = function_argument_view(update.opview.target)
        src_view, src_ready = self.emit.export(value, size, src)
        storage = staging_call([storage.type], self.emit.helper("copy_into_output"),
                              [src_view, src_ready, storage, self.emit.device(src)]).results[0]
        target_size = update.opview.target_size
        # Imported as IREE imported the storage: ``consume``d (the program
        # owns it), so IREE elides the clone it puts between the update and
        # the result's export, and the result is the storage itself (a
        # static-shaped result was copied into a new buffer otherwise).
        imported = stream.TensorImportOp(irx.resource_type("external"), storage,
                                         irx.bytes_tensor_type(), [target_size], target_size,
                                         consume=_consumed(update.opview.target) or None,
                                         affinity=affinity_attr(dst)).result
        return as_lifetime(imported, target_size, dst, update.results[0].type)


def _consumed(target: ir.Value) -> bool:
    """``target`` is a ``stream.tensor.import`` marked ``consume`` (through
    casts and awaits)."""
    imported = import_of(target)
    return imported is not None and "consume" in imported.attributes
