"""The build-here, run-there kit framework: what every kit script shares.

A kit is a folder built here, with the compiler (modules, inputs, expected
outputs and a manifest JSON that says how it was made), carried to a GPU
machine and run there with the IREE runtime wheel and numpy (and torch
where it is). python -m bench's kits and test/e2e's GPU scripts (with
test/harness's gpu_kit, gpu_random, gpu_matmul, gpu_profile) take from
here: the command line (kit_main: ``build KIT``, ``run KIT``, children,
``--allow-no-gpu``), devices (cuda_available, device_missing, no_device),
the manifest (write_manifest, read_manifest, KitError), child processes
(run_timed, compile_jobs, watchdog), checks (close, compare, failed) and
tables (markdown, fixed, verdict). bench imports nothing of test/; test/
imports this. Only the standard library at import.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Sequence

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NO_GPU_STATUS = 2  # a run's exit status with no GPU to run on: nothing was checked or measured


# -- the command line -------------------------------------------------------------


def option(*names: str, **kw) -> tuple:
    """One option of a Step, as ``ArgumentParser.add_argument`` takes it."""
    return names, kw


@dataclasses.dataclass(frozen=True)
class Step:
    """One command of a kit script, ``build KIT`` or ``run KIT``: ``does``
    takes the parsed arguments (``.kit``, or the script's name for it, and
    its options) and returns the exit status."""

    does: Callable[[argparse.Namespace], int]
    options: Sequence[tuple] = ()
    help: str | None = None


def allow_no_gpu_option(help: str | None = None) -> tuple:
    """``--allow-no-gpu``: with no GPU, say so and exit 0 (a skip)."""
    return option("--allow-no-gpu", action="store_true",
                  help=help or f"with no cuda device, say so and exit 0 (default: exit status {NO_GPU_STATUS})")


def kit_main(description: str, build: Step, run: Step, argv: list[str] | None = None, *,
             children: dict[str, Callable[[list[str]], int]] | None = None, name: str | None = None,
             prog: str | None = None, dest: str = "kit", raw: bool | None = None) -> int:
    """A kit script's main: ``argv`` (default: the command line) naming one
    of ``children`` runs that child process's entry on the rest; else
    ``build DEST`` or ``run DEST``. A description of more than one line is
    shown as written (``raw``: say which). A KitError is said as ``NAME:
    error: ...`` (NAME: the script's file name) with exit status 1."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] in (children or {}):
        return children[argv[0]](argv[1:])
    raw = "\n" in description if raw is None else raw
    p = argparse.ArgumentParser(prog=prog, description=description,
                                formatter_class=argparse.RawDescriptionHelpFormatter if raw else argparse.HelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    for command, step in (("build", build), ("run", run)):
        sp = sub.add_parser(command, **({"help": step.help} if step.help else {}))
        sp.add_argument(dest)
        for names, kw in step.options:
            sp.add_argument(*names, **kw)
        sp.set_defaults(step=step)
    args = p.parse_args(argv)
    return kit_errors_said(name or os.path.splitext(os.path.basename(sys.argv[0]))[0], lambda: args.step.does(args))


def kit_errors_said(name: str, call: Callable[[], int]) -> int:
    """``call()``'s exit status; a KitError it raises is said as ``NAME:
    error: ...`` with exit status 1 (a user's mistake, not a traceback)."""
    try:
        return call()
    except KitError as e:
        print(f"{name}: error: {e}", file=sys.stderr)
        return 1


# -- devices ----------------------------------------------------------------------


def cuda_available() -> bool:
    """A cuda device is here (asked of the driver, no device created)."""
    try:
        import iree.runtime as rt

        return "cuda" in rt.query_available_drivers() and bool(rt.get_driver("cuda").query_available_devices())
    except Exception:
        return False


def _why(e: BaseException, width: int | None = 120) -> str:
    return str(e).splitlines()[0][:width] if str(e).strip() else type(e).__name__


_PROBE = ("import iree.runtime as rt, sys\n"
          "try:\n    rt.get_driver(sys.argv[1]).create_default_device()\n"
          "except Exception as e:\n    print(' '.join(str(e).split())[:300] or type(e).__name__); sys.exit(3)\n")


def device_missing(driver: str, *, child_timeout: float | None = None, width: int | None = 120) -> str:
    """'' when a device of ``driver`` can be created, else why not (its
    first line, at most ``width`` characters). ``child_timeout``: ask in a
    child process, so that a driver that hangs cannot hang this one."""
    if child_timeout is None:
        try:
            import iree.runtime as rt

            rt.get_driver(driver).create_default_device()
            return ""
        except Exception as e:  # no such driver, or no device of it
            return _why(e, width)
    ran = run_timed([sys.executable, "-c", _PROBE, driver], child_timeout, env=checkout_env())
    if ran.status == "TIMEOUT":
        return f"creating a device took over {child_timeout:g} s"
    return "" if ran.ok else (ran.stdout.strip() or ran.stderr.strip()[-300:])[:width]


def no_device(script: str, device: str = "cuda", *, why: str = "", allow: bool | None = None,
              nothing: str = "checked") -> int:
    """Says there is no ``device`` here; -> the run's exit status: 0 where
    ``allow`` (--allow-no-gpu: a skip), else NO_GPU_STATUS. ``allow`` None:
    the script has no --allow-no-gpu, and the error names none."""
    here = f"no {device} device here" + (f" ({why})" if why else "")
    if allow:
        print(f"{script}: {here}; skipping (--allow-no-gpu)")
        return 0
    way_out = "" if allow is None else " (--allow-no-gpu makes this a skip with exit status 0)"
    print(f"{script}: error: {here}; nothing was {nothing}{way_out}", file=sys.stderr)
    return NO_GPU_STATUS


# -- the manifest -----------------------------------------------------------------


class KitError(Exception):
    """A kit that is missing, incomplete, or not for this run."""


def write_manifest(kit: str, name: str, data) -> str:
    """``data`` as the kit's JSON file ``name``; -> its path."""
    path = os.path.join(kit, name)
    with open(path, "w") as f:
        json.dump(data, f, indent=1)
    return path


def read_manifest(kit: str, name: str, *, build: str = "", kind: str = "", fmt: str | None = None):
    """The kit's JSON file ``name``; KitError saying what is wrong with it
    (``build``: the command that builds the kit; ``fmt``: the ``format``
    its kind of kit (``kind``) says it is)."""
    path = os.path.join(kit, name)
    try:
        with open(path) as f:
            data = json.load(f)
    except OSError as e:
        raise KitError(f"{path}: {e.strerror}" + (f"; build the kit with {build}" if build else "")) from None
    except ValueError as e:
        raise KitError(f"{path} is not JSON ({e})") from None
    if fmt is not None and (not isinstance(data, dict) or data.get("format") != fmt):
        raise KitError(f"{path} is not a {kind} kit of format {fmt}; build it again")
    return data


def incomplete(kit: str, name: str, e: Exception) -> KitError:
    """The KitError of a manifest that lacks what a run reads (``e``)."""
    return KitError(f"{os.path.join(kit, name)} is incomplete ({type(e).__name__}: {e}); build the kit again")


def require_files(kit: str, names) -> None:
    """KitError unless the kit holds every file of ``names``."""
    missing = sorted({n for n in names if not os.path.isfile(os.path.join(kit, n))})
    if missing:
        raise KitError(f"the kit in {kit} lacks {', '.join(missing)}; build it again")


def save_values(kit: str, stem: str, values) -> list:
    """Each array of ``values`` saved as KIT/STEM{k}.npy (-> its file name),
    each number kept as it is (-> itself): a manifest's inputs."""
    import numpy as np

    names = []
    for k, value in enumerate(values):
        if isinstance(value, np.ndarray):
            np.save(os.path.join(kit, f"{stem}{k}.npy"), value)
            value = f"{stem}{k}.npy"
        names.append(value)
    return names


def load_values(kit: str, names) -> list:
    """save_values' values again: each file name loaded, each number as it is."""
    import numpy as np

    return [np.load(os.path.join(kit, n)) if isinstance(n, str) else n for n in names]


def parameter_archive(path: str, scope: str, named) -> str:
    """The (name, array) pairs of ``named`` as a parameter archive at
    ``path``; -> ``scope=path``, as load(parameters=...) and mdc-run take it."""
    import iree.runtime as rt
    import numpy as np

    index = rt.ParameterIndex()
    for name, array in named:
        index.add_buffer(name, np.ascontiguousarray(array))
    index.create_archive_file(path)
    return f"{scope}={path}"


def json_lines(path: str):
    """The JSON objects of the file at ``path``, one a line; a line cut off
    mid-write (a run stopped by its deadline) or no file gives nothing."""
    if not os.path.exists(path):
        return
    with open(path) as f:
        for line in f:
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                continue


def kit_mib(kit: str) -> float:
    """The kit's size in MiB (its files, not its folders)."""
    return sum(os.path.getsize(os.path.join(kit, n)) for n in os.listdir(kit)
               if os.path.isfile(os.path.join(kit, n))) / 2**20


# -- child processes --------------------------------------------------------------


def checkout_env(**more: str) -> dict:
    """os.environ with this checkout first on PYTHONPATH: a child finds this
    checkout's mdc (and bench, and test/'s harness through its script),
    installed or not."""
    return dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])), **more)


@dataclasses.dataclass(frozen=True)
class Ran:
    """A child process's run: ``status`` "ok", "rc=N", "TIMEOUT" or
    "NO-TOOL" (its program was not found)."""

    status: str
    seconds: float
    stdout: str = ""
    stderr: str = ""
    returncode: int | None = None  # None: it timed out or never started

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def last_line(self, width: int | None = 200) -> str:
        """The last line of its stderr (its stdout where stderr is empty)."""
        lines = (self.stderr or self.stdout).strip().splitlines()
        return lines[-1][:width] if lines else ""

    def first_error(self, width: int = 200) -> str:
        """The first line of its stderr that says error, else the first line."""
        lines = [line for line in self.stderr.strip().splitlines() if line.strip()]
        return next((line for line in lines if "error" in line), lines[0] if lines else "no output")[:width]


def run_timed(cmd, timeout: float | None = None, *, cwd: str | None = None, env: dict | None = None,
              outputs: Sequence[str] = ()) -> Ran:
    """``cmd`` (text output captured) under ``timeout`` seconds, timed;
    ``outputs``: the files it writes, removed first, so that a stale one
    is never taken for its result."""
    for path in outputs:
        if os.path.exists(path):
            os.unlink(path)
    cmd = [str(c) for c in cmd]
    began = time.perf_counter()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env)
    except subprocess.TimeoutExpired:
        return Ran("TIMEOUT", time.perf_counter() - began)
    except FileNotFoundError:
        return Ran("NO-TOOL", 0.0, stderr=f"{cmd[0]} not found: put the runtime's bin/ on PATH")
    return Ran("ok" if r.returncode == 0 else f"rc={r.returncode}", time.perf_counter() - began, r.stdout,
               r.stderr, r.returncode)


def compile_jobs(out: str, jobs: dict[str, list[str]], workers: int = 1, *, warnings: bool = False) -> int:
    """Runs each job (a compiler's command line) with ``-o OUT/NAME``,
    ``workers`` at a time; 1 (having said which and why) if one fails.
    ``warnings``: say what a job that succeeded printed on stderr."""
    def one(item):
        name, cmd = item
        return name, cmd, subprocess.run([*cmd, "-o", os.path.join(out, name)], capture_output=True, text=True)

    with ThreadPoolExecutor(max(workers, 1)) as pool:
        for name, cmd, r in pool.map(one, jobs.items()):
            if r.returncode:
                print(f"{name}: {' '.join(cmd)}\n{r.stderr}")
                return 1
            if warnings and r.stderr.strip():
                print(f"{name}: {' '.join(cmd)} said:\n{r.stderr.rstrip()}")
    return 0


@contextlib.contextmanager
def watchdog(seconds: float):
    """A call that takes over ``seconds`` ends the process (exit status 1),
    every thread's Python stack on stderr (faulthandler)."""
    import faulthandler

    faulthandler.dump_traceback_later(seconds, exit=True)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


def host_rss_kib() -> int:
    """This process's resident memory (VmRSS), KiB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS in /proc/self/status")


def gpu_memory_used() -> str | None:
    """Memory in use on each GPU, as nvidia-smi says it ("1234 MiB, ..."),
    or None without nvidia-smi."""
    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = [line.strip() for line in r.stdout.splitlines() if line.strip()]
    return ", ".join(lines) if r.returncode == 0 and lines else None


# -- checks -----------------------------------------------------------------------


def as_list(results) -> list:
    """A call's results as a list: a tuple or list as it is, one value alone."""
    return list(results) if isinstance(results, (list, tuple)) else [results]


def close(got, want, rtol: float, atol: float, *, dtype: bool = True) -> tuple[bool, float]:
    """(``got`` within ``rtol`` and ``atol`` of ``want`` (numpy.allclose),
    the largest absolute difference); (False, nan) where their shapes (or,
    with ``dtype``, their element types) differ."""
    import numpy as np

    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or (dtype and got.dtype != want.dtype):
        return False, float("nan")
    err = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))) if want.size else 0.0
    return bool(np.allclose(got, want, rtol=rtol, atol=atol)), err


def compare(got, want, rel_tol: float | None = None) -> tuple[bool, float]:
    """Integers and booleans must be equal; floats within a relative
    Frobenius error of ``rel_tol``, by default 1e-4 (f32: summation order
    differs across devices) or 1e-2 (f16). Returns (ok, error)."""
    import numpy as np

    if got.shape != want.shape or got.dtype != want.dtype:
        return False, float("inf")
    if want.dtype.kind != "f":
        return bool(np.array_equal(got, want)), float(np.count_nonzero(got != want))
    g, w = got.astype(np.float64), want.astype(np.float64)
    if not np.all(np.isfinite(g)):
        return False, float("inf")
    err = float(np.linalg.norm(g - w) / max(np.linalg.norm(w), 1e-30))
    if rel_tol is None:
        rel_tol = 1e-2 if want.dtype.itemsize <= 2 else 1e-4
    return err <= rel_tol, err


def failed(e: BaseException, width: int = 80) -> str:
    """The check cell of a module or call that raised ``e``: a failure is a
    row of the table, not the end of the run."""
    return f"FAILED {type(e).__name__}: {(str(e).splitlines() or [''])[0][:width]}"


# -- tables -----------------------------------------------------------------------


def markdown(heads: Sequence[str], aligns: str, rows) -> str:
    """A Markdown table: ``aligns`` one letter a column (l, r), each row its
    cells or a line already made."""
    def line(cells) -> str:
        return cells if isinstance(cells, str) else "| " + " | ".join(str(c) for c in cells) + " |"

    rule = "|" + "".join("---:|" if a == "r" else "---|" for a in aligns)
    return "\n".join([line(heads), rule, *(line(r) for r in rows)])


def fixed(cells: Sequence, specs: Sequence[str], sep: str = " ") -> str:
    """One line of a fixed-width table: each cell formatted by its spec
    (``"22"``, ``">5"``, ``"<31"``; ``""`` for the last, unpadded)."""
    return sep.join(f"{c:{s}}" for c, s in zip(cells, specs))


def verdict(right: bool) -> int:
    """The run's last line and exit status: 0 when every result is right, else 1."""
    print("\nevery result right" if right else "\nWRONG results above")
    return 0 if right else 1
