#!/usr/bin/env bash
# The reviewer console in headless Chromium (Debian's /usr/bin/chromium driven by playwright-core
# from the workspace's node_modules; no browser is downloaded): a real `sharedosd --demo` with
# --console_port=0, the README quickstart's first turn (escalated), alice and bob issued reviewer
# credentials, then console_browser.mjs signs in, decides and reads the record (see there). The
# turn runs twice first: the second escalation is denied with a note.
# Screenshots of the queue, the denial and the record land in $TEST_UNDECLARED_OUTPUTS_DIR.
set -euo pipefail
root="$TEST_SRCDIR/sharedos"
log="$TEST_TMPDIR/sharedosd.log"
data="$TEST_TMPDIR/sharedos-data"
workspace="$(dirname "$(readlink -f "$root/package.json")")"
[ -d "$workspace/node_modules/playwright-core" ] ||
  { echo "playwright-core is missing under $workspace/node_modules: run tools/setup.sh"; exit 1; }
[ -x /usr/bin/chromium ] || { echo "/usr/bin/chromium is missing: run tools/setup.sh"; exit 1; }

cd "$TEST_TMPDIR"
"$root/sharedosd/sharedosd" --demo --port=0 --console_port=0 --data_dir="$data" \
  --durability=normal > "$log" 2>&1 &
pid=$!
trap 'kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 600); do
  grep -q "sharedosd: stop with Ctrl-C" "$log" && break
  kill -0 "$pid" 2>/dev/null || { cat "$log"; echo "sharedosd exited early"; exit 1; }
  sleep 0.05
done
address="$(sed -n 's/^sharedosd listening on //p' "$log")"
console="$(sed -n 's/^sharedosd console on //p' "$log")"
[ -n "$address" ] && [ -n "$console" ] || { cat "$log"; echo "no address or console"; exit 1; }

ctl() { SHAREDOS_TARGET="$address" "$root/tools/sharedosctl/sharedosctl" "$@"; }
first="$(ctl turn)"
echo "$first"
escalation="$(echo "$first" | sed -n 's/^escalation: //p')"
[ -n "$escalation" ] || { cat "$log"; echo "the first turn did not escalate"; exit 1; }
# The same turn again, before any decision: a second pending escalation, for a denial with a note.
again="$(ctl turn)"
second_escalation="$(echo "$again" | sed -n 's/^escalation: //p')"
[ -n "$second_escalation" ] && [ "$second_escalation" != "$escalation" ] ||
  { echo "$again"; echo "the second turn did not escalate anew"; exit 1; }
for who in alice bob; do
  (umask 077; ctl credentials issue --role=reviewer --principal="human:user-$who" \
    --namespace=world-demo | sed -n 's/^secret: //p' > "$TEST_TMPDIR/$who.token")
  [ -s "$TEST_TMPDIR/$who.token" ] || { echo "no reviewer credential for $who"; exit 1; }
done

# Chromium's profile (its singleton socket path must fit a sun_path: TEST_TMPDIR is too deep).
browser_tmp="$(mktemp -d /tmp/sos-console.XXXXXX)"
trap 'kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$browser_tmp"' EXIT
out_dir="${TEST_UNDECLARED_OUTPUTS_DIR:-$TEST_TMPDIR/outputs}"
mkdir -p "$out_dir"
CONSOLE_URL="$console" ESCALATION="$escalation" DENIED_ESCALATION="$second_escalation" WORKSPACE="$workspace" OUT_DIR="$out_dir" \
  ALICE_TOKEN="$TEST_TMPDIR/alice.token" BOB_TOKEN="$TEST_TMPDIR/bob.token" \
  ADMIN_TOKEN="$data/admin.token" SHAREDOSCTL="$root/tools/sharedosctl/sharedosctl" \
  SHAREDOS_TARGET="$address" TURN_DIR="$TEST_TMPDIR" TMPDIR="$browser_tmp" \
  node "$root/tests/console/console_browser.mjs" || { echo "--- sharedosd:"; cat "$log"; exit 1; }

# No secret reached sharedosd's output.
for who in alice bob; do
  secret="$(cat "$TEST_TMPDIR/$who.token")"
  if grep -qF "${secret#sos_}" "$log"; then echo "$who's secret reached sharedosd's output"; exit 1; fi
done
for shot in queue.png denied.png record.png; do
  [ -s "$out_dir/$shot" ] || { echo "no screenshot $shot"; exit 1; }
done
kill -TERM "$pid"
wait "$pid" || { cat "$log"; echo "sharedosd exit code $?"; exit 1; }
trap - EXIT
rm -rf "$browser_tmp"
echo "ok"
