#!/usr/bin/env bash
# example_project_test.sh TOOLVFS PROJECT — the example project works
# anywhere (issue 22, item 4): PROJECT (examples/project of the source tree,
# or share/toolvfs/examples/project of an install) is copied to a temporary
# directory that has nothing to do with the source or build tree, and every
# tool of its toolvfs.toml is run there with TOOLVFS, from inside the copy
# as a user would. tests/install/install_test.sh runs it on a staged
# install too. The first failure ends the test with its reason.
set -euo pipefail
toolvfs=$1
source_project=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/toolvfs-example-copy.XXXXXX")
trap 'rm -rf "$work"' EXIT
chmod 0755 "$work"

fail() { echo "example_project_test: FAILED: $*" >&2; exit 1; }
check() { echo "example_project_test: $*"; }

project="$work/copied project"  # a space: commands must not split the path
cp -a "$source_project" "$project"
rm -rf "$project/.toolvfs"  # a development run's audit log, if any
cd "$project"

# run TOOL ARGS EXPECTED...: `toolvfs run` exits 0 and prints every EXPECTED.
run() {
  local tool=$1 arguments=$2
  shift 2
  local output
  output=$("$toolvfs" run "$tool" --no-interaction --args "$arguments" 2>&1) ||
    fail "toolvfs run $tool --args '$arguments' in a copy of the example project: $output"
  for expected in "$@"; do
    [[ "$output" == *"$expected"* ]] || fail "toolvfs run $tool: no '$expected' in: $output"
  done
  check "$tool runs in the copy"
  ran+=" $tool "
}
ran=""

run todo_report '{}' "Found " "shortlink/store.py"
run rename_symbol '{"from": "LinkStore", "to": "SlugStore", "dry_run": true}' "Would rename" "shortlink/app.py"
run access_summary '{}' "status"
run read_file '{"path": "shortlink/slugs.py"}' "def "
run list_directory '{"path": "shortlink"}' '"slugs.py"'
run grep_files '{"pattern": "def "}' "shortlink/slugs.py"
run outline '{"path": "shortlink/store.py"}' "LinkStore"
run python_outline '{"path": "tests"}' "test_"
run line_counts '{"path": "shortlink"}' ".py"

# Every tool of the config was run above: the list is checked against
# `toolvfs tools` (`codemap` is the entry that imports the server's tools,
# python_outline and line_counts, not a tool itself).
listed=$("$toolvfs" tools --json 2>&1) || fail "toolvfs tools --json: $listed"
names=$(python3 -c 'import json, sys; print(" ".join(sorted(t["name"] for t in json.load(sys.stdin))))' <<< "$listed") ||
  fail "toolvfs tools --json is not a tools list: $listed"
for name in $names; do
  [[ "$name" == codemap || "$ran" == *" $name "* ]] || fail "tool '$name' of the example project is not run by this test"
done
check "every tool listed by toolvfs tools was run: $names"

# A mistyped name is answered from the config alone: "did you mean", and
# no MCP server is started for it. The copy's server program is made
# missing, so starting it would fail with another message.
sed -i 's|^command = "python3"$|command = "/nonexistent/codemap-server"|' toolvfs.toml
grep -q '/nonexistent/codemap-server' toolvfs.toml || fail "the example's [mcp_servers.codemap] command changed; update this test"
status=0
output=$("$toolvfs" run todo_reprot --no-interaction 2>&1) || status=$?
[[ $status -ne 0 ]] || fail "a mistyped tool name succeeded: $output"
[[ "$output" == *"Unknown tool 'todo_reprot'"* && "$output" == *"did you mean 'todo_report'"* ]] ||
  fail "a mistyped tool name does not say 'unknown tool ... did you mean': $output"
[[ "$output" != *"codemap-server"* ]] || fail "a mistyped tool name started the MCP server: $output"
check "a mistyped tool name: $output"
echo "example_project_test: ok"
