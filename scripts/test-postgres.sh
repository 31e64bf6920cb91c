#!/usr/bin/env bash
# Starts or stops the throw-away PostgreSQL server the tests use: a fresh
# cluster in DIR, reachable through a Unix socket in DIR and on a free
# loopback TCP port (chosen at the first start, written to DIR/port, kept
# across restarts), trust authentication for the user `toolvfs`, fsync off
# (the tests check our transactions, not the disk). One more user,
# `toolvfs_password` with password `toolvfs-test-password` and a database
# of its own of the same name, must give its password over TCP
# (scram-sha-256), for the tests of credentials.
# TOOLVFS_TEST_POSTGRES_FSYNC=on starts it with fsync on instead, the
# durability of a production server (store_bench --postgres-fsync).
#
#   scripts/test-postgres.sh start DIR   # initdb if needed, start, wait until it accepts connections
#   scripts/test-postgres.sh halt DIR    # stop the server but keep the cluster (start again resumes it)
#   scripts/test-postgres.sh stop DIR    # stop it and delete DIR
#
# Run by CTest as a fixture around the tests that need the server
# (tests/project/CMakeLists.txt); the test binaries also run it themselves
# when started by hand without TOOLVFS_TEST_POSTGRES set. PostgreSQL refuses
# to run as root, so as root the server runs as `nobody`.
set -euo pipefail

action=${1:?usage: test-postgres.sh start|halt|stop DIR}
dir=${2:?usage: test-postgres.sh start|halt|stop DIR}

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
    fresh=0
    if [[ ! -f "$dir/data/PG_VERSION" ]]; then
      "${as_server[@]}" "$bindir/initdb" -D "$dir/data" -U toolvfs -A trust --no-sync -E UTF8 \
        --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 ||
        { echo "test-postgres: initdb failed:" >&2; cat "$dir/initdb.log" >&2; exit 1; }
      # The password user's rule comes first: the first matching line wins.
      hba="$dir/data/pg_hba.conf"
      { echo "host all toolvfs_password 127.0.0.1/32 scram-sha-256"; cat "$hba"; } >"$hba.new"
      chown --reference="$hba" "$hba.new"
      mv "$hba.new" "$hba"
      fresh=1
    fi
    # A free loopback port: one nobody listens on now. Another process may
    # take it before the server binds it, so a failed start tries another.
    started=0
    for attempt in 1 2 3 4 5; do
      if [[ -f "$dir/port" ]]; then
        port=$(cat "$dir/port")
      else
        port=$((20000 + RANDOM % 40000))
        if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then continue; fi
      fi
      if "${as_server[@]}" "$bindir/pg_ctl" start -D "$dir/data" -w -t 60 -l "$dir/server.log" \
        -o "-k $dir -c listen_addresses=127.0.0.1 -p $port -c fsync=${TOOLVFS_TEST_POSTGRES_FSYNC:-off} -c max_connections=200" >/dev/null; then
        started=1
        echo "$port" >"$dir/port"
        break
      fi
      # A port kept from the first start must be the same again (the
      # tests' URIs name it): no other try.
      [[ -f "$dir/port" ]] && break
    done
    if [[ $started -eq 0 ]]; then
      echo "test-postgres: the server did not start:" >&2; tail -n 20 "$dir/server.log" >&2; exit 1
    fi
    if [[ $fresh -eq 1 ]]; then
      "$bindir/psql" -X -q -h "$dir" -p "$port" -U toolvfs -d postgres -v ON_ERROR_STOP=1 \
        -c "CREATE ROLE toolvfs_password LOGIN PASSWORD 'toolvfs-test-password'" \
        -c "CREATE DATABASE toolvfs_password OWNER toolvfs_password" >/dev/null ||
        { echo "test-postgres: cannot create the password user" >&2; exit 1; }
    fi
    # Anyone may connect through the socket (the tests may drop privileges).
    chmod 755 "$dir"
    chmod 644 "$dir/port"
    ;;
  halt)
    if [[ -f "$dir/data/postmaster.pid" ]]; then
      "${as_server[@]}" "$bindir/pg_ctl" stop -D "$dir/data" -m fast -w >/dev/null
    fi
    ;;
  stop)
    if [[ -f "$dir/data/postmaster.pid" ]]; then
      "${as_server[@]}" "$bindir/pg_ctl" stop -D "$dir/data" -m fast -w >/dev/null || true
    fi
    rm -rf "$dir"
    ;;
  *)
    echo "test-postgres: unknown action '$action'; expected start, halt or stop" >&2
    exit 2
    ;;
esac
