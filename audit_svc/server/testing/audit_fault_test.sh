#!/usr/bin/env bash
# Process-level faults of audit_svc, with the real binary and SQLite files under TEST_TMPDIR:
#  1. kill -9 of audit_svc while four writers append: after a restart every acknowledged event is
#     present exactly once and the chain verifies.
#  2. audit_svc down, a writer records post-effect events into its outbox and is killed -9;
#     both restart: every event arrives exactly once.
set -euo pipefail
bin="$TEST_SRCDIR/sharedos/audit_svc/server/audit_svc"
driver="$TEST_SRCDIR/sharedos/audit_svc/server/testing/audit_writer_driver"
dir="$TEST_TMPDIR/fault"
rm -rf "$dir" && mkdir -p "$dir"

digest() { printf %s "$1" | sha256sum | cut -d' ' -f1; }
cat > "$dir/credentials.json" <<JSON
{"credentials": [
  {"name": "ops", "role": "admin", "token_sha256": "$(digest admin-token)"},
  {"name": "envelope", "role": "service", "token_sha256": "$(digest writer-token)"}]}
JSON

# Starts audit_svc on $1 (db) and sets $pid and $addr.
start() {
  local log="$dir/audit.$RANDOM.log"
  : > "$log"  # exists before the first read below, however late the child opens it
  "$bin" --port=0 --db="$1" --credentials="$dir/credentials.json" --durability=normal > "$log" 2>&1 &
  pid=$!
  for _ in $(seq 1 200); do
    addr=$(sed -n 's/^audit_svc listening on //p' "$log")
    [ -n "$addr" ] && return 0
    kill -0 "$pid" 2>/dev/null || { cat "$log"; echo "audit_svc died"; exit 1; }
    sleep 0.05
  done
  cat "$log"; echo "audit_svc never listened"; exit 1
}

echo "--- 1. kill -9 of audit_svc under four concurrent writers"
start "$dir/log1.db"
writers=()
for w in 1 2 3 4; do
  "$driver" append --target="$addr" --token=writer-token --prefix="w$w" --count=1000000 \
    --ids_out="$dir/acked-$w.txt" &
  writers+=($!)
done
# Let them write until some events are acknowledged by each, then pull the plug.
for _ in $(seq 1 200); do
  n=0; for w in 1 2 3 4; do [ -s "$dir/acked-$w.txt" ] && n=$((n+1)); done
  [ "$n" -eq 4 ] && break; sleep 0.05
done
sleep 0.5
kill -9 "$pid"; wait "$pid" 2>/dev/null || true
for p in "${writers[@]}"; do wait "$p"; done
acked=$(cat "$dir"/acked-*.txt | wc -l)
echo "acknowledged before the kill: $acked"
[ "$acked" -gt 0 ] || { echo "no event was acknowledged"; exit 1; }
start "$dir/log1.db"
"$driver" check --target="$addr" --token=admin-token \
  --ids_in="$dir/acked-1.txt,$dir/acked-2.txt,$dir/acked-3.txt,$dir/acked-4.txt"
kill -TERM "$pid"; wait "$pid"

echo "--- 2. audit down, writer killed with a full outbox, both restart"
start "$dir/log2.db"
dead_addr="$addr"
kill -TERM "$pid"; wait "$pid"
"$driver" post --target="$dead_addr" --token=writer-token --outbox="$dir/writer.outbox" \
  --prefix=post --count=250 > "$dir/post.out" 2>&1 &
writer=$!
for _ in $(seq 1 400); do grep -q "recorded 250" "$dir/post.out" && break; sleep 0.05; done
grep -q "recorded 250" "$dir/post.out" || { cat "$dir/post.out"; echo "writer did not record"; exit 1; }
kill -9 "$writer"; wait "$writer" 2>/dev/null || true
for i in $(seq 0 249); do echo "post-$i"; done > "$dir/post-ids.txt"
start "$dir/log2.db"
"$driver" flush --target="$addr" --token=writer-token --outbox="$dir/writer.outbox"
"$driver" check --target="$addr" --token=admin-token --ids_in="$dir/post-ids.txt" --expect_count=250
kill -TERM "$pid"; wait "$pid"
echo "ok"
