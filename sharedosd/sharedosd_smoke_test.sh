#!/usr/bin/env bash
# Starts the real sharedosd on port 0 with a data directory under TEST_TMPDIR: it reports its
# address, prepares the data directory (SQLite files, private tokens), stops cleanly on SIGTERM,
# and a second start reuses the same tokens. A bad flag value is refused at start, naming the flag,
# before anything is written: among them --authorizer_timeout outside 100ms..60s (the two starts
# use its bounds) and a --mcp_port or --console_port below -1 (-1, their default, is --port + 1
# and no console here).
set -euo pipefail
bin="$TEST_SRCDIR/sharedos/sharedosd/sharedosd"
data="$TEST_TMPDIR/data"

run_once() {
  local log="$TEST_TMPDIR/sharedosd.$1.log"
  "$bin" --port=0 --data_dir="$data" --authorizer_timeout="$2" > "$log" 2>&1 &
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

# refused <flag=value> <expected message>: exits 2 naming the flag, the data directory unwritten.
refused() {
  local bad_log="$TEST_TMPDIR/sharedosd.bad.log" code=0
  timeout 30 "$bin" --port=0 --data_dir="$TEST_TMPDIR/bad" "$1" > "$bad_log" 2>&1 || code=$?
  [ "$code" = 2 ] || { cat "$bad_log"; echo "sharedosd $1: exit code $code, not 2"; exit 1; }
  grep -q -- "^sharedosd: $2" "$bad_log" || { cat "$bad_log"; echo "$1: no \"$2\""; exit 1; }
  [ ! -e "$TEST_TMPDIR/bad" ] || { ls -la "$TEST_TMPDIR/bad"; echo "$1: data dir written"; exit 1; }
}
refused --drain_grace=601s "--drain_grace: must be 0s..600s"
refused --authorizer_timeout=50ms "--authorizer_timeout: must be 100ms..60s"
refused --authorizer_timeout=61s "--authorizer_timeout: must be 100ms..60s"
refused --mcp_port=-2 "--mcp_port: must be -1..65535"
refused --console_port=-2 "--console_port: must be -1..65535"

run_once 1 100ms
for f in audit.db grants.db admin.token host.token credentials.json; do
  [ -f "$data/$f" ] || { ls -la "$data"; echo "missing $f"; exit 1; }
done
# Its services call each other in process: no service credential is minted (ADR 0014).
[ ! -e "$data/service.token" ] || { echo "sharedosd minted a service token"; exit 1; }
[ "$(stat -c %a "$data/admin.token")" = "600" ] || { echo "admin.token not private"; exit 1; }
token=$(cat "$data/admin.token")
run_once 2 60s
[ "$(cat "$data/admin.token")" = "$token" ] || { echo "tokens changed across restarts"; exit 1; }
echo "ok"
