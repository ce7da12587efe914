#!/usr/bin/env bash
# Installs what the tests need into .venv and runs the whole test suite:
# lit (test/lit) then pytest (test/e2e, and test/scale: random programs and
# fuzzing, with seeds that change every run and are printed).
MDC_EXTRAS="[test]" source "$(dirname "$0")/_venv.sh"
echo "== lit"
lit -sv test/lit
echo "== pytest"
python -m pytest -q test/e2e test/scale
