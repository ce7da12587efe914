"""mdc.runtime_shim.host_memory: freed host memory is kept for reuse.

Each case runs in a fresh interpreter (the setting is process-wide): a
64 MiB buffer from the C heap is touched, freed, and allocated and touched
again; the second buffer's first-touch page faults are counted. By default
glibc hands large buffers back to the kernel, so every page faults again;
after retain_freed_memory() none does."""

import ctypes.util
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

PROBE = r"""
import ctypes, ctypes.util, resource, sys
from mdc.runtime_shim.host_memory import retain_freed_memory
if sys.argv[1] == "retain":
    assert retain_freed_memory()
libc = ctypes.CDLL(ctypes.util.find_library("c"))
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
n = 64 << 20
def touched():
    p = libc.malloc(n)
    ctypes.memset(p, 1, n)
    return p
libc.free(touched())
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
p = touched()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""

glibc = pytest.mark.skipif(not sys.platform.startswith("linux") or not ctypes.util.find_library("c"),
                           reason="glibc's mallopt")


def _faults(mode: str) -> int:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    out = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True, check=True, env=env)
    return int(out.stdout.strip())


def _huge_pages_always() -> bool:
    try:
        return "[always]" in open("/sys/kernel/mm/transparent_hugepage/enabled").read()
    except OSError:
        return False


@glibc
@pytest.mark.skipif(_huge_pages_always(), reason="2 MiB pages: a few faults only, whatever glibc does")
def test_default_refaults_a_reallocated_large_buffer():
    pages = (64 << 20) // os.sysconf("SC_PAGE_SIZE")
    assert _faults("default") >= pages // 2


@glibc
def test_retained_memory_is_reused_without_faults():
    assert _faults("retain") < 64
