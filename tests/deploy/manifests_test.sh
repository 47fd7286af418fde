#!/usr/bin/env bash
# deploy/k8s and deploy/compose checked offline (no cluster, no API server), both variants: SQLite
# (deploy/k8s/*.yaml, compose/compose.yaml) and PostgreSQL with replicas (deploy/k8s/postgres/,
# compose/compose.postgres.yaml). Every Kubernetes object of a variant and of
# deploy/k8s-secrets.sh's output is validated against the Kubernetes schemas with
# kubernetes-models (validate_k8s.js); the manifests and the compose file are checked against the
# binaries (manifests_check.py: flags, images, ports, probes, volumes, secrets, peers, the
# database URI and its password's source, the envelope replicas' names and peers, who reaches
# PostgreSQL). And the checks are shown to bite: broken copies of a manifest (a wrong field type,
# missing required fields) are rejected by the schemas, and manifests with an unknown flag, a
# probe on another port, an undeclared volume, a peer at a wrong port, an envelope replica
# without peers, a password in a --db URI, … are rejected by the consistency check. One token per
# service (ADR 0014, T4): a container mounting another service's token or the shared one, a
# --*_token_file that is not the service's own, a shared service-token/, two services with one
# token, a token readable by others are rejected too.
set -euo pipefail
export PATH="$PATH:/usr/local/bin"
root="$TEST_SRCDIR/sharedos"
tmp="$TEST_TMPDIR"
fail() { echo "FAIL: $*"; exit 1; }
command -v node > /dev/null || fail "node is not on PATH ($PATH); run tools/setup.sh"
python3 -c 'import yaml' 2> /dev/null || fail "python3-yaml is missing; run tools/setup.sh"

# node resolves kubernetes-models from the workspace's node_modules (npm ci by tools/setup.sh),
# found through the runfiles symlink of //:package.json.
workspace="$(dirname "$(readlink -f "$root/package.json")")"
[ -d "$workspace/node_modules/kubernetes-models" ] ||
  fail "$workspace/node_modules/kubernetes-models is missing; run tools/setup.sh (npm ci)"
export NODE_PATH="$workspace/node_modules"
validate() { node "$root/tests/deploy/validate_k8s.js" "$@"; }
check_py() { python3 "$root/tests/deploy/manifests_check.py" "$@"; }

# Every binary's flags, from its --helpfull (not the PostgreSQL image's: binary "-").
flags="$tmp/flags"
mkdir -p "$flags"
while read -r image binary port; do
  [ "$binary" != "-" ] || continue
  name="$(basename "$binary")"
  "$root/$binary" --helpfull > "$tmp/$name.help" 2>&1 || true
  sed -n 's/^ *--\([a-z0-9_]*\) (.*/\1/p' "$tmp/$name.help" | sort -u > "$flags/$name.flags"
  grep -qx port "$flags/$name.flags" || { cat "$tmp/$name.help"; fail "$binary --helpfull lists no --port"; }
done < <(grep -vE '^\s*(#|$)' "$root/deploy/images.txt")
grep -qx replica_peers "$flags/envelope_svc.flags" || fail "envelope_svc --helpfull lists no --replica_peers"

# The Secrets, made from a CA, certificates and secrets generated now.
"$root/deploy/gen-certs.sh" "$tmp/certs" > /dev/null
"$root/deploy/gen-secrets.sh" "$tmp/secrets" > /dev/null
"$root/deploy/k8s-secrets.sh" "$tmp/certs" "$tmp/secrets" > "$tmp/secrets.yaml"

consistency=(--images="$root/deploy/images.txt" --flags_dir="$flags"
  --probe="$root/tools/health_probe/health_probe" --certs="$tmp/certs" --secrets="$tmp/secrets")
kinds_want="Deployment Namespace NetworkPolicy PersistentVolumeClaim Secret Service StatefulSet"

# variant NAME COMPOSE MANIFEST...: schemas, kinds, the consistency check and the broken copies
# the schemas must reject. Sets manifests and compose for mutate.
variant() {
  local name="$1" kinds
  compose="$2"
  shift 2
  manifests=("$@")
  echo "=== $name: ${#manifests[@]} manifests, $(basename "$compose")"
  check_py to_json "$tmp/objects-$name.json" "${manifests[@]}" "$tmp/secrets.yaml"
  validate "$tmp/objects-$name.json" || fail "$name: an object does not validate against the Kubernetes schemas"
  kinds="$(node -e 'console.log([...new Set(require(process.argv[1]).map(o => o.kind))].sort().join(" "))' "$tmp/objects-$name.json")"
  echo "kinds: $kinds"
  [ "$kinds" = "$kinds_want" ] || fail "$name: unexpected kinds: $kinds"
  check_py check "${consistency[@]}" --compose="$compose" ${compose_oidc:+--compose_oidc="$compose_oidc"} \
    "${manifests[@]}" "$tmp/secrets.yaml" || fail "$name: the manifests disagree with the binaries"
  echo "--- $name: the schemas reject broken copies"
  check_py broken "$tmp/objects-$name.json" "$tmp/broken-$name.json"
  validate --expect_invalid "$tmp/broken-$name.json" || fail "$name: a broken object passed the schemas"
  echo "--- $name: the consistency check rejects broken copies"
}

# mutate NAME SED FILE [PATTERN]: a copy of FILE (a manifest or the compose file) changed by SED
# must fail (with PATTERN among the failures, when given).
mutate() {
  local name="$1" expr="$2" file="$3" want="${4:-}" copy="$tmp/mutated-$1" mutated_compose="$compose" k8s=()
  local mutated_oidc="$compose_oidc"
  mkdir -p "$copy"
  for m in "${manifests[@]}"; do
    if [ "$m" = "$file" ]; then sed -e "$expr" "$m" > "$copy/$(basename "$m")"; k8s+=("$copy/$(basename "$m")")
    else k8s+=("$m"); fi
  done
  if [ "$file" = "$compose" ]; then
    sed -e "$expr" "$compose" > "$copy/$(basename "$compose")"; mutated_compose="$copy/$(basename "$compose")"
  fi
  if [ -n "$compose_oidc" ] && [ "$file" = "$compose_oidc" ]; then
    sed -e "$expr" "$compose_oidc" > "$copy/$(basename "$compose_oidc")"
    mutated_oidc="$copy/$(basename "$compose_oidc")"
    ln -sfn "$(dirname "$compose_oidc")/oidc" "$copy/oidc"  # the profile's ./oidc
  fi
  cmp -s "$file" "$copy/$(basename "$file")" && fail "mutation $name changed nothing"
  if check_py check "${consistency[@]}" --compose="$mutated_compose" \
      ${compose_oidc:+--compose_oidc="$mutated_oidc"} "${k8s[@]}" "$tmp/secrets.yaml" \
      > "$copy/out" 2>&1; then
    cat "$copy/out"; fail "mutation $name was accepted"
  fi
  if [ -n "$want" ]; then
    grep -q -- "$want" "$copy/out" || { cat "$copy/out"; fail "mutation $name: no failure says: $want"; }
    echo "rejected as expected: $name: $(grep -m1 -- "$want" "$copy/out")"
  else
    echo "rejected as expected: $name: $(grep -m1 FAIL "$copy/out")"
  fi
}

k8s="$root/deploy/k8s"
sqlite_manifests=("$k8s"/*.yaml)
[ "${#sqlite_manifests[@]}" -ge 6 ] || fail "deploy/k8s holds ${#sqlite_manifests[@]} manifests"
compose_oidc="$root/deploy/compose/compose.oidc.yaml"  # the OIDC profile: over the sqlite variant
variant sqlite "$root/deploy/compose/compose.yaml" "${sqlite_manifests[@]}"
mutate unknown-flag 's/--durability=full/--durabilty=full/' "$k8s/audit.yaml"
mutate probe-port '0,/--target=127.0.0.1:50052/s//--target=127.0.0.1:50099/' "$k8s/authorizer.yaml"
mutate container-port 's/containerPort: 50054/containerPort: 50055/' "$k8s/grantstore.yaml"
mutate peer-port 's/--authorizer_target=authorizer:50052/--authorizer_target=authorizer:50053/' "$k8s/envelope.yaml"
mutate undeclared-volume '0,/- name: lease$/s//- name: leases/' "$k8s/authorizer.yaml"
mutate missing-secret 's/secretName: sharedos-mcp-secret/secretName: sharedos-mcp/' "$k8s/envelope.yaml"
mutate path-off-volume 's|--db=/var/lib/sharedos/audit.db|--db=/srv/audit.db|' "$k8s/audit.yaml"
mutate single-replica 's/replicas: 2/replicas: 1/' "$k8s/authorizer.yaml"
mutate envelope-deployment 's/^kind: StatefulSet/kind: Deployment/' "$k8s/envelope.yaml"
mutate envelope-no-peers '/--replica_peers=/d' "$k8s/envelope.yaml"
mutate envelope-three 's/replicas: 2/replicas: 3/' "$k8s/envelope.yaml"
mutate envelope-fixed-name 's/--replica_name=$(POD_NAME)/--replica_name=envelope-0/' "$k8s/envelope.yaml"
mutate envelope-peers-blocked '/name: envelope-from-hosts/,/^---/s/^\( *\)port: 50055/\1port: 50056/' "$k8s/networkpolicy.yaml"
mutate compose-flag 's/--lease_secret_file=/--lease_file=/' "$compose"
mutate compose-peer 's/--audit_target=audit:50053/--audit_target=audit:50054/' "$compose"
mutate compose-secret-key 's|/etc/sharedos/mcp/mcp.secret|/etc/sharedos/mcp/mcp.key|' "$compose"
# One token per service (ADR 0014, T4): a service presenting or merely holding another's token,
# or the shared one, is rejected however consistently it is wired.
mutate k8s-other-token 's/sharedos-audit-token/sharedos-grantstore-token/;s|token/audit.token|token/grantstore.token|' \
  "$k8s/audit.yaml" "audit: mounts grantstore's token"
mutate k8s-shared-token 's/secretName: sharedos-envelope-token/secretName: sharedos-service-token/' \
  "$k8s/envelope.yaml" "envelope: mounts the shared service token"
mutate k8s-token-off-secret 's|--audit_token_file=/etc/sharedos/token/authorizer.token|--audit_token_file=/etc/sharedos/credentials/credentials.json|' \
  "$k8s/authorizer.yaml" "is not authorizer's own token"
mutate k8s-projected-token '/^        - name: lease$/,/defaultMode/{s/^          secret:$/          projected:\n            sources:\n              - secret:\n                  name: sharedos-lease-secret\n              - secret:\n                  name: sharedos-envelope-token/;s/^            secretName: sharedos-lease-secret$//;s/^            defaultMode: 0440$//}' \
  "$k8s/authorizer.yaml" "authorizer: mounts envelope's token"
mutate compose-other-token 's|/envelope-token:/etc/sharedos/token:ro|/authorizer-token:/etc/sharedos/token:ro|;s|token/envelope.token|token/authorizer.token|' \
  "$compose" "envelope: mounts authorizer's token"
mutate compose-extra-token 's|^\( *\)- \(.*\)/grantstore-token:/etc/sharedos/token:ro$|&\n\1- \2/envelope-token:/etc/sharedos/envelope-token:ro|' \
  "$compose" "grantstore: mounts envelope's token"

# The console: its public origin set (an operator's value on Kubernetes), and in the OIDC profile
# its own OIDC client, registered at the provider with the same redirect URI and secret.
mutate k8s-console-origin '/--console_public_origin=/d' "$k8s/console.yaml" "console_public_origin"
mutate compose-console-origin '/--console_public_origin=/d' "$compose" "console_public_origin"
mutate oidc-console-missing '/^  console:$/,$d' "$compose_oidc" "console: not given --oidc_config"
mutate oidc-console-redirect 's|--console_redirect_uri=https://127.0.0.1:|--console_redirect_uri=https://localhost:|' \
  "$compose_oidc" "the provider registers the console's redirect URI"
mutate oidc-console-secret 's|--console_secret_file=/etc/sharedos/oidc-console/console.secret|--console_secret_file=/etc/sharedos/tls/tls.key|' \
  "$compose_oidc" "is not the console's client secret"
compose_oidc=""

pg="$k8s/postgres"
pg_manifests=("$pg"/*.yaml)
[ "${#pg_manifests[@]}" -ge 7 ] || fail "deploy/k8s/postgres holds ${#pg_manifests[@]} manifests"
variant postgres "$root/deploy/compose/compose.postgres.yaml" "${pg_manifests[@]}"
for file in postgres.yaml audit.yaml grantstore.yaml envelope.yaml; do
  grep -q . "$pg/$file" || fail "deploy/k8s/postgres/$file is missing"
done
mutate pg-db-password 's|--db=postgresql://sharedos@|--db=postgresql://sharedos:hunter2hunter2@|' "$pg/audit.yaml"
mutate pg-db-password-query 's|svc:5432/sharedos$|svc:5432/sharedos?password=hunter2hunter2|' "$pg/grantstore.yaml"
mutate pg-literal-password '/- name: PGPASSWORD/{n;s/valueFrom:/value: hunter2hunter2/;n;N;N;d}' "$pg/audit.yaml"
mutate pg-no-password '/name: PGPASSWORD/,/key: postgres.password/d' "$pg/grantstore.yaml"
mutate pg-wrong-secret-key 's/key: postgres.password/key: password/' "$pg/audit.yaml"
mutate pg-sslmode 's/value: verify-full/value: require/' "$pg/grantstore.yaml"
mutate pg-db-port 's|@postgres.sharedos.svc:5432/|@postgres.sharedos.svc:5433/|' "$pg/audit.yaml"
mutate pg-args 's|^          imagePullPolicy: IfNotPresent|          args: [--port=5433]\n&|' "$pg/postgres.yaml"
mutate pg-no-tls-secret 's/secretName: sharedos-tls-postgres/secretName: sharedos-tls-db/' "$pg/postgres.yaml"
mutate pg-password-mount 's|mountPath: /etc/sharedos/postgres$|mountPath: /etc/sharedos/pg|' "$pg/postgres.yaml"
mutate pg-open-to-envelope '/^  name: postgres-from-stores/,$s/^\( *\)- grantstore$/&\n\1- envelope/' "$pg/networkpolicy.yaml"
mutate pg-open-to-namespaces '/^  name: postgres-from-stores/,$s/^    - from:$/&\n        - namespaceSelector: {}/' "$pg/networkpolicy.yaml"
mutate pg-envelope-no-peers '/--replica_mcp_peers=/d' "$pg/envelope.yaml"
mutate pg-compose-db-password 's|--db=postgresql://sharedos@|--db=postgresql://sharedos:hunter2hunter2@|' "$compose"
mutate pg-compose-no-passfile '0,/- PGPASSFILE=.*/s///' "$compose"
mutate pg-compose-passfile-key 's|PGPASSFILE=/etc/sharedos/postgres/pgpass|PGPASSFILE=/etc/sharedos/postgres/.pgpass|' "$compose"
mutate pg-compose-literal-password 's|- PGSSLMODE=verify-full|- PGPASSWORD=hunter2hunter2\n      &|' "$compose"
mutate pg-compose-envelope-no-peers '0,/--replica_peers=/{/--replica_peers=/d}' "$compose"
mutate pg-compose-envelope-one-peer 's/--replica_peers=envelope-1=envelope-1:50051,envelope-2=envelope-2:50051/--replica_peers=envelope-1=envelope-1:50051/' "$compose"
mutate pg-compose-envelope-mcp-port 's|https://envelope-2:50055/mcp|https://envelope-2:50051/mcp|' "$compose"
mutate pg-compose-envelope-no-name '0,/--replica_name=envelope-1/{/--replica_name=envelope-1/d}' "$compose"
mutate pg-compose-shared-outbox 's|envelope-2-data:/var/lib/sharedos|envelope-1-data:/var/lib/sharedos|' "$compose"
mutate pg-compose-db-host 's|@postgres:5432/|@audit:5432/|' "$compose"
mutate pg-compose-no-tls '/^  postgres:/,/^$/{/:\/etc\/sharedos\/tls:ro/d}' "$compose"
mutate pg-compose-replica-token 's|--replica_token_file=/etc/sharedos/token/envelope.token|--replica_token_file=/etc/sharedos/credentials/credentials.json|' \
  "$compose" "is not envelope's own token"
mutate pg-k8s-other-token 's/sharedos-grantstore-token/sharedos-authorizer-token/;s|token/grantstore.token|token/authorizer.token|' \
  "$pg/grantstore.yaml" "grantstore: mounts authorizer's token"

echo "--- one token per service: a shared token, shared values, a token beside another are rejected"
# reject NAME SECRETS_DIR SECRETS_YAML PATTERN: the postgres variant's check with these secrets.
reject() {
  if check_py check "${consistency[@]/--secrets=*/--secrets=$2}" --compose="$compose" \
      "${pg_manifests[@]}" "$3" > "$tmp/$1.out" 2>&1; then
    cat "$tmp/$1.out"; fail "$1 was accepted"
  fi
  grep -q -- "$4" "$tmp/$1.out" || { cat "$tmp/$1.out"; fail "$1: no failure says: $4"; }
  echo "rejected as expected: $1: $(grep -m1 -- "$4" "$tmp/$1.out")"
}
# An earlier version's directory: the shared service-token/ and its "services" credential.
shared="$tmp/secrets-shared"
cp -a "$tmp/secrets" "$shared"
mkdir "$shared/service-token"
cp "$shared/envelope-token/envelope.token" "$shared/service-token/service.token"
python3 - "$shared/credentials/credentials.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["credentials"].append({"name": "services", "role": "service",
                         "token_sha256": next(e["token_sha256"] for e in c["credentials"] if e["name"] == "envelope")})
json.dump(c, open(sys.argv[1], "w"))
PY
reject shared-token-dir "$shared" "$tmp/secrets.yaml" "service-token/ exists"
reject shared-token-credential "$shared" "$tmp/secrets.yaml" "want one per service"
reject shared-token-digest "$shared" "$tmp/secrets.yaml" "share one token"
# Two services given the same token (gen-secrets.sh keeps existing files and digests them).
same="$tmp/secrets-same"
cp -a "$tmp/secrets" "$same"
cp "$same/authorizer-token/authorizer.token" "$same/envelope-token/envelope.token"
"$root/deploy/gen-secrets.sh" "$same" > /dev/null
reject same-token "$same" "$tmp/secrets.yaml" "\['authorizer', 'envelope'\] share one token"
# A token readable by others, and a directory holding a second token.
loose="$tmp/secrets-loose"
cp -a "$tmp/secrets" "$loose"
chmod 0644 "$loose/audit-token/audit.token"
cp "$loose/audit-token/audit.token" "$loose/envelope-token/audit.token"
reject loose-token "$loose" "$tmp/secrets.yaml" "audit.token is mode 0o644"
reject token-beside-another "$loose" "$tmp/secrets.yaml" "envelope-token/ holds \['audit.token', 'envelope.token'\]"
# The Kubernetes Secrets: a shared one, and a service's Secret carrying another's key.
cp "$tmp/secrets.yaml" "$tmp/secrets-shared.yaml"
printf -- '---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: sharedos-service-token\n  namespace: sharedos\ntype: Opaque\ndata:\n  service.token: c29zXzAwMDA=\n' \
  >> "$tmp/secrets-shared.yaml"
reject k8s-shared-secret "$tmp/secrets" "$tmp/secrets-shared.yaml" "Secret sharedos-service-token: one token shared"
sed -e '/^  name: sharedos-envelope-token$/,/^---/s/^  envelope.token: \(.*\)$/&\n  authorizer.token: \1/' \
  "$tmp/secrets.yaml" > "$tmp/secrets-two-keys.yaml"
reject k8s-secret-two-keys "$tmp/secrets" "$tmp/secrets-two-keys.yaml" "sharedos-envelope-token holds \['authorizer.token', 'envelope.token'\]"

echo "--- the generated password is in no file"
copy="$tmp/mutated-password"
mkdir -p "$copy"
sed -e "s|value: verify-full|value: verify-full\n            - name: X\n              value: \"$(cat "$tmp/secrets/postgres/postgres.password")\"|" \
  "$pg/audit.yaml" > "$copy/audit.yaml"
others=()
for m in "${pg_manifests[@]}"; do [ "$m" = "$pg/audit.yaml" ] || others+=("$m"); done
check_py check "${consistency[@]}" --compose="$compose" "$copy/audit.yaml" "${others[@]}" \
  "$tmp/secrets.yaml" > "$copy/out" 2>&1 && fail "the password in a manifest was accepted"
grep -q 'holds the PostgreSQL password' "$copy/out" || { cat "$copy/out"; fail "the password in a manifest was not named"; }
echo "rejected as expected: password-in-manifest"
echo ok
