#!/usr/bin/env bash
# Unpack every sglang release of conformance/releases.txt into the oracle venv, so one venv (one CPU torch) can
# drive each release's own code in turn: VENV/releases/<v>/site holds the unpacked wheel (no install, no deps) and
# VENV/releases/<v>/sys_path.txt the directories to put ahead of site-packages (one a line; empty for the
# installed 0.5.23). A driver run for release v: PYTHONPATH="$(paste -sd: VENV/releases/<v>/sys_path.txt)".
# Usage: conformance/setup_releases.sh [VENV_DIR] [VERSION...]   (default: .oracle-venv/, every release listed)
# Run conformance/setup_oracle.sh first; reuses what is complete; prints the releases directory on the last line.
# Cost: one --no-deps wheel per release (24-39 MB each, 100-130 MB unpacked) and two small shared stacks.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="${1:-$here/../.oracle-venv}"
shift || true
case "$venv" in /*) ;; *) venv="$PWD/$venv" ;; esac
py="$venv/bin/python"
[ -x "$py" ] || { echo "no oracle venv at $venv: run conformance/setup_oracle.sh first" >&2; exit 2; }
root="$venv/releases"
cache="$root/.wheels"
mkdir -p "$root" "$cache"
exec 9>"$root.lock"
flock 9

# The dependency stacks of releases.txt (exact pins, so every machine builds the same oracle).
declare -A STACK=(
  [tf512]="transformers==5.12.1 tokenizers==0.22.2 huggingface_hub==1.33.0"
  [xg021]="xgrammar==0.2.1 apache-tvm-ffi==0.1.15.post2"
)

unpack() {  # unpack SPEC... into DIR (pip download --no-deps, then the wheels' files); skip when stamped
  local dir="$1"; shift
  local want="$*"
  if [ -f "$dir/.complete" ] && [ "$(cat "$dir/.complete")" = "$want" ]; then return 0; fi
  rm -rf "$dir"; mkdir -p "$dir"
  # shellcheck disable=SC2086  # one spec per word
  "$py" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: -d "$cache" $want
  local spec name ver whl
  for spec in "$@"; do
    name="${spec%%==*}"; ver="${spec##*==}"
    whl="$(ls "$cache"/"$(echo "$name" | tr '-' '_')"-"$ver"-*.whl 2>/dev/null | head -1)"
    [ -n "$whl" ] || { echo "no wheel for $spec in $cache" >&2; exit 1; }
    "$py" -m zipfile -e "$whl" "$dir"
  done
  echo "$want" > "$dir/.complete"
}

# the sglang distribution first on sys.path (importing sglang needs the driver's stand-ins)
version_of='import importlib.metadata as m; print(m.version("sglang"))'
versions=("$@")
if [ ${#versions[@]} -eq 0 ]; then
  mapfile -t versions < <(grep -v '^#' "$here/releases.txt" | awk 'NF {print $1}')
fi
start=$(date +%s)
for v in "${versions[@]}"; do
  line="$(grep -v '^#' "$here/releases.txt" | awk -v v="$v" '$1 == v' || true)"
  [ -n "$line" ] || { echo "release $v is not in conformance/releases.txt" >&2; exit 2; }
  read -r -a stacks <<< "$(echo "$line" | cut -s -d' ' -f2- | xargs)"
  dir="$root/$v"; mkdir -p "$dir"
  paths=()
  if [ "${stacks[0]:-}" = "installed" ]; then
    have="$("$py" -c "$version_of" 2>/dev/null || true)"
    [ "$have" = "$v" ] || { echo "the oracle venv has sglang ${have:-none}, releases.txt says $v is installed" >&2; exit 2; }
  else
    unpack "$dir/site" "sglang==$v"
    paths+=("$dir/site")
    for s in "${stacks[@]}"; do
      [ -n "${STACK[$s]:-}" ] || { echo "unknown stack $s for $v" >&2; exit 2; }
      # shellcheck disable=SC2086
      unpack "$root/_stacks/$s" ${STACK[$s]}
      paths+=("$root/_stacks/$s")
    done
  fi
  printf '%s\n' "${paths[@]}" | sed '/^$/d' > "$dir/sys_path.txt"
  got="$(PYTHONPATH="$(paste -sd: "$dir/sys_path.txt")" "$py" -c "$version_of")"
  [ "$got" = "$v" ] || { echo "release $v imports as sglang $got" >&2; exit 1; }
  echo "release $v ready: $dir" >&2
done
rm -rf "$cache"  # the unpacked trees are what runs; the wheels were only the carrier
echo "releases ready in $(( $(date +%s) - start ))s" >&2
echo "$root"
