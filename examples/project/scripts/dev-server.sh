#!/usr/bin/env bash
# Runs shortlink locally and restarts it when a Python file changes.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p logs
while true; do
  python3 -m shortlink.app --config config/settings.toml &
  server=$!
  inotifywait -qq -r -e modify,create,delete --include '\.py$' shortlink/ || true
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  echo "dev-server: change detected, restarting" >&2
done
