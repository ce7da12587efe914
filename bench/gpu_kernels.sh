#!/bin/bash
# On the GPU machine: the tuner's or the kernel grid's run, from a kit built
# here and carried packed (they are large and compress well).
#
#   here:  python -m bench tune build .gpu/tune && tar cJf .gpu/tune.tar.xz -C .gpu tune
#          (the batch, dynamic or mixed sub-space: --ops batch into .gpu/tune_batch, packed as tune_batch.tar.xz;
#          --ops mixed into .gpu/tune_mixed, packed as tune_mixed.tar.xz; --ops batch --dtypes f16f32,bf16f32
#          into .gpu/tune_mixed_batch)
#          python -m bench kernels build .gpu/kernels && tar cJf .gpu/kernels.tar.xz -C .gpu kernels
#          (the CPU half alone: build .gpu/kcpu --parts cpu_default,cpu_mdc)
#   there: bash bench/gpu_kernels.sh tune|kernels KIT [SECONDS] [extra run flags]
#
# KIT names .gpu/KIT.tar.xz (a folder KIT inside). Needs the runtime wheel
# in .whl/ (carry .whl and the tarball). Results go to
# $OUT/KIT_results.jsonl (torch's CPU times, measured first in a process of
# their own, beside it); a run cut short by SECONDS keeps what it measured,
# and a later run given that file back as .gpu/KIT_results.jsonl goes on
# from it.
set -u
what=$1; kit=$2; limit=${3:-540}; shift 3 || shift $#
pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv,noheader
lscpu | grep -m1 "Model name"
mkdir -p /tmp/kits && tar xJf .gpu/$kit.tar.xz -C /tmp/kits
out=${OUT:-/tmp}/${kit}_results.jsonl
[ -f .gpu/${kit}_results.jsonl ] && cp .gpu/${kit}_results.jsonl "$out"
timeout "$limit" python -m bench "$what" run /tmp/kits/$kit --out "$out" "$@"
echo "exit status $?"
