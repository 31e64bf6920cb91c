#!/usr/bin/env bash
# What one create costs the PostgreSQL server, statement shape by shape
# (docs/benchmarks.md, "What the write costs the server, piece by piece"):
# each *.sql here is a pgbench script that creates one file per run (a
# one-table upsert, content-addressed tables, the store's three rows
# alone), and statement_script.py writes two more from the store's source,
# its two write statements as it runs them (kCreateFile, kWriteFile). The script starts
# a private server (scripts/test-postgres.sh, fsync off), makes a database
# of the store's schema with a workspace of 20 directories (through the
# toolvfs binary), runs each shape ROUNDS times in turn with one pgbench
# client, and prints the server process's CPU time per created file over a
# 2-second window (from /proc: a count of the server's own work, which the
# load of the machine moves less than a rate), pgbench's rate, and the
# server's WAL records, bytes and syncs per run (pg_stat_wal over the whole
# run). TOOLVFS_TEST_POSTGRES_FSYNC=on runs the server with fsync on, the
# one setting under which it counts syncs.
#
#   bench/postgres_write_shapes/run.sh [TOOLVFS_BINARY] [ROUNDS]
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
toolvfs=${1:-$root/build/toolvfs}
rounds=${2:-3}
server=$(mktemp -d /tmp/toolvfs-write-shapes-XXXXXX)
tree=$(mktemp -d /tmp/toolvfs-write-shapes-tree-XXXXXX)
trap '"$root/scripts/test-postgres.sh" stop "$server" >/dev/null 2>&1 || true; rm -rf "$tree"' EXIT

"$root/scripts/test-postgres.sh" start "$server" >/dev/null
port=$(cat "$server/port")
connect=(-h "$server" -p "$port" -U toolvfs)
psql -q "${connect[@]}" -d postgres -c "CREATE DATABASE shapes"
for d in $(seq 0 19); do mkdir -p "$tree/dir_$d" && : > "$tree/dir_$d/.keep"; done
"$toolvfs" workspace init --project "postgresql:///shapes?host=$server&port=$port&user=toolvfs#w1" --from "$tree" >/dev/null
psql -q "${connect[@]}" -d shapes \
  -c "CREATE TABLE files(path TEXT COLLATE \"C\" PRIMARY KEY, content BYTEA NOT NULL)" \
  -c "CREATE TABLE ca_contents(hash BYTEA PRIMARY KEY, content BYTEA NOT NULL)" \
  -c "CREATE TABLE ca_files(path TEXT COLLATE \"C\" PRIMARY KEY, hash BYTEA NOT NULL)"
[[ $(psql -qtA "${connect[@]}" -d shapes -c "SELECT id FROM workspaces WHERE name='w1'") == 1 ]] ||
  { echo "postgres_write_shapes: the scripts expect workspace id 1" >&2; exit 1; }

ticks=$(getconf CLK_TCK)
cpu_of() { awk '{print $14 + $15}' "/proc/$1/stat"; }  # utime + stime, in ticks
count() { psql -qtA "${connect[@]}" -d shapes -c "SELECT count(*) FROM $1"; }
# The server's WAL counters, "records|bytes|syncs" (pg_stat_wal; a backend
# reports its own when it ends, so they are read around the whole run).
wal() { psql -qtA "${connect[@]}" -d shapes -c "SELECT wal_records, wal_bytes, wal_sync FROM pg_stat_wal"; }

measure() {  # SCRIPT TABLE
  local wal0 wal1
  wal0=$(wal)
  pgbench -n -M prepared "${connect[@]}" -f "$1" -T 5 shapes > "$server/pgbench.out" 2>&1 &
  local bench=$!
  sleep 0.5
  local pid
  pid=$(psql -qtA "${connect[@]}" -d shapes -c "SELECT pid FROM pg_stat_activity WHERE application_name='pgbench'")
  local rows0 cpu0 rows1 cpu1
  rows0=$(count "$2"); cpu0=$(cpu_of "$pid")
  sleep 2
  cpu1=$(cpu_of "$pid"); rows1=$(count "$2")
  wait "$bench" || { cat "$server/pgbench.out" >&2; exit 1; }
  sleep 0.2  # the backend's counters reach pg_stat_wal as it exits
  wal1=$(wal)
  awk -v c=$((cpu1 - cpu0)) -v n=$((rows1 - rows0)) -v t="$ticks" -v w0="$wal0" -v w1="$wal1" \
    -v runs="$(grep -oP 'number of transactions actually processed: \K[0-9]+' "$server/pgbench.out")" \
    -v rate="$(grep -oP 'tps = \K[0-9.]+' "$server/pgbench.out" | head -n 1)" -v name="$(basename "$1")" \
    'BEGIN { split(w0, a, "|"); split(w1, b, "|");
             printf "%-22s %8.1f us/create %10.0f creates/s %6.1f WAL records %7.0f WAL bytes %5.2f WAL syncs\n",
                    name, c * 1e6 / t / n, rate, (b[1] - a[1]) / runs, (b[2] - a[2]) / runs, (b[3] - a[3]) / runs }' |
    tee -a "$server/results"
}

statements=$root/src/project/sql/postgres_file_write.cc
"$here/statement_script.py" "$statements" kCreateFile > "$server/store_create.sql"
"$here/statement_script.py" "$statements" kWriteFile > "$server/store_write.sql"

echo "server CPU per create, $rounds rounds in turn (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
for round in $(seq "$rounds"); do
  measure "$here/one_table.sql" files
  measure "$here/content_addressed.sql" ca_files
  measure "$here/three_inserts.sql" entries
  measure "$server/store_create.sql" entries
  measure "$server/store_write.sql" entries
done
echo "least and median server CPU per create of the $rounds rounds, and against one_table.sql's least:"
sort -k1,1 -k2,2n "$server/results" | awk '
  { cpu[$1] = cpu[$1] " " $2; if (!($1 in order)) { order[$1] = ++shapes; name[shapes] = $1 } }
  END {
    for (i = 1; i <= shapes; ++i) {
      n = split(substr(cpu[name[i]], 2), values, " ")
      least[i] = values[1]; median[i] = values[int((n + 1) / 2)]
      if (name[i] == "one_table.sql") base = values[1]
    }
    for (i = 1; i <= shapes; ++i)
      printf "%-22s %8.1f %8.1f us/create %6.1fx\n", name[i], least[i], median[i], least[i] / base
  }'
