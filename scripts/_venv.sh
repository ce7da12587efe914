# Sourced by the scripts here: a virtual environment in .venv with mdc installed.
# MDC_EXTRAS picks pyproject.toml's extras ("[test]" for test.sh).
#
# pip install -e runs only when needed: .venv/mdc-install.stamp records this
# checkout's path, pyproject.toml's hash and the extras of the last install
# that succeeded; when all three still match (and mdc still imports from this
# checkout), the install is skipped.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
_mdc_extras=${MDC_EXTRAS:-}
_mdc_stamp=.venv/mdc-install.stamp
_mdc_want="checkout=$PWD
pyproject=$(.venv/bin/python -c 'import hashlib,sys; print(hashlib.sha256(open(sys.argv[1],"rb").read()).hexdigest())' pyproject.toml)
extras=$_mdc_extras"
# Installed by this checkout: mdc's metadata is there, and `mdc` imports from here.
_mdc_installed_here() {
  # -I: not from the current folder (the checkout itself), only from what is installed
  .venv/bin/python -I - "$PWD" <<'EOF' >/dev/null 2>&1
import importlib.metadata, importlib.util, os, sys
importlib.metadata.distribution("mdc")
spec = importlib.util.find_spec("mdc.runtime_shim")
sys.exit(0 if os.path.realpath(spec.origin).startswith(os.path.realpath(sys.argv[1]) + os.sep) else 1)
EOF
}
# An earlier install with more extras covers fewer: "[test]" covers "".
_mdc_stamp_covers() {
  [ -f "$_mdc_stamp" ] || return 1
  local have
  have=$(cat "$_mdc_stamp")
  [ "$have" = "$_mdc_want" ] && return 0
  [ -z "$_mdc_extras" ] && [ "${have%$'\n'extras=*}" = "${_mdc_want%$'\n'extras=*}" ] && return 0
  return 1
}
if _mdc_stamp_covers && _mdc_installed_here; then
  :
else
  rm -f "$_mdc_stamp"
  .venv/bin/python -m pip install -q --disable-pip-version-check -e ".${_mdc_extras}"
  printf '%s\n' "$_mdc_want" > "$_mdc_stamp"
fi
unset -f _mdc_installed_here _mdc_stamp_covers
export PATH="$PWD/.venv/bin:$PATH"
