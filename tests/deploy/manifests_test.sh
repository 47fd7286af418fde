#!/usr/bin/env bash
# deploy/k8s and deploy/compose checked offline (no cluster, no API server): every Kubernetes
# object of deploy/k8s/*.yaml and of deploy/k8s-secrets.sh's output is validated against the
# Kubernetes schemas with kubernetes-models (validate_k8s.js); the manifests and the compose file
# are checked against the binaries (manifests_check.py: flags, images, ports, probes, volumes,
# secrets, peers). And the checks are shown to bite: broken copies of a manifest (a wrong field
# type, missing required fields) are rejected by the schemas, and manifests with an unknown flag,
# a probe on another port, an undeclared volume or a peer at a wrong port are rejected by the
# consistency check.
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

# Every binary's flags, from its --helpfull.
flags="$tmp/flags"
mkdir -p "$flags"
while read -r image binary port; do
  name="$(basename "$binary")"
  "$root/$binary" --helpfull > "$tmp/$name.help" 2>&1 || true
  sed -n 's/^ *--\([a-z0-9_]*\) (.*/\1/p' "$tmp/$name.help" | sort -u > "$flags/$name.flags"
  grep -qx port "$flags/$name.flags" || { cat "$tmp/$name.help"; fail "$binary --helpfull lists no --port"; }
done < <(grep -vE '^\s*(#|$)' "$root/deploy/images.txt")

# The Secrets, made from a CA, certificates and secrets generated now.
"$root/deploy/gen-certs.sh" "$tmp/certs" > /dev/null
"$root/deploy/gen-secrets.sh" "$tmp/secrets" > /dev/null
"$root/deploy/k8s-secrets.sh" "$tmp/certs" "$tmp/secrets" > "$tmp/secrets.yaml"

manifests=("$root"/deploy/k8s/*.yaml)
[ "${#manifests[@]}" -ge 6 ] || fail "deploy/k8s holds ${#manifests[@]} manifests"
check_py to_json "$tmp/objects.json" "${manifests[@]}" "$tmp/secrets.yaml"
validate "$tmp/objects.json" || fail "an object does not validate against the Kubernetes schemas"
kinds="$(node -e 'console.log([...new Set(require(process.argv[1]).map(o => o.kind))].sort().join(" "))' "$tmp/objects.json")"
echo "kinds: $kinds"
[ "$kinds" = "Deployment Namespace NetworkPolicy PersistentVolumeClaim Secret Service StatefulSet" ] ||
  fail "unexpected kinds: $kinds"

consistency=(--images="$root/deploy/images.txt" --flags_dir="$flags"
  --probe="$root/tools/health_probe/health_probe" --certs="$tmp/certs" --secrets="$tmp/secrets")
check_py check "${consistency[@]}" --compose="$root/deploy/compose/compose.yaml" \
  "${manifests[@]}" "$tmp/secrets.yaml" || fail "the manifests disagree with the binaries"

echo "--- the schemas reject broken copies"
check_py broken "$tmp/objects.json" "$tmp/broken.json"
validate --expect_invalid "$tmp/broken.json" || fail "a broken object passed the schemas"

echo "--- the consistency check rejects broken copies"
# mutate NAME SED FILE: a copy of FILE (a manifest or the compose file) changed by SED must fail.
mutate() {
  local name="$1" expr="$2" file="$3" copy="$tmp/mutated-$1" compose k8s=()
  mkdir -p "$copy"
  compose="$root/deploy/compose/compose.yaml"
  for m in "${manifests[@]}"; do
    if [ "$m" = "$file" ]; then sed -e "$expr" "$m" > "$copy/$(basename "$m")"; k8s+=("$copy/$(basename "$m")")
    else k8s+=("$m"); fi
  done
  if [ "$file" = "$compose" ]; then sed -e "$expr" "$compose" > "$copy/compose.yaml"; compose="$copy/compose.yaml"; fi
  cmp -s "$file" "$copy/$(basename "$file")" && fail "mutation $name changed nothing"
  if check_py check "${consistency[@]}" --compose="$compose" "${k8s[@]}" "$tmp/secrets.yaml" \
      > "$copy/out" 2>&1; then
    cat "$copy/out"; fail "mutation $name was accepted"
  fi
  echo "rejected as expected: $name: $(grep -m1 FAIL "$copy/out")"
}
k8s="$root/deploy/k8s"
mutate unknown-flag 's/--durability=full/--durabilty=full/' "$k8s/audit.yaml"
mutate probe-port '0,/--target=127.0.0.1:50052/s//--target=127.0.0.1:50099/' "$k8s/authorizer.yaml"
mutate container-port 's/containerPort: 50054/containerPort: 50055/' "$k8s/grantstore.yaml"
mutate peer-port 's/--authorizer_target=authorizer:50052/--authorizer_target=authorizer:50053/' "$k8s/envelope.yaml"
mutate undeclared-volume '0,/- name: lease$/s//- name: leases/' "$k8s/authorizer.yaml"
mutate missing-secret 's/secretName: sharedos-mcp-secret/secretName: sharedos-mcp/' "$k8s/envelope.yaml"
mutate path-off-volume 's|--db=/var/lib/sharedos/audit.db|--db=/srv/audit.db|' "$k8s/audit.yaml"
mutate single-replica 's/replicas: 2/replicas: 1/' "$k8s/envelope.yaml"
mutate compose-flag 's/--lease_secret_file=/--lease_file=/' "$root/deploy/compose/compose.yaml"
mutate compose-peer 's/--audit_target=audit:50053/--audit_target=audit:50054/' "$root/deploy/compose/compose.yaml"
mutate compose-secret-key 's|/etc/sharedos/mcp/mcp.secret|/etc/sharedos/mcp/mcp.key|' "$root/deploy/compose/compose.yaml"
echo ok
