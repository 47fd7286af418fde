#!/usr/bin/env bash
# `sharedosd --demo` seeds the demo world on its first start (the grant and the owner's
# notes.txt) and prints the quickstart; a restart on the same data directory finds both present,
# issues nothing and starts normally.
set -euo pipefail
bin="$TEST_SRCDIR/sharedos/sharedosd/sharedosd"
data="$TEST_TMPDIR/data"
notes="$data/files/human/user-alice/workspace/Workspace/notes.txt"

run_once() {
  local log="$TEST_TMPDIR/sharedosd.$1.log"
  "$bin" --demo --port=0 --data_dir="$data" --durability=normal > "$log" 2>&1 &
  local pid=$!
  for _ in $(seq 1 400); do
    grep -q "sharedosd: stop with Ctrl-C" "$log" && break
    kill -0 "$pid" 2>/dev/null || { cat "$log"; echo "sharedosd exited early"; exit 1; }
    sleep 0.05
  done
  grep -q "what to do next" "$log" || { cat "$log"; echo "no quickstart printed"; exit 1; }
  kill -TERM "$pid"
  wait "$pid" || { cat "$log"; echo "exit code $?"; exit 1; }
  grep -q "sharedosd: stopped" "$log" || { cat "$log"; echo "no clean stop"; exit 1; }
}

run_once 1
log1="$TEST_TMPDIR/sharedosd.1.log"
grep -q "sharedosd: demo: issued grant grant-demo-assistant in world-demo" "$log1" ||
  { cat "$log1"; echo "grant not seeded"; exit 1; }
grep -q "sharedosd: demo: wrote .*notes.txt" "$log1" || { cat "$log1"; echo "notes not seeded"; exit 1; }
[ "$(cat "$notes")" = "buy milk" ] || { echo "notes.txt content"; exit 1; }

echo "edited by the user" > "$notes"
run_once 2
log2="$TEST_TMPDIR/sharedosd.2.log"
grep -q "sharedosd: demo: grant grant-demo-assistant in world-demo already present" "$log2" ||
  { cat "$log2"; echo "grant not found on restart"; exit 1; }
grep -q "sharedosd: demo: file .*notes.txt already present" "$log2" ||
  { cat "$log2"; echo "notes not found on restart"; exit 1; }
if grep -q "issued grant\|wrote " "$log2"; then cat "$log2"; echo "seeded twice"; exit 1; fi
[ "$(cat "$notes")" = "edited by the user" ] || { echo "notes.txt overwritten"; exit 1; }
echo "ok"
