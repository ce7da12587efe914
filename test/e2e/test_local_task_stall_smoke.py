"""local_task_stall.py (the runtime-only reproducer of IREE 3.13's
local-task stall) runs here and reports each process; with 2 workers the
H200 host never stalled (runs 23 and 34), nor should this machine."""

import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def test_local_task_stall_script_runs():
    r = subprocess.run([sys.executable, os.path.join(HERE, "local_task_stall.py"), "--processes", "2",
                        "--seconds", "1", "--workers", "2"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.findall(r"^process \d: ok: [1-9]\d* calls$", r.stdout, re.M).__len__() == 2, r.stdout
    assert "two devices: 0 of 2 processes stalled" in r.stdout, r.stdout
