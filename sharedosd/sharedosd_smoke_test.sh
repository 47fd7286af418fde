#!/usr/bin/env bash
# Starts the real sharedosd on port 0 with a data directory under TEST_TMPDIR, checks that it
# reports its address and creates the directory, then stops it with SIGTERM and expects exit 0.
set -euo pipefail
bin="$TEST_SRCDIR/sharedos/sharedosd/sharedosd"
data="$TEST_TMPDIR/data"
log="$TEST_TMPDIR/sharedosd.log"
"$bin" --port=0 --data_dir="$data" > "$log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do
  grep -q "listening on 127.0.0.1:" "$log" && break
  kill -0 "$pid" 2>/dev/null || { cat "$log"; echo "sharedosd exited early"; exit 1; }
  sleep 0.1
done
grep -q "sharedosd listening on 127.0.0.1:[1-9][0-9]*" "$log" || { cat "$log"; echo "no address reported"; exit 1; }
[ -d "$data" ] || { echo "data directory not created"; exit 1; }
kill -TERM "$pid"
wait "$pid"
rc=$?
[ "$rc" -eq 0 ] || { cat "$log"; echo "exit code $rc"; exit 1; }
grep -q "sharedosd: stopped" "$log" || { cat "$log"; echo "no clean stop"; exit 1; }
echo "ok"
