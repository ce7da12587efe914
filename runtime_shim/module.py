"""Loading a compiled module on a set of runtime devices, and calling it.

    from mdc.runtime_shim import load
    m = load("out.vmfb", devices=["local-task", "cuda"])
    y = m.multi_device_mul(x)          # numpy in, numpy out
    m.describe()                       # prints its functions and their signatures
    f = m["describe"]                  # a function whose name is a Module attribute

Each argument is placed on the device its `iree.abi.affinity` names (the
default device if none) and each result is fetched from the device it is
declared on, whatever that device is. Shapes and dtypes are checked against
the declaration before anything is uploaded.

    x_in = m.f.place(0, x)             # input 0 placed once (a Placed)
    x_in.array[...] = next_x           # pinned inputs: write in place
    y = m.f(x_in)                      # as often as wanted

An argument of an `mdc-compile --pinned-arguments` function is placed in its
GPU's pinned memory, which the GPU copies from with no host copy; placing it
once and reusing it is what makes that pay (docs/PERFORMANCE.md). So is an
output argument (`iree.abi.output`) that a GPU's result is written into; a
result whose storage is a placed input is returned as that input's memory,
with no copy.

A function mdc-compile gave a result-storage twin (``@F$into``, the
manifest's ``"result_storage"``) returns each result declared on a CPU
device in memory of the shim's own pool (result_storage.py): the GPU writes
it there with one DMA, and the array is returned without a copy; its
memory goes back to the pool when the array is garbage collected.
"""

from __future__ import annotations

import atexit
import os
import threading
import weakref
from typing import Optional, Sequence, Union

import numpy as np
import iree.runtime as rt

from . import cuda_free, extra_modules, movers, native, result_storage
from . import devices as dev
from .errors import ShimTypeError
from .function import Function, ModuleParts
from .handles import DeviceValue, Placed
from .lanes import Lanes
from .ledger import BufferLedger
from .module_api import FunctionTable
from .program import Program, device_list, open_program, read_signatures
from .session import Session, check_without_devices, open_devices, release_devices

__all__ = ["DeviceValue", "Function", "Module", "Placed", "load", "load_vm_flatbuffer_file", "read_signatures"]

_OPEN_MODULES: "weakref.WeakSet[Module]" = weakref.WeakSet()


def load(path: str, devices: Union[str, Sequence[str]], *, flags: Sequence[str] = (),
         timeout_s: Optional[float] = 300.0, staged_transfers: bool = False,
         dependencies: Sequence[str] = (), parameters: Sequence[str] = (),
         preload_parameters: bool = False) -> "Module":
    """Load a .vmfb on the devices named by `devices`: one runtime device URI
    ("local-task", "cuda", "cuda://1", "hip:0") or a list of them, in order;
    declared devices bind to them by kind and ordinal, as IREE's __init does.

    Returns a Module, or for devices IREE's Python runtime cannot open
    together (Vulkan beside another device) a NativeModule with the same
    functions. Either one closes with close() or a with-block.

    flags: IREE runtime flags such as "--task_topology_group_count=2"; they
      are process-wide and only affect drivers not created yet.
    timeout_s: bound on each host wait for device work the shim started
      (transfers, the async-external signal fence); None waits forever.
    staged_transfers: move every argument and result through a pinned
      buffer and a queue copy, as for a GPU, even on CPU devices.
    dependencies: .vmfb files loaded before this one, in order, whose
      functions it may call (iree-run-module's earlier --module flags).
    parameters: parameter files as iree-run-module's --parameters takes
      them, "SCOPE=FILE" or "FILE" (.irpa, .gguf, .safetensors), mapped
      into memory, or read into it with preload_parameters (as
      --parameter_mode=preload).
    """
    program = open_program(path, device_list(devices), flags)
    extra = {"dependencies": [os.fspath(d) for d in dependencies], "parameters": list(parameters),
             "preload_parameters": preload_parameters}
    # The backend is known from the URIs alone (devices.refused_device_set);
    # only the in-process Module opens devices, stock iree-run-module its own.
    refused = dev.refused_device_set(program.uris)
    if refused is None:
        opened = open_devices(program)
        try:
            return Module(program, opened, timeout_s=timeout_s, staged_transfers=staged_transfers, **extra)
        except BaseException:
            release_devices(program.uris, opened)
            raise
    check_without_devices(program)
    if staged_transfers:
        raise dev.unsupported(refused)
    return _native_module(program, refused, flags, timeout_s, **extra)


def load_vm_flatbuffer_file(path: str, *, driver: Union[str, Sequence[str], None] = None,
                            devices: Union[str, Sequence[str], None] = None, **options) -> "Module":
    """``load`` under the name iree.runtime gives it, taking its ``driver=``
    keyword too: ``load_vm_flatbuffer_file("out.vmfb", driver="local-task")``.
    Several devices: ``devices=["local-task", "cuda"]`` (or a list as
    ``driver``). Functions are attributes of the result, as on iree.runtime's
    BoundModule; other options as ``load``."""
    if (driver is None) == (devices is None):
        raise ShimTypeError("load_vm_flatbuffer_file() takes one of driver= or devices=")
    return load(path, driver if devices is None else devices, **options)


def _native_module(program: Program, reason: str, flags, timeout_s, *, dependencies: Sequence[str],
                   parameters: Sequence[str], preload_parameters: bool) -> native.NativeModule:
    """``program`` run by stock iree-run-module (native.py), ``reason``
    saying why: checked against the manifest in this process first, with
    no device opened here (session.check_without_devices)."""
    flags = [*flags, *(f"--parameters={p}" for p in parameters)]
    if preload_parameters:
        flags.append("--parameter_mode=preload")
    return native.NativeModule(program.path, program.uris, program.manifest, program.signatures,
                               program.binding, reason, flags=flags, timeout_s=timeout_s,
                               dependencies=dependencies)


class Module(FunctionTable):
    """A compiled module loaded in this process on its devices (``load``
    makes one): its functions as attributes (FunctionTable). It is five
    parts: the session (session.py: the VM, the devices, their binding,
    the contexts, the CUDA thread context), the buffer ledger (ledger.py:
    placed and resident buffers, and when one goes back through its
    device's queue), the lanes of pipelined calls (lanes.py), the pool of
    host memory the shim lends (result_storage.py), and one mover per
    device, chosen here (movers.py: how the shim moves values to and from
    that device)."""

    def __init__(self, program: Program, devices: list[rt.HalDevice], *, timeout_s: Optional[float] = 300.0,
                 staged_transfers: bool = False, dependencies: Sequence[str] = (),
                 parameters: Sequence[str] = (), preload_parameters: bool = False):
        self.path, self.uris, self.sealed = program.path, program.uris, program.sealed
        self.signatures, self.manifest, self.binding = program.signatures, program.manifest, program.binding
        self.timeout_s = timeout_s
        self.staged_transfers = staged_transfers
        self.dependencies = [os.fspath(d) for d in dependencies]
        self._functions: dict[str, Function] = {}
        self._close_lock = threading.Lock()  # one close at a time (two threads may close at once)
        self._session = Session(program, devices, dependencies=dependencies, parameters=parameters,
                                preload_parameters=preload_parameters)
        # A GPU result the caller gives up goes back through its device's
        # queue (cuda_free.py says why and when).
        queue_free = {i: cuda_free.QueueFree(device) for i, (uri, device) in enumerate(zip(self.uris, devices))
                      if dev.driver_name(uri) == "cuda"}
        self._ledger = BufferLedger(queue_free)
        self._lanes = Lanes(self._session.new_context, self.path)
        self._pool = result_storage.ResultPool(before_free=self._session.free_binder())
        # How the shim moves values to and from each device, chosen here once (movers.py).
        self._movers = movers.for_devices(self.uris, devices, self._pool, timeout_s=timeout_s,
                                          staged_transfers=staged_transfers,
                                          stream_ordered=tuple(queue_free))
        # What its Functions work with, handed to each (none reaches in here).
        self._parts = ModuleParts(self._session, self._ledger, self._lanes, self._pool, self._movers,
                                  self._enter, self._where, self._read_back)
        _OPEN_MODULES.add(self)

    def _enter(self) -> None:
        """Every entry that reaches a device starts here: ShimError once
        closed, and the devices' CUDA context made current on this thread
        (cuda_thread.py)."""
        self._check_open()
        self._session.bind_thread()

    def _read_back(self, index: int, view: rt.HalBufferView) -> np.ndarray:
        """A result left on device ``index`` (DeviceValue.to_host), as its mover reads it."""
        self._enter()
        return self._movers[index].read(view)

    def statistics(self) -> str:
        """Each device's allocator statistics, as iree-run-module
        --print_statistics prints them."""
        self._enter()
        return extra_modules.statistics_text(self._session.devices)

    # -- introspection -------------------------------------------------------

    @property
    def devices(self) -> tuple:
        """The runtime devices the module runs on, opened
        (iree.runtime.HalDevice), in the order of ``uris``: for allocating
        or copying beside the module on the same devices; asking for them
        on a thread makes the devices' CUDA context current there
        (cuda_thread.py). ShimError once the module is closed; they must
        not be used after it is."""
        self._enter()
        return tuple(self._session.devices)

    def _description(self) -> str:
        lines = [f"module {self.path} on {', '.join(self.uris)}" + (", closed" if self._closed else "")]
        if self.manifest is not None:
            lines.append("devices: " + ", ".join(
                f"{d.name}={d.spec} -> " + (self.uris[self.binding[d.name]] if d.name in self.binding
                                            else "none (the program never uses it)")
                for d in self.manifest.devices))
        lines += [f"  {self.signatures[n].text}" for n in self.function_names]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self._repr("Module")

    def _new_function(self, name: str) -> Function:
        return Function(self, self.signatures[name], self._parts)

    # -- lifetime ------------------------------------------------------------

    def close(self) -> None:
        """Release the runtime objects, in an order the runtime tolerates.

        With 3.13, interpreter teardown segfaulted when HAL objects (a
        result buffer view) were still alive at exit, so calls keep none
        and `atexit` closes modules still open. Calls running in a map's
        lanes are waited for first; later ones raise ShimError. Closing
        again does nothing, and a close on another thread at the same time
        returns once the module is closed. A module dropped unclosed gives
        its CPU devices back to the pool when it is collected (Session).
        """
        with self._close_lock:
            if self._closed:
                return
            self._session.free_binder()()  # the buffers are freed under the CUDA context
            self._lanes.stop()
            self._ledger.release_all()
            self._pool.close()
            for mover in self._movers:
                mover.close()  # before the session releases the devices
            self._ledger.close()
            self._lanes.close()
            self._session.close()
            self._functions = {}
            self._closed = True
            _OPEN_MODULES.discard(self)


@atexit.register
def _close_all() -> None:
    for module in list(_OPEN_MODULES):
        module.close()
