#!/usr/bin/env bash
# Keeps one PostgreSQL server running for a developer, so workspaces can be
# tried by hand with `--project "$(scripts/dev-postgres.sh url WS)"`.
# Unlike scripts/test-postgres.sh (which it uses to create and start the
# cluster) `stop` keeps the data: the workspaces survive until `destroy`.
#
#   scripts/dev-postgres.sh start          # create if needed, start, create database `toolvfs`
#   scripts/dev-postgres.sh url [WS]       # print the store URI (workspace WS, default `default`)
#   scripts/dev-postgres.sh stop           # stop the server, keep the data
#   scripts/dev-postgres.sh destroy        # stop the server and delete the data
#
# The cluster lives in $TOOLVFS_DEV_POSTGRES (default
# /var/tmp/toolvfs-dev-postgres-UID: under /var/tmp, because as root the
# server runs as `nobody`, which cannot enter /root). It listens on a Unix
# socket in that directory and on a loopback TCP port (DIR/port), with
# trust authentication for the user `toolvfs`: a developer's server, not
# one to share.
set -euo pipefail

action=${1:?usage: dev-postgres.sh start|stop|url [WORKSPACE]|destroy}
dir=${TOOLVFS_DEV_POSTGRES:-/var/tmp/toolvfs-dev-postgres-$(id -u)}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
if [[ -z "$bindir" || ! -x "$bindir/pg_ctl" ]]; then
  echo "dev-postgres: no PostgreSQL server found under /usr/lib/postgresql; run scripts/install-deps.sh" >&2
  exit 1
fi

as_server=()
if [[ $(id -u) -eq 0 ]]; then
  as_server=(setpriv --reuid=65534 --regid=65534 --clear-groups)
fi

running() {
  [[ -f "$dir/data/postmaster.pid" ]] && "${as_server[@]}" "$bindir/pg_ctl" status -D "$dir/data" >/dev/null 2>&1
}

case "$action" in
  start)
    if ! running; then
      "$here/test-postgres.sh" start "$dir"
    fi
    # The default database of user `toolvfs` is `toolvfs`; initdb made only `postgres`.
    exists=$("$bindir/psql" -h "$dir" -p "$(cat "$dir/port")" -U toolvfs -d postgres -At \
      -c "SELECT 1 FROM pg_database WHERE datname = 'toolvfs'")
    if [[ "$exists" != 1 ]]; then
      "$bindir/psql" -h "$dir" -p "$(cat "$dir/port")" -U toolvfs -d postgres -q -c "CREATE DATABASE toolvfs" ||
        { echo "dev-postgres: could not create database 'toolvfs' in $dir" >&2; exit 1; }
    fi
    echo "dev-postgres: running in $dir; URI: postgresql:///toolvfs?host=$dir&port=$(cat "$dir/port")&user=toolvfs#default"
    ;;
  url)
    workspace=${2:-default}
    # The rule of every SQL store URI (docs/stores.md#uris).
    if [[ -z "$workspace" || "$workspace" =~ [[:cntrl:]#@] || $(printf %s "$workspace" | wc -c) -gt 255 ]]; then
      echo "dev-postgres: workspace name '$workspace' is not valid: 1 to 255 bytes without control characters, '#' or '@'" >&2
      exit 2
    fi
    if ! running; then
      echo "dev-postgres: no server running in $dir; run scripts/dev-postgres.sh start" >&2
      exit 1
    fi
    echo "postgresql:///toolvfs?host=$dir&port=$(cat "$dir/port")&user=toolvfs#$workspace"
    ;;
  stop)
    if running; then
      "${as_server[@]}" "$bindir/pg_ctl" stop -D "$dir/data" -m fast -w >/dev/null
    fi
    ;;
  destroy)
    "$here/test-postgres.sh" stop "$dir"
    ;;
  *)
    echo "dev-postgres: unknown action '$action'; expected start, stop, url or destroy" >&2
    exit 2
    ;;
esac
