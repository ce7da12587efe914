#!/bin/bash
# On the GPU machine: issue 44 item 5's table (bench/models.py), whole models
# at 1 and 16 tokens, mdc against torch on the GPU and on the CPU.
#
#   here:  python -m bench models build .gpu/models
#   there: bash bench/gpu_models.sh [KIT] [SECONDS] [extra run flags]
#
# KIT defaults to .gpu/models; carry it and .whl (the runtime wheel). Every
# step is under a timeout: at most 60 + 10 + 10 + SECONDS (default 270) s,
# under 6 minutes.
set -u
kit=${1:-.gpu/models}; limit=${2:-270}; shift 2 || shift $#
timeout 60 pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >/dev/null 2>&1 ||
  echo "the runtime wheel did not install from .whl/"
export PYTHONPATH=/tmp/site:$PWD
timeout 10 nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
timeout 10 lscpu | grep -m1 "Model name"
timeout "$limit" python -m bench models run "$kit" "$@"
echo "exit status $?"
