"""Loading a compiled module on a set of runtime devices, and calling it.

    from mdc.runtime_shim import load
    m = load("out.vmfb", devices=["local-task", "cuda"])
    y = m.multi_device_mul(x)          # numpy in, numpy out
    print(m.describe())                # functions and their signatures
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
import functools
import math
import os
import threading
import weakref
from typing import Callable, Optional, Sequence, Union

import numpy as np
import iree.runtime as rt

from . import devices as dev
from . import cuda_free, cuda_thread, extra_modules, native, result_storage, staging, values
from .errors import ShimError, ShimTypeError, short
from .manifest import (DECLARATION_KEY, MANIFEST_KEY, Manifest, Signature, Value, check_seal,
                       parse_declaration, parse_manifest, scan_declared_devices)

_OPEN_MODULES: "weakref.WeakSet[Module]" = weakref.WeakSet()


def _nothing() -> None:
    pass


class Placed:
    """Input ``index`` of function ``function``, placed where that function
    reads it (Function.place): pass it to calls instead of an array, as often
    as wanted. ``array`` is a writeable numpy view of its memory when that
    is host memory (a pinned argument, or a CPU device's buffer); writing
    into it changes what the next call reads. Released with its module."""

    def __init__(self, function: str, index: int, view: rt.HalBufferView, source: np.ndarray,
                 before_free: Callable[[], None] = lambda: None, module: Optional["Module"] = None,
                 device_index: Optional[int] = None):
        self.function, self.index = function, index
        self.device_index = device_index  # where it lies (Module.devices); None: a GPU's pinned host memory
        self._view = view
        self._before_free = before_free  # binds the module's CUDA context (cuda_thread.py)
        # Its module, weakly (a Placed does not keep it), which gives its
        # GPU memory back to the device's queue as it goes
        # (Module._give_back_placed): not while a call reads it, nor once
        # the caller took its ``view``, which may outlive it.
        self._module = weakref.ref(module) if module is not None else (lambda: None)
        self._uses = 0  # calls running with it as an input
        self._view_given = False
        # On a CPU device `view` is `source`'s own memory (imported, zero
        # copy), and with IREE 3.13 a view does not keep the imported array
        # alive: only the HalBuffer object the import returned does. So the
        # Placed holds it (until the memory is shown to be a copy), or the
        # program would write into freed memory.
        self._source: Optional[np.ndarray] = source
        self._mapping = None
        self._array: Optional[np.ndarray] = None
        buffer = view.get_buffer()
        if source.nbytes and values.is_mappable(buffer):
            mapping = buffer.map()
            mapped = mapping.asarray([source.nbytes], np.dtype(np.uint8))
            if mapped.ctypes.data == source.ctypes.data:
                self._array = source  # the array's own memory: no mapping to hold
            else:  # a copy in the device's memory: the caller's array is not needed
                self._source, self._mapping = None, mapping
                self._array = mapped.view(source.dtype).reshape(source.shape)

    @property
    def released(self) -> bool:
        """Whether it was released (``release()``, or its module closed)."""
        return self._view is None

    @property
    def array(self) -> Optional[np.ndarray]:
        """A writeable numpy view of the placed memory, or None when that is
        not host memory (a GPU's own). ShimError once released."""
        self.view  # noqa: B018  (raises if released)
        return self._array

    @property
    def view(self) -> rt.HalBufferView:
        """Its iree.runtime HalBufferView; once taken, its memory is left to
        IREE when it goes (the view may outlive it)."""
        view = self._hal_view
        module = self._module()
        if module is not None:
            module._view_given(self)
        self._view_given = True
        return view

    @property
    def _hal_view(self) -> rt.HalBufferView:
        """``view`` for the shim's own use (the caller does not get it)."""
        if self._view is None:
            raise ShimError(f"input {self.index} of @{self.function} was released, or placed by a module now closed")
        return self._view

    def release(self) -> None:
        # Released before its memory is offered back: a call on another
        # thread that counts its use from now on finds it released.
        view, self._view = self._view, None
        try:
            if view is not None:
                self._before_free()
                self._offer_back(view)
        finally:
            self._array = None
            self._mapping = None
            self._source = None

    def _offer_back(self, view: rt.HalBufferView) -> None:
        module = self._module()
        if module is not None:
            module._give_back_placed(self, view)

    def __del__(self):
        view = getattr(self, "_view", None)
        if view is not None:
            self._before_free()  # the memory is freed as this object goes
            self._offer_back(view)

    def __repr__(self) -> str:
        state = "released" if self._view is None else f"shape {list(self._view.shape)}"
        return f"<runtime_shim.Placed input {self.index} of @{self.function}, {state}>"


class DeviceValue:
    """A tensor result left on the device it ended on, unconverted
    (Function.call_on_devices): pass it to a call of the same module as an
    input declared on that device, or bring it to the host with
    ``to_host()``. ``shape``, ``dtype`` (numpy), ``device`` (its runtime
    device URI) and ``device_index`` (its index in Module.uris and
    Module.devices) describe it; ``view`` is its iree.runtime
    HalBufferView. Released with its module, or with ``release()``."""

    def __init__(self, module: "Module", ref: rt.VmRef, device_index: int, borrowed=()):
        self.module, self.device_index = module, device_index
        # The VM's reference, not a HalBufferView: with IREE 3.13 making and
        # dropping the Python view of a fresh result costs several
        # microseconds a call, which a call timed alone must not pay. The
        # view is made when first asked for.
        self._ref: Optional[rt.VmRef] = ref
        self._view: Optional[rt.HalBufferView] = None
        # Whether its memory may go back through the queue when it goes
        # (Module._give_back_resident): not once the caller took ``view``
        # of it or of a value sharing its buffer; not while a call reads it.
        self._view_given = False
        self._sole = False  # its call's one tensor result on its device (set by call_on_devices)
        self._uses = 0  # calls running with it as an input
        # A result may be the memory of an array the call imported (an
        # output argument given as an array); a view does not keep that
        # array alive (Placed says why), so the result keeps the call's
        # inputs.
        self._borrowed = borrowed

    @property
    def released(self) -> bool:
        return self._ref is None

    @property
    def view(self) -> rt.HalBufferView:
        view = self._hal_view
        self.module._view_given(self)
        return view

    @property
    def _hal_view(self) -> rt.HalBufferView:
        """``view`` for the shim's own use (the caller does not get it)."""
        if self._ref is None:
            raise ShimError(f"a result on {self.device} was used after its module was closed or it was released")
        if self._view is None:
            self._view = self._ref.deref(rt.HalBufferView)
        return self._view

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(int(d) for d in self._hal_view.shape)

    @property
    def element_type(self) -> int:
        """Its HAL element type (iree.runtime.HalElementType's value)."""
        return int(self._hal_view.element_type)

    @property
    def dtype(self) -> np.dtype:
        return values.numpy_dtype(self.element_type)

    @property
    def device(self) -> str:
        return self.module.uris[self.device_index]

    def to_host(self) -> np.ndarray:
        """A new numpy array with its contents (a copy, wherever it lives)."""
        m = self.module
        view = self._hal_view
        m._enter()
        return m._to_host(self.device_index, view)

    def release(self) -> None:
        """Drop its device memory now (also done when its module closes)."""
        # Released before its memory is offered back: a call on another
        # thread that counts its use from now on finds it released.
        ref, view = self._ref, self._view
        self._view, self._ref = None, None
        try:
            if ref is not None:
                self.module._bind_for_free()
                self.module._give_back_resident(self, view if view is not None else ref.deref(rt.HalBufferView))
        finally:
            self._borrowed = ()

    def __del__(self):
        module = getattr(self, "module", None)
        if module is not None and getattr(self, "_ref", None) is not None:
            module._bind_for_free()  # the memory is freed as this object goes
            module._give_back_resident(self, self._hal_view)

    def __repr__(self) -> str:
        if self._ref is None:
            return f"<runtime_shim.DeviceValue on {self.device}, released>"
        shape = "".join(f"{d}x" for d in self.shape)
        return f"<runtime_shim.DeviceValue {shape}{values.type_name(self.element_type)} on {self.device}>"


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
    devices = device_list(devices)
    extra = {"dependencies": [os.fspath(d) for d in dependencies], "parameters": list(parameters),
             "preload_parameters": preload_parameters}
    try:
        return Module(path, devices, flags=flags, timeout_s=timeout_s,
                      staged_transfers=staged_transfers, **extra)
    except dev.UnsupportedDeviceSet as e:
        if staged_transfers:
            raise
        return _native_module(os.fspath(path), devices, str(e), flags, timeout_s, **extra)


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


def device_list(devices) -> list[str]:
    """``devices`` as a list of URI strings: one string is one device."""
    if isinstance(devices, (str, os.PathLike)):
        return [os.fspath(devices)]
    try:
        uris = list(devices)
    except TypeError:
        raise ShimTypeError(f"devices must be a device URI or a list of them, such as "
                            f"[\"local-task\", \"cuda\"]; got {type(devices).__name__}") from None
    bad = [u for u in uris if not isinstance(u, str)]
    if bad:
        raise ShimTypeError(f"devices must be device URI strings; got {bad[0]!r}")
    return uris


def _native_module(path: str, uris: list[str], reason: str, flags, timeout_s, *,
                   dependencies: Sequence[str], parameters: Sequence[str],
                   preload_parameters: bool) -> "native.NativeModule":
    """The module run by stock iree-run-module (native.py): the devices
    were checked against the manifest before the Python runtime refused
    to open them together, and the dependencies and parameter files were
    loaded."""
    signatures, manifest = read_signatures(rt.VmModule.mmap(rt.VmInstance(), path))
    manifest = manifest or scan_declared_devices(path)
    binding = dev.bind(manifest, uris) if manifest is not None else {}
    flags = [*flags, *(f"--parameters={p}" for p in parameters)]
    if preload_parameters:
        flags.append("--parameter_mode=preload")
    return native.NativeModule(path, uris, manifest, signatures, binding, reason.split(":")[0],
                               flags=flags, timeout_s=timeout_s, dependencies=dependencies)


def read_signatures(vm_module: rt.VmModule) -> tuple[dict[str, Signature], Optional[Manifest]]:
    """Public functions with their declarations, and the module's manifest.
    A function IREE wrote no declaration for takes its signature from the
    manifest's "functions" (an iree-turbine export compiled by mdc-compile);
    a result declared on no device is on the one the manifest's
    "result_devices" names."""
    signatures, manifests, undeclared = {}, {}, []
    for name in vm_module.function_names:
        if name.startswith("__"):  # __init and other internal entry points
            continue
        reflection = vm_module.lookup_function(name).reflection
        if MANIFEST_KEY in reflection:
            manifests[reflection[MANIFEST_KEY]] = name
        if DECLARATION_KEY not in reflection:
            undeclared.append(name)
            signatures[name] = None
            continue
        signature = parse_declaration(reflection[DECLARATION_KEY])
        if signature.name != name:
            raise ShimError(f"function @{name} is declared as @{signature.name} in its "
                            f"{DECLARATION_KEY}; the module is inconsistent (damaged?)")
        signatures[name] = signature
    if len(manifests) > 1:
        raise ShimError(f"functions disagree on {MANIFEST_KEY}: " + ", ".join(
            f"@{n}" for n in manifests.values()))
    manifest = parse_manifest(next(iter(manifests))) if manifests else None
    for name in undeclared:
        signatures[name] = manifest.signature(name) if manifest is not None else None
        if signatures[name] is None:
            raise ShimError(f"function @{name} has no {DECLARATION_KEY}, and no mdc manifest describes it; "
                            "was the module built by iree-compile or mdc-compile?")
    if manifest is not None:
        signatures = {name: manifest.placed_results(s) for name, s in signatures.items()}
    return signatures, manifest


class Module(native.FunctionTable):
    def __init__(self, path: str, devices: Sequence[str], *, flags: Sequence[str] = (),
                 timeout_s: Optional[float] = 300.0, staged_transfers: bool = False,
                 dependencies: Sequence[str] = (), parameters: Sequence[str] = (),
                 preload_parameters: bool = False):
        self.path = os.fspath(path)
        self.uris = device_list(devices)
        self.timeout_s = timeout_s
        self.staged_transfers = staged_transfers
        self.dependencies = [os.fspath(d) for d in dependencies]
        if not os.path.isfile(self.path):
            raise ShimError(f"module file not found: {self.path}")
        if not self.uris:
            raise ShimError("no devices given: name at least one, e.g. devices=\"local-task\"")
        _check_drivers(self.uris)
        if flags:
            try:
                rt.flags.parse_flags(*flags)
            except (ValueError, RuntimeError) as e:
                raise ShimError(f"bad runtime flag in {' '.join(flags)}: {short(e)}") from None
        # A damaged module can pass IREE's bytecode verifier and then crash
        # or hang the VM; mdc-compile's seal catches it first.
        self.sealed = check_seal(self.path)
        self._instance = rt.VmInstance()
        try:
            self._vm_module = rt.VmModule.mmap(self._instance, self.path)
        except Exception as e:  # IREE maps statuses to several types (IndexError, ...)
            raise ShimError(f"cannot load module {self.path}: {short(e)}") from None
        self.signatures, manifest = read_signatures(self._vm_module)

        # Which devices the module declares: its manifest, else what its
        # __init names, else nothing (then every value lives on device 0).
        self.manifest = manifest or scan_declared_devices(self.path)
        if self.manifest is not None:
            self.binding = dev.bind(self.manifest, self.uris)
        else:
            self.binding = {}
        self._devices = [dev.open_device(uri) for uri in self.uris]
        # A GPU result the caller gives up goes back through its device's
        # queue (cuda_free.py says why and when).
        self._queue_free = {i: cuda_free.QueueFree(device) for i, (uri, device)
                            in enumerate(zip(self.uris, self._devices)) if dev.driver_name(uri) == "cuda"}
        self._free_lock = threading.Lock()  # give-back decisions against calls' uses of their inputs
        # IREE's cuda driver makes its context current on this thread only
        # (cuda_thread.py): every entry from another thread binds it first.
        self._cuda_context = (cuda_thread.ThreadContext.of_this_thread()
                              if any(dev.driver_name(u) == "cuda" for u in self.uris) else None)
        if self.manifest is not None:
            dev.check_staging(self.manifest, self.binding, self.uris, self._devices)
        for signature in self.signatures.values():
            for v in signature.args + signature.results:
                self._device_index(v, signature)  # undeclared affinities fail now

        self._hal_module = dev.create_hal_module(self._instance, self._devices, self.uris)
        self._context = self._create_context(dependencies, parameters, preload_parameters)
        # Pipelined calls (pipelined.py): the lanes' own VM contexts, made
        # on first use and kept; which lane this thread runs in (its index;
        # none: the module's own context); whether a map holds the lanes;
        # how many calls run in lanes now, which close() waits for.
        self._lane_contexts: list[rt.VmContext] = []
        self._lane = threading.local()
        self._lanes_held = threading.Lock()
        self._lane_calls = 0
        self._lane_calls_done = threading.Condition()
        self._closing = False
        self._functions: dict[str, Function] = {}
        self._placed: "weakref.WeakSet[Placed]" = weakref.WeakSet()
        self._resident: "weakref.WeakSet[DeviceValue]" = weakref.WeakSet()
        self._result_pool = result_storage.ResultPool(before_free=self._free_binder())
        _OPEN_MODULES.add(self)

    def _create_context(self, dependencies: Sequence[str], parameters: Sequence[str],
                        preload_parameters: bool) -> rt.VmContext:
        """The VM context: the HAL, the parameters, the dependencies in
        order, then the program, as iree-run-module registers them."""
        self._extra_modules = (extra_modules.parameter_modules(self._instance, parameters,
                                                               preload_parameters)
                               + extra_modules.load_dependencies(self._instance, dependencies))
        return self._new_context()

    def _new_context(self) -> rt.VmContext:
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

    def _enter(self) -> None:
        """Every entry that reaches a device starts here: ShimError once
        closed, and the devices' CUDA context made current on this thread
        (cuda_thread.py)."""
        self._check_open()
        if self._cuda_context is not None:
            self._cuda_context.bind()

    def _bind_for_free(self) -> None:
        """Before memory of this module is freed, on any thread: its CUDA
        context made current there if it can be (cuda_thread.py)."""
        self._free_binder()()

    def _free_binder(self) -> Callable[[], None]:
        """``_bind_for_free`` for objects that may outlive the module (a
        pool that result arrays hold, a Placed input): it holds the context,
        not the module."""
        context = self.__dict__.get("_cuda_context")
        return context.bind_quietly if context is not None else _nothing

    # -- values the shim moves itself (staging.py) ----------------------------

    def _to_host(self, index: int, view: rt.HalBufferView) -> np.ndarray:
        """``view``, on device ``index``, as a numpy array: a staged read
        lands in a slab of the module's pool (staging.read_back), else as
        values.to_host reads it."""
        device = self._devices[index]
        if self.staged_transfers or not values.is_mappable(view.get_buffer()):
            held = staging.read_back(self._result_pool, index, device, view, self.timeout_s)
            if held is not None:
                return held
        return values.to_host(device, view, self.staged_transfers, self.timeout_s)

    def _to_device(self, index: int, array: np.ndarray, kind: int) -> rt.HalBufferView:
        """``array`` on device ``index``: a staged move goes through a slab
        of the module's pool (staging.place), else as values.to_device
        places it."""
        device = self._devices[index]
        local = dev.is_local(self.uris[index])
        if self.staged_transfers or not local:
            view = staging.place(self._result_pool, index, device, array, kind, self.timeout_s,
                                 stream_ordered=index in self._queue_free)
            if view is not None:
                return view
        return values.to_device(device, local, array, kind, self.staged_transfers, self.timeout_s)

    # -- GPU results given back through the queue (cuda_free.py) -------------

    def _give_back(self, device_index: int, buffer: rt.HalBuffer, held: Callable[[rt.HalBuffer], bool]) -> None:
        """Queue the free of ``buffer``, on device ``device_index``, whose
        owner is going, unless that device frees no memory this way, the
        buffer is not a whole allocation, or ``held(buffer)``: something
        still holds its memory."""
        free = self.__dict__.get("_queue_free", {}).get(device_index)
        if free is None or not cuda_free.is_whole_allocation(buffer) or held(buffer):
            return
        free.give_back(buffer)

    def _held_buffers(self, device_index: int, leaving=None) -> list:
        """The buffers the module's live results on ``device_index`` and its
        placed inputs there or in a GPU's pinned memory hold, but
        ``leaving``'s."""
        return self._resident_buffers(device_index, leaving) + self._placed_buffers(device_index, leaving)

    def _resident_buffers(self, device_index: int, leaving=None) -> list:
        """The buffers of the module's live results on ``device_index``, but ``leaving``'s."""
        return [v._hal_view.get_buffer() for v in list(self._resident)
                if v is not leaving and v.device_index == device_index and v._ref is not None]

    def _placed_buffers(self, device_index: int, leaving=None) -> list:
        """The buffers of the module's placed inputs on ``device_index`` or
        in a GPU's pinned memory, but ``leaving``'s."""
        return [p._hal_view.get_buffer() for p in list(self._placed)
                if p is not leaving and p.device_index in (device_index, None) and not p.released]

    def _holds_placement(self, device_index: int, results: Callable[[], list] = list, leaving=None):
        """-> whether memory the shim placed on ``device_index`` is still
        held: by a result of the module (``results()``: the call's own, as
        (buffer, on that device); and its live values there), which IREE
        made and which can be a part of an input (an allocation of the same
        size may share memory: cuda_free.may_share_memory; a result on
        another device only if it is the same buffer), or by a placed input
        there or in pinned memory (only if it is the same buffer: the shim's
        own allocations; ``leaving`` is not asked). Asked under the module's free
        lock."""
        def held(buffer: rt.HalBuffer) -> bool:
            resident = [(other, True) for other in self._resident_buffers(device_index)]
            if any(cuda_free.may_share_memory(buffer, other) if near else buffer == other
                   for other, near in [*results(), *resident]):
                return True
            return any(buffer == other for other in self._placed_buffers(device_index, leaving))
        return held

    def _give_back_placed(self, placed: "Placed", view: rt.HalBufferView) -> None:
        """``placed``, an input placed in a device's own memory
        (staging.place, from the device's queue), was released (``view``:
        what it held): its buffer goes back through the queue where no call
        is reading it, the caller never took its view, and nothing else of
        the module may hold its memory (``_holds_placement``: IREE hands an
        argument back as a result). A program's globals never hold it: IREE
        copies an argument it stores (gpu_kit's ``argument_given_back``
        checks that on the GPU)."""
        device_index = placed.device_index
        if placed._view_given or placed._uses or device_index not in self.__dict__.get("_queue_free", {}):
            return
        self._try_give_back(device_index, view.get_buffer, self._holds_placement(device_index, leaving=placed),
                            ready=lambda: not placed._uses)

    def _give_back_inputs(self, temporaries: list, results: Callable[[int], list]) -> None:
        """A call's inputs that the shim placed for that call alone
        (``temporaries``: (device index, view)) go back through their
        device's queue once the call is done, unless the call's results
        (``results(device index)``: (buffer, on that device)) or anything
        else of the module may hold their memory (``_holds_placement``)."""
        for device_index, view in temporaries:
            if device_index in self.__dict__.get("_queue_free", {}):
                self._try_give_back(device_index, view.get_buffer,
                                    self._holds_placement(device_index, lambda: results(device_index)))

    def _give_back_resident(self, value: "DeviceValue", view: rt.HalBufferView) -> None:
        """``value`` is being released (``view``: what it held): its buffer
        goes back through the queue where it was its call's one tensor
        result on its device, the caller never took a view of it, no call is
        reading it, and no other live value of the module holds it. Any
        doubt (a lock held, a set changing under another thread, teardown)
        leaves it to IREE."""
        if (value._view_given or not value._sole or value._uses
                or value.device_index not in self.__dict__.get("_queue_free", {})):
            return
        self._try_give_back(value.device_index, view.get_buffer,
                            _is_one_of(lambda: self._held_buffers(value.device_index, leaving=value)),
                            ready=lambda: not value._uses)

    def _try_give_back(self, device_index: int, buffer: Callable[[], rt.HalBuffer],
                       held: Callable[[rt.HalBuffer], bool], ready: Callable[[], bool] = lambda: True) -> None:
        """``_give_back`` of ``buffer()`` unless ``held`` says something
        still holds it, under the module's free lock and only if that lock
        is free now and ``ready()`` holds under it: a give-back never waits
        (it may run in a finalizer, on any thread), and any doubt (a set
        changing under another thread, teardown) leaves the buffer to IREE."""
        lock = self.__dict__.get("_free_lock")
        if lock is None or not lock.acquire(blocking=False):
            return
        try:
            if ready():
                self._give_back(device_index, buffer(), held)
        except Exception:  # noqa: BLE001  (leave it to IREE)
            return
        finally:
            lock.release()

    def _view_given(self, value: Union["DeviceValue", "Placed"]) -> None:
        """The caller took ``value.view``: neither it nor any live value or
        placed input sharing its buffer goes back through the queue."""
        value._view_given = True
        try:
            buffer = value._hal_view.get_buffer()
            for other in [*list(self._resident), *list(self._placed)]:
                if not other.released and other.device_index == value.device_index \
                        and other._hal_view.get_buffer() == buffer:
                    other._view_given = True
        except Exception:  # noqa: BLE001  (a set changing under another thread)
            pass

    # -- lanes of pipelined calls (pipelined.py) -----------------------------

    def _acquire_lanes(self, depth: int) -> list:
        """Holds ``depth`` lanes for one map (ShimError if another map holds
        them) and returns the initializer that binds a thread to each."""
        self._enter()  # a lane's context runs the initialisers on the devices
        if not self._lanes_held.acquire(blocking=False):
            raise ShimError(f"another map of {self.path} is running; its lanes are taken until it ends")
        try:
            while len(self._lane_contexts) < depth:
                self._lane_contexts.append(self._new_context())
        except BaseException:
            self._lanes_held.release()
            raise
        # The threads hold a lane's index, never its context, so that close()
        # releases every context even while a map is paused.
        return [functools.partial(setattr, self._lane, "index", k) for k in range(depth)]

    def _release_lanes(self) -> None:
        self._lanes_held.release()

    def _call_in_lane(self, function: "Function", args: tuple):
        """``function(*args)`` on a lane's thread, counted, so that close()
        waits for it rather than pulling the runtime from under it."""
        with self._lane_calls_done:
            if self._closing:
                raise ShimError(f"module {self.path} is closed")
            self._lane_calls += 1
        try:
            return function(*args)
        finally:
            with self._lane_calls_done:
                self._lane_calls -= 1
                self._lane_calls_done.notify_all()

    def _current_context(self) -> rt.VmContext:
        """The VM context a call on this thread runs in."""
        lane = getattr(self._lane, "index", None)
        if lane is None:
            return self._context
        try:
            return self._lane_contexts[lane]
        except (AttributeError, IndexError):
            raise ShimError(f"module {self.path} is closed") from None

    def statistics(self) -> str:
        """Each device's allocator statistics, as iree-run-module
        --print_statistics prints them."""
        self._enter()
        return extra_modules.statistics_text(self._devices)

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
        return tuple(self._devices)

    def describe(self) -> str:
        """The module's devices and functions with their declarations."""
        lines = [f"module {self.path} on {', '.join(self.uris)}" + (", closed" if self._closed else "")]
        if self.manifest is not None:
            lines.append("devices: " + ", ".join(
                f"{d.name}={d.spec} -> {self.uris[self.binding[d.name]]}"
                for d in self.manifest.devices))
        lines += [f"  {self.signatures[n].text}" for n in self.function_names]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self._repr("Module")

    def _new_function(self, name: str) -> "Function":
        return Function(self, self.signatures[name])

    # -- placement -----------------------------------------------------------

    def _device_index(self, value: Value, signature: Signature) -> int:
        if self.manifest is None:
            return 0
        name = value.affinity or self.manifest.default_device
        if name not in self.binding:
            raise ShimError(f"@{signature.name}: %{value.name} is placed on '{name}', which the "
                            f"module does not declare ({self.manifest.describe()})")
        return self.binding[name]

    def _fence_device(self, signature: Signature) -> rt.HalDevice:
        # The async-external signal fence is signalled by the queue that runs
        # the function's last work, and must be one that queue can use. A
        # CPU queue can wait on and signal a GPU's semaphore (host-side), but
        # a GPU queue cannot use a semaphore of another driver (a CUDA queue
        # waiting on a local-task semaphore never ran). So the semaphore
        # comes from a discrete device if one is bound, else from the device
        # of the first result. The host then waits on it (always allowed).
        used = [self._device_index(v, signature) for v in signature.results + signature.args]
        for i in used + list(range(len(self.uris))):
            if not dev.is_local(self.uris[i]):
                return self._devices[i]
        return self._devices[used[0] if used else 0]

    # -- lifetime ------------------------------------------------------------

    def close(self) -> None:
        """Release the runtime objects, in an order the runtime tolerates.

        With 3.13, interpreter teardown segfaulted when HAL objects (a
        result buffer view) were still alive at exit, so calls keep none
        and `atexit` closes modules still open. Calls running in a map's
        lanes are waited for first; later ones raise ShimError.
        """
        self._bind_for_free()  # the buffers are freed under the CUDA context
        if "_lane_calls_done" in self.__dict__:
            with self._lane_calls_done:
                self._closing = True
                while self._lane_calls:
                    self._lane_calls_done.wait()
        for placed in list(self.__dict__.get("_placed", ())):
            placed.release()
        for value in list(self.__dict__.get("_resident", ())):
            value.release()
        if "_result_pool" in self.__dict__:
            self._result_pool.close()
        self.__dict__.pop("_queue_free", None)
        self.__dict__.pop("_lane_contexts", None)
        for attr in ("_context", "_hal_module", "_extra_modules", "_vm_module", "_devices", "_instance"):
            self.__dict__.pop(attr, None)
        for function in self.__dict__.get("_functions", {}).values():
            function.__dict__.pop("_vm_function", None)
        self._functions = {}
        self._closed = True
        _OPEN_MODULES.discard(self)


def _check_drivers(uris: Sequence[str]) -> None:
    """Every URI names a driver this runtime has, as iree-run-module checks
    first (a typo such as local_task is not a device of another kind)."""
    available = rt.query_available_drivers()
    for uri in uris:
        name = dev.driver_name(uri)
        if name not in available:
            raise ShimError(f"device '{uri}': unknown driver '{name}'; no driver of that name is "
                            f"registered (available: {', '.join(available)})")


class Function(native.FunctionAPI):
    """One function of a Module: ``f(x, y)`` or ``f(x=..., y=...)`` with
    numpy arrays (or Placed inputs, or DeviceValues), numpy out. ``inspect.signature(f)``
    and ``help(f)`` show its arguments, shapes, dtypes and devices."""

    def __init__(self, module: Module, signature: Signature):
        self.module = module
        self.signature = signature
        self.name = signature.name
        self._vm_function = module._vm_module.lookup_function(signature.name)
        if self._vm_function is None:
            raise ShimError(f"the module has no function @{signature.name}")
        self._arg_devices = [module._device_index(v, signature) for v in signature.args]
        self._result_devices = [module._device_index(v, signature) for v in signature.results]
        # Arguments the program reads straight out of a device's pinned
        # memory (mdc-compile --pinned-arguments): index -> that device.
        pinned = module.manifest.pinned(self.name) if module.manifest is not None else {}
        for index in pinned:
            if not 0 <= index < len(signature.args) or not signature.args[index].is_tensor:
                raise ShimError(f"@{self.name}: the manifest pins argument {index}, which is not a tensor "
                                f"argument of {signature.text}")
        self._pinned = {i: module.binding[d] for i, d in pinned.items()}
        self._tied = module.manifest.tied(signature) if module.manifest is not None else ()
        for v in signature.results:
            if not (v.is_tensor or v.type == "!hal.buffer_view" or v.type in values.SCALAR_TYPES):
                raise ShimError(f"@{self.name}: result %{v.name} has unsupported type {v.type}")
        # Per result, its numpy scalar type, or None for a buffer view.
        self._scalar_results = tuple(values.SCALAR_TYPES.get(v.type) for v in signature.results)
        # Per result, whether it is the function's one tensor result on its
        # device: IREE may pack several results of a call into one
        # allocation, whose parts are not allocations of their own, so only
        # such a result goes back through the queue (cuda_free.py).
        tensors_on = [d for d, scalar in zip(self._result_devices, self._scalar_results) if scalar is None]
        self._sole_results = tuple(scalar is None and tensors_on.count(d) == 1
                                   for d, scalar in zip(self._result_devices, self._scalar_results))
        self._storage = self._storage_twin()
        # Input shapes (and scalar values) -> the shapes of the stored
        # results a call on them returned: how a call with dynamic result
        # shapes knows what storage to give.
        self._stored_shapes: dict[tuple, tuple] = {}
        self._stored_shapes_lock = threading.Lock()  # calls in a map's lanes share it
        self._init_api(self._where)

    def _storage_twin(self) -> Optional[tuple["Function", tuple[int, ...]]]:
        """(the twin, the results it stores) of this function's
        result-storage twin, or None; ShimError if the twin does not take
        this function's arguments and then one storage per stored result."""
        m = self.module
        found = m.manifest.storage_twin(self.name) if m.manifest is not None else None
        if found is None:
            return None
        name, stored = found
        sig = self.signature
        twin = m.signatures.get(name)
        expected = [*(str(v.type) for v in sig.args), *(str(sig.results[i].type) if i < len(sig.results) else "?"
                                                       for i in stored)]
        if (twin is None or [str(v.type) for v in twin.args] != expected
                or [str(v.type) for v in twin.results] != [str(v.type) for v in sig.results]
                or not all(sig.results[i].is_tensor for i in stored)):
            raise ShimError(f"the manifest names @{name} as the result-storage twin of @{self.name}, "
                            f"but it is {twin.text if twin else 'not in the module'}")
        return m.function(name), stored

    @property
    def pinned_arguments(self) -> dict[int, int]:
        """{argument index: device index} of the arguments the caller gives
        in a GPU's pinned memory (mdc-compile --pinned-arguments), the
        device index into Module.uris and Module.devices. ``place`` puts
        such an argument there; a call given an array copies it there (or
        registers its pages) every time. Empty for other functions."""
        return dict(self._pinned)

    def _acquire_lanes(self, depth: int) -> list:
        return self.module._acquire_lanes(depth)

    def _lane_call(self, *args):
        return self.module._call_in_lane(self, args)

    def _release_lanes(self) -> None:
        self.module._release_lanes()

    def _where(self, value: Value, signature: Signature) -> str:
        where = self.module._where(value, signature)
        if value in signature.args and signature.args.index(value) in self._pinned:
            index = signature.args.index(value)
            where += f", in the pinned memory of runtime device {self.module.uris[self._pinned[index]]}"
        return where

    def prepare(self, args: Sequence) -> list[tuple[object, object]]:
        """Check positional inputs against the declaration before anything
        is uploaded.

        -> (array, HAL element type as an int, iree.runtime.HalElementType's
        value) per tensor, (number, MLIR type name) per scalar, (Placed,
        None) per placed input, (DeviceValue, None) per result of an
        earlier call given as an input.
        """
        sig = self.signature
        if len(args) != len(sig.args):
            raise ShimTypeError(f"@{sig.name} takes {len(sig.args)} input(s), {len(args)} given")
        inputs = [self._checked(i, arg) for i, arg in enumerate(args)]
        if self._tied:
            values.check_tied_dims(sig, self._tied, [_input_shape(arg) for arg, _ in inputs])
        return inputs

    def _checked(self, i: int, arg) -> tuple[object, object]:
        sig = self.signature
        value = sig.args[i]
        if isinstance(arg, Placed) and (arg.function, arg.index) == (self.name, i):
            arg._hal_view  # noqa: B018  (raises if released)
            return arg, None
        where = f"@{sig.name} input {i} (%{value.name}: {value.type})"
        if isinstance(arg, Placed):
            raise ShimError(f"{where}: given input {arg.index} of @{arg.function}, placed for that one")
        if isinstance(arg, DeviceValue):
            return self._checked_device_value(i, arg, where), None
        if value.is_tensor:
            return values.checked_tensor(arg, value, where)
        if value.type == "!hal.buffer_view":
            array = np.asarray(arg)
            return array, values.hal_type_for_dtype(array.dtype)
        if value.type in values.SCALAR_TYPES:
            return values.check_scalar(arg, value.type, where), value.type
        raise ShimError(f"{where}: unsupported argument type")

    def _checked_device_value(self, i: int, arg: DeviceValue, where: str) -> DeviceValue:
        """A result of an earlier call given as input ``i``: it must be of
        this module, alive, of the declared type, and on the device the
        input is read from (a result is never in a pinned argument's
        memory)."""
        value = self.signature.args[i]
        if arg.module is not self.module:
            raise ShimError(f"{where}: given a result of another module ({arg.module.path})")
        arg._hal_view  # noqa: B018  (raises if released)
        if not value.is_tensor:
            raise ShimError(f"{where}: given a result on a device, for an input that is not a tensor")
        if i in self._pinned:
            raise ShimError(f"{where}: given a result on {arg.device}, but this input is read from pinned "
                            "memory (--pinned-arguments): pass an array or a Placed input")
        if arg.device_index != self._arg_devices[i]:
            raise ShimError(f"{where}: given a result on runtime device {arg.device}, but this input is read "
                            f"on {self.module.uris[self._arg_devices[i]]}: bring it to the host first (to_host())")
        if arg.element_type != values.element_type(value.type.element):
            raise ShimError(f"{where}: dtype mismatch, expected {value.type.element}, got a result of "
                            f"{values.type_name(arg.element_type)}")
        if not value.type.accepts_shape(arg.shape):
            raise values.shape_mismatch(where, value, arg.shape, given="a result of shape ")
        return arg

    def _placed_view(self, position: int, array: np.ndarray, kind: int, register: Optional[bool]):
        m = self.module
        if position in self._pinned:
            return values.to_pinned(m._devices[self._pinned[position]], array, kind, register=register)
        return m._to_device(self._arg_devices[position], array, kind)

    def place(self, index: int, arg) -> Placed:
        """Input ``index`` placed once where this function reads it: in its
        GPU's pinned memory for an --pinned-arguments argument (a new
        buffer, not the array's own pages), else as a call places it. Pass
        the result to calls in place of the array."""
        m = self.module
        m._enter()
        if not 0 <= index < len(self.signature.args):
            raise ShimError(f"@{self.name} has no input {index}")
        array, kind = self._checked(index, arg)
        if isinstance(array, Placed) or not isinstance(kind, int) or not self.signature.args[index].is_tensor:
            raise ShimError(f"@{self.name} input {index}: only a tensor input given as an array can be placed")
        array = np.ascontiguousarray(array)
        placed = Placed(self.name, index, self._placed_view(index, array, kind, register=False), array,
                        before_free=m._free_binder(), module=m,
                        device_index=None if index in self._pinned else self._arg_devices[index])
        m._placed.add(placed)
        return placed

    def call_on_devices(self, *args, **kwargs) -> tuple:
        """Call, leaving every tensor result on the device it ends on,
        unconverted: a tuple with a DeviceValue per tensor result and a
        numpy scalar per scalar result. Inputs are given as for a call
        (arrays, Placed inputs, or DeviceValues of earlier calls on the
        input's device). Returns once the call's work is done, so with
        inputs placed beforehand it times the program's own work alone."""
        inputs = self.prepare(self.bind_arguments(args, kwargs))
        result_list = self._run(inputs)
        out = []
        for i, (scalar, index) in enumerate(zip(self._scalar_results, self._result_devices)):
            if scalar is not None:
                out.append(scalar(result_list.get_variant(i)))
                continue
            resident = DeviceValue(self.module, result_list.get_as_ref(i), index, inputs)
            resident._sole = self._sole_results[i]
            if resident._sole and any(a._view_given for a, _ in inputs if isinstance(a, (DeviceValue, Placed))):
                resident._view_given = True  # it may be an input handed back, whose view the caller holds
            self.module._resident.add(resident)
            out.append(resident)
        return tuple(out)

    def _run(self, inputs: list) -> rt.VmVariantList:
        """Invoke on inputs from ``prepare`` (and _GivenStorage); -> the
        VM's result list, once the call's work is done."""
        m = self.module
        m._enter()
        # No input goes back through the queue (cuda_free.py) from the
        # moment its buffer is handed to the VM until the call is done.
        in_use = [a for a, _ in inputs if isinstance(a, (DeviceValue, Placed))]
        if in_use:
            with m._free_lock:
                for a in in_use:
                    a._uses += 1
        try:
            return self._run_counted(inputs)
        finally:
            if in_use:
                with m._free_lock:
                    for a in in_use:
                        a._uses -= 1

    def _run_counted(self, inputs: list) -> rt.VmVariantList:
        m = self.module
        arg_list = rt.VmVariantList(len(inputs) + 2)
        temporaries = []  # (device index, view) of the inputs placed in a device's own memory for this call
        for position, (arg, kind) in enumerate(inputs):
            if isinstance(arg, (Placed, DeviceValue, _GivenStorage)):
                arg_list.push_ref(arg._hal_view.ref)
                continue
            if isinstance(kind, str):  # a scalar
                (arg_list.push_float if kind.startswith("f") else arg_list.push_int)(arg)
                continue
            view = self._placed_view(position, arg, kind, register=None)
            arg_list.push_ref(view.ref)
            if position not in self._pinned:
                temporaries.append((self._arg_devices[position], view))
        signal = None
        if self.signature.is_async:
            # Wait fence: the inputs are already resident (uploads above
            # were waited for), so there is nothing to wait on. An empty
            # fence is satisfied for every queue and holds no semaphore of
            # any driver, so no GPU queue is ever asked to wait on a
            # foreign one.
            semaphore = m._fence_device(self.signature).create_semaphore(0)
            signal = rt.HalFence.create_at(semaphore, 1)
            arg_list.push_ref(rt.HalFence(0).ref)
            arg_list.push_ref(signal.ref)
        result_list = rt.VmVariantList(len(self.signature.results))
        m._current_context().invoke(self._vm_function, arg_list, result_list)
        del arg_list
        if signal is not None:
            values.wait(signal, m.timeout_s, f"@{self.name} to finish")
        if temporaries:
            m._give_back_inputs(temporaries, lambda index: self._result_buffers(result_list, index))
        return result_list

    def _result_buffers(self, result_list: rt.VmVariantList, device_index: int) -> list:
        """(buffer, declared on device ``device_index``) of a call's tensor
        results."""
        return [(result_list.get_as_object(i, rt.HalBufferView).get_buffer(), index == device_index)
                for i, (value, index) in enumerate(zip(self.signature.results, self._result_devices))
                if value.type not in values.SCALAR_TYPES]

    def _invoke(self, inputs: list) -> list[tuple[object, object]]:
        """Call on inputs from ``prepare``.

        -> (array, HAL element type as an int) per tensor result, (number,
        MLIR type name) per scalar result.
        """
        return self._outputs(self._run(inputs), inputs, {})

    def _outputs(self, result_list: rt.VmVariantList, inputs: list, lent: dict) -> list[tuple[object, object]]:
        """The results of a call as ``_invoke`` gives them; ``lent``: result
        index -> the result_storage.Slab given as its storage, each of which
        becomes the result's array or goes back to the pool."""
        m = self.module
        outputs = []
        for i, (value, index) in enumerate(zip(self.signature.results, self._result_devices)):
            if value.type in values.SCALAR_TYPES:
                scalar = values.SCALAR_TYPES[value.type](result_list.get_variant(i))
                outputs.append((scalar, value.type))
                continue
            view = result_list.get_as_object(i, rt.HalBufferView)
            held = self._lent_array(view, lent[i]) if i in lent else None
            if held is None:
                held = _placed_array_holding(view, [a for a, _ in inputs if isinstance(a, Placed)])
            if held is None:
                held = m._to_host(index, view)
                if index in m._queue_free and self._sole_results[i]:
                    self._give_back_read(result_list, i, inputs, view)
            outputs.append((held, int(view.element_type)))
            del view
        del result_list  # no HAL object may outlive the call (see Module.close)
        return outputs

    def _give_back_read(self, result_list: rt.VmVariantList, i: int, inputs: list,
                        view: rt.HalBufferView) -> None:
        """Result ``i``, just read back into numpy, goes back through the
        queue unless another holds its buffer: an input given on a device
        (a result can be an input handed back), or a live value or placed
        input of the module. Any doubt leaves it to IREE."""
        m = self.module
        index = self._result_devices[i]
        m._try_give_back(index, view.get_buffer, _is_one_of(lambda: (
            [a._hal_view.get_buffer() for a, _ in inputs if isinstance(a, (Placed, DeviceValue))]
            + m._held_buffers(index))))

    # -- results in the shim's own memory (result_storage.py) -----------------

    def _invoke_for_caller(self, inputs: list) -> list[tuple[object, object]]:
        """A Python call: through the result-storage twin where there is
        one and the stored results' shapes are known (static, or seen for
        these input shapes), each such result an array over pool memory;
        else ``_invoke``."""
        if self._storage is None:
            return self._invoke(inputs)
        self.module._enter()  # before _lend registers memory with a device
        twin, stored = self._storage
        key = _shape_key(inputs)
        lent = self._lend(key)
        if lent is None:
            outputs = self._invoke(inputs)
            with self._stored_shapes_lock:
                if key not in self._stored_shapes and len(self._stored_shapes) >= _SHAPE_MEMO:
                    del self._stored_shapes[next(iter(self._stored_shapes))]  # forget the oldest
                self._stored_shapes[key] = tuple(np.shape(outputs[i][0]) for i in stored)
            return outputs
        storage = [(_GivenStorage(slab.view(shape, kind)), None) for slab, shape, kind in lent.values()]
        try:
            result_list = twin._run(inputs + storage)
        except BaseException as e:
            del storage
            if not isinstance(e, Exception) or _STORAGE_TOO_SMALL not in str(e):
                # The call may still write the storage (a timeout): its
                # memory is kept, never freed nor lent again.
                self.module._result_pool.quarantine([slab for slab, _, _ in lent.values()])
                raise
            # The shapes seen for these inputs were not the shapes this call
            # makes (a result whose size depends on the values): run the
            # function itself once more, and forget them.
            for slab, _, _ in lent.values():
                self.module._result_pool.give_back(slab)
            with self._stored_shapes_lock:
                self._stored_shapes.pop(key, None)
            return self._invoke(inputs)
        del storage
        return self._outputs(result_list, inputs, {i: slab for i, (slab, _, _) in lent.items()})

    def _lend(self, key) -> Optional[dict]:
        """result index -> (slab, shape, HAL element type) for every stored
        result, or None (shapes not known, or a device refused the memory)."""
        twin, stored = self._storage
        shapes = [self.signature.results[i].type.shape for i in stored]
        if any(None in shape for shape in shapes):
            shapes = self._stored_shapes.get(key)
            if shapes is None:
                return None
        m = self.module
        lent = {}
        for j, (i, shape) in enumerate(zip(stored, shapes)):
            kind = values.element_type(self.signature.results[i].type.element)
            nbytes = math.prod(shape) * values.numpy_dtype(kind).itemsize
            position = len(self.signature.args) + j
            pinned = position in twin._pinned
            index = twin._pinned[position] if pinned else self._result_devices[i]
            slab = None
            if pinned or dev.is_local(m.uris[index]):
                slab = staging.lend(m._result_pool, index, m._devices[index], nbytes, pinned)
            if slab is None:
                for given, _, _ in lent.values():
                    m._result_pool.give_back(given)
                return None
            lent[i] = (slab, list(shape), kind)
        return lent

    def _lent_array(self, view: rt.HalBufferView, slab: "result_storage.Slab") -> Optional[np.ndarray]:
        """The result ``view`` as an array over ``slab``, the storage it was
        written into; None (the slab given back) if it is not there."""
        pool = self.module._result_pool
        found = values.host_bytes(view)
        if found is not None:
            address, nbytes, dtype, shape = found
            if address == slab.address and nbytes <= slab.capacity:
                return pool.array(slab, nbytes, dtype, shape)
        pool.give_back(slab)
        return None


# How many input shapes a function remembers its results' shapes for.
_SHAPE_MEMO = 256
# What the staging helper says when storage is smaller than the value.
_STORAGE_TOO_SMALL = "less than expected minimum"


class _GivenStorage:
    """A view of pool memory given to a twin as a result's storage."""

    __slots__ = ("view",)

    def __init__(self, view: rt.HalBufferView):
        self.view = view

    @property
    def _hal_view(self) -> rt.HalBufferView:
        return self.view


def _shape_key(inputs: list) -> tuple:
    """What a call's result shapes may depend on, short of the values of
    its tensors: each input's shape, each scalar's value."""
    # A scalar by its repr: a NaN is equal to itself so.
    return tuple((kind, repr(arg)) if isinstance(kind, str) else _input_shape(arg) for arg, kind in inputs)


def _input_shape(arg) -> tuple[int, ...]:
    """The shape of an input as ``prepare`` gives it: an array, a Placed
    input or a DeviceValue (a scalar's is ())."""
    if isinstance(arg, (Placed, DeviceValue)):
        return tuple(arg._hal_view.shape)
    return np.shape(arg)


def _is_one_of(buffers: Callable[[], list]) -> Callable[[rt.HalBuffer], bool]:
    """-> whether a buffer is one of ``buffers()`` (asked when it is used)."""
    return lambda buffer: any(buffer == other for other in buffers())


def _placed_array_holding(view: rt.HalBufferView, placed: list) -> Optional[np.ndarray]:
    """The memory of a Placed input that a result ``view`` is (an output
    argument, iree.abi.output, whose storage the result is written into),
    as an array of the result's shape, or None: such a result is returned
    without a copy."""
    candidates = [p for p in placed if p._array is not None]
    found = values.host_bytes(view) if candidates else None
    if found is None:
        return None
    address, nbytes, dtype, shape = found
    for p in candidates:
        if p._array.ctypes.data == address and p._array.nbytes >= nbytes:
            return p._array.reshape(-1).view(np.uint8)[:nbytes].view(dtype).reshape(shape)
    return None


@atexit.register
def _close_all() -> None:
    for module in list(_OPEN_MODULES):
        module.close()
