"""The runtime a loaded module runs in: its program's devices opened and
checked, IREE's HAL module over them, the parameter and dependency
modules, the VM context (and new ones for lanes), and the CUDA context
that other threads bind before they reach a device (cuda_thread.py).
"""

from __future__ import annotations

import weakref
from typing import Callable, Sequence

import iree.runtime as rt

from . import cuda_thread, device_pool, extra_modules
from . import devices as dev
from .errors import ShimError, short
from .manifest import Signature
from .program import Program


def open_devices(program: Program) -> list[rt.HalDevice]:
    """A new device for each of ``program.uris``, checked against the
    program: each staging owner can give shared host memory, and every
    value's device is declared. ShimError otherwise."""
    devices = []
    try:
        for uri in program.uris:
            devices.append((device_pool.take(uri) if device_pool.pooled(uri) else None) or dev.open_device(uri))
        if program.manifest is not None:
            dev.check_staging(program.manifest, program.binding, program.uris, devices)
        program.check_affinities()
    except BaseException:
        release_devices(program.uris, devices)
        raise
    return devices


def check_without_devices(program: Program) -> None:
    """``program`` checked as ``open_devices`` checks it, for a run that
    opens its devices elsewhere (stock iree-run-module, native.py), so
    with no device opened here: each driver works on this machine, every
    staging link names declared devices, and every value's device is
    declared. ShimError otherwise. Whether a device opens, and whether a
    staging owner can give shared host memory, iree-run-module finds."""
    for uri in program.uris:
        dev.usable_driver(uri)
    if program.manifest is not None:
        dev.check_staging_links(program.manifest, program.binding)
    program.check_affinities()


def release_devices(uris: Sequence[str], devices: list[rt.HalDevice]) -> None:
    """Done with ``devices`` (of ``uris``): a CPU device goes back to the
    pool, never released (device_pool.py says why); any other is released
    here, when the caller holds the last reference."""
    for uri, device in zip(uris, devices):
        if device_pool.pooled(uri):
            device_pool.park(uri, device)
    devices.clear()


def _nothing() -> None:
    pass


class Session:
    """``program`` on its opened ``devices`` (open_devices), initialised:
    the HAL module, the parameter files (``parameters``, read into memory
    with ``preload_parameters``) and ``dependencies`` in order, then the
    program, as iree-run-module registers them."""

    def __init__(self, program: Program, devices: list[rt.HalDevice], *, dependencies: Sequence[str] = (),
                 parameters: Sequence[str] = (), preload_parameters: bool = False):
        self.program = program
        self.uris = program.uris
        self.devices = devices
        # The devices go back (CPU devices to the pool, device_pool.py) once:
        # on close, or when a session never closed is collected, which would
        # otherwise release them, a release that can hang on a CPU device.
        self._give_back_devices = weakref.finalize(self, release_devices, self.uris, devices)
        self._give_back_devices.atexit = False  # at exit, module.py closes every module still open
        # IREE's cuda driver makes its context current on this thread only
        # (cuda_thread.py): every entry from another thread binds it first.
        self.cuda_context = (cuda_thread.ThreadContext.of_this_thread()
                             if any(dev.driver_name(u) == "cuda" for u in self.uris) else None)
        self._instance = program.instance
        self._vm_module = program.vm_module
        self._hal_module = dev.create_hal_module(self._instance, devices, self.uris)
        self._extra_modules = (extra_modules.parameter_modules(self._instance, parameters, preload_parameters)
                               + extra_modules.load_dependencies(self._instance, dependencies))
        self.context = self.new_context()
        self._vm_functions: dict[str, rt.VmFunction] = {}

    def new_context(self) -> rt.VmContext:
        """A VM context of the loaded modules, with globals of its own (the
        program's initialisers run in it)."""
        modules = [self._hal_module, *self._extra_modules, self._vm_module]
        try:
            return rt.VmContext(self._instance, modules)
        except Exception as e:  # IREE statuses: RuntimeError, ValueError, IndexError, ...
            hint = ""
            if "'io_parameters' not registered" in str(e):
                hint = " (the module reads parameters: give their file with --parameters=SCOPE=FILE)"
            raise ShimError(f"the module does not initialise on devices "
                            f"{', '.join(self.uris)}: {short(e)}{hint}") from None

    def vm_function(self, name: str) -> rt.VmFunction:
        """The program's function ``name``; ShimError if it has none."""
        found = self._vm_functions.get(name)
        if found is None:
            found = self._vm_module.lookup_function(name)
            if found is None:
                raise ShimError(f"the module has no function @{name}")
            self._vm_functions[name] = found
        return found

    def bind_thread(self) -> None:
        """The devices' CUDA context made current on this thread (cuda_thread.py)."""
        if self.cuda_context is not None:
            self.cuda_context.bind()

    def free_binder(self) -> Callable[[], None]:
        """What binds the CUDA context, if it can, before memory of these
        devices is freed on any thread; it holds the context, not the
        session, so objects that may outlive it can keep it."""
        context = self.cuda_context
        return context.bind_quietly if context is not None else _nothing

    def fence_device(self, signature: Signature) -> rt.HalDevice:
        """The device whose semaphore signals that a call of ``signature`` is done."""
        # The async-external signal fence is signalled by the queue that runs
        # the function's last work, and must be one that queue can use. A
        # CPU queue can wait on and signal a GPU's semaphore (host-side), but
        # a GPU queue cannot use a semaphore of another driver (a CUDA queue
        # waiting on a local-task semaphore never ran). So the semaphore
        # comes from a discrete device if one is bound, else from the device
        # of the first result. The host then waits on it (always allowed).
        used = [self.program.device_index(v, signature) for v in signature.results + signature.args]
        for i in used + list(range(len(self.uris))):
            if not dev.is_local(self.uris[i]):
                return self.devices[i]
        return self.devices[used[0] if used else 0]

    def close(self) -> None:
        """Drop the runtime objects, in the order the runtime tolerates:
        the context, the HAL module, the other modules, the program, then
        the devices (CPU devices are parked, not released: device_pool.py),
        the instance."""
        self._vm_functions = {}
        self.context = None
        self._hal_module = None
        self._extra_modules = []
        self._vm_module = None
        self.program = None
        self.devices = []
        self._give_back_devices()  # release_devices, once
        self._instance = None
