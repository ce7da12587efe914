"""The corpus of programs in the shapes other people write
(test/e2e/programs/external/, read by test/harness/external_corpus.py): util.func
publics, constants placed only by their consumers' transfers, unannotated
publics, device globals whose alphabetical order is not the --device
order, `stream.affinity` on single ops, coarse-fences functions, branches
that move values, results placed by a transfer, devices the program
declares itself, and an iree-turbine export (torch's dialect, IREE's
buffer-view ABI once imported) that names no device, with the first
--device, the host of its host twin, sorting after the default device.

Each program is compiled by mdc-compile and run through
mdc.runtime_shim.load, and its results compared with stock IREE compiled
with every device `local` and run by iree-run-module on local-task:

* local + lavapipe, each device of the program in turn the Vulkan one (the
  others local[0], local[1], ...); for one assignment per program also
  through mdc-run;
* staged CPU pairs: every device local, `--link=X:Y=staged` for each
  ordered pair. There are more pairs than this 2-core machine runs in a
  few minutes, so each run takes one pair per program from a seeded
  sample; the others are skipped with the seed in their reason
  (MDC_CORPUS_SEED=N repeats a run, MDC_CORPUS_SEED=all runs every pair).

KNOWN is the one table of the cases that fail today, each with its class
and cause; they are strict xfails, so a fix makes them XPASS and fail
until the entry is removed.
"""

from __future__ import annotations

import os
import random
import sys

import numpy as np
import pytest

from harness import external_corpus as corpus
from conftest import CPU_FLAGS, compile_mlir, compile_mlir_with_stock_iree

PROGRAMS = {p.name: p for p in corpus.programs()}
INPUT_SEED = 20261203

_SEED_TEXT = os.environ.get("MDC_CORPUS_SEED", "")
SAMPLE_SEED = None if _SEED_TEXT == "all" else int(_SEED_TEXT or random.SystemRandom().randrange(1 << 30))

# (program, case) -> "class N: cause". case: the device taken as the Vulkan
# one, or "X:Y=staged" for a staged CPU pair. Class 1: mdc's default device
# (the first --device) is not IREE 3.13's (the alphabetically first device
# global). Class 2: a public result no annotation places is read from
# memory the host cannot map (PERMISSION_DENIED reading a DEVICE_LOCAL
# result). Class 3: a GPU default device with unannotated publics is refused
# with a wrong "--no-host-entry-points" message. Class 4: other causes, each
# described in its reason.
_CONSTANT_ON_TWO = ("a memory model no machine has: --link makes dev_b and dev_c staged while both share "
                    "dev_a's memory, so IREE gives the constant one allocation for all three and the verifier "
                    "refuses the module (a loud compile error; on a real GPU, dev_a to the GPU is staged too "
                    "and the Vulkan and cuda cases of this program pass)")
KNOWN: dict[tuple[str, str], str] = {
    ("constant_on_two_devices", "dev_b:dev_c=staged"): _CONSTANT_ON_TWO,
    ("constant_on_two_devices", "dev_c:dev_b=staged"): _CONSTANT_ON_TWO,
}


def _vulkan_cases():
    for program in PROGRAMS.values():
        for gpu in program.devices:
            reason = KNOWN.get((program.name, gpu))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            yield pytest.param(program.name, gpu, marks=marks, id=f"{program.name}-{gpu}")


def _staged_cases():
    for program in PROGRAMS.values():
        for x, y in corpus.staged_pairs(program):
            reason = KNOWN.get((program.name, f"{x}:{y}=staged"))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            yield pytest.param(program.name, x, y, marks=marks, id=f"{program.name}-{x}:{y}")


def _sampled_pairs() -> set[tuple[str, str, str]]:
    """One staged pair per program, drawn from SAMPLE_SEED (all with 'all')."""
    chosen = set()
    rng = random.Random(SAMPLE_SEED)
    for program in PROGRAMS.values():
        pairs = corpus.staged_pairs(program)
        for x, y in (pairs if SAMPLE_SEED is None else [rng.choice(pairs)]):
            chosen.add((program.name, x, y))
    return chosen


SAMPLED_PAIRS = _sampled_pairs()
print(f"test_external_shapes: staged-pair sample MDC_CORPUS_SEED={_SEED_TEXT or SAMPLE_SEED}", file=sys.stderr)


def _source_file(directory, program: corpus.Program, device_values) -> str:
    """The program as compiled for these devices (its own declarations
    rewritten to match), written under `directory`."""
    path = directory / f"{program.name}.mlir"
    path.write_text(corpus.source(program, list(device_values)))
    return path


def _results(got) -> list:
    return list(got) if isinstance(got, tuple) else [got]


def _result_count(vmfb, function: str, run_stock) -> int:
    """How many results ``function`` of stock IREE's ``vmfb`` returns: its
    declaration's count, or, where IREE writes none (a torch export's
    functions), how many results ``run_stock()`` (a run of it without
    --output) prints."""
    import iree.runtime as rt
    from mdc.runtime_shim.errors import ShimError
    from mdc.runtime_shim.module import read_signatures

    try:
        signatures, _ = read_signatures(rt.VmModule.mmap(rt.VmInstance(), str(vmfb)))
    except ShimError:
        r = run_stock()
        assert r.returncode == 0, r.stderr
        return r.stdout.count("result[")
    return len(signatures[function].results)


@pytest.fixture(scope="module")
def reference(tmp_path_factory, run_tool):
    """reference(program) -> (inputs, stock IREE's results): every device
    local, run by iree-run-module on local-task; once per program."""
    cache: dict[str, tuple] = {}

    def compute(program: corpus.Program):
        if program.name not in cache:
            root = tmp_path_factory.mktemp(f"stock-{program.name}")
            devices = corpus.all_local(program)
            vmfb = root / "stock.vmfb"
            compile_mlir_with_stock_iree(_source_file(root, program, devices), vmfb,
                                         dict(d.split("=") for d in devices))
            values = corpus.inputs(program, INPUT_SEED)
            argv = ["iree-run-module", f"--module={vmfb}", f"--function={program.function}",
                    *["--device=local-task"] * len(devices), *corpus.iree_run_inputs(values, str(root), "x")]
            outs = [root / f"out{k}.npy" for k in range(_result_count(vmfb, program.function,
                                                                      lambda: run_tool(argv)))]
            r = run_tool([*argv, *(f"--output=@{o}" for o in outs)])
            assert r.returncode == 0, r.stderr
            cache[program.name] = (values, [np.load(o) for o in outs])
        return cache[program.name]

    return compute


def _check(results, want, what: str) -> None:
    assert len(results) == len(want), f"{what}: {len(results)} results, stock IREE gives {len(want)}"
    for k, (g, w) in enumerate(zip(results, want)):
        differs = corpus.same(g, w)
        assert not differs, f"{what}: result {k}: {differs}"


def _run_loaded(vmfb, program, runtime, values):
    from mdc.runtime_shim import load

    with load(vmfb, runtime, timeout_s=120) as m:
        return _results(getattr(m, program.function)(*values))


@pytest.mark.vulkan
@pytest.mark.parametrize("name,gpu", list(_vulkan_cases()))
def test_local_and_vulkan(name, gpu, tmp_path, reference, mdc_run):
    program = PROGRAMS[name]
    values, want = reference(program)
    devices = corpus.with_gpu(program, gpu, "vulkan")
    vmfb = tmp_path / "mdc.vmfb"
    compile_mlir(_source_file(tmp_path, program, devices), vmfb, devices, flags=CPU_FLAGS)
    runtime = corpus.runtime_devices(devices, "vulkan")
    _check(_run_loaded(vmfb, program, runtime, values), want, f"load() on {' + '.join(runtime)}")
    if gpu != program.devices[-1]:
        return
    # mdc-run too, with the devices given GPU first.
    outs = [tmp_path / f"got{k}.npy" for k in range(len(want))]
    r = mdc_run(f"--module={vmfb}", f"--function={program.function}", *(f"--device={d}" for d in reversed(runtime)),
                *corpus.iree_run_inputs(values, str(tmp_path), "x"), *(f"--output=@{o}" for o in outs))
    assert r.returncode == 0, f"mdc-run: {r.stderr.strip()}"
    _check([np.load(o) for o in outs], want, "mdc-run")


@pytest.mark.parametrize("name,x,y", list(_staged_cases()))
def test_staged_cpu_pair(name, x, y, tmp_path, reference):
    if (name, x, y) not in SAMPLED_PAIRS:
        pytest.skip(f"not in this run's sample of staged pairs (MDC_CORPUS_SEED={SAMPLE_SEED}; "
                    "MDC_CORPUS_SEED=all runs every pair)")
    program = PROGRAMS[name]
    values, want = reference(program)
    devices = corpus.all_local(program)
    vmfb = tmp_path / "mdc.vmfb"
    compile_mlir(_source_file(tmp_path, program, devices), vmfb, devices, links=(f"{x}:{y}=staged",))
    runtime = corpus.runtime_devices(devices, "")
    _check(_run_loaded(vmfb, program, runtime, values), want, f"load() on {' + '.join(runtime)}")


def test_corpus_headers_name_what_the_programs_use():
    """Each header's devices are the devices the program names (and at most
    one more, the default device of a program that names only where values
    move to; or all of them, where it names none: all is on the default
    device),
    its call a public function of it (a torch function is public unless
    it says otherwise) and one input per argument: a header out of step
    with its program would test something else."""
    import re

    for program in PROGRAMS.values():
        text = program.text()
        named = set(re.findall(r"#hal\.device\.(?:promise|affinity)<@(\w+)>", text))
        named |= set(re.findall(r"util\.global private @(\w+) = #hal\.device", text))
        unnamed = len(program.devices) - len(named)
        assert named <= set(program.devices) and (unnamed <= 1 or not named), (program.name, named)
        assert set(program.declared) <= set(program.devices), program.name
        public = "(?: public)?" if "!torch.vtensor" in text else " public"
        signature = re.search(rf"func{public} @{program.function}\((.*?)\)\s*->", text, re.S)
        assert signature, (program.name, program.function)
        assert signature.group(1).count("%") == len(program.inputs), program.name
