#!/usr/bin/env bash
# Build the engine-oracle venv the conformance suite drives: sglang 0.5.23 installed --no-deps, a CPU torch,
# and only the packages its argument resolution, ModelConfig and pool sizing import (requirements-oracle.txt).
# Usage: conformance/setup_oracle.sh [VENV_DIR]     (default: .oracle-venv/ in the repository)
# Reuses VENV_DIR when it is complete for the current requirements; prints the venv's python on the last line.
# Env: PYTHON (the base interpreter, default python3; sglang 0.5.23 ships a cp311 wheel),
#      ORACLE_TORCH_SPEC (default "torch==2.13.0": here pip's find-links serve the CPU build from local disk;
#      elsewhere pass e.g. "torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu").
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="${1:-$here/../.oracle-venv}"
case "$venv" in /*) ;; *) venv="$PWD/$venv" ;; esac
base="${PYTHON:-python3}"
torch_spec="${ORACLE_TORCH_SPEC:-torch==2.13.0}"
sglang_spec="sglang==0.5.23"
stamp="$venv/.oracle-complete"
want="$(sha256sum < "$here/requirements-oracle.txt" | cut -c1-16) $sglang_spec $torch_spec"

# one build at a time (concurrent test runs share the venv)
mkdir -p "$(dirname "$venv")"
exec 9>"$venv.lock"
flock 9

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] \
   && "$venv/bin/python" -c "import sglang, torch, transformers" >/dev/null 2>&1; then
  echo "oracle venv is complete, reusing: $venv" >&2
  echo "$venv/bin/python"
  exit 0
fi

start=$(date +%s)
rm -rf "$venv"
"$base" -m venv "$venv"
pip=("$venv/bin/python" -m pip --quiet --disable-pip-version-check)
# shellcheck disable=SC2086  # torch_spec may carry pip options
"${pip[@]}" install $torch_spec
"${pip[@]}" install --no-deps "$sglang_spec"
"${pip[@]}" install --no-deps -r "$here/requirements-oracle.txt"
"$venv/bin/python" -c "import sglang, torch, transformers; print('sglang', sglang.__version__, 'torch', torch.__version__)" >&2
echo "$want" > "$stamp"
echo "oracle venv built in $(( $(date +%s) - start ))s: $venv" >&2
echo "$venv/bin/python"
