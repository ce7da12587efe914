"""The test harness of mdc: the generators, oracles and GPU kits that
test/e2e, test/scale and the GPU scripts share.

- progen: random multi-device programs with numpy references, and the
  differential check against stock IREE (test/scale/test_random_programs.py);
- fuzz: bad inputs to mdc-compile, mdc-opt and mdc-run (test/scale/test_fuzz.py);
- gpu_kit, gpu_random, gpu_matmul: kits built here and run on a GPU machine;
- external_corpus: the external-shape programs and their inputs;
- processes: child processes under a memory limit and a group-killing timeout;
- paths: where the checkout and its programs are.

pytest finds this package through ``pythonpath`` in pyproject.toml; the
scripts run as ``python test/e2e/NAME.py`` through test/e2e/_harness_path.py,
the one place that puts test/ (and the checkout, for mdc) on sys.path.
"""
