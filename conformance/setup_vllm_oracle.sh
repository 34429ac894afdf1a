#!/usr/bin/env bash
# The vLLM oracle: vLLM's own Python files (the release's wheel, --no-deps, compiled extensions left out) and the
# few pure-Python packages its planning modules import, unpacked beside the SGLang oracle venv's CPU torch
# (conformance/setup_oracle.sh builds it). No install into the venv: the driver runs with
# PYTHONPATH="$(cat VENV/vllm/<v>/pythonpath)".
# Usage: conformance/setup_vllm_oracle.sh [VENV_DIR] [VERSION] [source]   (default .oracle-venv, 0.33.0)
# `source`: the release's files only (VENV/vllm/<v>/src, what the cited-rule test reads), no dependencies: the
# driver cannot run it; a complete release satisfies it, and a later full setup completes it.
# Reuses what is complete; prints "<python> <pythonpath>" on the last line (`source`: the source directory).
# Cost: one 336 MB wheel download, ~60 MB kept.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="${1:-$here/../.oracle-venv}"
version="${2:-0.33.0}"
mode="${3:-full}"
case "$venv" in /*) ;; *) venv="$PWD/$venv" ;; esac
py="$venv/bin/python"
[ -x "$py" ] || { echo "no oracle venv at $venv: run conformance/setup_oracle.sh first" >&2; exit 2; }
dir="$venv/vllm/$version"
# exact pins of the pure-Python imports vllm.config / v1.core / engine.arg_utils need beyond the venv's own
DEPS="cachetools==8.0.2 cbor2==6.3.0 openai-harmony==0.0.8 fastapi==0.165.0 cloudpickle==3.1.3 py-cpuinfo==9.0.0 prometheus_client==0.26.0 openai==3.60.0 pydantic==2.14.4"
full="vllm==$version $DEPS"
case "$mode" in
  full) want="$full" ;;
  source) want="vllm==$version" ;;
  *) echo "usage: $0 [VENV_DIR] [VERSION] [source]" >&2; exit 2 ;;
esac
mkdir -p "$venv/vllm"
exec 9>"$venv/vllm.lock"
flock 9
have="$(cat "$dir/.complete" 2>/dev/null || true)"
if [ "$have" != "$full" ] && [ "$have" != "$want" ]; then
  rm -rf "$dir"; mkdir -p "$dir/src" "$dir/.wheel"
  "$py" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: -d "$dir/.wheel" "vllm==$version"
  (cd "$dir/src" && "$py" - "$dir"/.wheel/vllm-*.whl <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    z.extractall(".", [n for n in z.namelist() if n.startswith("vllm/") and not n.endswith(".so")])
PY
  )
  rm -rf "$dir/.wheel"
  if [ "$mode" = full ]; then
    # shellcheck disable=SC2086  # one spec per word
    "$py" -m pip install --quiet --disable-pip-version-check --no-warn-conflicts --target "$dir/deps" $DEPS
    echo "$dir/src:$dir/deps" > "$dir/pythonpath"
  fi
  echo "$want" > "$dir/.complete"
fi
if [ "$mode" = source ]; then echo "$dir/src"; else echo "$py $(cat "$dir/pythonpath")"; fi
