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
# The MCP Inspector (its CLI mode, --cli): lists and calls `toolvfs mcp`'s
# tools in tests/mcp/mcp_inspector_test.cc over stdio and Streamable HTTP,
# run with node 22 (below; it needs 22.19 or later).
INSPECTOR_VERSION=2.12.0
# The official conformance suite, run against `toolvfs mcp --http`
# (tests/mcp/conformance.sh). Its CLI needs Node.js 22 or later; Debian 12's
# node is 20, so the npm package `node` (it ships a node binary) is
# installed next to it: node_modules/node/bin/node.
CONFORMANCE_VERSION=0.1.16
NODE22_VERSION=22.23.3

dir="${TOOLVFS_MCP_SERVERS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/toolvfs/npm}"

installed_version() {  # PACKAGE -> its installed version, or nothing
  local manifest="$dir/node_modules/$1/package.json"
  [[ -f "$manifest" ]] || return 0
  node -e 'process.stdout.write(require(process.argv[1]).version)' "$manifest" 2>/dev/null || true
}

if [[ "$(installed_version @modelcontextprotocol/server-filesystem)" != "$FILESYSTEM_VERSION" ||
      "$(installed_version @modelcontextprotocol/server-everything)" != "$EVERYTHING_VERSION" ||
      "$(installed_version @modelcontextprotocol/sdk)" != "$SDK_VERSION" ||
      "$(installed_version @modelcontextprotocol/inspector)" != "$INSPECTOR_VERSION" ||
      "$(installed_version @modelcontextprotocol/conformance)" != "$CONFORMANCE_VERSION" ||
      "$(installed_version node)" != "$NODE22_VERSION" ]]; then
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
    "@modelcontextprotocol/sdk@$SDK_VERSION" \
    "@modelcontextprotocol/inspector@$INSPECTOR_VERSION" \
    "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION" \
    "node@$NODE22_VERSION"
fi
if [[ "${1:-}" == "--print-dir" ]]; then echo "$dir"; fi
