#!/usr/bin/env bash
# Issue 20's "Done when": scrapes /metrics of a running `sharedosd --demo --metrics_port=0`
# before and after the quickstart turn (`sharedosctl turn`: the read allowed, the write refused
# no_matching_grant, escalated) and its approval by the reviewer, and finds each counter moved by
# exactly the expected amount, the series bounded (no id, actor or path in any label), and the scraped text valid for
# `promtool check metrics`.
set -euo pipefail
root="$TEST_SRCDIR/sharedos"
data="$TEST_TMPDIR/sharedos-data"
log="$TEST_TMPDIR/sharedosd.log"

"$root/sharedosd/sharedosd" --demo --port=0 --metrics_port=0 --data_dir="$data" \
  --durability=normal > "$log" 2>&1 &
pid=$!
trap 'kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 600); do
  grep -q "sharedosd: stop with Ctrl-C" "$log" && break
  kill -0 "$pid" 2>/dev/null || { cat "$log"; echo "sharedosd exited early"; exit 1; }
  sleep 0.05
done
address="$(sed -n 's/^sharedosd listening on //p' "$log")"
url="$(sed -n 's/^sharedosd metrics on //p' "$log")"
[ -n "$address" ] && [ -n "$url" ] || { cat "$log"; echo "no address or metrics line"; exit 1; }
case "$url" in http://127.0.0.1:*/metrics) ;; *) echo "metrics not on loopback: $url"; exit 1 ;; esac

curl -fsS "$url" > "$TEST_TMPDIR/before.txt"
# sharedosctl reads sharedos-data/host.token under the working directory.
(cd "$TEST_TMPDIR" && "$root/tools/sharedosctl/sharedosctl" --target="$address" turn) \
  > "$TEST_TMPDIR/turn.out" 2>&1 || { cat "$TEST_TMPDIR/turn.out"; echo "turn failed"; exit 1; }
cat "$TEST_TMPDIR/turn.out"
grep -q '^turn: escalated$' "$TEST_TMPDIR/turn.out" || { echo "the turn did not escalate"; exit 1; }
# The escalation's reviewer approves it (the README quickstart's credential step).
esc="$(sed -n 's/^escalation: //p' "$TEST_TMPDIR/turn.out")"
(cd "$TEST_TMPDIR" && umask 077 && "$root/tools/sharedosctl/sharedosctl" --target="$address" \
  credentials issue --role=reviewer --principal=human:user-alice --namespace=world-demo |
  sed -n 's/^secret: //p' > alice.token)
(cd "$TEST_TMPDIR" && "$root/tools/sharedosctl/sharedosctl" --target="$address" \
  --token_file=alice.token escalations approve --id="$esc") > "$TEST_TMPDIR/approve.out" 2>&1 ||
  { cat "$TEST_TMPDIR/approve.out"; echo "approve failed"; exit 1; }
curl -fsS "$url" > "$TEST_TMPDIR/after.txt"

# The value of one exact series (name and labels as exposed), 0 when absent.
value() {
  awk -v series="$2" '$1 == series { print $2; found = 1 } END { if (!found) print 0 }' "$1"
}
failures=0
expect_moved() {
  local series="$1" want="$2" before after
  before="$(value "$TEST_TMPDIR/before.txt" "$series")"
  after="$(value "$TEST_TMPDIR/after.txt" "$series")"
  if ! awk -v b="$before" -v a="$after" -v w="$want" 'BEGIN { exit !((a - b) == w) }'; then
    echo "FAIL: $series moved $before -> $after, want +$want"
    failures=$((failures + 1))
  else
    echo "ok: $series +$want"
  fi
}
d='sharedos_decisions_total'
expect_moved "$d{fail_closed=\"false\",operation=\"authorize\",outcome=\"allowed\",reason_code=\"allowed\"}" 1
expect_moved "$d{fail_closed=\"false\",operation=\"authorize\",outcome=\"denied\",reason_code=\"no_matching_grant\"}" 1
expect_moved "$d{fail_closed=\"false\",operation=\"admit_turn\",outcome=\"allowed\",reason_code=\"allowed\"}" 1
expect_moved 'sharedos_escalations_requested_total' 1
expect_moved 'sharedos_escalations_resolved_total{resolution="approved"}' 1
expect_moved 'sharedos_escalations_resolved_total{resolution="denied"}' 0
expect_moved 'sharedos_turns_finished_total{status="escalated"}' 1
expect_moved 'sharedos_turns_open' 0
expect_moved "$d{fail_closed=\"true\",operation=\"authorize\",outcome=\"denied\",reason_code=\"audit_unavailable\"}" 0
expect_moved 'sharedos_rpc_server_handled_total{code="OK",method="/sharedos.envelope.v1.Envelope/OpenTurn"}' 1
expect_moved 'sharedos_rpc_server_handled_total{code="OK",method="/sharedos.envelope.v1.Envelope/FinishTurn"}' 1
# Every record of the turn was appended: the chain head moved by the appends counted.
appends="$(( $(value "$TEST_TMPDIR/after.txt" sharedos_audit_appends_total | cut -d. -f1) - \
  $(value "$TEST_TMPDIR/before.txt" sharedos_audit_appends_total | cut -d. -f1) ))"
head_moved="$(( $(value "$TEST_TMPDIR/after.txt" sharedos_audit_chain_head_sequence | cut -d. -f1) - \
  $(value "$TEST_TMPDIR/before.txt" sharedos_audit_chain_head_sequence | cut -d. -f1) ))"
if [ "$appends" -lt 5 ] || [ "$appends" != "$head_moved" ]; then
  echo "FAIL: audit appends +$appends, chain head +$head_moved (want equal, at least 5)"
  failures=$((failures + 1))
fi

# Bounded labels: nothing of the turn's ids, actors or paths in any series.
for secret in "agent-assistant" "user-alice" "Workspace" "esc-" "turn-" "exec-" "world-demo"; do
  if grep -v '^#' "$TEST_TMPDIR/after.txt" | grep -q -- "$secret"; then
    echo "FAIL: a label holds \"$secret\":"; grep -v '^#' "$TEST_TMPDIR/after.txt" | grep -- "$secret" | head
    failures=$((failures + 1))
  fi
done

# promtool reads the exposition from stdin; it exits non-zero on a format error (lint notes
# such as a counter without _total are errors too).
if ! promtool check metrics < "$TEST_TMPDIR/after.txt" > "$TEST_TMPDIR/promtool.out" 2>&1; then
  cat "$TEST_TMPDIR/promtool.out"; echo "FAIL: promtool check metrics"; failures=$((failures + 1))
fi

[ "$failures" -eq 0 ] || { echo "--- sharedosd:"; cat "$log"; exit 1; }
kill -TERM "$pid"
wait "$pid" || { cat "$log"; echo "sharedosd exit code $?"; exit 1; }
trap - EXIT
echo "ok"
