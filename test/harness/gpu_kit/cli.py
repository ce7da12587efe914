"""gpu_kit's command line: build, run, and the child processes' entries."""

from __future__ import annotations

import argparse
import sys

from .build import build
from .canaries import canary_cuda_thread_child
from .run import NO_GPU_STATUS, run
from .runners import RUNNERS


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "_canary_cuda_thread":
        return canary_cuda_thread_child()
    if len(sys.argv) > 1 and sys.argv[1].startswith("_") and sys.argv[1][1:] in RUNNERS:
        return RUNNERS[sys.argv[1][1:]](sys.argv[2:])
    p = argparse.ArgumentParser(description=sys.modules[__package__].__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("kit")
    b.add_argument("--cpu", default="generic", help="portable CPU target for the local device")
    b.add_argument("--seed", type=int, default=20261130)
    b.add_argument("--mdc-flag", action="append", default=[], help="extra mdc-compile flag, e.g. --staging=emplace")
    r = sub.add_parser("run")
    r.add_argument("kit")
    r.add_argument("--timeout", type=float, default=60.0)
    r.add_argument("--only")
    r.add_argument("--repeat", type=int, default=1, help="runs per case; a case passes only if all match")
    r.add_argument("--cpu-driver", default="local-task", choices=["local-task", "local-sync"],
                   help="driver of the devices the cases run on local-task")
    r.add_argument("--allow-no-gpu", action="store_true",
                   help=f"with no cuda device, say so and exit 0 (default: exit status {NO_GPU_STATUS})")
    a = p.parse_args()
    if a.cmd == "build":
        return build(a.kit, a.cpu, a.seed, a.mdc_flag)
    return run(a.kit, a.timeout, a.only, a.repeat, a.cpu_driver, a.allow_no_gpu)
