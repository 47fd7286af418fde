#!/usr/bin/env bash
# A service binary's --metrics_port (common/server/service_flags): audit_svc alone, started with
# --metrics_port=0, prints "audit_svc metrics on <url>"; one `sharedosctl audit verify` moves
# sharedos_audit_verify_total{result="ok"} and the Verify RPC's OK count by exactly one, and the
# scraped text passes `promtool check metrics`. Without the flag no metrics line is printed.
set -euo pipefail
root="$TEST_SRCDIR/sharedos"
dir="$TEST_TMPDIR"
token="observability-admin-token-0123456789"
printf '%s\n' "$token" > "$dir/admin.token"
hash="$(printf '%s' "$token" | sha256sum | cut -d' ' -f1)"
printf '{"credentials": [{"name": "ops", "role": "admin", "token_sha256": "%s"}]}\n' "$hash" \
  > "$dir/credentials.json"

start() {  # start <log> <extra flags…>: the audit_svc pid in $pid once it listens
  local log="$1"; shift
  "$root/audit_svc/server/audit_svc" --port=0 --credentials="$dir/credentials.json" \
    --db="$dir/audit.db" --durability=normal "$@" > "$log" 2>&1 &
  pid=$!
  for _ in $(seq 1 400); do
    grep -q "^audit_svc listening on " "$log" && return 0
    kill -0 "$pid" 2>/dev/null || { cat "$log"; echo "audit_svc exited early"; exit 1; }
    sleep 0.05
  done
  cat "$log"; echo "audit_svc did not start"; exit 1
}

start "$dir/plain.log"
kill -TERM "$pid"; wait "$pid" || true
if grep -q "metrics on" "$dir/plain.log"; then echo "metrics served without --metrics_port"; exit 1; fi

start "$dir/audit.log" --metrics_port=0
trap 'kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true' EXIT
address="$(sed -n 's/^audit_svc listening on //p' "$dir/audit.log")"
url="$(sed -n 's/^audit_svc metrics on //p' "$dir/audit.log")"
[ -n "$url" ] || { cat "$dir/audit.log"; echo "no metrics line"; exit 1; }

value() {
  awk -v series="$2" '$1 == series { print $2; found = 1 } END { if (!found) print 0 }' "$1"
}
curl -fsS "$url" > "$dir/before.txt"
"$root/tools/sharedosctl/sharedosctl" --target="$address" --token_file="$dir/admin.token" \
  audit verify
curl -fsS "$url" > "$dir/after.txt"
failures=0
for series in 'sharedos_audit_verify_total{result="ok"}' \
    'sharedos_rpc_server_handled_total{code="OK",method="/sharedos.audit.v1.AuditLog/Verify"}'; do
  moved="$(awk -v b="$(value "$dir/before.txt" "$series")" -v a="$(value "$dir/after.txt" "$series")" \
    'BEGIN { print a - b }')"
  if [ "$moved" != "1" ]; then echo "FAIL: $series moved by $moved, want 1"; failures=1; fi
done
if [ "$(value "$dir/after.txt" 'sharedos_audit_verify_total{result="broken"}')" != "0" ]; then
  echo "FAIL: a broken verification counted"; failures=1
fi
promtool check metrics < "$dir/after.txt" || { echo "FAIL: promtool check metrics"; failures=1; }
[ "$failures" -eq 0 ] || { cat "$dir/after.txt"; exit 1; }
echo "ok"
