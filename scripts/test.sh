#!/usr/bin/env bash
# Installs what the tests need into .venv (and lavapipe, a Vulkan device on
# the CPU, where it can) and runs the whole test suite: lit (test/lit) then
# pytest (test/unit: single pieces alone; test/e2e; test/scale: random
# programs and fuzzing, with seeds that change every run and are printed),
# on CPU pairs and on local + Vulkan.
MDC_EXTRAS="[test]" source "$(dirname "$0")/_venv.sh"
source scripts/_lavapipe.sh
echo "== lit"
lit -sv test/lit
echo "== pytest"
python -m pytest -q --durations=25 test/unit test/e2e test/scale
