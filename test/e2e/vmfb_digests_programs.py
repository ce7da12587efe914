"""Build every MLIR program in test/ and examples/ with mdc-compile, for the
byte-identical proof of a refactoring (vmfb_digests.sh runs this).

    python test/e2e/vmfb_digests_programs.py OUT_DIR [--jobs N] [--every K]

Each program is built once per device set:
- the programs in test/e2e/programs (and dtypes/) and examples/: their
  devices sorted by name, the first a local CPU and the others one GPU
  (``cuda``, then ``vulkan``), and once all on two staged local devices;
- the external corpus (external/): each device in turn the GPU.
A build that fails leaves ``NAME.failed`` holding mdc-compile's exit status
and last stderr line, so a change in what fails shows up too (vmfb_digests.py
hashes only .vmfb files; this prints the failures after them).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
import _harness_path  # noqa: F401  (test/ and the checkout on sys.path)
from harness import external_corpus  # noqa: E402

_DEVICE = re.compile(r"promise<@(\w+)>")
_CPU = ["--iree-llvmcpu-target-cpu=generic"]
_GPU_FLAGS = {"cuda": ["--iree-cuda-target=sm_80"], "vulkan": []}


def _short(name: str) -> str:
    return name[len("device_"):] if name.startswith("device_") else name


def _plain_programs() -> list[str]:
    roots = [os.path.join(HERE, "programs"), os.path.join(HERE, "programs", "dtypes"),
             os.path.join(REPO, "examples"), os.path.join(REPO, "examples", "pytorch", "exported")]
    return sorted(os.path.join(r, f) for r in roots if os.path.isdir(r)
                  for f in os.listdir(r) if f.endswith(".mlir"))


def _jobs(out: str) -> list[tuple[str, str, list[str]]]:
    jobs = []
    for path in _plain_programs():
        stem = os.path.relpath(path, REPO).replace(os.sep, "__")[:-5]
        devices = sorted(set(_DEVICE.findall(open(path).read())))
        for extra in ("device_a", "device_b"):
            if len(devices) < 2 and extra not in devices:
                devices = sorted([*devices, extra])
        for gpu in ("cuda", "vulkan"):
            values = [f"{_short(devices[0])}=local[0]"] + [f"{_short(d)}={gpu}[0]" for d in devices[1:]]
            jobs.append((path, os.path.join(out, f"{stem}.{gpu}.vmfb"), [*map("--device={}".format, values),
                                                                         *_CPU, *_GPU_FLAGS[gpu]]))
        values = [f"{_short(d)}=local[{i}]" for i, d in enumerate(devices)]
        links = [f"--link={_short(devices[0])}:{_short(d)}=staged" for d in devices[1:]]
        jobs.append((path, os.path.join(out, f"{stem}.staged.vmfb"),
                     [*map("--device={}".format, values), *links, *_CPU]))
    os.makedirs(os.path.join(out, "src"), exist_ok=True)
    for program in external_corpus.programs():
        for gpu in program.devices:
            values = external_corpus.with_gpu(program, gpu, "vulkan")
            src = os.path.join(out, "src", f"{program.name}.{gpu}.mlir")
            with open(src, "w") as f:
                f.write(external_corpus.source(program, values))
            jobs.append((src, os.path.join(out, f"external__{program.name}.{gpu}.vmfb"),
                         [*map("--device={}".format, values), *_CPU]))
    return jobs


def _build(job: tuple[str, str, list[str]]) -> None:
    source, output, flags = job
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [REPO, os.environ.get("PYTHONPATH")])))
    proc = subprocess.run([sys.executable, "-m", "mdc.pipeline", source, "-o", output, *flags],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=600)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or [""])[-1].replace(REPO, "REPO")
        with open(output[:-5] + ".failed", "w") as f:
            f.write(f"{proc.returncode} {last}\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--every", type=int, default=1,
                        help="build only every K-th program and device set (a quick check while working)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        list(pool.map(_build, _jobs(os.path.abspath(args.out))[::max(1, args.every)]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
