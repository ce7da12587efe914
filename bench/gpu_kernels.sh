#!/bin/bash
# On the GPU machine: the tuner's and the kernel grid's runs, from kits
# built here and carried packed (they are large and compress well).
#
#   here:  python -m bench tune build .gpu/tune && tar cJf .gpu/tune.tar.xz -C .gpu tune
#          python -m bench kernels build .gpu/kernels && tar cJf .gpu/kernels.tar.xz -C .gpu kernels
#   there: bash bench/gpu_kernels.sh tune|kernels [SECONDS] [extra run flags]
#
# Needs the runtime wheel in .whl/ (carry .whl and .gpu). Results go to
# $OUT/<what>_results.jsonl; a run cut short by SECONDS keeps what it
# measured, and a later run given that file back in the kit goes on from it.
set -u
what=$1; limit=${2:-540}; shift; shift || true
pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv,noheader
lscpu | grep -m1 "Model name"
mkdir -p /tmp/kits && tar xJf .gpu/$what.tar.xz -C /tmp/kits
out=${OUT:-/tmp}/${what}_results.jsonl
[ -f .gpu/${what}_results.jsonl ] && cp .gpu/${what}_results.jsonl "$out"
timeout "$limit" python -m bench "$what" run /tmp/kits/$what --out "$out" "$@"
echo "exit status $?"
