"""The test harness of mdc: the generators, oracles and GPU kits that
test/e2e, test/scale and the GPU scripts share.

- progen: random multi-device programs with numpy references, and the
  differential check against stock IREE (test/scale/test_random_programs.py);
- fuzz: bad inputs to mdc-compile, mdc-opt and mdc-run (test/scale/test_fuzz.py);
- gpu_kit, gpu_random, gpu_matmul, gpu_profile: kits built here and run on a
  GPU machine, on bench/kitframe.py, the kit framework (command line,
  no-GPU status, manifest, child runs, checks, tables) they share with
  bench and test/e2e/gpu_*.py; place_kit: what gpu_place_torch.py and
  gpu_place_wide.py share;
- external_corpus: the external-shape programs and their inputs;
- processes: child processes under a memory limit and a group-killing timeout;
- paths: where the checkout and its programs are.

pytest finds this package (and bench, in the checkout) through
``pythonpath`` in pyproject.toml; the scripts run as ``python
test/e2e/NAME.py`` through test/e2e/_harness_path.py, the one place that
puts test/ (and the checkout, for mdc and bench) on sys.path.
"""
