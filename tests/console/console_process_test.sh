#!/usr/bin/env bash
# The reviewer console as its own process (//console:console) in a deployment of separate
# services: real audit_svc, grantstore_svc and console processes, driven over HTTP with curl. An
# admin signs in and reads the record from audit_svc (the chain verifies); a reviewer issued
# through the control plane signs in (the console looks her credential up at grantstore_svc with
# its own, service:console), sees its (empty) queue and is refused the record by audit_svc
# (which, without --grantstore_target, does not know it) while its session stays; a decision
# posted without the CSRF token is refused 403; revoked, her next page ends the session. Without
# its own token the console refuses to start.
set -euo pipefail
root="$TEST_SRCDIR/sharedos"
dir="$TEST_TMPDIR"
admin="sos_admin-$RANDOM$RANDOM$RANDOM"
# The grant store's own service credential (service:grantstore), with which it appends its
# control-plane records (ADR 0014: each service its own).
grantstore_token="sos_grantstore-$RANDOM$RANDOM$RANDOM"
# The console's (service:console): admitted to the credential lookup alone.
console_token="sos_console-$RANDOM$RANDOM$RANDOM"
digest() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }
printf '%s\n' "$admin" > "$dir/admin.token"
printf '%s\n' "$grantstore_token" > "$dir/grantstore.token"
printf '%s\n' "$console_token" > "$dir/console.token"
chmod 600 "$dir/admin.token" "$dir/grantstore.token" "$dir/console.token"
cat > "$dir/credentials.json" <<JSON
{"credentials": [
  {"name": "ops", "role": "admin", "token_sha256": "$(digest "$admin")"},
  {"name": "grantstore", "role": "service", "token_sha256": "$(digest "$grantstore_token")"},
  {"name": "console", "role": "service", "token_sha256": "$(digest "$console_token")"}]}
JSON

pids=()
cleanup() { for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
wait_for() {  # wait_for LOG PATTERN PID
  for _ in $(seq 1 600); do
    grep -q "$2" "$1" && return 0
    kill -0 "$3" 2>/dev/null || { cat "$1"; echo "exited early"; exit 1; }
    sleep 0.05
  done
  cat "$1"; echo "timed out waiting for $2"; exit 1
}

"$root/audit_svc/server/audit_svc" --port=0 --db="$dir/audit.db" \
  --credentials="$dir/credentials.json" > "$dir/audit.log" 2>&1 &
pids+=($!)
wait_for "$dir/audit.log" "^audit_svc listening on " "${pids[0]}"
audit="$(sed -n 's/^audit_svc listening on //p' "$dir/audit.log")"

"$root/grantstore_svc/server/grantstore_svc" --port=0 --db="$dir/grants.db" \
  --credentials="$dir/credentials.json" --audit=remote --audit_target="$audit" \
  --audit_token_file="$dir/grantstore.token" --audit_outbox="$dir/grantstore.outbox" \
  > "$dir/grantstore.log" 2>&1 &
pids+=($!)
wait_for "$dir/grantstore.log" "^grantstore_svc listening on " "${pids[1]}"
grantstore="$(sed -n 's/^grantstore_svc listening on //p' "$dir/grantstore.log")"

# Without its own token the console does not start (it could not look credentials up).
if "$root/console/console" --port=0 --console_port=0 --credentials="$dir/credentials.json" \
  --grantstore_target="$grantstore" --audit_target="$audit" > "$dir/refused.log" 2>&1; then
  echo "the console started without --grantstore_token_file"; exit 1
fi
grep -q -- '--grantstore_token_file: required' "$dir/refused.log" || { cat "$dir/refused.log"; exit 1; }
if "$root/console/console" --port=0 --console_port=0 --credentials="$dir/credentials.json" \
  --grantstore_target="$grantstore" --grantstore_token_file="$dir/console.token" \
  --audit_target="$audit" --console_public_origin="https://evil.example/path" > "$dir/refused.log" 2>&1; then
  echo "the console started with a public origin that has a path"; exit 1
fi
grep -q -- '--console_public_origin: scheme://host' "$dir/refused.log" || { cat "$dir/refused.log"; exit 1; }

"$root/console/console" --port=0 --console_port=0 --credentials="$dir/credentials.json" \
  --grantstore_target="$grantstore" --grantstore_token_file="$dir/console.token" \
  --audit_target="$audit" --console_public_origin=https://console.example > "$dir/console.log" 2>&1 &
pids+=($!)
wait_for "$dir/console.log" "^console web listening on " "${pids[2]}"
console="$(sed -n 's/^console web listening on //p' "$dir/console.log")"
console_grpc="$(sed -n 's/^console listening on //p' "$dir/console.log")"
echo "grantstore $grantstore, console $console (gRPC $console_grpc)"

ctl() { SHAREDOS_TARGET="$grantstore" "$root/tools/sharedosctl/sharedosctl" "$@"; }
reviewer="$(ctl --token_file="$dir/admin.token" credentials issue --role=reviewer \
  --principal=human:user-alice --namespace=world-demo | sed -n 's/^secret: //p')"
[ -n "$reviewer" ] || { echo "no reviewer credential"; exit 1; }

# sign_in JAR SECRET [ORIGIN]: the sign-in form's double-submitted token, then the secret (posted
# from ORIGIN when given).
sign_in() {
  curl -sf -c "$1" -b "$1" -o /dev/null "${console}signin"
  local token origin=()
  token="$(awk '$6 == "sos_signin" {print $7}' "$1")"
  [ -z "${3:-}" ] || origin=(-H "Origin: $3")
  curl -s -c "$1" -b "$1" -o /dev/null -w '%{http_code}' "${origin[@]}" \
    --data-urlencode "signin=$token" --data-urlencode "secret=$2" "${console}signin"
}
expect() {  # expect WHAT WANT GOT
  [ "$2" = "$3" ] || { echo "--- console:"; cat "$dir/console.log"; echo "$1: want $2, got $3"; exit 1; }
}

# Posted from --console_public_origin: accepted; from another site: refused.
expect "sign-in from the public origin" 303 \
  "$(sign_in "$dir/public.jar" "$admin" https://console.example)"
expect "sign-in from another site" 403 "$(sign_in "$dir/other.jar" "$admin" https://other.example)"
expect "admin sign-in" 303 "$(sign_in "$dir/admin.jar" "$admin")"
record="$(curl -s -b "$dir/admin.jar" -w '\n%{http_code}' "${console}record?type=credential.changed")"
expect "admin record" 200 "$(echo "$record" | tail -1)"
echo "$record" | grep -q 'Chain: ok: [0-9]* records verify' || { echo "$record"; echo "no verify"; exit 1; }

expect "reviewer sign-in" 303 "$(sign_in "$dir/alice.jar" "$reviewer")"
queue="$(curl -s -b "$dir/alice.jar" "${console}queue")"
echo "$queue" | grep -q 'No pending escalations for you in world-demo' ||
  { echo "$queue"; echo "no queue"; exit 1; }
forged="$(curl -s -b "$dir/alice.jar" -o /dev/null -w '%{http_code}' \
  --data 'id=esc-1&decision=approve' "${console}decide")"
expect "decision without CSRF token" 403 "$forged"
# This audit_svc honours --credentials only (no --grantstore_target): it does not know alice at
# all. The console shows its refusal and keeps the session (the grant store still knows her).
refused="$(curl -s -b "$dir/alice.jar" -w '\n%{http_code}' "${console}record")"
expect "reviewer record (audit_svc does not know her)" 401 "$(echo "$refused" | tail -1)"
echo "$refused" | grep -q 'UNAUTHENTICATED' || { echo "$refused"; exit 1; }
expect "reviewer queue after the refusal" 200 \
  "$(curl -s -b "$dir/alice.jar" -o /dev/null -w '%{http_code}' "${console}queue")"
# Revoked through the control plane: her next page ends the session.
id="$(ctl --token_file="$dir/admin.token" credentials list | awk '$3 == "human:user-alice" {print $1}')"
ctl --token_file="$dir/admin.token" credentials revoke --id="$id" > /dev/null
expect "queue after revocation" 401 \
  "$(curl -s -b "$dir/alice.jar" -c "$dir/alice.jar" -o /dev/null -w '%{http_code}' "${console}queue")"
expect "queue after the session ended" 303 \
  "$(curl -s -b "$dir/alice.jar" -o /dev/null -w '%{http_code}' "${console}queue")"

for secret in "$admin" "$reviewer" "$grantstore_token" "$console_token"; do
  if grep -qF "${secret#sos_}" "$dir/grantstore.log" "$dir/audit.log" "$dir/console.log"; then
    echo "a secret reached a service's output"; exit 1
  fi
done
echo "ok"
