#!/usr/bin/env bash
# The reviewer console signs people in at a real OpenID provider (tests/oidc/provider.mjs: npm
# oidc-provider on loopback, its own keys; users alice, bob, ops, carol with groups), driven in
# headless Chromium (console_oidc.mjs: node:test, one test per case). A real `sharedosd --demo`
# runs with --oidc_config mapping the provider's groups to console roles (sub → human:<sub>;
# sharedos-reviewers-world-1 → reviewer of world-demo). An escalation addressed to human:alice is
# raised by a real host turn (the Python host client, clients/python, under the demo host token,
# with the demo grant issued for alice); alice signs in at the provider, sees it in her queue and
# approves it; the resolution record must name her provider's iss and sub. Then the refusals: a
# wrong state, a replayed callback and a replayed code, a wrong and a missing PKCE verifier, the
# provider unreachable (the browser's redirect back to the console is held back by intercepting
# the callback request, so the test decides what the console receives).
# Argument: "signin" (alice's sign-in and approval, the record's iss/sub, a person without a role)
# or "refusals" (the browser refusal cases, run apart: see BUILD).
set -euo pipefail
mode="${1:-signin}"
if [ "$mode" = refusals ]; then
  cases="wrong state|replayed|twice|PKCE|unreachable"
else
  cases="alice signs in|without a SharedOS role"
fi
root="$TEST_SRCDIR/sharedos"
workspace="$(dirname "$(readlink -f "$root/package.json")")"
[ -d "$workspace/node_modules/playwright-core" ] ||
  { echo "playwright-core is missing under $workspace/node_modules: run tools/setup.sh"; exit 1; }
[ -x /usr/bin/chromium ] || { echo "/usr/bin/chromium is missing: run tools/setup.sh"; exit 1; }
cd "$TEST_TMPDIR"
pids=()
browser_tmp="$(mktemp -d /tmp/sos-oidc.XXXXXX)"
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$browser_tmp"
}
trap cleanup EXIT

wait_for_line() {  # file, pattern, pid
  for _ in $(seq 1 1200); do
    grep -q "$2" "$1" && return 0
    kill -0 "$3" 2>/dev/null || { cat "$1"; echo "process $3 exited early"; exit 1; }
    sleep 0.05
  done
  cat "$1"; echo "timed out waiting for \"$2\" in $1"; exit 1
}

# The console's port, taken before the provider starts: the provider registers the console's
# redirect URI, and sharedosd needs the provider's issuer.
console_port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
console="http://127.0.0.1:$console_port"
"$root/tests/oidc/run_provider" --console_redirect_uri="$console/oidc/callback" \
  > provider.out 2> provider.err &
provider_pid=$!
pids+=("$provider_pid")
wait_for_line provider.out '^http' "$provider_pid"
issuer="$(head -1 provider.out)"
secret="console-secret-for-tests-only-0123456789"
(umask 077; printf '%s\n' "$secret" > console.secret)
cat > oidc.json <<EOF
{"issuer": "$issuer",
 "audiences": ["urn:sharedos:grpc"],
 "allow_loopback_http": true,
 "console": {"client_id": "sharedos-console", "client_secret_file": "$TEST_TMPDIR/console.secret",
             "redirect_uri": "$console/oidc/callback"},
 "claims": {"principal": "sub", "groups": "groups",
            "rules": [{"group": "sharedos-reviewers-world-1", "role": "reviewer",
                       "namespaces": ["world-demo"]},
                      {"group": "sharedos-admins", "role": "admin", "namespaces": ["*"]}]}}
EOF

data="$TEST_TMPDIR/sharedos-data"
"$root/sharedosd/sharedosd" --demo --port=0 --console_port="$console_port" --data_dir="$data" \
  --durability=normal --oidc_config="$TEST_TMPDIR/oidc.json" > sharedosd.log 2>&1 &
sharedosd_pid=$!
pids+=("$sharedosd_pid")
wait_for_line sharedosd.log "sharedosd: stop with Ctrl-C" "$sharedosd_pid"
address="$(sed -n 's/^sharedosd listening on //p' sharedosd.log)"
ctl() { SHAREDOS_TARGET="$address" "$root/tools/sharedosctl/sharedosctl" \
  --token_file="$data/admin.token" "$@"; }

# The refusal cases need no escalation (and no Python client): only the sign-in mode raises one.
escalation=""
if [ "$mode" = signin ]; then
# The demo grant (deploy/compose/demo-grant.textproto), for alice
# as the provider names her (human:alice), then a host turn of hers whose write is refused and
# escalated to her.
cat > alice-grant.textproto <<'EOF'
id: "grant-oidc-alice"
namespace_id: "world-demo"
subject { agent_id: "agent-assistant" }
issuer { human_user_id: "alice" }
capabilities {
  resource { namespace: "sharedos.execution" path: "agent" path: "agent-assistant" }
  actions: "invoke"
  scope: SCOPE_EXACT
}
capabilities {
  resource { namespace: "files" path: "Workspace" }
  actions: "read"
  scope: SCOPE_DESCENDANTS
}
capabilities {
  resource { namespace: "files" path: "Scratch" }
  actions: "create"
  scope: SCOPE_DESCENDANTS
}
capabilities {
  resource { namespace: "sharedos" path: "escalation" }
  actions: "request"
  scope: SCOPE_EXACT
}
constraints {}
issued_at { seconds: 1700000000 }
EOF
ctl grants issue --file=alice-grant.textproto > /dev/null
"$root/clients/python/generate.sh" "$TEST_TMPDIR/gen" "$root/proto" > /dev/null
escalation="$(SHAREDOS_TARGET="$address" SHAREDOS_HOST_TOKEN_FILE="$data/host.token" \
  PYTHONPATH="$root/clients/python:$TEST_TMPDIR/gen" /usr/bin/python3 - <<'EOF'
import os
from sharedos_host import Connection, Host
target = os.environ["SHAREDOS_TARGET"]
token = os.environ["SHAREDOS_HOST_TOKEN_FILE"]
host = Host(Connection.from_token_file(target, token), grant_store=Connection.from_token_file(target, token))
turn = host.open_turn(namespace="world-demo", agent="agent:agent-assistant", owner="human:alice",
                      purpose="keep notes", tools=["files.create", "sharedos.escalate"],
                      message="summarise my notes")
write = turn.invoke("files.create", {"path": "Workspace/summary.txt", "content": "summary\n"})
assert write.code == "no_matching_grant", write
print(turn.escalate("The assistant needs to write its summary.", write.required_authority).escalation_id)
EOF
)"
[ -n "$escalation" ] || { cat sharedosd.log; echo "no escalation for alice"; exit 1; }
ctl escalations show --id="$escalation" | grep -A1 "^reviewer {" | grep -q "human_user_id: \"alice\"" ||
  { ctl escalations show --id="$escalation"; echo "the escalation is not addressed to human:alice"; exit 1; }
fi

out_dir="${TEST_UNDECLARED_OUTPUTS_DIR:-$TEST_TMPDIR/outputs}"
mkdir -p "$out_dir"
CONSOLE_URL="$console" ISSUER="$issuer" ESCALATION="$escalation" CONSOLE_SECRET="$secret" \
  PROVIDER_PID="$provider_pid" PROVIDER_LOG="$TEST_TMPDIR/provider.err" WORKSPACE="$workspace" \
  OUT_DIR="$out_dir" TMPDIR="$browser_tmp" \
  node --test --test-concurrency=1 --test-reporter=spec --test-name-pattern="$cases" \
  "$root/tests/console/console_oidc.mjs" ||
  { echo "--- sharedosd:"; cat sharedosd.log; echo "--- provider:"; cat provider.err; exit 1; }

if [ "$mode" = refusals ]; then echo ok; exit 0; fi
# The decision is alice's as the provider vouches for her: the record names its iss and sub.
shown="$(ctl escalations show --id="$escalation")"
echo "$shown"
echo "$shown" | grep -q "approved" || { echo "the escalation is not approved"; exit 1; }
echo "$shown" | grep -qF "with an identity provider token (idpIssuer $issuer, idpSubject alice)" ||
  { echo "escalations show does not name the provider's iss/sub"; exit 1; }
resolved="$(ctl --json audit query --type=escalation.resolved --namespace=world-demo)"
echo "$resolved" | grep -F "$escalation" > /dev/null ||
  { echo "$resolved"; echo "no escalation.resolved record of $escalation"; exit 1; }
echo "$resolved" | grep -F "$issuer" > /dev/null ||
  { echo "$resolved"; echo "the resolution record does not name the provider's iss"; exit 1; }
echo "$resolved" | grep -E '"(idp_?[sS]ubject|sub|idpSubject)": *"alice"' > /dev/null ||
  { echo "$resolved"; echo "the resolution record does not name alice's sub"; exit 1; }
# No secret reached sharedosd's output.
if grep -qF "$secret" sharedosd.log; then echo "the client secret reached the log"; exit 1; fi
[ -s "$out_dir/oidc-queue.png" ] || { echo "no screenshot"; exit 1; }
kill -TERM "$sharedosd_pid"
wait "$sharedosd_pid" || { cat sharedosd.log; echo "sharedosd exit code $?"; exit 1; }
echo "ok"
