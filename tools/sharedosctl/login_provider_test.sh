#!/usr/bin/env bash
# `sharedosctl login` against a real OpenID provider (tests/oidc/provider.mjs, npm oidc-provider):
# the device authorization grant (RFC 8628) approved by "ops" in headless Chromium
# (approve_device.mjs), the token kept owner-only (directory 0700, file 0600), and a later command
# without --token_file calling a real `sharedosd --oidc_config` with it as the provider's admin.
# Then: a token file made readable by others is refused.
set -euo pipefail
root="$TEST_SRCDIR/sharedos"
workspace="$(dirname "$(readlink -f "$root/package.json")")"
[ -d "$workspace/node_modules/playwright-core" ] ||
  { echo "playwright-core is missing under $workspace/node_modules: run tools/setup.sh"; exit 1; }
[ -x /usr/bin/chromium ] || { echo "/usr/bin/chromium is missing: run tools/setup.sh"; exit 1; }
cd "$TEST_TMPDIR"
pids=()
browser_tmp="$(mktemp -d /tmp/sos-login.XXXXXX)"
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$browser_tmp"
}
trap cleanup EXIT
wait_for_line() {  # file, pattern, pid
  for _ in $(seq 1 1200); do
    grep -q "$2" "$1" && return 0
    kill -0 "$3" 2>/dev/null || { cat "$1"; echo "process $3 exited early"; return 1; }
    sleep 0.05
  done
  cat "$1"; echo "timed out waiting for \"$2\" in $1"; return 1
}

"$root/tests/oidc/run_provider" > provider.out 2> provider.err &
pids+=("$!")
wait_for_line provider.out '^http' "${pids[0]}"
issuer="$(head -1 provider.out)"
cat > oidc.json <<JSON
{"issuer": "$issuer", "audiences": ["urn:sharedos:grpc"], "allow_loopback_http": true,
 "claims": {"principal": "sub", "groups": "groups",
            "rules": [{"group": "sharedos-admins", "role": "admin", "namespaces": ["*"]}]}}
JSON
"$root/sharedosd/sharedosd" --demo --port=0 --data_dir="$TEST_TMPDIR/data" --durability=normal \
  --oidc_config="$TEST_TMPDIR/oidc.json" > sharedosd.log 2>&1 &
pids+=("$!")
wait_for_line sharedosd.log "sharedosd: stop with Ctrl-C" "${pids[1]}"
address="$(sed -n 's/^sharedosd listening on //p' sharedosd.log)"

export SHAREDOS_CONFIG_DIR="$TEST_TMPDIR/config/sharedos"
ctl() { SHAREDOS_TARGET="$address" "$root/tools/sharedosctl/sharedosctl" "$@"; }
login() {  # user, expected exit code
  ctl login --issuer="$issuer" --client_id=sharedosctl --resource=urn:sharedos:grpc \
    --allow_loopback_http > login.out 2> login.err &
  local login_pid=$!
  wait_for_line login.out "enter the code" "$login_pid" || { cat login.err; exit 1; }
  local uri
  uri="$(sed -n 's/^(or open \(.*\))$/\1/p' login.out)"
  [ -n "$uri" ] || { cat login.out; echo "no verification_uri_complete"; exit 1; }
  VERIFICATION_URI="$uri" USER="$1" WORKSPACE="$workspace" TMPDIR="$browser_tmp" \
    node "$root/tools/sharedosctl/approve_device.mjs"
  local code=0
  wait "$login_pid" || code=$?
  cat login.out login.err
  [ "$code" = "$2" ] || { echo "login exited $code, expected $2"; exit 1; }
}

login ops 0
grep -q "Token kept in $SHAREDOS_CONFIG_DIR/token (mode 0600)" login.out
[ "$(stat -c %a "$SHAREDOS_CONFIG_DIR")" = 700 ] || { echo "directory not 0700"; exit 1; }
[ "$(stat -c %a "$SHAREDOS_CONFIG_DIR/token")" = 600 ] || { echo "token not 0600"; exit 1; }
token="$(cat "$SHAREDOS_CONFIG_DIR/token")"
[ "$(echo "$token" | tr -cd . | wc -c)" = 2 ] || { echo "not a JWT: $token"; exit 1; }
# Run from a directory without sharedos-data/: only the login token can authenticate.
mkdir -p elsewhere && cd elsewhere
ctl escalations list --namespace=world-demo > list.out 2>&1 ||
  { cat list.out; echo "a command without --token_file did not use the login token"; exit 1; }
if grep -qF "${token:0:20}" ../sharedosd.log; then echo "the token reached the log"; exit 1; fi
chmod 644 "$SHAREDOS_CONFIG_DIR/token"
if ctl escalations list --namespace=world-demo > open.out 2>&1; then
  echo "a token readable by others was used"; exit 1
fi
grep -q "chmod 600" open.out || { cat open.out; exit 1; }
cd ..
echo ok
