#!/usr/bin/env bash
# Tests of the TorchX plugin (python/): installs it into a temporary --target directory with the system
# Python's pip (offline: --no-build-isolation --no-deps), then runs pytest with /usr/bin/python3 and the
# TorchX sources from ../shared/vendor. The tests start the local server themselves (npm deps needed).
# Extra arguments go to pytest. pytest's exit code 5 (no tests collected) is a failure.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${TXS_PYTHON:-/usr/bin/python3}
# TorchX's sources: $TXS_VENDOR_DIR, else ../shared/vendor beside this checkout, else beside the checkout this
# one was cloned from (a throwaway clone elsewhere, e.g. `git clone -q . "$(mktemp -d)"` to test a submission).
vendor_beside() { [ -n "$1" ] && [ -d "$1/../shared/vendor/torchx/torchx" ] && (cd "$1/../shared/vendor" && pwd); }
origin=$(git config --get remote.origin.url 2>/dev/null || true)
[ -d "$origin" ] || origin=""
export TXS_VENDOR_DIR=${TXS_VENDOR_DIR:-$(vendor_beside "$PWD" || vendor_beside "$origin" || echo "$(cd .. && pwd)/shared/vendor")}
if [ ! -d "$TXS_VENDOR_DIR/torchx/torchx" ]; then
  echo "TorchX sources not found in $TXS_VENDOR_DIR (set TXS_VENDOR_DIR)" >&2
  exit 1
fi
site=$(mktemp -d)
build=$(mktemp -d)
trap 'rm -rf "$site" "$build"' EXIT
cp -r python/. "$build/"
rm -rf "$build/build" "$build"/*.egg-info
"$PY" -m pip install --quiet --no-build-isolation --no-deps --no-warn-script-location --target "$site" "$build" \
  2> >(grep -v "Running pip as the 'root' user" >&2) || { echo "pip install of python/ failed" >&2; exit 1; }
export TXS_PLUGIN_SITE="$site"
export PYTHONPATH="$site:$TXS_VENDOR_DIR/torchx:$TXS_VENDOR_DIR/docstring_parser"
export PYTHONDONTWRITEBYTECODE=1
targets=(python/tests)
for arg in "$@"; do [[ -e "${arg%%::*}" ]] && targets=(); done  # test paths given: run only those
"$PY" -m pytest -p no:cacheprovider "${targets[@]}" "$@"
rc=$?
if [ "$rc" -eq 5 ]; then
  echo "pytest collected no tests: failing" >&2
  exit 1
fi
exit $rc
