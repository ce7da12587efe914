"""Performance of heterogeneous transfers: build here, measure on a GPU machine.

    python -m bench build DIR        # here: compile the modules (needs the compiler)
    python -m bench run DIR          # there: runtime (+ torch if present) only
    python -m bench sizes DIR        # there: every size 4 KiB..1 GiB each way against torch
    python -m bench pieces DIR       # there: CPU->GPU bandwidth by piece count
    python -m bench pinned DIR       # there: arguments given in pinned memory
    python -m bench latency DIR      # there: seed call latency by CPU driver
    python -m bench queue-latency    # there: what chained queue operations cost
    python -m bench compile-time     # here: mdc-compile against iree-compile
    python -m bench workload build DIR   # here: a split transformer-like model's kit
    python -m bench workload run DIR     # there: it by split, against torch and stock IREE
    python -m bench placement build DIR  # here: --place=auto against every contiguous split and greedy fill
    python -m bench placement run DIR    # there: each placement measured beside its estimate
    python -m bench models build DIR     # here: whole models (workload, SwiGLU) all-GPU and all-CPU
    python -m bench models run DIR       # there: each against torch on its device (issue 44 item 5)
    python -m bench generate build DIR   # here: TinyLlama-sized --place=auto modules, one per GPU budget
    python -m bench generate run DIR     # there: generation against torch, its hand split, accelerate
    python -m bench kernels build|run DIR    # every grid matmul: mdc, stock IREE, torch (bench/kernels.py)
    python -m bench tune build|run|pick ...  # the CUDA matmul tuner (bench/tune.py)

``run`` prints one table; every row is measured in that same run:

* mdc: effective CPU->GPU and GPU->CPU bandwidth of mdc-compiled programs in
  which a value produced on one device is consumed on the other (argument
  already resident on its device, result left on its device), for 1, 16,
  256 and 1024 MiB, for both lowerings (``--staging=copy`` and
  ``--staging=emplace``);
* the references moving the same bytes: IREE ``queue_copy`` between pinned
  host memory and device memory (the limit); torch ``.copy_()`` between
  existing tensors from pinned and from pageable memory, and torch
  ``x.cuda()`` / ``y.cpu()``, which make a new tensor each call as an mdc
  call makes a new result; and the manual workaround (numpy array uploaded
  to a cuda-only IREE device and read back);
* per-call latency of the seed program (4xf32) compiled by mdc for
  local+cuda (both lowerings), against stock IREE's cuda+cuda and
  local+local modules;
* a value computed on the CPU (x + 1) and returned on the GPU, and one
  computed on the GPU and returned on the CPU, both lowerings, against the
  op alone on its device.

``sizes`` measures one crossing of every size from 4 KiB to 1 GiB (powers
of 4; ``--sizes 4K,1M,1G`` for others) each way through mdc's default path
against torch's faster pageable path, beside the floors stock IREE's
runtime sets in the same run (bench/sizes.py says what each column is).

``pieces`` measures CPU->GPU bandwidth of an argument (copied into pinned
memory by the CPU in fenced pieces, each piece's DMA started once the host
sees it written) for the default piece count (one per 16 MiB, up to 16) and
each count ``--staging-pieces`` in PIECE_COUNTS, beside the queue_copy limit
in the same run.

``pinned`` measures CPU->GPU bandwidth of an argument given in the GPU's
pinned memory (``mdc-compile --pinned-arguments``): placed there once and
reused, as torch's pinned row reuses its pinned tensor, and placed there by
the shim on every call (a copy into a new pinned buffer, or the array's own
pages registered with CUDA), beside the default (the argument in the CPU's
memory), the queue_copy limit and torch, in the same run; then GPU->CPU of
a result written into an output argument (``iree.abi.output``) placed once,
in the CPU's memory and in the GPU's pinned memory, beside the default (a
new result buffer each call), the limit and torch.

``latency`` measures the seed program's per-call latency in interleaved
rounds (each round loads every module afresh and takes the median of its
calls), for mdc's local+cuda modules with the CPU device run by local-task
and by local-sync, against stock IREE's cuda+cuda and local+local modules;
it prints each row's median over the rounds, its spread, and the ratio to
stock cuda+cuda taken within each round.

``components`` times the parts a staged transfer is made of with the
runtime API (host copies, queue copies, allocations, host round trips),
and the host copy and the GPU's DMA from pinned memory alone and at once
(the DMA in a second process): together they share host memory bandwidth,
which bounds any overlap of the two.

``workload`` builds a transformer-like stack of our own (bench/model.py:
embedding, N blocks of matmul, RMS norm and SiLU, a head; 512 MiB of f32
weights by default, made from a seed at run time) with the first k blocks
on the CPU device and the rest on the GPU, one module per k, and measures
per-call latency at batch 1 and throughput at a larger batch against torch
doing the same split, and torch and stock IREE with everything on the GPU,
every result checked against numpy (bench/workload.py).

``placement`` compiles a grid of variants (issue 45 item 3's): the
workload's stack and the SwiGLU stack of ``models``, each in f32 and f16,
at 1 and 16 tokens a call (``--models``, ``--dtypes``, ``--tokens`` pick a
part, on build and on run), each with no device named and its weights as
named parameters, for GPU budgets that fit 0, N/4, N/2, 3N/4 and N blocks
with the head, greedy fill's shape (the table and 4 blocks) and
everything: ``--place=auto --gpu-memory=B`` beside greedy fill and every
contiguous split that fits (one unbroken run of embedding, blocks and
head on the GPU; all-CPU, all-GPU and llama.cpp's last blocks among them;
one run of each class of runs that do the same work, bench/placement_splits.py),
as assignment files; the run measures every module once against its
estimate, auto against the fastest contiguous split of each budget, and
each peak GPU memory against the budget (bench/placement.py). With
``--program-kits`` the build writes each variant's mdc-profile --program
kit instead, which bench/gpu_placement_costs.sh times on the GPU machine
into the costs files ``--place-costs=DIR`` builds the kit with.

``models`` compiles two whole models with their weights as named
parameters, as an exported model holds them: the workload's stack and a
Llama-style SwiGLU stack of our own (bench/swiglu.py: H = 2048, F = 5632,
8 blocks, vocabulary 32000, 1.6 GB of f32 weights), each all on the GPU
and all on the CPU, at 1 and 16 tokens a call, and measures each module
and torch on the same device, each in a process of its own, every result
checked against numpy (bench/models.py).

``generate`` compiles the TinyLlama-sized generation export
(examples/pytorch/exported_generate) with ``--place=auto`` under GPU
budgets that fit 0, 1/4, 1/2, 3/4 and all of its 22 blocks, and all on the
GPU in f16; the run measures prefill ms, decode tokens/s and peak GPU
memory of each against torch all on the GPU, torch split by hand at the
same budget and accelerate's ``device_map="auto"`` under the same
``max_memory``, each line in a process of its own (bench/generate.py,
issue 46 item 4).

With no cuda device, a measuring command says so and exits with status 2
(``--allow-no-gpu``: it says so and exits 0).

``run``, ``pieces`` and ``components`` take ``--workers N`` (local-task worker threads)
and ``--retain-host-memory`` (mdc.runtime_shim.host_memory: freed host memory is
kept, so a new result's pages are not faulted in again); they and ``workload run``
take ``--runtime-flag=--NAME=VALUE`` (any of IREE's runtime flags, such as
``--task_worker_spin_us``, set before any device exists; ``workload run`` takes
``--workers`` too), and print the host settings they ran under. A folder that
is not a whole kit is refused before anything is measured.

Times are the median of repeated calls after warm-up, host clock around
synchronous calls (each call returns once its work is done).
"""

from __future__ import annotations

import argparse
import sys

from .common import Config, gpu_or_none
from .kit_commands import KITS, add_kits, check_runtime_flag_forms, configure, runtime_flag_option
from .kitframe import NO_GPU_STATUS, KitError

SIZES_MIB = (1, 16, 256, 1024)


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(s) for s in text.split(",")]
    except ValueError:
        sizes = []
    if not sizes or min(sizes) <= 0:
        raise argparse.ArgumentTypeError(f"expected MiB as positive whole numbers, comma separated, got {text!r}")
    return sizes


def _byte_sizes(text: str) -> list[int]:
    """``4K,1M,1G``: sizes with a K, M or G suffix (KiB, MiB, GiB), comma separated."""
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    try:
        out = [int(s[:-1]) * scale[s[-1].upper()] for s in text.split(",")]
    except (ValueError, KeyError, IndexError):
        out = []
    if not out or min(out) <= 0:
        raise argparse.ArgumentTypeError(f"expected sizes such as 4K,1M,1G (KiB, MiB, GiB), comma separated, "
                                         f"got {text!r}")
    return out


def _kit_commands(sub) -> list:
    """build, run, sizes, pieces, pinned: the commands of a kit made by build."""
    b = sub.add_parser("build")
    b.add_argument("dir")
    b.add_argument("--cpu", default="generic")
    b.add_argument("--smoke", action="store_true", help="local devices stand in for the GPU")
    r = sub.add_parser("run")
    r.add_argument("dir")
    r.add_argument("--sizes", type=_sizes, default=list(SIZES_MIB), help="MiB, comma separated")
    sz = sub.add_parser("sizes")
    sz.add_argument("dir")
    sz.add_argument("--sizes", type=_byte_sizes, default=None,
                    help="sizes such as 4K,1M,1G, comma separated (default: 4 KiB to 1 GiB, powers of 4)")
    pc = sub.add_parser("pieces")
    pc.add_argument("dir")
    pc.add_argument("--sizes", type=_sizes, default=[1, 16, 256, 1024], help="MiB, comma separated")
    pn = sub.add_parser("pinned")
    pn.add_argument("dir")
    pn.add_argument("--sizes", type=_sizes, default=[16, 256, 1024], help="MiB, comma separated")
    return [r, sz, pc, pn]


def _other_commands(sub) -> list:
    """latency, queue-latency, components, compile-time."""
    lt = sub.add_parser("latency")
    lt.add_argument("dir")
    lt.add_argument("--rounds", type=int, default=7)
    lt.add_argument("--calls", type=int, default=300)
    lt.add_argument("--baseline", help="a kit built at another commit, measured in the same rounds")
    lt.add_argument("--dynamic-sizes", type=_byte_sizes, default=[],
                    help="4K,1M,...: the seed_dynamic rows again with values of these sizes")
    ql = sub.add_parser("queue-latency")
    ql.add_argument("--calls", type=int, default=300)
    k = sub.add_parser("components")
    k.add_argument("--mib", type=int, default=256)
    c = sub.add_parser("compile-time")
    c.add_argument("--layers", type=int, default=12)
    c.add_argument("--repeat", type=int, default=3)
    return [lt, ql, k]


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    measuring = [*_kit_commands(sub), *_other_commands(sub)]
    for sp in [*add_kits(sub), *measuring]:  # every step that runs on the GPU machine
        sp.add_argument("--smoke", action="store_true", help="local-sync stands in for the GPU")
        sp.add_argument("--allow-no-gpu", action="store_true",
                        help=f"with no cuda device, say so and exit 0 (default: exit status {NO_GPU_STATUS})")
    for sp in measuring:
        if sp.prog.split()[-1] != "queue-latency":
            sp.add_argument("--workers", type=int, default=0,
                            help="local-task worker threads (IREE's --task_topology_group_count; 0: IREE's choice)")
            sp.add_argument("--retain-host-memory", action="store_true",
                            help="keep freed host memory for reuse (mdc.runtime_shim.host_memory)")
            runtime_flag_option(sp)
    return p


def dispatch(p: argparse.ArgumentParser, a: argparse.Namespace, config: Config) -> int:
    from . import compile_time, components, kit, latency, pieces, pinned, queue_latency, sizes, transfer

    if a.cmd in KITS:
        try:
            return KITS[a.cmd].main(p, a, config)
        except KitError as e:  # a kit that is missing, incomplete or not for this run: one line
            print(f"bench: error: {e}", file=sys.stderr)
            return 1
    if a.cmd == "build":
        return kit.build(a.dir, a.cpu, a.smoke)
    if a.cmd == "compile-time":
        return compile_time.compile_time(a.layers, a.repeat)
    if a.cmd == "queue-latency":
        check_runtime_flag_forms(p, a)
    else:
        configure(p, a)
    if hasattr(a, "dir"):
        # A machine with no GPU says so first (exit status 2, as every
        # measuring command), then a folder that is no whole kit is refused.
        if gpu_or_none(config) is None:
            return config.no_gpu_status()
        for folder, names in [(a.dir, None), (getattr(a, "baseline", None), kit.SEED_MDC_MODULES)]:
            lacking = kit.missing(folder, names) if folder else []
            if lacking:
                print(f"bench: error: {folder}: not a whole kit ({len(lacking)} modules missing, such as "
                      f"{lacking[0]}); build it here with python -m bench build {folder}", file=sys.stderr)
                return 1
    commands = {
        "run": lambda: transfer.run(config, a.dir, a.sizes),
        "sizes": lambda: sizes.sizes(config, a.dir, a.sizes or sizes.DEFAULT_SIZES),
        "pieces": lambda: pieces.pieces(config, a.dir, a.sizes),
        "pinned": lambda: pinned.pinned(config, a.dir, a.sizes),
        "latency": lambda: latency.latency(config, a.dir, a.rounds, a.calls, a.baseline, a.dynamic_sizes),
        "components": lambda: components.components(config, a.mib),
        "queue-latency": lambda: queue_latency.queue_latency(config, a.calls),
    }
    return commands[a.cmd]()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("kernels", "tune"):  # their own command lines
        from . import kernels, tune
        return (kernels if argv[0] == "kernels" else tune).main(argv[1:])
    if len(argv) == 4 and argv[0] == "_dma_loop":  # components' other process: _dma_loop BYTES SECONDS GPU
        from .components import dma_loop

        return dma_loop(Config(gpu=argv[3]), int(argv[1]), float(argv[2]))
    p = parser()
    a = p.parse_args(argv)
    config = Config(gpu="local-sync" if getattr(a, "smoke", False) and a.cmd != "build" else "cuda",
                    allow_no_gpu=getattr(a, "allow_no_gpu", False))
    return dispatch(p, a, config)


if __name__ == "__main__":
    sys.exit(main())
