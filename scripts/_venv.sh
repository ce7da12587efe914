# Sourced by the scripts here: a virtual environment in .venv with mdc installed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".${MDC_EXTRAS:-}"
export PATH="$PWD/.venv/bin:$PATH"
