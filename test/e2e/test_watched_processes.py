"""harness.processes.run_watched, which the e2e run_tool fixture and
close_stress.py run children with: a child that hangs (past its time, or
silent past its quiet bound) ends within the bound plus a few seconds, with
every thread's Python stack in its stderr; a slow child that keeps talking
is left alone."""

import sys
import time

from harness.processes import HUNG, run_watched

HANGS = """import threading, time
print('started', flush=True)
threading.Thread(target=lambda: time.sleep(1000), name='helper', daemon=True).start()
def stuck_in_close():
    time.sleep(1000)
stuck_in_close()
"""


def test_a_silent_child_ends_within_its_quiet_bound_with_its_stacks():
    began = time.monotonic()
    r = run_watched([sys.executable, "-c", HANGS], timeout=120, quiet=2)
    took = time.monotonic() - began
    assert r.returncode == HUNG, r
    assert took < 2 + 15, took
    assert r.stdout == "started\n"
    assert "stuck_in_close" in r.stderr and "most recent call first" in r.stderr, r.stderr
    assert r.stderr.rstrip().splitlines()[-1].startswith("HUNG: no output for 2 s"), r.stderr


def test_a_child_past_its_time_ends_with_its_stacks():
    r = run_watched([sys.executable, "-c", HANGS], timeout=2, quiet=None)
    assert r.returncode == HUNG and "stuck_in_close" in r.stderr, r
    assert "HUNG: still running after 2 s" in r.stderr, r.stderr


def test_a_slow_child_that_keeps_talking_is_left_alone():
    talk = "import time\nfor i in range(8):\n    print(i, flush=True); time.sleep(0.5)\n"
    r = run_watched([sys.executable, "-c", talk], timeout=60, quiet=2)
    assert r.returncode == 0 and r.stdout.split() == [str(i) for i in range(8)], r


def test_exit_status_and_output_pass_through():
    r = run_watched([sys.executable, "-c", "import sys; print('o'); print('e', file=sys.stderr); sys.exit(3)"],
                    timeout=60, quiet=30)
    assert (r.returncode, r.stdout, r.stderr) == (3, "o\n", "e\n"), r
