#!/usr/bin/env bash
# Installs the official MCP reference servers the MCP client tests (and the
# example project's MCP server) run against, with npm, into a cache dir:
#
#   ${TOOLVFS_MCP_SERVERS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/toolvfs/npm}
#
# Versions are pinned; a run with the right versions in place does nothing
# (no network). Prints the directory on its last line when --print-dir.
set -euo pipefail

FILESYSTEM_VERSION=2026.8.31
EVERYTHING_VERSION=2026.8.31
# The official TypeScript SDK: its client drives `toolvfs mcp` in tests/mcp.
SDK_VERSION=1.32.2

dir="${TOOLVFS_MCP_SERVERS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/toolvfs/npm}"

installed_version() {  # PACKAGE -> its installed version, or nothing
  local manifest="$dir/node_modules/$1/package.json"
  [[ -f "$manifest" ]] || return 0
  node -e 'process.stdout.write(require(process.argv[1]).version)' "$manifest" 2>/dev/null || true
}

if [[ "$(installed_version @modelcontextprotocol/server-filesystem)" != "$FILESYSTEM_VERSION" ||
      "$(installed_version @modelcontextprotocol/server-everything)" != "$EVERYTHING_VERSION" ||
      "$(installed_version @modelcontextprotocol/sdk)" != "$SDK_VERSION" ]]; then
  if ! command -v npm >/dev/null; then
    echo "install-mcp-servers: npm is missing; run scripts/install-deps.sh (it installs nodejs and npm)" >&2
    exit 1
  fi
  echo "install-mcp-servers: installing the MCP reference servers into $dir"
  mkdir -p "$dir"
  [[ -f "$dir/package.json" ]] || echo '{"private": true}' > "$dir/package.json"
  npm install --prefix "$dir" --no-audit --no-fund --loglevel=error --save-exact \
    "@modelcontextprotocol/server-filesystem@$FILESYSTEM_VERSION" \
    "@modelcontextprotocol/server-everything@$EVERYTHING_VERSION" \
    "@modelcontextprotocol/sdk@$SDK_VERSION"
fi
if [[ "${1:-}" == "--print-dir" ]]; then echo "$dir"; fi
