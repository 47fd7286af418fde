#!/usr/bin/env bash
# Prints the Kubernetes Secrets of a deployment, made from deploy/gen-certs.sh's and
# deploy/gen-secrets.sh's directories, as YAML for `kubectl apply -f -`:
#
#   deploy/k8s-secrets.sh CERTS_DIR SECRETS_DIR [--namespace=NS] | kubectl apply -f -
#
#   sharedos-tls-<service>   kubernetes.io/tls: tls.crt, tls.key, ca.crt (audit, grantstore,
#                            authorizer, envelope, console, postgres)
#   sharedos-credentials     credentials.json (SHA-256 digests only)
#   sharedos-<service>-token <service>.token, one Secret per service (audit, grantstore,
#                            authorizer, envelope, console), each mounted by that service's
#                            pods only: no pod can present another service's token (ADR 0014,
#                            T4)
#   sharedos-lease-secret    lease.secret (authorizer)
#   sharedos-mcp-secret      mcp.secret (envelope)
#   sharedos-checkpoint-key  checkpoint.key (audit): signs the audit checkpoints, one key for
#                            every replica; its public half stays with the operator
#                            (SECRETS_DIR/checkpoint.pub.pem, ADR 0019)
#   sharedos-postgres        postgres.password (the PostgreSQL variant: the postgres StatefulSet,
#                            and audit and grantstore as PGPASSWORD); sharedos-tls-postgres too
#
# The operators' admin.token and the product backend's host.token are not among them. The output
# holds secrets: pipe it, do not keep it.
set -euo pipefail

certs="${1:?usage: k8s-secrets.sh CERTS_DIR SECRETS_DIR [--namespace=NS]}"
secrets="${2:?usage: k8s-secrets.sh CERTS_DIR SECRETS_DIR [--namespace=NS]}"
shift 2
namespace=sharedos
for arg in "$@"; do
  case "$arg" in
    --namespace=*) namespace="${arg#--namespace=}" ;;
    *) echo "k8s-secrets: unknown argument ${arg:0:64}" >&2; exit 2 ;;
  esac
done
[[ "$namespace" =~ ^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$ ]] ||
  { echo "k8s-secrets: --namespace: not a Kubernetes namespace name" >&2; exit 2; }

# secret NAME TYPE KEY=FILE...: one Secret, each file base64 under its key.
secret() {
  local name="$1" type="$2" pair
  shift 2
  printf -- '---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: %s\n  namespace: %s\n' \
    "$name" "$namespace"
  printf '  labels:\n    app.kubernetes.io/part-of: sharedos\ntype: %s\ndata:\n' "$type"
  for pair in "$@"; do
    [ -s "${pair#*=}" ] || { echo "k8s-secrets: ${pair#*=} is missing or empty" >&2; exit 1; }
    printf '  %s: %s\n' "${pair%%=*}" "$(base64 -w0 < "${pair#*=}")"
  done
}

for service in audit grantstore authorizer envelope console postgres; do
  secret "sharedos-tls-$service" kubernetes.io/tls "tls.crt=$certs/$service/tls.crt" \
    "tls.key=$certs/$service/tls.key" "ca.crt=$certs/$service/ca.crt"
done
secret sharedos-credentials Opaque "credentials.json=$secrets/credentials/credentials.json"
for service in audit grantstore authorizer envelope console; do
  secret "sharedos-$service-token" Opaque "$service.token=$secrets/$service-token/$service.token"
done
secret sharedos-lease-secret Opaque "lease.secret=$secrets/lease/lease.secret"
secret sharedos-mcp-secret Opaque "mcp.secret=$secrets/mcp/mcp.secret"
secret sharedos-checkpoint-key Opaque "checkpoint.key=$secrets/checkpoint/checkpoint.key"
secret sharedos-postgres Opaque "postgres.password=$secrets/postgres/postgres.password"
