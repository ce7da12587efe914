"""Run mdc-compiled .vmfb programs on the stock IREE runtime.

Needs only iree-base-runtime and numpy (never iree.compiler): GPU machines
run prebuilt modules without the compiler.

    from mdc.runtime_shim import load
    m = load("out.vmfb", devices=["local-task", "cuda"])
    y = m.multi_device_mul(x)

The command line is `mdc-run` (`python -m mdc.runtime_shim`), see cli.py.
"""

from .errors import ShimError, ShimTypeError
from .module import DeviceValue, Function, Module, Placed, load, load_vm_flatbuffer_file
from .native import NativeFunction, NativeModule
from .values import aligned_array

__all__ = ["DeviceValue", "Function", "Module", "NativeFunction", "NativeModule", "Placed", "ShimError",
           "ShimTypeError", "aligned_array", "load", "load_vm_flatbuffer_file"]
