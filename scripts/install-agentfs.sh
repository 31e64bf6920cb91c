#!/usr/bin/env bash
# Installs AgentFS (npm agentfs-sdk), which bench/store_bench measures as
# reference (d), with npm, into a cache dir:
#
#   ${TOOLVFS_AGENTFS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/toolvfs/agentfs}
#
# The version is pinned; a run with it in place does nothing (no network).
# Prints the directory on its last line when --print-dir. Exits 1 with one
# line on stderr when npm is missing or the registry is unreachable.
set -euo pipefail

AGENTFS_VERSION=0.6.4

dir="${TOOLVFS_AGENTFS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/toolvfs/agentfs}"

installed_version() {  # PACKAGE -> its installed version, or nothing
  local manifest="$dir/node_modules/$1/package.json"
  [[ -f "$manifest" ]] || return 0
  node -e 'process.stdout.write(require(process.argv[1]).version)' "$manifest" 2>/dev/null || true
}

if [[ "$(installed_version agentfs-sdk)" != "$AGENTFS_VERSION" ]]; then
  if ! command -v npm >/dev/null; then
    echo "install-agentfs: npm is missing; run scripts/install-deps.sh (it installs nodejs and npm)" >&2
    exit 1
  fi
  echo "install-agentfs: installing agentfs-sdk@$AGENTFS_VERSION into $dir" >&2
  mkdir -p "$dir"
  [[ -f "$dir/package.json" ]] || echo '{"private": true}' > "$dir/package.json"
  if ! npm install --prefix "$dir" --no-audit --no-fund --loglevel=error --save-exact \
      "agentfs-sdk@$AGENTFS_VERSION" >&2; then
    echo "install-agentfs: npm could not install agentfs-sdk@$AGENTFS_VERSION (registry unreachable?)" >&2
    exit 1
  fi
fi
if [[ "${1:-}" == "--print-dir" ]]; then echo "$dir"; fi
