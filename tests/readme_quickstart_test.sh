#!/usr/bin/env bash
# The README "Quickstart", verbatim: starts the real `sharedosd --demo` (port 0, data directory
# $TEST_TMPDIR/sharedos-data), then runs the fenced block between the quickstart markers with
# bash in $TEST_TMPDIR, the real sharedosctl first on PATH and SHAREDOS_TARGET set to sharedosd's
# address. The turn is refused no_matching_grant and escalates, the approval lets the next turn
# write, and the audit chain verifies.
set -euo pipefail
root="$TEST_SRCDIR/sharedos"
readme="$root/README.md"
log="$TEST_TMPDIR/sharedosd.log"
out="$TEST_TMPDIR/quickstart.out"

block="$(sed -n '/^<!-- quickstart:begin -->$/,/^<!-- quickstart:end -->$/p' "$readme" |
  sed -e '1,/^```sh$/d' -e '/^```$/,$d')"
grep -q '^<!-- quickstart:begin -->$' "$readme" || { echo "README: quickstart:begin missing"; exit 1; }
grep -q '^<!-- quickstart:end -->$' "$readme" || { echo "README: quickstart:end missing"; exit 1; }
[ -n "$block" ] || { echo "README: no sh block between the quickstart markers"; exit 1; }

bin_dir="$TEST_TMPDIR/bin"
mkdir -p "$bin_dir"
ln -sf "$root/tools/sharedosctl/sharedosctl" "$bin_dir/sharedosctl"

cd "$TEST_TMPDIR"
"$root/sharedosd/sharedosd" --demo --port=0 --data_dir="$TEST_TMPDIR/sharedos-data" \
  --durability=normal > "$log" 2>&1 &
pid=$!
trap 'kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 600); do
  grep -q "sharedosd: stop with Ctrl-C" "$log" && break
  kill -0 "$pid" 2>/dev/null || { cat "$log"; echo "sharedosd exited early"; exit 1; }
  sleep 0.05
done
address="$(sed -n 's/^sharedosd listening on //p' "$log")"
[ -n "$address" ] || { cat "$log"; echo "no address"; exit 1; }

echo "--- the README block:"
echo "$block"
echo "---"
if ! PATH="$bin_dir:$PATH" SHAREDOS_TARGET="$address" \
    bash -euo pipefail -c "$block" > "$out" 2>&1; then
  cat "$out"; echo "--- sharedosd:"; cat "$log"; echo "the README block failed"; exit 1
fi
cat "$out"

check() {
  grep -qE "$1" "$out" || { echo "--- sharedosd:"; cat "$log"; echo "expected: $2"; exit 1; }
}
check 'files\.read Workspace/notes\.txt: succeeded' "the read allowed"
check 'files\.create Workspace/summary\.txt: denied no_matching_grant' "the write refused no_matching_grant"
check '^escalation: esc-' "an escalation: line"
check '^turn: escalated$' "the first turn escalated"
check 'is approved; issued grant' "the escalation approved"
# alice's approval is recorded as hers (the authenticated principal), and her secret is nowhere
# in the audit log nor in sharedosd's output.
secret="$(cat "$TEST_TMPDIR/alice.token")"
[ -n "$secret" ] || { echo "alice.token is empty"; exit 1; }
ctl() {
  PATH="$bin_dir:$PATH" SHAREDOS_TARGET="$address" \
    sharedosctl --token_file="$TEST_TMPDIR/sharedos-data/admin.token" "$@"
}
ctl credentials list | grep -qE '^cred-[^ ]+  reviewer  human:user-alice  namespaces=world-demo$' ||
  { ctl credentials list; echo "no reviewer credential for alice"; exit 1; }
records="$(PATH="$bin_dir:$PATH" SHAREDOS_TARGET="$address" \
  sharedosctl --token_file="$TEST_TMPDIR/sharedos-data/admin.token" --json audit query)"
ctl --json audit query --type=escalation.resolved --actor=human:user-alice |
  grep -q 'ESCALATION_RESOLVED' || { echo "escalation.resolved does not name alice"; exit 1; }
if echo "$records" | grep -qF "${secret#sos_}" || grep -qF "${secret#sos_}" "$log"; then
  echo "the reviewer secret reached the audit log or sharedosd's output"; exit 1
fi
check 'files\.create Workspace/summary\.txt: succeeded' "the second write succeeded"
check '^turn: succeeded$' "the second turn succeeded"
check '^ok: [0-9]+ records verify' "audit verify passing"
[ -f "$TEST_TMPDIR/sharedos-data/files/human/user-alice/workspace/Workspace/summary.txt" ] ||
  { echo "summary.txt not written"; exit 1; }

kill -TERM "$pid"
wait "$pid" || { cat "$log"; echo "sharedosd exit code $?"; exit 1; }
trap - EXIT
echo "ok"
