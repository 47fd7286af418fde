#!/usr/bin/env bash
# Starts the real sharedosd on port 0 with a data directory under TEST_TMPDIR: it reports its
# address, prepares the data directory (SQLite files, private tokens), stops cleanly on SIGTERM,
# and a second start reuses the same tokens.
set -euo pipefail
bin="$TEST_SRCDIR/sharedos/sharedosd/sharedosd"
data="$TEST_TMPDIR/data"

run_once() {
  local log="$TEST_TMPDIR/sharedosd.$1.log"
  "$bin" --port=0 --data_dir="$data" > "$log" 2>&1 &
  local pid=$!
  for _ in $(seq 1 200); do
    grep -q "listening on 127.0.0.1:" "$log" && break
    kill -0 "$pid" 2>/dev/null || { cat "$log"; echo "sharedosd exited early"; exit 1; }
    sleep 0.05
  done
  grep -q "sharedosd listening on 127.0.0.1:[1-9][0-9]*" "$log" || { cat "$log"; echo "no address"; exit 1; }
  kill -TERM "$pid"
  wait "$pid" || { cat "$log"; echo "exit code $?"; exit 1; }
  grep -q "sharedosd: stopped" "$log" || { cat "$log"; echo "no clean stop"; exit 1; }
}

run_once 1
for f in audit.db grants.db admin.token host.token service.token credentials.json; do
  [ -f "$data/$f" ] || { ls -la "$data"; echo "missing $f"; exit 1; }
done
[ "$(stat -c %a "$data/admin.token")" = "600" ] || { echo "admin.token not private"; exit 1; }
token=$(cat "$data/admin.token")
run_once 2
[ "$(cat "$data/admin.token")" = "$token" ] || { echo "tokens changed across restarts"; exit 1; }
echo "ok"
