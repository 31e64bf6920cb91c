#!/bin/sh
# The instructions `toolvfs mcp` itself executes per call of a vfs tool,
# counted by callgrind, so the figure does not depend on the machine's
# load: the server answers 2 and then 10 calls, one at a time, and the
# difference is divided by the 8 extra calls. What a call costs the server
# up to its tool's start is counted: argument check, policy, gate, temp
# directory, the launch and the answer. Under valgrind the confined
# child exits 127 before the tool runs, so each call is answered with
# that error and the tool's session loop is not counted: the figure
# compares builds on that part, it is not the cost of a whole call.
# With a baseline binary (main's build), both are measured and the ratio
# printed. docs/benchmarks.md, "A vfs tool's policy built once".
#
#   bench/mcp_vfs_instructions.sh build/toolvfs [/path/to/main/build/toolvfs]
set -eu

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 TOOLVFS_BINARY [BASELINE_TOOLVFS_BINARY]" >&2
  exit 64
fi
command -v valgrind >/dev/null || { echo "$0: needs valgrind (apt-get install valgrind)" >&2; exit 69; }

work=$(mktemp -d "${TMPDIR:-/tmp}/toolvfs-vfs-instructions-XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/proj"
cat > "$work/proj/hello.py" <<'EOF'
import sys
import toolvfs_tool
sys.exit(toolvfs_tool.tool_main(lambda tool: 'ok'))
EOF
# A policy of a usual size: a few prefixes of each kind, two patterns.
cat > "$work/proj/toolvfs.toml" <<'EOF'
[tools.hello]
command = "python3 hello.py"
runtime = "vfs"
[tools.hello.sandbox]
filesystem.allow = ["src", "docs", "notes", "lib", "data"]
filesystem.writable = ["out", "build/gen"]
filesystem.deny = ["src/private"]
sensitive_paths = ["**/*.secret", "**/credentials/**"]
network.allow = ["https://api.example.com/v1/"]
EOF

# Total instructions of the server (binary $1) for $2 calls. Valgrind
# does not know the Landlock calls: `--sandbox best-effort` lets the
# server go on without them.
instructions() {
  out="$work/out"
  : > "$out"
  wait_for() {
    tries=0
    until grep -qF -- "$1" "$out"; do
      tries=$((tries + 1))
      if [ $tries -ge 6000 ]; then echo "$0: no answer $1 within 120 s" >&2; return 1; fi
      sleep 0.02
    done
  }
  {
    printf '%s\n' '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}' \
      '{"jsonrpc":"2.0","method":"notifications/initialized"}'
    wait_for '"id":0,'
    call=1
    while [ $call -le "$2" ]; do
      printf '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"hello","arguments":{}}}\n' $call
      wait_for "\"id\":$call,"
      call=$((call + 1))
    done
  } | valgrind --tool=callgrind --callgrind-out-file="$work/callgrind.out" \
      "$1" mcp --no-audit --sandbox best-effort --project "$work/proj" \
      > "$out" 2> "$work/valgrind.log"
  if [ "$(grep -c '"result":{"content"' "$out")" -ne "$2" ]; then
    echo "$0: $1 did not answer every call:" >&2
    cat "$out" "$work/valgrind.log" >&2
    exit 1
  fi
  sed -n 's/^summary: //p' "$work/callgrind.out"
}

per_call() {
  few=$(instructions "$1" 2)
  many=$(instructions "$1" 10)
  echo $(((many - few) / 8))
}

echo "mcp_vfs_instructions: load average $(cut -d' ' -f1-3 /proc/loadavg) (the counts do not depend on it)"
if [ $# -eq 1 ]; then
  echo "$1: $(per_call "$1") instructions per vfs call in the server"
  exit 0
fi
contender=$(per_call "$1")
baseline=$(per_call "$2")
echo "$1: $contender instructions per vfs call in the server"
echo "$2 (baseline): $baseline"
awk -v a="$contender" -v b="$baseline" 'BEGIN { printf "ratio to the baseline: %.3f\n", a / b }'
