"""Which device may use which memory: the memory model's answers, worded for
the verifier's messages."""

from __future__ import annotations

from mdc.contract.manifest import LOCAL

from ..infra.diagnostics import MdcError
from ..analysis.memory_model import MemoryModel


class Access:
    """The questions the rules ask of the memory model."""

    def __init__(self, model: MemoryModel, module):
        self.model = model
        self.devices = model.devices
        self._module = module

    def kind(self, name: str) -> str | None:
        """The IREE kind of device ``name`` (local, cuda, ...), None if unknown."""
        d = self.devices.get(name)
        return d.kind if d else None

    def describe(self, name: str) -> str:
        """``name (kind)``, or the bare name of an unknown device."""
        kind = self.kind(name)
        return f"{name} ({kind})" if kind else name

    def is_local(self, name: str) -> bool:
        """Whether ``name`` is a local (CPU) device."""
        return self.kind(name) == LOCAL

    def is_gpu(self, name: str) -> bool:
        """Whether ``name`` is a known device that is not a local CPU."""
        kind = self.kind(name)
        return kind is not None and kind != LOCAL

    def staged(self, a: str, b: str) -> bool:
        """Whether ``a`` and ``b`` are two known devices that share no memory."""
        if a == b or a not in self.devices or b not in self.devices:
            return False
        try:
            return self.model.policy(a, b).is_staged
        except MdcError:
            return True  # GPUs of different drivers with no host to stage through

    def reason(self, a: str, b: str) -> str:
        """Why ``a`` and ``b`` are staged (the policy's first clause)."""
        try:
            return self.model.policy(a, b).reason.split(";")[0]
        except MdcError as e:
            return e.message

    def pair_note(self, a: str, b: str) -> str:
        return f"{a} and {b} are a staged pair: {self.reason(a, b)}"

    def can_use(self, user: str, owner: str, host_visible) -> bool:
        """Whether ``user`` may use memory of ``owner`` (host-visible or not)."""
        if not self.staged(user, owner):
            return True
        # A CPU reaches any host-visible memory (a GPU's pinned host memory).
        return self.kind(user) == LOCAL and host_visible is not False

    def topology_note(self, a: str, b: str) -> str | None:
        """A note where the module's ``stream.topology`` claims ``a`` and
        ``b`` share memory."""
        attrs = self._module.attributes
        if "stream.topology" not in attrs:
            return None
        text = str(attrs["stream.topology"])
        if "transparent_access" in text and f"@{a}" in text and f"@{b}" in text:
            return ("the module's stream.topology claims transparent_access between them; "
                    "that is not true of these devices (such a program hangs on a real GPU)")
        return None
