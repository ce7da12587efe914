"""Every command a doc shows is run by a test.

The command lines of the ```sh blocks of README.md and docs/*.md (comments
dropped, backslash continuations joined) are each either

* run here, on a CPU machine, as the doc shows them (the example's
  mdc-compile and mdc-run lines, `--help` lines), in a scratch folder whose
  `examples/` is the checkout's; a cuda command is run on Vulkan only where
  its doc says that is the CPU-only equivalent (LAVAPIPE_NOTE), or
* listed in ELSEWHERE: a pattern, the test or script that runs it, a word
  that file must contain, and why it is not run here (a GPU, torch, minutes).

A doc command in neither fails test_every_doc_command_is_run_or_listed, so a
new command in a doc needs a test before CI passes; a row of ELSEWHERE that
no doc command matches any more fails too.
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = (REPO / "README.md", *sorted((REPO / "docs").glob("*.md")))
SHELL_FENCES = ("sh", "bash", "shell", "console")

# Where a doc says this, its cuda commands run on lavapipe with vulkan for cuda.
LAVAPIPE_NOTE = ("With no NVIDIA GPU, `--device=1=vulkan[0]` and `--device=local-task --device=vulkan` "
                 "run the same on lavapipe")

# What the README says the example prints.
EXAMPLE_RESULT = "4xf32=0 55 144 273"


@dataclass(frozen=True)
class Elsewhere:
    pattern: str  # re.fullmatch against the command line
    runner: str  # the test or script that runs it, from the checkout's root
    needle: str  # a word the runner must contain: what shows it runs this command
    reason: str  # why it does not run here


ELSEWHERE = (
    Elsewhere(r"bash scripts/test\.sh", ".ci/run", "bash scripts/test.sh",
              "CI runs exactly this command: the whole suite, this test included"),
    Elsewhere(r"mdc-compile split_mlp\.mlir --device=__device_0=local\[0\] --device=__device_1=cuda\[0\] "
              r"-o split_mlp\.vmfb", "test/e2e/test_pytorch_exports.py", "split_mlp",
              "split_mlp.mlir is the doc's own torch export (needs torch and a GPU); the committed export "
              "of the same kind runs there on a staged CPU pair and lavapipe, and on cuda in gpu_torch.py"),
    Elsewhere(r"mdc-run --module=split_mlp\.vmfb --device=local-task --device=cuda --function=main "
              r"--input=@x\.npy --output=@y\.npy", "test/e2e/test_pytorch_exports.py", "split_mlp",
              "the same: the doc's own export, run on a cuda device"),
    Elsewhere(r"mdc-profile --device=local-task --device=cuda -o machine\.json", "test/e2e/test_mdc_profile.py",
              "def test_local_task_and_lavapipe_quick",
              "measures a GPU for a minute; the same tool runs there on local-task beside lavapipe (--quick)"),
    Elsewhere(r"mdc-profile --build-probes=probes --device=local-task --device=cuda", "test/harness/gpu_profile.py",
              "--build-probes=", "its probes are for a GPU machine; gpu_profile.py's build step builds them (with "
              "vulkan's), and test_mdc_profile.py runs that step here"),
    Elsewhere(r"mdc-profile --probes=probes --device=local-task --device=cuda -o machine\.json",
              "test/harness/gpu_profile.py", "--probes=", "measures a GPU: gpu_profile.py's run step runs it "
              "there; the same on local-task runs here (the doc's --quick pair)"),
    Elsewhere(r"mdc-profile --program=examples/placement/mlp\.mlir --device=cpu=local\[0\] --device=gpu=cuda\[0\] "
              r"--build-program=kit --target-cpu=x86-64-v4 --iree-cuda-target=sm_80",
              "test/e2e/test_mdc_profile_program.py", "def test_cpu_pair_build_here_time_without_the_compiler",
              "builds cuda code for a GPU machine; that test builds a CPU pair's kit the same way here"),
    Elsewhere(r"mdc-profile --program-kit=kit -o costs\.json", "test/e2e/test_mdc_profile_program.py",
              "--program-kit=", "times on the GPU machine; that test times a CPU pair's kit here, without the "
              "compiler"),
    Elsewhere(r"python test/e2e/gpu_profile\.py (build|run) \S+", "test/e2e/test_mdc_profile.py",
              "def test_gpu_profile_script_builds_here_and_runs_on_local_task",
              "a GPU check: that test builds the kit and runs it on local-task; the lead runs it on the GPU machine"),
    Elsewhere(r"python test/e2e/gpu_kit\.py (build|run) \S+", "test/e2e/gpu_check.sh", "gpu_kit.py",
              "a GPU check (CI has no GPU): gpu_check.sh builds it and runs it on the GPU machine"),
    Elsewhere(r"python test/e2e/gpu_torch\.py (build|run) \S+", "test/e2e/gpu_check.sh", "gpu_torch.py",
              "a GPU check (CI has no GPU): gpu_check.sh builds it and runs it on the GPU machine"),
    Elsewhere(r"mdc-generate llama_tiny\.vmfb --parameters=model=examples/pytorch/exported_generate/"
              r"llama_tiny_f32\.irpa --prompt-ids=@examples/pytorch/exported_generate/llama_tiny\.prompt\.npy "
              r"--max-new-tokens=16", "test/e2e/test_generate.py", "def test_mdc_generate_command",
              "that test runs this command on the same files (as python -m mdc.runtime_shim.generate_cli, this "
              "checkout's code) and checks its ids against torch's, its bar and its tokens/s line"),
    Elsewhere(r"iree-run-module --module=llama_tiny\.vmfb --device=local-task --parameters=model=examples/pytorch/"
              r"exported_generate/llama_tiny_f32\.irpa --function=generate --input=@ids\.npy --input=@length\.npy "
              r"--input=16", "test/e2e/test_generate.py", "def test_generate_entry_point_in_process",
              "needs the prompt padded into ids.npy; that test writes it and runs this command on the same "
              "module and weights, and checks the ids against torch's"),
    Elsewhere(r"python test/e2e/gpu_generate\.py (build|run) \S+", "test/e2e/test_gpu_generate_smoke.py",
              '_script("build", path, "--smoke")', "the TinyLlama-sized model on cuda with torch there; "
              "test_gpu_generate_smoke builds and runs the tiny config's kit on local-task (--smoke)"),
    Elsewhere(r"python -m bench build \S+", "test/e2e/test_bench_smoke.py", 'bench("build"',
              "the H200's kit; test_bench_smoke builds it with --smoke"),
    Elsewhere(r"python -m bench run \S+", "test/e2e/test_bench_smoke.py", 'bench("run"',
              "a measurement on the GPU machine; test_bench_smoke runs it on local devices (--smoke)"),
    Elsewhere(r"python -m bench pinned \S+", "test/e2e/test_bench_smoke.py", 'bench("pinned"',
              "a measurement on the GPU machine; test_bench_smoke runs it on local devices (--smoke)"),
    Elsewhere(r"python -m bench components --mib \d+", "test/e2e/test_bench_smoke.py", 'bench("components"',
              "a measurement on the GPU machine; test_bench_smoke runs it on local devices (--smoke)"),
    Elsewhere(r"python -m bench latency \S+( \[--baseline \S+\])?", "test/e2e/test_bench_smoke.py",
              'bench("latency"', "a measurement on the GPU machine; test_bench_smoke runs it (with "
              "--baseline) on local devices (--smoke)"),
    Elsewhere(r"python -m bench queue-latency", "test/e2e/test_bench_smoke.py", 'bench("queue-latency"',
              "a measurement on the GPU machine; test_bench_smoke runs it on local devices (--smoke)"),
    Elsewhere(r"python -m bench workload (build|run) \S+", "test/e2e/test_bench_smoke.py", 'bench("workload"',
              "the split model's kit and its measurement; test_bench_smoke builds and runs a small one (--smoke)"),
    Elsewhere(r"python -m bench kernels (build|run) \S+( --dtypes \S+)?", "test/e2e/test_bench_kernels_smoke.py",
              'bench("kernels", "build"', "the kernel grid's kit and its measurement on the GPU machine; "
              "test_bench_kernels_smoke builds and runs its CPU half on a few points (--smoke)"),
    Elsewhere(r"python -m bench tune (build|run|pick) \S+( --ops (batch|dynamic|mixed))?( --dtypes \S+)?",
              "test/e2e/test_bench_kernels_smoke.py",
              'bench("tune", "pick"', "the tuner's kit, its measurement on the GPU machine and the pick; "
              "test_bench_kernels_smoke builds, runs (on local-task) and picks a small one (--smoke)"),
    Elsewhere(r"python -m bench placement (build|run) \S+( --models \S+)?", "test/e2e/test_bench_placement_smoke.py",
              'bench("placement", "build"', "automatic placement's kit and its measurement on the GPU machine; "
              "test_bench_placement_smoke builds and runs a small one (--smoke), and a part of it (--tokens)"),
    Elsewhere(r"python -m bench placement build \S+ --program-kits --cpu=\S+",
              "test/e2e/test_bench_placement_smoke.py",
              '"--program-kits"', "each variant's program kit for the GPU machine; test_bench_placement_smoke builds "
              "the --smoke SwiGLU stack's and times them on the CPU pair"),
    Elsewhere(r"bash bench/gpu_placement_costs\.sh \S+", "test/e2e/test_bench_placement_smoke.py",
              "gpu_placement_costs.sh", "times the program kits on the GPU machine; test_bench_placement_smoke "
              "runs it on the --smoke stack's kits, a CPU pair"),
    Elsewhere(r"python -m bench placement build \S+ --cpu=\S+ --place-costs=\S+",
              "test/e2e/test_bench_placement_smoke.py",
              "--place-costs={kits}", "needs the GPU machine's costs files; test_bench_placement_smoke builds the "
              "--smoke SwiGLU stack's kit with those timed on the CPU pair, every estimate measured, and runs it"),
    Elsewhere(r"python -m bench models (build|run) \S+", "test/e2e/test_bench_models_smoke.py",
              'bench("models", "build"', "whole models against torch on the GPU machine (issue 44 item 5); "
              "test_bench_models_smoke builds and runs small ones on local devices (--smoke)"),
    Elsewhere(r"python -m bench generate (build|run) \S+", "test/e2e/test_bench_generate_smoke.py",
              'bench("generate", "build"', "generation of the TinyLlama-sized model under GPU budgets against "
              "torch and accelerate on the GPU machine (issue 46 item 4); test_bench_generate_smoke builds and runs "
              "the tiny config's kit on a staged CPU pair (--smoke)"),
    Elsewhere(r"python -m bench compile-time", "test/e2e/test_doc_commands.py", "def test_bench_compile_time",
              "a timing of minutes of compiles; test_bench_compile_time below runs it at one layer, once"),
)


@dataclass(frozen=True)
class DocCommand:
    doc: Path
    line: int  # of the command's first line in the doc
    text: str

    def __str__(self) -> str:
        return f"{self.doc.relative_to(REPO)}:{self.line}: {self.text}"


def shell_blocks(text: str):
    """(first line number, lines) of each fenced shell block of a Markdown text."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = re.fullmatch(r"\s*```(\w*)\s*", lines[i])
        if not m:
            i += 1
            continue
        start, i = i + 1, i + 1
        while i < len(lines) and not re.fullmatch(r"\s*```\s*", lines[i]):
            i += 1
        if m.group(1) in SHELL_FENCES:
            yield start + 1, [line.strip() for line in lines[start:i]]
        i += 1


def commands_of(doc: Path) -> list[DocCommand]:
    """The command lines of a doc's shell blocks: `# comments` dropped,
    lines ending in a backslash joined with the next."""
    found = []
    for first, lines in shell_blocks(doc.read_text()):
        pending, pending_line = "", None
        for k, line in enumerate(lines):
            line = re.sub(r"(^|\s)#.*$", "", line).strip()
            if not line and not pending:
                continue
            if pending_line is None:
                pending_line = first + k
            if line.endswith("\\"):
                pending += line[:-1].strip() + " "
                continue
            found.append(DocCommand(doc, pending_line, (pending + line).strip()))
            pending, pending_line = "", None
    return found


def all_commands() -> list[DocCommand]:
    return [c for doc in DOCS for c in commands_of(doc)]


def _says_lavapipe_runs_it(doc: Path) -> bool:
    return LAVAPIPE_NOTE in " ".join(doc.read_text().split())


def elsewhere(command: DocCommand):
    return next((e for e in ELSEWHERE if re.fullmatch(e.pattern, command.text)), None)


def how_it_runs_here(command: DocCommand):
    """("cpu", argv) or ("lavapipe", argv) for a command run here; "example"
    for the example script; None when it is not run here."""
    text = command.text
    if text == "bash scripts/example.sh":
        return "example", None
    if re.fullmatch(r"(mdc-compile|mdc-run|mdc-opt|mdc-profile) --(help|version|list-passes)", text):
        return "cpu", shlex.split(text)
    if not re.match(r"(mdc-compile|mdc-run|mdc-opt|mdc-profile) ", text) or re.search(r"\bhip\b", text):
        return None
    if re.search(r"\bcuda\b", text):
        if not _says_lavapipe_runs_it(command.doc):
            return None
        text = text.replace("=cuda[0]", "=vulkan[0]").replace("--device=cuda ", "--device=vulkan ")
        if re.search(r"\bcuda\b", text):
            return None
        return "lavapipe", shlex.split(text)
    if re.search(r"\bvulkan\b", text):
        return "lavapipe", shlex.split(text)
    return "cpu", shlex.split(text)


def test_the_docs_show_commands():
    """The extraction finds the README's own commands (a broken parser would
    make every other test here pass on nothing)."""
    readme = [c.text for c in commands_of(REPO / "README.md")]
    assert readme[:2] == ["bash scripts/example.sh", "bash scripts/test.sh"], readme
    assert any(t.startswith("mdc-compile examples/multi_device_mul.mlir ") for t in readme), readme


def test_the_readme_has_exactly_the_two_set_up_commands():
    """CI's rule: the README's set-up block is the two commands that work on a fresh machine."""
    first_block = next(shell_blocks((REPO / "README.md").read_text()))[1]
    assert [re.sub(r"\s+#.*$", "", line) for line in first_block if line] == [
        "bash scripts/example.sh", "bash scripts/test.sh"]


def test_the_readme_says_where_the_installed_tools_are():
    """A new user runs the README's commands, then types `mdc-compile`: the
    README says where the set-up put it, and every tool pyproject.toml
    installs is there (next to the Python running this test, the venv's)."""
    import tomllib

    readme = (REPO / "README.md").read_text()
    assert "source .venv/bin/activate" in readme and ".venv/bin/mdc-compile" in readme
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    bin_dir = Path(sys.executable).parent
    missing = [name for name in scripts if not (bin_dir / name).exists()]
    assert not missing, f"{missing} not in {bin_dir}"
    assert all(f"`{name}`" in readme for name in scripts), "the README names each installed tool"


def test_every_compile_to_stage_is_documented():
    """Each --compile-to stage mdc-compile accepts is in its doc's list."""
    from mdc.pipeline.options import STAGE_NAMES

    doc = (REPO / "docs" / "mdc-compile.md").read_text()
    listed = re.search(r"`--compile-to=([a-z|-]+)`", doc)
    assert listed and listed.group(1).split("|") == STAGE_NAMES, (listed and listed.group(1), STAGE_NAMES)


def test_every_doc_command_is_run_or_listed():
    unaccounted = [str(c) for c in all_commands() if elsewhere(c) is None and how_it_runs_here(c) is None]
    assert not unaccounted, (
        "doc commands no test runs (run them in test_doc_commands.py, or add a row to ELSEWHERE naming "
        "the test or script that does):\n" + "\n".join(unaccounted))


def test_every_elsewhere_row_is_used_and_its_runner_runs_it():
    commands = all_commands()
    for row in ELSEWHERE:
        assert any(re.fullmatch(row.pattern, c.text) for c in commands), f"no doc command matches {row.pattern!r}"
        runner = REPO / row.runner
        assert runner.is_file(), f"{row.runner} (for {row.pattern!r}) does not exist"
        assert row.needle in runner.read_text(), f"{row.runner} does not contain {row.needle!r}"


def _env() -> dict:
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


def _run_here(kind: str, doc: Path, tmp_path: Path) -> list[str]:
    """Runs the doc's commands of ``kind`` in order in a scratch folder whose
    examples/ is the checkout's; their outputs, one string a command."""
    (tmp_path / "examples").symlink_to(REPO / "examples")
    outputs = []
    for command in commands_of(doc):
        if elsewhere(command) is not None:
            continue
        how = how_it_runs_here(command)
        if how is None or how[0] != kind:
            continue
        r = subprocess.run(how[1], cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, f"{command} (run as {shlex.join(how[1])}):\n{r.stdout[-2000:]}{r.stderr[-2000:]}"
        outputs.append(r.stdout)
    return outputs


def _docs_with(kind: str) -> list[Path]:
    return [d for d in DOCS if any(elsewhere(c) is None and (how_it_runs_here(c) or ("",))[0] == kind
                                   for c in commands_of(d))]


@pytest.mark.parametrize("doc", _docs_with("cpu"), ids=lambda d: str(d.relative_to(REPO)))
def test_doc_commands_run_on_the_cpu(doc, tmp_path):
    outputs = _run_here("cpu", doc, tmp_path)
    if doc.name == "README.md":
        assert any(EXAMPLE_RESULT in out for out in outputs), outputs


@pytest.mark.vulkan
@pytest.mark.parametrize("doc", _docs_with("lavapipe"), ids=lambda d: str(d.relative_to(REPO)))
def test_doc_commands_run_on_lavapipe(doc, tmp_path):
    _run_here("lavapipe", doc, tmp_path)


def test_example_script(tmp_path):
    """`bash scripts/example.sh`, as the README shows it. The script installs
    into the checkout's .venv, so it runs here only from that venv (as
    scripts/test.sh, and so CI, runs pytest): elsewhere it would install anew."""
    if Path(sys.prefix).resolve() != (REPO / ".venv").resolve():
        pytest.skip(f"runs only from the checkout's .venv (scripts/test.sh's); this is {sys.prefix}")
    r = subprocess.run(["bash", "scripts/example.sh"], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert EXAMPLE_RESULT in r.stdout, r.stdout


def test_bench_compile_time():
    """docs/PERFORMANCE.md's `python -m bench compile-time`, at one layer and
    one repeat: it compiles with iree-compile and mdc-compile and prints the
    ratio of each."""
    r = subprocess.run([sys.executable, "-m", "bench", "compile-time", "--layers", "1", "--repeat", "1"],
                       cwd=REPO, env=_env(), capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "compile time" in r.stdout and "mdc-compile --link=a:b=staged" in r.stdout, r.stdout


def _anchor(heading: str) -> str:
    """GitHub's anchor for a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_links_between_docs_resolve():
    """A relative link of README.md or docs/*.md names a file that exists and,
    with #anchor, a heading of that file (the references moved between them)."""
    broken = []
    for doc in DOCS:
        for m in re.finditer(r"\]\(([^)\s]+)\)", doc.read_text()):
            target = m.group(1)
            if re.match(r"\w+:", target):
                continue
            path, _, anchor = target.partition("#")
            file = (doc.parent / path).resolve() if path else doc
            if not file.exists():
                broken.append(f"{doc.relative_to(REPO)}: {target} (no such file)")
            elif anchor and file.suffix == ".md" and anchor not in {
                    _anchor(h) for h in re.findall(r"^#+\s+(.*)$", file.read_text(), re.M)}:
                broken.append(f"{doc.relative_to(REPO)}: {target} (no such heading)")
    assert not broken, "\n".join(broken)
