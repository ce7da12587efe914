"""bench/kitframe.py, the kit framework every build-here, run-there script
shares: its command line, no-device verdicts, manifests, child processes,
checks and tables, each piece alone (the scripts' smoke tests run them
together)."""

from __future__ import annotations

import json
import os
import sys

import numpy as np
import pytest

from bench import kitframe as kf


# -- the command line -------------------------------------------------------------


def _script(ran: list):
    build = kf.Step(lambda a: ran.append(("build", a.kit, a.cpu)) or 0, [kf.option("--cpu", default="generic")])
    run = kf.Step(lambda a: ran.append(("run", a.kit, a.allow_no_gpu)) or 3, [kf.allow_no_gpu_option()])
    return build, run


def test_kit_main_runs_the_step_asked_for_with_its_options():
    ran = []
    build, run = _script(ran)
    assert kf.kit_main("doc", build, run, ["build", "K", "--cpu", "znver4"]) == 0
    assert kf.kit_main("doc", build, run, ["run", "K2", "--allow-no-gpu"]) == 3
    assert ran == [("build", "K", "znver4"), ("run", "K2", True)]


def test_kit_main_refuses_an_option_of_the_other_step(capsys):
    build, run = _script([])
    with pytest.raises(SystemExit) as e:
        kf.kit_main("doc", build, run, ["run", "K", "--cpu", "x"])
    assert e.value.code == 2 and "--cpu" in capsys.readouterr().err


def test_kit_main_names_its_positional_as_the_script_does():
    got = []
    step = kf.Step(lambda a: got.append(a.dir) or 0)
    assert kf.kit_main("doc", step, step, ["run", "D"], dest="dir") == 0 and got == ["D"]


def test_a_child_entry_gets_the_rest_of_the_command_line():
    got = []
    build, run = _script([])
    status = kf.kit_main("doc", build, run, ["_call", "a", "7"], children={"_call": lambda v: got.append(v) or 5})
    assert status == 5 and got == [["a", "7"]]


def test_a_kit_error_is_one_line_and_status_1(capsys):
    def missing(a):
        raise kf.KitError(f"{a.kit}/cases.json: No such file or directory")

    status = kf.kit_main("doc", kf.Step(missing), kf.Step(missing), ["run", "K"], name="gpu_x")
    assert status == 1
    assert capsys.readouterr().err == "gpu_x: error: K/cases.json: No such file or directory\n"


# -- devices ----------------------------------------------------------------------


def test_no_device_is_status_2_and_names_the_way_out_only_where_there_is_one(capsys):
    assert kf.no_device("gpu_x", allow=False) == kf.NO_GPU_STATUS == 2
    assert kf.no_device("gpu_y", "vulkan", why="no driver", nothing="run") == 2
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err.splitlines() == [
        "gpu_x: error: no cuda device here; nothing was checked (--allow-no-gpu makes this a skip with exit status 0)",
        "gpu_y: error: no vulkan device here (no driver); nothing was run"]


def test_no_device_allowed_is_a_skip(capsys):
    assert kf.no_device("bench", why="x", allow=True, nothing="measured") == 0
    out = capsys.readouterr()
    assert out.out == "bench: no cuda device here (x); skipping (--allow-no-gpu)\n" and out.err == ""


def test_device_missing_says_why_here_and_in_a_child():
    assert kf.device_missing("local-task") == ""
    assert kf.device_missing("no-such-driver")
    assert kf.device_missing("local-sync", child_timeout=120) == ""
    assert kf.device_missing("no-such-driver", child_timeout=120)


# -- the manifest -----------------------------------------------------------------


def test_a_manifest_written_reads_back(tmp_path):
    data = {"format": "f/1", "cases": [{"name": "a", "inputs": ["a.in0.npy"]}]}
    path = kf.write_manifest(str(tmp_path), "cases.json", data)
    assert path == os.path.join(tmp_path, "cases.json") and json.loads((tmp_path / "cases.json").read_text()) == data
    assert kf.read_manifest(str(tmp_path), "cases.json", kind="test", fmt="f/1") == data


def test_read_manifest_says_what_is_wrong(tmp_path):
    kit = str(tmp_path)
    with pytest.raises(kf.KitError, match=r"^\S+/k\.json: No such file or directory; build the kit with make K$"):
        kf.read_manifest(kit, "k.json", build="make K")
    (tmp_path / "k.json").write_text("{not json")
    with pytest.raises(kf.KitError, match=r"k\.json is not JSON \("):
        kf.read_manifest(kit, "k.json")
    (tmp_path / "k.json").write_text('{"format": "old/0"}')
    with pytest.raises(kf.KitError, match=r"k\.json is not a workload kit of format new/1; build it again$"):
        kf.read_manifest(kit, "k.json", kind="workload", fmt="new/1")
    assert kf.read_manifest(kit, "k.json") == {"format": "old/0"}  # no format asked: any JSON
    assert str(kf.incomplete(kit, "k.json", KeyError("modules"))).endswith(
        "k.json is incomplete (KeyError: 'modules'); build the kit again")


def test_require_files_names_each_missing_file_once(tmp_path):
    (tmp_path / "a.vmfb").write_bytes(b"x" * 3)
    kf.require_files(str(tmp_path), ["a.vmfb"])
    with pytest.raises(kf.KitError, match=r"lacks b\.vmfb, c\.npy; build it again$"):
        kf.require_files(str(tmp_path), ["c.npy", "a.vmfb", "b.vmfb", "c.npy"])


def test_values_saved_come_back_and_numbers_stay_numbers(tmp_path):
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    names = kf.save_values(str(tmp_path), "c0.in", [x, 7, np.float16([1.5])])
    assert names == ["c0.in0.npy", 7, "c0.in2.npy"] and json.loads(json.dumps(names)) == names
    back = kf.load_values(str(tmp_path), names)
    assert back[0].dtype == x.dtype and np.array_equal(back[0], x) and back[1] == 7 and back[2].dtype == np.float16


def test_a_parameter_archive_holds_each_array_under_its_name(tmp_path):
    import iree.runtime as rt

    w = np.arange(12, dtype=np.float32).reshape(3, 4)
    spec = kf.parameter_archive(str(tmp_path / "p.irpa"), "model", [("w", w.T), ("b", np.ones(2, np.float32))])
    assert spec == f"model={tmp_path / 'p.irpa'}"
    index = rt.ParameterIndex()
    index.load(str(tmp_path / "p.irpa"))
    got = {name: np.frombuffer(entry.file_view, np.float32) for name, entry in index.items()}
    assert np.array_equal(got["w"], w.T.ravel()) and np.array_equal(got["b"], [1, 1])  # w.T made contiguous


def test_kit_mib_counts_the_files(tmp_path):
    (tmp_path / "a").write_bytes(b"x" * (1 << 20))
    (tmp_path / "b").write_bytes(b"x" * (1 << 19))
    (tmp_path / "sub").mkdir()
    assert kf.kit_mib(str(tmp_path)) == 1.5


# -- child processes --------------------------------------------------------------


def test_run_timed_says_how_a_child_ended(tmp_path):
    ok = kf.run_timed([sys.executable, "-c", "print('fine')"], 60)
    assert (ok.status, ok.ok, ok.returncode, ok.stdout) == ("ok", True, 0, "fine\n") and ok.seconds > 0
    bad = kf.run_timed([sys.executable, "-c", "import sys; print('note\\nerror: it broke\\nlast', file=sys.stderr); "
                        "sys.exit(3)"], 60)
    assert (bad.status, bad.ok, bad.returncode) == ("rc=3", False, 3)
    assert bad.first_error() == "error: it broke" and bad.last_line() == "last" and bad.last_line(2) == "la"
    slow = kf.run_timed([sys.executable, "-c", "import time; time.sleep(60)"], 0.5)
    assert (slow.status, slow.returncode) == ("TIMEOUT", None)
    missing = kf.run_timed([str(tmp_path / "no-such-tool")], 60)
    assert missing.status == "NO-TOOL" and "not found" in missing.stderr


def test_run_timed_removes_the_stale_outputs_first(tmp_path):
    out = tmp_path / "out.npy"
    out.write_text("stale")
    ran = kf.run_timed([sys.executable, "-c", "pass"], 60, outputs=[str(out)])
    assert ran.ok and not out.exists()


def test_run_timed_runs_where_it_is_told_with_the_checkout_first(tmp_path):
    env = kf.checkout_env(MDC_TEST_MARK="1")
    assert env["PYTHONPATH"].split(os.pathsep)[0] == kf.ROOT and env["MDC_TEST_MARK"] == "1"
    ran = kf.run_timed([sys.executable, "-c", "import os, bench.kitframe as k; print(os.getcwd(), k.ROOT)"], 60,
                       cwd=str(tmp_path), env=env)
    assert ran.stdout.split() == [str(tmp_path), kf.ROOT], ran.stderr


def test_compile_jobs_writes_each_output_and_stops_at_a_failure(tmp_path, capsys):
    write = [sys.executable, "-c", "import sys; open(sys.argv[-1], 'w').write('m')"]
    assert kf.compile_jobs(str(tmp_path), {"a.vmfb": write, "b.vmfb": write}, workers=2) == 0
    assert (tmp_path / "a.vmfb").read_text() == (tmp_path / "b.vmfb").read_text() == "m"
    fail = [sys.executable, "-c", "import sys; sys.exit('broken on purpose')"]
    assert kf.compile_jobs(str(tmp_path), {"c.vmfb": fail}) == 1
    out = capsys.readouterr().out
    assert out.startswith("c.vmfb: ") and "broken on purpose" in out


def test_watchdog_lets_a_quick_call_through():
    with kf.watchdog(60):
        value = 6 * 7
    assert value == 42


def test_a_call_past_the_watchdog_ends_the_process_with_its_stack():
    ran = kf.run_timed([sys.executable, "-c", "import time, bench.kitframe as k\n"
                        "with k.watchdog(0.2):\n    time.sleep(60)\n"], 60, env=kf.checkout_env())
    assert ran.returncode == 1 and ran.stderr.startswith("Timeout") and 'File "<string>", line 3' in ran.stderr


def test_host_rss_is_this_process_memory():
    assert kf.host_rss_kib() > 1024


# -- checks -----------------------------------------------------------------------


def test_as_list():
    a = np.zeros(2)
    assert kf.as_list((a, a))[1] is a and kf.as_list([a]) == [a] and kf.as_list(a)[0] is a


def test_close_takes_rtol_and_atol_and_gives_the_largest_error():
    want = np.array([1.0, 2.0, 100.0], np.float32)
    ok, err = kf.close(want + np.float32(0.5), want, rtol=0.0, atol=0.6)
    assert ok and err == 0.5
    assert kf.close(want * np.float32(1.01), want, rtol=1e-3, atol=0.0)[0] is False
    assert kf.close(want, want, rtol=0, atol=0) == (True, 0.0)
    assert kf.close(np.zeros((0,), np.float32), np.zeros((0,), np.float32), 0, 0) == (True, 0.0)


def test_close_refuses_another_shape_or_type():
    want = np.ones(4, np.float32)
    ok, err = kf.close(np.ones((2, 2), np.float32), want, 1, 1)
    assert not ok and err != err
    assert kf.close(np.ones(4, np.float64), want, 1, 1)[0] is False
    assert kf.close(np.ones(4, np.float64), want, 1e-6, 0, dtype=False) == (True, 0.0)


def test_compare_is_exact_for_integers_and_relative_for_floats():
    ints = np.array([1, 2, 3], np.int32)
    assert kf.compare(ints, ints.copy()) == (True, 0.0)
    assert kf.compare(ints + np.array([0, 1, 1], np.int32), ints) == (False, 2.0)
    want = np.ones(100, np.float32)
    assert kf.compare(want * np.float32(1 + 5e-5), want)[0] is True
    assert kf.compare(want * np.float32(1 + 5e-3), want)[0] is False
    assert kf.compare((want * (1 + 5e-3)).astype(np.float16), want.astype(np.float16))[0] is True  # f16: 1e-2
    assert kf.compare(want * np.float32(1 + 5e-3), want, rel_tol=1e-2)[0] is True
    assert kf.compare(np.full(100, np.inf, np.float32), want) == (False, float("inf"))
    assert kf.compare(want.astype(np.float64), want) == (False, float("inf"))


def test_failed_is_the_first_line_of_the_error():
    assert kf.failed(RuntimeError("no such module\nmore")) == "FAILED RuntimeError: no such module"
    assert kf.failed(ValueError("x" * 100), 10) == "FAILED ValueError: " + "x" * 10
    assert kf.failed(KeyError()) == "FAILED KeyError: "


# -- tables -----------------------------------------------------------------------


def test_markdown_aligns_each_column_and_takes_lines_made():
    table = kf.markdown(("model", "ms", "check"), "lrl", [("a", "1.5", "ok"), ("b", "", "FAILED x"), "| c | made |"])
    assert table == ("| model | ms | check |\n|---|---:|---|\n| a | 1.5 | ok |\n| b |  | FAILED x |\n"
                     "| c | made |")


def test_fixed_pads_each_cell_to_its_spec():
    assert kf.fixed(("case", "ok", "detail"), ("6", "4", "")) == "case   ok   detail"
    assert kf.fixed(("m", 5, 12), ("3", ">4", ""), sep="  ") == "m       5  12"


def test_verdict_is_the_last_line_and_the_status(capsys):
    assert kf.verdict(True) == 0 and capsys.readouterr().out == "\nevery result right\n"
    assert kf.verdict(False) == 1 and capsys.readouterr().out == "\nWRONG results above\n"
