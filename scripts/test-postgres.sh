#!/usr/bin/env bash
# Starts or stops the throw-away PostgreSQL server the tests use: a fresh
# cluster in DIR, reachable only through a Unix socket in DIR (no TCP port,
# so parallel runs never collide), trust authentication for the user
# `toolvfs`, fsync off (the tests check our transactions, not the disk).
#
#   scripts/test-postgres.sh start DIR   # initdb if needed, start, wait until it accepts connections
#   scripts/test-postgres.sh stop DIR    # stop it and delete DIR
#
# Run by CTest as a fixture around the tests that need the server
# (tests/project/CMakeLists.txt); the test binaries also run it themselves
# when started by hand without TOOLVFS_TEST_POSTGRES set. PostgreSQL refuses
# to run as root, so as root the server runs as `nobody`.
set -euo pipefail

action=${1:?usage: test-postgres.sh start|stop DIR}
dir=${2:?usage: test-postgres.sh start|stop DIR}

bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
if [[ -z "$bindir" || ! -x "$bindir/pg_ctl" ]]; then
  echo "test-postgres: no PostgreSQL server found under /usr/lib/postgresql; run scripts/install-deps.sh" >&2
  exit 1
fi

as_server=()
if [[ $(id -u) -eq 0 ]]; then
  as_server=(setpriv --reuid=65534 --regid=65534 --clear-groups)
fi

case "$action" in
  start)
    mkdir -p "$dir"
    [[ ${#as_server[@]} -gt 0 ]] && chown 65534:65534 "$dir"
    chmod 700 "$dir"
    if [[ ! -f "$dir/data/PG_VERSION" ]]; then
      "${as_server[@]}" "$bindir/initdb" -D "$dir/data" -U toolvfs -A trust --no-sync -E UTF8 \
        --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 ||
        { echo "test-postgres: initdb failed:" >&2; cat "$dir/initdb.log" >&2; exit 1; }
    fi
    "${as_server[@]}" "$bindir/pg_ctl" start -D "$dir/data" -w -t 60 -l "$dir/server.log" \
      -o "-k $dir -c listen_addresses= -c fsync=off -c max_connections=200" >/dev/null ||
      { echo "test-postgres: the server did not start:" >&2; tail -n 20 "$dir/server.log" >&2; exit 1; }
    # Anyone may connect through the socket (the tests may drop privileges).
    chmod 755 "$dir"
    ;;
  stop)
    if [[ -f "$dir/data/postmaster.pid" ]]; then
      "${as_server[@]}" "$bindir/pg_ctl" stop -D "$dir/data" -m fast -w >/dev/null || true
    fi
    rm -rf "$dir"
    ;;
  *)
    echo "test-postgres: unknown action '$action'; expected start or stop" >&2
    exit 2
    ;;
esac
