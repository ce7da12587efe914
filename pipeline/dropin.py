"""iree-compile's spellings on mdc-compile's command line.

A command line written for iree-compile should work with only the tool's
name changed, so before mdc-compile parses its arguments:

* ``--iree-hal-target-device=NAME=SPEC`` is ``--device=NAME=SPEC`` (the
  short form), in the position it was given;
* ``--iree-hip-*`` flags (IREE's name for them after 3.13) become the
  ``--iree-rocm-*`` flags IREE 3.13.0 has, with a one-line note;
* ``--iree-hal-target-backends=...``, which declares no device, is refused
  with the ``--device`` to use instead;
* ``--mlir-*`` flags (``--mlir-timing``, ...) are MLIR's own command-line
  options, which IREE reads only from its global command line (as
  iree-compile sets it up), not from a session's flags.

No IREE import here: ``mdc-compile --help`` must stay fast.
"""

from __future__ import annotations

import dataclasses

from .options import UsageError

TARGET_DEVICE = "--iree-hal-target-device="
TARGET_BACKENDS = "--iree-hal-target-backends"
# IREE renamed its ROCm flags to HIP after 3.13.0: the old names are the ones it takes.
RENAMED_PREFIXES = {"--iree-hip-": "--iree-rocm-"}
MLIR_PREFIX = "--mlir-"

# --iree-hal-target-backends names an executable backend; the device it runs on.
_BACKEND_DEVICES = {"llvm-cpu": "local", "vmvx": "local", "cuda": "cuda", "rocm": "hip",
                    "hip": "hip", "vulkan-spirv": "vulkan", "vulkan": "vulkan",
                    "metal-spirv": "metal", "webgpu-spirv": "webgpu"}


@dataclasses.dataclass
class Translated:
    argv: list[str]  # what mdc-compile's own parser and IREE's session see
    mlir_flags: list[str]  # for IREE's global command line
    notes: list[str]  # one line each, for stderr


def translate(argv: list[str]) -> Translated:
    """``argv`` with iree-compile's spellings turned into mdc-compile's."""
    out = Translated([], [], [])
    for arg in argv:
        if arg.startswith(TARGET_DEVICE):
            out.argv.append(_target_device(arg))
        elif arg.split("=", 1)[0] == TARGET_BACKENDS:
            raise UsageError(_backends_message(arg))
        elif arg.startswith(MLIR_PREFIX):
            out.mlir_flags.append(arg)
        else:
            out.argv.append(_renamed(arg, argv, out.notes))
    return out


def _target_device(arg: str) -> str:
    value = arg[len(TARGET_DEVICE):]
    if "=" not in value:
        raise UsageError(
            f"{arg}: mdc-compile needs each device named: {TARGET_DEVICE}NAME=SPEC, as the program "
            f"calls it (e.g. {TARGET_DEVICE}device_a={value or 'local[0]'}), or --device=NAME=SPEC")
    return f"--device={value}"


def _renamed(arg: str, argv: list[str], notes: list[str]) -> str:
    for old, new in RENAMED_PREFIXES.items():
        if not arg.startswith(old):
            continue
        flag, _, value = arg.partition("=")
        renamed = new + flag[len(old):]
        if any(a.split("=", 1)[0] == renamed for a in argv):
            raise UsageError(f"{flag} and {renamed} are both given: they are one flag (IREE 3.13.0 "
                             f"calls it {renamed}); give it once")
        notes.append(f"mdc-compile: note: {flag} is {renamed} in IREE 3.13.0: passing "
                     f"{renamed}{'=' + value if value else ''}")
        return renamed + arg[len(flag):]
    return arg


def _backends_message(arg: str) -> str:
    backends = [b for b in arg.partition("=")[2].split(",") if b]
    suggestions = []
    for i, backend in enumerate(backends):
        kind = _BACKEND_DEVICES.get(backend)
        if kind is None:
            continue
        device = f"--device={chr(ord('a') + i)}={kind}[0]"
        if kind == "local":
            device += f" --iree-hal-local-target-device-backends={backend}"
        suggestions.append(device)
    hint = f", e.g. {' '.join(suggestions)}" if suggestions else ""
    return (f"{arg}: mdc-compile declares devices, not backends: use --device=NAME=SPEC for each "
            f"device the program names{hint}; NAME is the program's @NAME (a is short for device_a)")
