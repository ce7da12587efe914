"""iree-run-module's flags that mdc-run takes as they are, or says why not.

* Driver flags (``--task_*``, ``--cuda_*``, ``--hip_*``, ``--vulkan_*``,
  ``--executable_plugin``, ``--dump_task_topologies``) go to IREE's runtime flag parser unchanged, as
  iree-run-module takes them, and to the wheel's iree-run-module where
  mdc-run runs a module there.
* ``--flagfile=FILE`` is replaced by the flags in FILE (one a line; blank
  lines and lines starting with # skipped), where it stands.
* ``--list_drivers``, ``--list_devices``, ``--dump_devices`` and
  ``--agents_md`` print what the wheel's own iree-run-module prints.
* The rest of iree-run-module's flags mdc-run does not offer are refused
  with the reason (REFUSED); docs/mdc-run.md's table lists every flag.
"""

from __future__ import annotations

import sys
from typing import Optional, Sequence

from .errors import ShimError

DRIVER_PREFIXES = ("--task_", "--cuda_", "--hip_", "--vulkan_", "--executable_plugin",
                   "--dump_task_topologies")
INFO_FLAGS = ("--list_drivers", "--list_devices", "--dump_devices", "--agents_md")

_NOT_EXPOSED = ("IREE 3.13's Python runtime, which mdc-run runs on, does not expose {what}; run the "
                "host entry point (@F$host, docs/mdc-run.md, \"Host entry points\") with the wheel's "
                "iree-run-module for it")
REFUSED = {
    "--device_allocator": _NOT_EXPOSED.format(what="the tooling's allocator wrappers"),
    "--device_lead_allocator": "mdc-run has no lead allocator: each argument is allocated on "
                               "the device its iree.abi.affinity names",
    "--device_replay_output": _NOT_EXPOSED.format(what="HAL replay capture"),
    "--device_replay_file_policy": _NOT_EXPOSED.format(what="HAL replay capture"),
    "--device_replay_file_validation": _NOT_EXPOSED.format(what="HAL replay capture"),
    "--device_profiling_mode": _NOT_EXPOSED.format(what="the tooling's HAL profiling sessions"),
    "--device_profiling_output": _NOT_EXPOSED.format(what="the tooling's HAL profiling sessions"),
    "--device_profiling_flush_interval_ms": _NOT_EXPOSED.format(what="the tooling's HAL profiling sessions"),
    "--device_profiling_counter": _NOT_EXPOSED.format(what="the tooling's HAL profiling sessions"),
    "--print_device_statistics": _NOT_EXPOSED.format(what="the tooling's HAL profiling sessions"),
    "--device_capture_tool": _NOT_EXPOSED.format(what="external capture providers"),
    "--device_capture_file": _NOT_EXPOSED.format(what="external capture providers"),
    "--device_capture_label": _NOT_EXPOSED.format(what="external capture providers"),
    "--instrument_file": _NOT_EXPOSED.format(what="the instrumentation module"),
}
_REFUSED_PREFIXES = ("--device_profiling_filter_",)


def refused(flag: str) -> Optional[str]:
    """Why mdc-run does not take ``flag`` (a --name or --name=value), or None."""
    name = flag.split("=", 1)[0]
    if name in REFUSED:
        return REFUSED[name]
    if name.startswith(_REFUSED_PREFIXES):
        return REFUSED["--device_profiling_mode"]
    return None


def expand_flagfiles(argv: Sequence[str]) -> list[str]:
    """``argv`` with each --flagfile=FILE replaced by the flags in FILE."""
    out: list[str] = []
    for arg in argv:
        if not arg.startswith("--flagfile="):
            out.append(arg)
            continue
        path = arg.split("=", 1)[1]
        try:
            with open(path, encoding="utf-8") as f:
                lines = [line.strip() for line in f]
        except OSError as e:
            raise ShimError(f"{arg}: cannot read {path}: {e.strerror}") from None
        out += expand_flagfiles([line for line in lines if line and not line.startswith("#")])
    return out


# Driver flags mdc-run parses itself, to check their values first.
OWN_DRIVER_FLAGS = ("--task_topology_group_count",)


def split_driver_flags(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """(mdc-run's own flags, driver flags for IREE's runtime)."""
    ours, driver = [], []
    for arg in argv:
        passed = arg.startswith(DRIVER_PREFIXES) and arg.split("=", 1)[0] not in OWN_DRIVER_FLAGS
        (driver if passed else ours).append(arg)
    return ours, driver


def run_info_flag(argv: Sequence[str]) -> Optional[int]:
    """For an informational flag (--list_devices, ...): print what the
    wheel's iree-run-module prints for it and return its exit status; else
    None."""
    info = [a for a in argv if a.split("=", 1)[0] in INFO_FLAGS]
    if not info:
        return None
    import subprocess

    from .native import iree_run_module

    drivers = [a for a in argv if a.startswith(DRIVER_PREFIXES)]
    sys.stdout.flush()
    return subprocess.run([iree_run_module(), *drivers, *info]).returncode
