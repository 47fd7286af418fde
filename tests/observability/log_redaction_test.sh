#!/usr/bin/env bash
# The process log of a full e2e run carries no secret and no content: sharedosd --demo runs the
# README quickstart (a turn — read allowed, write refused, escalated —, the approval, a second
# turn that writes, audit verify) with its stdout and stderr captured. The log must hold the
# structured lines (the start-up configuration, each turn's turn.ended with its trace id, every
# "{" line valid JSON), and none of: the demo file's contents ("buy milk"), the admin, host and
# service tokens, the lease secret, the MCP secret.
set -euo pipefail
root="$TEST_SRCDIR/sharedos"
data="$TEST_TMPDIR/sharedos-data"
log="$TEST_TMPDIR/sharedosd.log"
ctl="$root/tools/sharedosctl/sharedosctl"

"$root/sharedosd/sharedosd" --demo --port=0 --data_dir="$data" --durability=normal \
  > "$log" 2>&1 &
pid=$!
trap 'kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 600); do
  grep -q "sharedosd: stop with Ctrl-C" "$log" && break
  kill -0 "$pid" 2>/dev/null || { cat "$log"; echo "sharedosd exited early"; exit 1; }
  sleep 0.05
done
address="$(sed -n 's/^sharedosd listening on //p' "$log")"
cd "$TEST_TMPDIR"
out="$("$ctl" --target="$address" turn)"; echo "$out"
esc="$(echo "$out" | sed -n 's/^escalation: //p')"
[ -n "$esc" ] || { echo "no escalation"; exit 1; }
# Only the escalation's reviewer may approve it (issue 16): alice, with her own credential.
(umask 077; "$ctl" --target="$address" credentials issue --role=reviewer \
  --principal=human:user-alice --namespace=world-demo | sed -n 's/^secret: //p' > alice.token)
[ -s alice.token ] || { echo "no reviewer credential"; exit 1; }
"$ctl" --target="$address" --token_file=alice.token escalations approve --id="$esc"
"$ctl" --target="$address" turn | tee "$TEST_TMPDIR/second.out"
grep -q '^turn: succeeded$' "$TEST_TMPDIR/second.out" || { echo "second turn failed"; exit 1; }
"$ctl" --target="$address" audit verify
kill -TERM "$pid"; wait "$pid" || { cat "$log"; echo "sharedosd exit code $?"; exit 1; }
trap - EXIT

failures=0
fail() { echo "FAIL: $1"; failures=$((failures + 1)); }
# The structured lines are there (a redaction test over an empty log would prove nothing).
grep -q '^{.*"event":"config"' "$log" || fail "no config line"
[ "$(grep -c '^{.*"event":"turn.ended".*"trace_id":"' "$log")" = 2 ] || fail "want 2 turn.ended lines with a trace_id"
grep -q '^{.*"event":"turn.ended".*"status":"EXECUTION_STATUS_ESCALATED"' "$log" || fail "no escalated turn.ended"
grep '^{' "$log" | python3 -c '
import json, sys
for n, line in enumerate(sys.stdin, 1):
    d = json.loads(line)
    for key in ("ts", "level", "service", "event"):
        assert key in d, f"line {n}: no {key}: {line}"
' || fail "a { line is not a JSON object with ts, level, service and event"

# Nothing of content or secrets.
grep -qi "buy milk" "$log" && fail "the demo file's contents are in the log"
for secret in admin.token host.token lease.secret mcp.secret; do
  value="$(head -n 1 "$data/$secret" | tr -d '\r\n')"
  [ "${#value}" -ge 16 ] || { fail "$secret: unexpectedly short"; continue; }
  if grep -qF -- "$value" "$log"; then fail "$secret is in the log"; fi
done
alice="$(head -n 1 alice.token | tr -d '\r\n')"
if grep -qF -- "$alice" "$log"; then fail "alice's reviewer secret is in the log"; fi
[ "$failures" -eq 0 ] || { echo "--- sharedosd:"; cat "$log"; exit 1; }
echo "ok: $(grep -c '^{' "$log") structured lines, no content, no secret"
