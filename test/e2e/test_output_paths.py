"""Output paths that are not plain files (issue 32): every tool writes
through a symbolic link to the file it points at, writes a character
device (/dev/null) or a FIFO directly, refuses a socket, and never
replaces any of them with a regular file; a failed compile removes an
earlier run's output file but leaves such paths alone.

Each writer (mdc-compile -o, --compile-to=hal -o, --report, mdc-run
--output=@ and +) is checked against what it writes to a plain file."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

EXAMPLE = REPO / "examples" / "multi_device_mul.mlir"
DEVICES = ("--device=a=local[0]", "--device=b=local[1]", "--iree-llvmcpu-target-cpu=host")
RUN = ("--device=local-task", "--device=local-sync", "--input=4xf32=1,2,3,4")
KINDS = ("character device", "FIFO", "symlink", "dangling symlink")
EARLIER = b"earlier contents"


def compile_argv(*flags) -> list:
    return [sys.executable, "-m", "mdc.pipeline", EXAMPLE, *DEVICES, *flags]


def run_argv(vmfb, *flags) -> list:
    return [sys.executable, "-m", "mdc.runtime_shim", f"--module={vmfb}", *RUN, *flags]


# What each writer is asked to write: (name, argv for an output path, file
# name ending). The reference run writes each to a plain file.
WRITERS = {
    "mdc-compile -o": (lambda vmfb, p: compile_argv("-o", p), ".vmfb"),
    "mdc-compile --compile-to=hal -o": (lambda vmfb, p: compile_argv("--compile-to=hal", "-o", p), ".mlir"),
    "mdc-compile --report": (lambda vmfb, p: compile_argv("--compile-to=mdc", "-o", "-", "--report", p),
                             ".json"),
    "mdc-run --output=@": (lambda vmfb, p: run_argv(vmfb, f"--output=@{p}"), ".npy"),
    "mdc-run --output=+": (lambda vmfb, p: run_argv(vmfb, f"--output=+{p}"), ".npy"),
}


@pytest.fixture(scope="module")
def vmfb(tmp_path_factory, run_tool):
    path = tmp_path_factory.mktemp("outputs") / "mul.vmfb"
    done = run_tool(compile_argv("-o", path), timeout=300)
    assert done.returncode == 0, done.stderr
    return path


@pytest.fixture(scope="module")
def reference(tmp_path_factory, run_tool, vmfb):
    """{writer: the bytes it writes to a plain file}."""
    root = tmp_path_factory.mktemp("reference")
    out = {}
    for name, (argv, ending) in WRITERS.items():
        path = root / f"{len(out)}{ending}"
        done = run_tool(argv(vmfb, path), timeout=300)
        assert done.returncode == 0, done.stderr
        out[name] = path.read_bytes()
    return out


def char_device(path: Path) -> None:
    """A character device that reads as /dev/null (major 1, minor 3). Not
    root (CI runs as root): /dev/null itself, which only root could replace."""
    if os.geteuid() == 0:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    else:
        path.symlink_to(os.devnull)


def make(kind: str, path: Path) -> Path | None:
    """``path`` made a ``kind``; returns the file a symlink points at."""
    if kind == "character device":
        char_device(path)
    elif kind == "FIFO":
        os.mkfifo(path)
    else:
        target = path.with_name("target" + path.suffix)
        if kind == "symlink":
            target.write_bytes(EARLIER)
        path.symlink_to(target.name)
        return target
    return None


def run_reading_fifo(run_tool, argv, fifo: Path):
    """Runs ``argv`` while `cat` reads ``fifo`` (a writer blocks until a reader
    opens it); (the run, the bytes read). The reader is killed, not waited
    on forever, if nothing ever opens the FIFO for writing."""
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    try:
        done = run_tool(argv, timeout=300)
        data, _ = reader.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        reader.kill()
        pytest.fail(f"nothing wrote to the FIFO {fifo}")
    return done, data


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("writer", WRITERS)
def test_written_through(writer, kind, vmfb, reference, run_tool, tmp_path):
    argv, ending = WRITERS[writer]
    path = tmp_path / f"out{ending}"
    target = make(kind, path)
    kind_before = stat.S_IFMT(os.lstat(path).st_mode)
    if kind == "FIFO":
        done, data = run_reading_fifo(run_tool, argv(vmfb, path), path)
        assert data == reference[writer]
    else:
        done = run_tool(argv(vmfb, path), timeout=300)
    assert done.returncode == 0, done.stderr
    assert stat.S_IFMT(os.lstat(path).st_mode) == kind_before, f"{path} was replaced"
    if target is not None:  # --output=+ appends to what the link's file held
        kept = EARLIER if kind == "symlink" and writer.endswith("+") else b""
        assert target.read_bytes() == kept + reference[writer]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [path.name] + ([target.name] if target else [])), "a temporary file was left"


@pytest.mark.parametrize("writer", ["mdc-compile -o", "mdc-run --output=@"])
def test_socket_refused(writer, vmfb, run_tool, tmp_path):
    argv, ending = WRITERS[writer]
    path = tmp_path / f"s{ending}"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(path))
        done = run_tool(argv(vmfb, path), timeout=300)
    assert done.returncode == 2, done.stderr
    assert "it is a socket, not a regular file" in done.stderr
    assert "Traceback" not in done.stderr
    assert stat.S_ISSOCK(os.lstat(path).st_mode)


# -- a failed compile leaves no output file -------------------------------------

BROKEN = "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %nope : tensor<4xf32>\n}\n"


@pytest.mark.parametrize("flags,ending", [((), ".vmfb"), (("--compile-to=hal",), ".mlir")])
def test_failed_compile_removes_output(flags, ending, run_tool, tmp_path):
    source = tmp_path / "broken.mlir"
    source.write_text(BROKEN)
    out, report = tmp_path / f"out{ending}", tmp_path / "r.json"
    for earlier in (out, report):
        earlier.write_text("an earlier run's output")
    done = run_tool([sys.executable, "-m", "mdc.pipeline", source, "--device=a=local[0]", *flags,
                     "-o", out, "--report", report])
    assert done.returncode == 1, done.stderr
    assert not out.exists() and not report.exists()


def test_failed_compile_through_symlink_and_devices(run_tool, tmp_path):
    """Through a symlink the file it points at goes (the link stays, as
    writing goes through it); a device or FIFO stays what it is."""
    source = tmp_path / "broken.mlir"
    source.write_text(BROKEN)
    for kind, ending in (("symlink", ".vmfb"), ("character device", ".vmfb"), ("FIFO", ".vmfb")):
        path = tmp_path / f"{kind.replace(' ', '_')}{ending}"
        target = make(kind, path)
        kind_before = stat.S_IFMT(os.lstat(path).st_mode)
        done = run_tool([sys.executable, "-m", "mdc.pipeline", source, "--device=a=local[0]", "-o", path])
        assert done.returncode == 1, done.stderr
        assert stat.S_IFMT(os.lstat(path).st_mode) == kind_before, kind
        if target is not None:
            assert not target.exists(), "the earlier output a symlink points at is left"


def test_usage_error_keeps_output(run_tool, tmp_path):
    """A command line that was not understood (status 2) touches nothing, as
    stock iree-compile leaves -o after a bad flag."""
    out = tmp_path / "out.vmfb"
    out.write_text("kept")
    done = run_tool(compile_argv("--link=a-b", "-o", out))
    assert done.returncode == 2, done.stderr
    assert out.read_text() == "kept"


def test_failed_opt_removes_output(run_tool, tmp_path):
    out = tmp_path / "out.mlir"
    out.write_text("an earlier run's output")
    source = tmp_path / "broken.mlir"
    source.write_text(BROKEN)
    opt = "import sys; from mdc.pipeline.cli import opt_main; sys.exit(opt_main())"
    done = run_tool([sys.executable, "-c", opt, source, "--pass=transfer-insertion", "-o", out])
    assert done.returncode == 1, done.stderr
    assert not out.exists()
