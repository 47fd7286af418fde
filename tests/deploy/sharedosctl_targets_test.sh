#!/usr/bin/env bash
# sharedosctl against services run one by one: $SHAREDOS_AUDIT_TARGET and
# $SHAREDOS_GRANTSTORE_TARGET route the AuditLog and GrantStore calls, --target the rest. With
# --target at a closed port and only the audit log's target set to a real sharedosd, `audit
# verify` succeeds and `grants list` (still on --target) fails; with the grant store's set too,
# `grants list` succeeds. A variable naming a host off loopback without --tls_ca is a usage
# error naming the variable.
set -euo pipefail
root="$TEST_SRCDIR/sharedos"
ctl="$root/tools/sharedosctl/sharedosctl"
data="$TEST_TMPDIR/sharedos-data"
log="$TEST_TMPDIR/sharedosd.log"
fail() { echo "FAIL: $*"; exit 1; }

"$root/sharedosd/sharedosd" --demo --port=0 --data_dir="$data" --durability=normal > "$log" 2>&1 &
pid=$!
trap 'kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 600); do
  grep -q "sharedosd: stop with Ctrl-C" "$log" && break
  kill -0 "$pid" 2>/dev/null || { cat "$log"; fail "sharedosd exited early"; }
  sleep 0.05
done
address="$(sed -n 's/^sharedosd listening on //p' "$log")"
[ -n "$address" ] || { cat "$log"; fail "no address"; }
closed=127.0.0.1:1
admin=(--token_file="$data/admin.token" --timeout=3s)

out="$(SHAREDOS_AUDIT_TARGET="$address" "$ctl" --target="$closed" "${admin[@]}" audit verify)" ||
  fail "audit verify through \$SHAREDOS_AUDIT_TARGET: $out"
echo "$out" | grep -qE '^ok: [0-9]+ records verify' || fail "audit verify: $out"
if SHAREDOS_AUDIT_TARGET="$address" "$ctl" --target="$closed" "${admin[@]}" \
    grants list --namespace=world-demo > "$TEST_TMPDIR/list.out" 2>&1; then
  fail "grants list reached a grant store although only the audit log's target was set"
fi
grep -q UNAVAILABLE "$TEST_TMPDIR/list.out" || { cat "$TEST_TMPDIR/list.out"; fail "expected UNAVAILABLE"; }
out="$(SHAREDOS_GRANTSTORE_TARGET="$address" "$ctl" --target="$closed" "${admin[@]}" \
  grants list --namespace=world-demo)" || fail "grants list through \$SHAREDOS_GRANTSTORE_TARGET: $out"
echo "$out" | grep -q grant-demo-assistant || fail "grants list: $out"

set +e
out="$(SHAREDOS_GRANTSTORE_TARGET=grantstore.example:50054 "$ctl" --target="$address" \
  "${admin[@]}" grants list --namespace=world-demo 2>&1)"
code=$?
set -e
[ "$code" -eq 2 ] || fail "plaintext off loopback: exit $code, want 2: $out"
echo "$out" | grep -qF '$SHAREDOS_GRANTSTORE_TARGET: plaintext is allowed only on loopback' ||
  fail "the refusal does not name the variable: $out"
echo ok
