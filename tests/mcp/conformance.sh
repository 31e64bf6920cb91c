#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance,
# server scenarios, active suite) against `toolvfs mcp --http`, serving the
# fixture project tests/mcp/conformance/ with a memory: session store.
# Scenarios listed in tests/mcp/conformance/expected-failures.yml must fail,
# every other one must pass. The suite needs Node.js 22: the npm package
# `node` installed beside it by scripts/install-mcp-servers.sh.
#
#   tests/mcp/conformance.sh TOOLVFS SOURCE_DIR NPM_DIR
# ($TOOLVFS_MCP_SERVERS_DIR, when set, overrides NPM_DIR as for the other
# npm peers.)
set -euo pipefail
toolvfs=$1
source_dir=$2
npm_dir=${TOOLVFS_MCP_SERVERS_DIR:-$3}
node22="$npm_dir/node_modules/node/bin/node"
suite="$npm_dir/node_modules/@modelcontextprotocol/conformance/dist/index.js"
for needed in "$node22" "$suite"; do
  if [[ ! -e "$needed" ]]; then
    echo "conformance: $needed is missing: run scripts/install-mcp-servers.sh (make test does)" >&2
    exit 1
  fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/toolvfs-conformance-XXXXXX")
server_pid=
cleanup() {
  if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid"
    wait "$server_pid" || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

project="$source_dir/tests/mcp/conformance"
"$toolvfs" mcp --no-audit --project "$project" --http 127.0.0.1:0 2> "$work/server.log" &
server_pid=$!
url=
for _ in $(seq 200); do
  url=$(sed -n 's/^toolvfs mcp: listening on \(http:[^ ]*\)$/\1/p' "$work/server.log")
  [[ -n "$url" ]] && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.05
done
if [[ -z "$url" ]]; then
  echo "conformance: the server did not start:" >&2
  cat "$work/server.log" >&2
  exit 1
fi

status=0
(cd "$work" && "$node22" "$suite" server --url "$url" \
    --expected-failures "$project/expected-failures.yml" -o "$work/results") || status=$?

# The server must have survived the whole suite and end cleanly.
if ! kill -0 "$server_pid" 2>/dev/null; then
  echo "conformance: the server died during the suite:" >&2
  cat "$work/server.log" >&2
  exit 1
fi
kill -TERM "$server_pid"
server_status=0
wait "$server_pid" || server_status=$?
server_pid=
if [[ $server_status -ne 0 ]]; then
  echo "conformance: the server exited with status $server_status on SIGTERM:" >&2
  cat "$work/server.log" >&2
  exit 1
fi
exit $status
