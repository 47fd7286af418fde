#!/usr/bin/env bash
# The compose OIDC profile run for real (issue 36): builds the images from this test's binaries
# and the identity provider's image (deploy/build-images.sh --oidc_only: tests/oidc/provider.mjs
# with only its node_modules on Debian 13's nodejs), makes the CA, certificates (with `oidc/`)
# and secrets, starts compose.yaml + compose.oidc.yaml (the provider as one more container,
# HTTPS, issuer https://oidc:9443; --oidc_config on every service), then runs deploy/README.md's
# compose-oidc block verbatim: alice's access token from the provider through its published
# port, then on the grant store (verified against the provider's JWKS, fetched over TLS with the
# deployment CA) ListEscalations in her namespace world-1 is allowed and in world-demo is
# PERMISSION_DENIED. A token the provider never issued (signed by no key of its JWKS) is refused.
# And a person signs in at the console: a cookie-keeping HTTPS client (curl, the provider's name
# `oidc` connected to its published port, as a browser on the host would reach it) opens the
# console's /oidc/start, signs in as user-alice at the provider's login form, comes back through
# the console's callback with the code, and lands on the console's queue signed in as
# human:user-alice — the console's own OIDC client of the profile (its secret from
# gen-secrets.sh, registered at the provider, redirect URI on the console's published port).
# Needs root, podman, podman-compose, debootstrap (tools/setup.sh) and the workspace's
# node_modules; fails, never skips, without them.
set -euo pipefail
source "$TEST_SRCDIR/sharedos/tests/deploy/compose_lib.sh"
block="$(readme_block compose-oidc)"
command -v curl > /dev/null || fail "curl is not installed"

read -r envelope_port mcp_port grantstore_port audit_port oidc_port console_port < <(python3 -c '
import socket
socks = [socket.socket() for _ in range(6)]
for s in socks: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))')
export SHAREDOS_ENVELOPE_PORT="$envelope_port" SHAREDOS_MCP_PORT="$mcp_port"
export SHAREDOS_GRANTSTORE_PORT="$grantstore_port" SHAREDOS_AUDIT_PORT="$audit_port"
export SHAREDOS_OIDC_PORT="$oidc_port" SHAREDOS_COMPOSE_OIDC=1 SHAREDOS_CONSOLE_PORT="$console_port"
export SHAREDOS_PROJECT="sosoidc$$"
export SHAREDOS_CERTS_DIR="$TEST_TMPDIR/certs" SHAREDOS_SECRETS_DIR="$TEST_TMPDIR/secrets"
# The profile's OIDC config with the console's redirect URI on this test's console port (the
# shipped oidc.json names the default 8443), as compose.oidc.yaml says to do for another port.
export SHAREDOS_OIDC_CONFIG_DIR="$TEST_TMPDIR/oidc-config"
mkdir -p "$SHAREDOS_OIDC_CONFIG_DIR"
sed "s|https://127.0.0.1:8443/oidc/callback|https://127.0.0.1:$console_port/oidc/callback|" \
  "$root/deploy/compose/oidc/oidc.json" > "$SHAREDOS_OIDC_CONFIG_DIR/oidc.json"
grep -q "127.0.0.1:$console_port/oidc/callback" "$SHAREDOS_OIDC_CONFIG_DIR/oidc.json" ||
  fail "deploy/compose/oidc/oidc.json names no console redirect URI on 127.0.0.1:8443"
chmod 0755 "$SHAREDOS_OIDC_CONFIG_DIR"; chmod 0644 "$SHAREDOS_OIDC_CONFIG_DIR/oidc.json"
home="$(getent passwd "$(id -u)" | cut -d: -f6)"
export SHAREDOS_IMAGE_CACHE="${SHAREDOS_IMAGE_CACHE:-${home:-/root}/.cache/sharedos}"
# The provider's node_modules: the workspace's (tools/setup.sh), found through //:package.json.
workspace="$(dirname "$(readlink -f "$root/package.json")")"
export SHAREDOS_NODE_MODULES="$workspace/node_modules"
[ -d "$SHAREDOS_NODE_MODULES/oidc-provider" ] ||
  fail "$SHAREDOS_NODE_MODULES/oidc-provider is missing; run tools/setup.sh"

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
"$root/deploy/build-images.sh" --bin_dir="$root" > /dev/null || fail "build-images.sh failed"
"$root/deploy/build-images.sh" --oidc_only || fail "build-images.sh --oidc_only failed"
echo "images built in $((SECONDS - started))s"
"$root/deploy/gen-certs.sh" "$SHAREDOS_CERTS_DIR" > /dev/null
"$root/deploy/gen-secrets.sh" "$SHAREDOS_SECRETS_DIR" > /dev/null
[ -f "$SHAREDOS_CERTS_DIR/oidc/tls.crt" ] || fail "gen-certs.sh made no oidc/ certificate"

compose up -d > "$TEST_TMPDIR/up.log" 2>&1 || { cat "$TEST_TMPDIR/up.log"; fail "compose up"; }
compose wait-healthy 120 || fail "a service did not become healthy"
[ "$(sharedos_podman inspect -f '{{.State.Running}}' "${SHAREDOS_PROJECT}_oidc_1")" = true ] ||
  fail "the oidc container is not running"

echo "--- deploy/README.md's compose-oidc block:"
echo "$block"
echo "---"
if ! (cd "$work" && bash -euo pipefail -c "$block") > "$out" 2>&1; then
  cat "$out"
  for service in oidc grantstore; do
    echo "--- $service:"; sharedos_podman logs --tail 30 "${SHAREDOS_PROJECT}_${service}_1" 2>&1 || true
  done
  fail "the compose-oidc block failed"
fi
cat "$out"
grep -q '^in scope: ok$' "$out" || fail "expected alice's ListEscalations in world-1 allowed"
grep -q '^out of scope: .*PERMISSION_DENIED' "$out" ||
  fail "expected alice's ListEscalations in world-demo PERMISSION_DENIED"

# The token is what admitted her: the same call with a token no key of the provider signed
# (alice's token with its signature replaced) is refused, never allowed.
forged="$TEST_TMPDIR/forged.jwt"
(umask 077; sed -E 's/\.[^.]+$/.AAAA/' "$work/alice.jwt" > "$forged")
if SHAREDOS_GRANTSTORE_TARGET="127.0.0.1:$grantstore_port" \
  "$work/bazel-bin/tools/sharedosctl/sharedosctl" --tls_ca="$SHAREDOS_CERTS_DIR/ca.crt" \
  --token_file="$forged" \
  escalations list --namespace=world-1 > "$TEST_TMPDIR/forged.out" 2>&1; then
  fail "a forged token was accepted"
fi
grep -qE 'UNAUTHENTICATED|PERMISSION_DENIED' "$TEST_TMPDIR/forged.out" ||
  { cat "$TEST_TMPDIR/forged.out"; fail "the forged token's refusal names no status"; }
# The console's sign-in at the provider, as a browser on the host makes it.
jar="$TEST_TMPDIR/browser.cookies"
browser() {
  curl -sS --max-time 30 --cacert "$SHAREDOS_CERTS_DIR/ca.crt" \
    --connect-to "oidc:9443:127.0.0.1:$oidc_port" -b "$jar" -c "$jar" "$@"
}
login_url="$(browser -L -o "$TEST_TMPDIR/login.html" -w '%{url_effective}' \
  "https://127.0.0.1:$console_port/oidc/start")" || fail "the console's /oidc/start failed"
case "$login_url" in
  https://oidc:9443/interaction/*) ;;
  *) cat "$TEST_TMPDIR/login.html"; fail "/oidc/start did not lead to the provider's login (at $login_url)" ;;
esac
action="$(sed -n 's/.*<form autocomplete="off" action="\([^"]*\)" method="post">.*/\1/p' \
  "$TEST_TMPDIR/login.html" | head -n 1)"
[ -n "$action" ] || { cat "$TEST_TMPDIR/login.html"; fail "the provider's login page has no form"; }
case "$action" in /*) action="https://oidc:9443$action" ;; esac
landed="$(browser -L -o "$TEST_TMPDIR/landed.html" -w '%{url_effective}' \
  --data-urlencode prompt=login --data-urlencode login=user-alice \
  --data-urlencode password=any-password "$action")" || fail "signing in at the provider failed"
# The console's callback answers its "Signed in" page (which moves on to the queue).
case "$landed" in
  "https://127.0.0.1:$console_port/oidc/callback?"*) ;;
  *) cat "$TEST_TMPDIR/landed.html"; fail "the provider did not send the browser back to the console's callback (at $landed)" ;;
esac
browser -o "$TEST_TMPDIR/queue.html" "https://127.0.0.1:$console_port/queue" ||
  fail "the console's queue failed"
if ! grep -q "Signed in as human:user-alice" "$TEST_TMPDIR/queue.html"; then
  cat "$TEST_TMPDIR/landed.html" "$TEST_TMPDIR/queue.html"
  sharedos_podman logs --tail 30 "${SHAREDOS_PROJECT}_console_1" 2>&1 || true
  fail "after signing in at the provider, the console's queue is not user-alice's"
fi
echo "console: signed in at the provider; the queue says: $(grep -o 'Signed in as [^<]*' "$TEST_TMPDIR/queue.html")"
# Without the sign-in the same page is not served: the queue sends a stranger to sign in.
stranger="$(curl -sS --cacert "$SHAREDOS_CERTS_DIR/ca.crt" -o /dev/null -w '%{http_code} %{redirect_url}' \
  "https://127.0.0.1:$console_port/queue")"
case "$stranger" in
  30[0-9]\ *\/signin) ;;
  *) fail "the queue without a session answered $stranger, not a redirect to /signin" ;;
esac
echo "PASS in $((SECONDS - started))s"
