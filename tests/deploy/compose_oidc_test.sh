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
echo "PASS in $((SECONDS - started))s"
