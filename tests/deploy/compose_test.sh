#!/usr/bin/env bash
# The compose deployment built and run for real (issue 17's "Done when"): builds the images from
# this test's binaries (deploy/build-images.sh, incremental), makes a CA, certificates and
# secrets, starts the four services as containers with TLS on every hop on free loopback ports,
# waits for every HEALTHCHECK, then runs deploy/README.md's quickstart block verbatim through
# sharedosctl with the CA: read allowed, write refused no_matching_grant, escalated, approved by
# alice's reviewer credential, the next turn's write succeeds, `audit verify` ok. Then stops the
# deployment, starts it again on the same volumes and checks every record was kept (the same
# count verifies, the grant and the written file are there, and the approved write is allowed
# again once the file is removed). Before the restart, the certificates are reissued on disk
# and the audit log is seen serving the new one without a restart. One token per service (ADR
# 0014, T4): each container holds only its own token, and each service's token is refused
# operators' calls (PERMISSION_DENIED); audit_svc authenticates a run-time credential at the
# grant store with its own token.
# Needs root, podman, podman-compose and debootstrap (tools/setup.sh); fails, never skips,
# without them.
set -euo pipefail
source "$TEST_SRCDIR/sharedos/tests/deploy/compose_lib.sh"
block="$(readme_block compose-quickstart)"

# Free loopback ports for what the deployment publishes, and a project of its own.
read -r envelope_port mcp_port grantstore_port audit_port console_port < <(python3 -c '
import socket
socks = [socket.socket() for _ in range(5)]
for s in socks: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))')
export SHAREDOS_ENVELOPE_PORT="$envelope_port" SHAREDOS_MCP_PORT="$mcp_port"
export SHAREDOS_GRANTSTORE_PORT="$grantstore_port" SHAREDOS_AUDIT_PORT="$audit_port"
export SHAREDOS_CONSOLE_PORT="$console_port"
export SHAREDOS_PROJECT="sostest$$"
export SHAREDOS_CERTS_DIR="$TEST_TMPDIR/certs" SHAREDOS_SECRETS_DIR="$TEST_TMPDIR/secrets"
# The base image's cache outlives the test (the home of the user, not the test's HOME).
home="$(getent passwd "$(id -u)" | cut -d: -f6)"
export SHAREDOS_IMAGE_CACHE="${SHAREDOS_IMAGE_CACHE:-${home:-/root}/.cache/sharedos}"

# The block runs in a directory laid out like the repository: deploy/ and sharedosctl.
work="$TEST_TMPDIR/work"
mkdir -p "$work/bazel-bin/tools/sharedosctl"
ln -sfn "$root/deploy" "$work/deploy"
ln -sf "$root/tools/sharedosctl/sharedosctl" "$work/bazel-bin/tools/sharedosctl/sharedosctl"
compose() { "$work/deploy/compose.sh" "$@"; }
source "$root/deploy/lib.sh"

cleanup() {
  compose down > "$TEST_TMPDIR/down.log" 2>&1 || true
  sharedos_podman volume ls -q --filter "label=io.podman.compose.project=$SHAREDOS_PROJECT" |
    xargs -r podman "${SHAREDOS_PODMAN_GLOBAL[@]}" volume rm -f > /dev/null 2>&1 || true
}
trap cleanup EXIT

started=$SECONDS
"$root/deploy/build-images.sh" --bin_dir="$root" || fail "build-images.sh failed"
echo "images built in $((SECONDS - started))s"
"$root/deploy/gen-certs.sh" "$SHAREDOS_CERTS_DIR"
"$root/deploy/gen-secrets.sh" "$SHAREDOS_SECRETS_DIR"

start() {
  compose up -d > "$TEST_TMPDIR/up.log" 2>&1 || { cat "$TEST_TMPDIR/up.log"; fail "compose up"; }
  compose wait-healthy 120 || fail "a service did not become healthy"
}
start

echo "--- deploy/README.md's compose quickstart:"
echo "$block"
echo "---"
if ! (cd "$work" && bash -euo pipefail -c "$block") > "$out" 2>&1; then
  cat "$out"
  for service in audit grantstore authorizer envelope console; do
    echo "--- $service:"; sharedos_podman logs --tail 30 "${SHAREDOS_PROJECT}_${service}_1" 2>&1 || true
  done
  fail "the quickstart block failed"
fi
cat "$out"
check() { grep -qE "$1" "$out" || fail "expected: $2"; }
check 'files\.read Workspace/notes\.txt: succeeded' "the read allowed"
check 'files\.create Workspace/summary\.txt: denied no_matching_grant' "the write refused no_matching_grant"
check '^turn: escalated$' "the first turn escalated"
check '^escalation: esc-' "an escalation: line"
check 'is approved; issued grant' "the escalation approved"
check 'files\.create Workspace/summary\.txt: succeeded' "the second write succeeded"
check '^turn: succeeded$' "the second turn succeeded"
check '^ok: [0-9]+ records verify' "audit verify passing"
records="$(sed -n 's/^ok: \([0-9]*\) records verify.*/\1/p' "$out" | tail -n 1)"

ctl() {
  SHAREDOS_TARGET="127.0.0.1:$envelope_port" \
    SHAREDOS_GRANTSTORE_TARGET="127.0.0.1:$grantstore_port" \
    SHAREDOS_AUDIT_TARGET="127.0.0.1:$audit_port" \
    "$root/tools/sharedosctl/sharedosctl" --tls_ca="$SHAREDOS_CERTS_DIR/ca.crt" \
    --token_file="$SHAREDOS_SECRETS_DIR/admin.token" "$@"
}
echo "--- each service holds only its own token, which reaches only that service's calls"
for service in audit grantstore authorizer envelope console; do
  held="$(sharedos_podman exec "${SHAREDOS_PROJECT}_${service}_1" ls -A /etc/sharedos/token |
    paste -sd' ')" || fail "cannot list $service's /etc/sharedos/token"
  [ "$held" = "$service.token" ] || fail "$service holds [$held] in /etc/sharedos/token, want $service.token"
done
# as_service SERVICE CMD...: sharedosctl presenting SERVICE's own token: PERMISSION_DENIED.
as_service() {
  local service="$1" said
  shift
  if said="$(SHAREDOS_TARGET="127.0.0.1:$envelope_port" \
      SHAREDOS_GRANTSTORE_TARGET="127.0.0.1:$grantstore_port" \
      SHAREDOS_AUDIT_TARGET="127.0.0.1:$audit_port" "$root/tools/sharedosctl/sharedosctl" \
      --tls_ca="$SHAREDOS_CERTS_DIR/ca.crt" \
      --token_file="$SHAREDOS_SECRETS_DIR/$service-token/$service.token" --timeout=10s "$@" 2>&1)"; then
    fail "$service's token was admitted to sharedosctl $*: $said"
  fi
  echo "$said" | grep -q PERMISSION_DENIED || fail "$service's token, sharedosctl $*: $said"
  echo "refused PERMISSION_DENIED: $service's token, sharedosctl $1 $2"
}
as_service envelope grants list --namespace=world-demo        # the control plane: admins only
as_service authorizer audit query --namespace=world-demo      # the record: admins only
as_service grantstore audit verify                            # the chain: the operator only
as_service audit escalations list --namespace=world-demo      # reviewers, admins, hosts only
# audit_svc knows alice's reviewer credential (issued at run time) only by asking the grant store
# with its own token: alice is authenticated there, then refused the record (not UNAUTHENTICATED).
said="$(SHAREDOS_AUDIT_TARGET="127.0.0.1:$audit_port" "$root/tools/sharedosctl/sharedosctl" \
  --tls_ca="$SHAREDOS_CERTS_DIR/ca.crt" --token_file="$work/alice.token" --timeout=10s \
  audit query --namespace=world-demo 2>&1)" && fail "alice's reviewer credential read the record: $said"
echo "$said" | grep -q PERMISSION_DENIED ||
  fail "audit_svc did not authenticate alice through the grant store with its own token: $said"
echo "refused PERMISSION_DENIED: alice's reviewer credential, authenticated by audit_svc at the grant store"
as_service console escalations list --namespace=world-demo    # the lookup of credentials only

echo "--- the reviewer console, its own container: alice signs in over HTTPS and sees her queue"
console="https://127.0.0.1:$console_port"
jar="$TEST_TMPDIR/console.jar"
curl -sSf --cacert "$SHAREDOS_CERTS_DIR/ca.crt" -c "$jar" -b "$jar" -o /dev/null "$console/signin" ||
  fail "the console's sign-in page over HTTPS"
signin="$(awk '$6 == "sos_signin" {print $7}' "$jar")"
code="$(curl -s --cacert "$SHAREDOS_CERTS_DIR/ca.crt" -c "$jar" -b "$jar" -o /dev/null \
  -w '%{http_code}' -H "Origin: $console" --data-urlencode "signin=$signin" \
  --data-urlencode "secret=$(head -n 1 "$work/alice.token")" "$console/signin")"
[ "$code" = 303 ] || fail "alice's sign-in at the console answered $code, want 303"
queue="$(curl -s --cacert "$SHAREDOS_CERTS_DIR/ca.crt" -b "$jar" "$console/queue")"
echo "$queue" | grep -q 'Escalations' || fail "alice's queue at the console: $queue"
echo "console: alice signed in (her credential looked up at the grant store with the console's own token)"

# Plaintext to a TLS listener and a client trusting another CA are refused.
if SHAREDOS_AUDIT_TARGET="127.0.0.1:$audit_port" "$root/tools/sharedosctl/sharedosctl" \
    --token_file="$SHAREDOS_SECRETS_DIR/admin.token" --timeout=3s audit verify > /dev/null 2>&1; then
  fail "a plaintext client reached audit_svc"
fi
"$root/deploy/gen-certs.sh" "$TEST_TMPDIR/other-ca" > /dev/null
if SHAREDOS_AUDIT_TARGET="127.0.0.1:$audit_port" "$root/tools/sharedosctl/sharedosctl" \
    --tls_ca="$TEST_TMPDIR/other-ca/ca.crt" --token_file="$SHAREDOS_SECRETS_DIR/admin.token" \
    --timeout=3s audit verify > /dev/null 2>&1; then
  fail "a client trusting another CA reached audit_svc"
fi

echo "--- rotation: certificates reissued on disk are served without a restart"
# The serial of the certificate a published listener serves.
# Empty when no handshake completed; a failed handshake is retried, not fatal under `set -e`.
serial() {
  openssl s_client -connect "127.0.0.1:$1" -CAfile "$SHAREDOS_CERTS_DIR/ca.crt" < /dev/null \
    2> /dev/null | openssl x509 -noout -serial 2> /dev/null || true
}
before=""
for _ in $(seq 1 10); do
  before="$(serial "$audit_port")"
  [ -n "$before" ] && break
  sleep 1
done
[ -n "$before" ] || fail "no certificate served on the audit log's port"
"$root/deploy/gen-certs.sh" "$SHAREDOS_CERTS_DIR" > /dev/null
want="serial=$(openssl x509 -noout -serial -in "$SHAREDOS_CERTS_DIR/audit/tls.crt" | cut -d= -f2)"
[ "$want" != "$before" ] || fail "gen-certs.sh did not reissue the audit certificate"
for _ in $(seq 1 60); do
  [ "$(serial "$audit_port")" = "$want" ] && break
  sleep 1
done
[ "$(serial "$audit_port")" = "$want" ] || fail "audit_svc still serves $before after rotation"
ctl audit verify > /dev/null || fail "audit verify after the rotation"
echo "rotated: audit_svc serves $want"

echo "--- stop, start again on the same volumes"
compose down > "$TEST_TMPDIR/down.log" 2>&1 || { cat "$TEST_TMPDIR/down.log"; fail "compose down"; }
[ -z "$(sharedos_podman ps -a -q --filter "label=io.podman.compose.project=$SHAREDOS_PROJECT")" ] ||
  fail "containers left after compose down"
start
after="$(ctl audit verify)" || fail "audit verify after the restart: $after"
echo "$after"
[ "$(echo "$after" | sed -n 's/^ok: \([0-9]*\) records verify.*/\1/p')" = "$records" ] ||
  fail "the audit log held $records records before the restart, now: $after"
ctl grants list --namespace=world-demo | grep -q 'grant-demo-assistant' ||
  fail "the demo grant is gone after the restart"
compose exec -T envelope test -f files/human/user-alice/workspace/Workspace/summary.txt \
  > /dev/null 2>&1 || fail "summary.txt is gone from the envelope's volume"
# The approved grant survived too: with summary.txt removed, the demo turn's write is allowed.
compose exec -T envelope rm files/human/user-alice/workspace/Workspace/summary.txt \
  > /dev/null 2>&1 || fail "cannot remove summary.txt from the envelope's volume"
third="$(ctl turn --host_token_file="$SHAREDOS_SECRETS_DIR/host.token")" ||
  fail "a turn after the restart: $third"
echo "$third" | grep -q '^turn: succeeded$' || fail "the approved write is refused after the restart"
final="$(ctl audit verify)" || fail "audit verify after the third turn: $final"
[ "$(echo "$final" | sed -n 's/^ok: \([0-9]*\) records verify.*/\1/p')" -gt "$records" ] ||
  fail "the third turn's records did not reach the audit log: $final"
echo "ok: $records records kept across the restart; $final"
