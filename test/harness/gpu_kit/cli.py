"""gpu_kit's command line: build, run, and the child processes' entries."""

from __future__ import annotations

import sys

from bench.kitframe import Step, allow_no_gpu_option, kit_main, option

from .build import build
from .canaries import canary_cuda_thread_child
from .run import run
from .runners import RUNNERS

BUILD = Step(lambda a: build(a.kit, a.cpu, a.seed, a.mdc_flag), [
    option("--cpu", default="generic", help="portable CPU target for the local device"),
    option("--seed", type=int, default=20261130),
    option("--mdc-flag", action="append", default=[], help="extra mdc-compile flag, e.g. --staging=emplace")])
RUN = Step(lambda a: run(a.kit, a.timeout, a.only, a.repeat, a.cpu_driver, a.allow_no_gpu), [
    option("--timeout", type=float, default=60.0),
    option("--only"),
    option("--repeat", type=int, default=1, help="runs per case; a case passes only if all match"),
    option("--cpu-driver", default="local-task", choices=["local-task", "local-sync"],
           help="driver of the devices the cases run on local-task"),
    allow_no_gpu_option()])
# The child processes: the canary's, and each runner of runners.py (`gpu_kit.py _NAME ...`).
CHILDREN = {"_canary_cuda_thread": lambda _: canary_cuda_thread_child(),
            **{f"_{name}": runner for name, runner in RUNNERS.items()}}


def main() -> int:
    return kit_main(sys.modules[__package__].__doc__, BUILD, RUN, children=CHILDREN, name="gpu_kit")
