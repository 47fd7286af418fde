#!/usr/bin/env bash
# Makes a deployment's certificate authority and one certificate per service with OpenSSL:
#
#   deploy/gen-certs.sh DIR [--namespace=NS] [--replicas=N] [--uid=UID]
#
#   DIR/ca.crt, DIR/ca.key          the CA (EC P-256, 825 days); ca.key never goes into a container
#   DIR/<service>/tls.crt, tls.key  the service's certificate (serverAuth and clientAuth, so mTLS
#   DIR/<service>/ca.crt            can be switched on) and the CA, for audit, grantstore,
#                                   authorizer, envelope, console and sharedosd
#   DIR/operator/…                  a client certificate for sharedosctl under mTLS
#
#   DIR/postgres/…                  the PostgreSQL image's server certificate (the PostgreSQL
#                                   variant, deploy/README.md "PostgreSQL and replicas")
#   DIR/oidc/…                      the compose OIDC profile's identity provider (DNS:oidc,
#                                   DNS:localhost, IP:127.0.0.1; deploy/README.md section 7)
#
# Each service certificate names DNS:<service>, DNS:<service>.<NS>.svc,
# DNS:<service>.<NS>.svc.cluster.local (Kubernetes; NS default "sharedos"), DNS:localhost and
# IP:127.0.0.1 (compose on host networking); and each replica's own name, which its peers dial:
# DNS:<service>-1 … DNS:<service>-<N> (compose's replica services, N from --replicas, default 2)
# and DNS:*.<service>-peers.<NS>.svc[.cluster.local] (a StatefulSet's pods behind the headless
# Service <service>-peers, e.g. envelope-0.envelope-peers.sharedos.svc). The file names are
# those of a Kubernetes TLS Secret.
# An existing CA in DIR is kept (certificates are reissued under it: rotation); keys are 0600 and
# owned by UID (default 10001, the images' user) when run as root.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

dir="${1:?usage: gen-certs.sh DIR [--namespace=NS] [--replicas=N] [--uid=UID]}"
shift
namespace=sharedos
replicas=2
uid="$SHAREDOS_UID"
for arg in "$@"; do
  case "$arg" in
    --namespace=*) namespace="${arg#--namespace=}" ;;
    --replicas=*) replicas="${arg#--replicas=}" ;;
    --uid=*) uid="${arg#--uid=}" ;;
    *) echo "gen-certs: unknown argument ${arg:0:64}" >&2; exit 2 ;;
  esac
done
[[ "$namespace" =~ ^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$ ]] ||
  { echo "gen-certs: --namespace: not a Kubernetes namespace name" >&2; exit 2; }
[[ "$uid" =~ ^[0-9]{1,9}$ ]] || { echo "gen-certs: --uid: not a number" >&2; exit 2; }
[[ "$replicas" =~ ^[1-9][0-9]?$ ]] || { echo "gen-certs: --replicas: 1 to 99" >&2; exit 2; }

mkdir -p "$dir"
umask 077
if [ ! -f "$dir/ca.key" ]; then
  openssl ecparam -name prime256v1 -genkey -noout -out "$dir/ca.key"
  openssl req -x509 -new -key "$dir/ca.key" -sha256 -days 825 -subj "/CN=SharedOS deployment CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -out "$dir/ca.crt" 2> /dev/null
fi

# issue NAME SANS: DIR/NAME/{tls.crt,tls.key,ca.crt}, written beside and renamed into place so
# a service re-reading them never sees half a pair.
issue() {
  local name="$1" sans="$2" out="$dir/$1"
  mkdir -p "$out"
  openssl ecparam -name prime256v1 -genkey -noout -out "$out/tls.key.new"
  openssl req -new -key "$out/tls.key.new" -subj "/CN=$name" -out "$out/tls.csr" 2> /dev/null
  printf '%s\n' "subjectAltName=$sans" "basicConstraints=critical,CA:FALSE" \
    "keyUsage=critical,digitalSignature,keyEncipherment" \
    "extendedKeyUsage=serverAuth,clientAuth" > "$out/tls.ext"
  openssl x509 -req -in "$out/tls.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial \
    -days 397 -sha256 -extfile "$out/tls.ext" -out "$out/tls.crt.new" 2> /dev/null
  cp "$dir/ca.crt" "$out/ca.crt.new"
  rm -f "$out/tls.csr" "$out/tls.ext"
  chmod 0644 "$out/tls.crt.new" "$out/ca.crt.new"
  chmod 0600 "$out/tls.key.new"
  if [ "$(id -u)" -eq 0 ]; then chown "$uid:$uid" "$out/tls.key.new" "$out/tls.crt.new" "$out/ca.crt.new"; fi
  mv "$out/tls.key.new" "$out/tls.key"
  mv "$out/tls.crt.new" "$out/tls.crt"
  mv "$out/ca.crt.new" "$out/ca.crt"
  chmod 0755 "$out"
}

# sans SERVICE: the names above.
sans() {
  local service="$1" i out
  out="DNS:$service,DNS:$service.$namespace.svc,DNS:$service.$namespace.svc.cluster.local"
  for i in $(seq 1 "$replicas"); do out="$out,DNS:$service-$i"; done
  out="$out,DNS:*.$service-peers.$namespace.svc,DNS:*.$service-peers.$namespace.svc.cluster.local"
  echo "$out,DNS:localhost,IP:127.0.0.1"
}
for service in audit grantstore authorizer envelope console sharedosd postgres; do
  issue "$service" "$(sans "$service")"
done
issue oidc "DNS:oidc,DNS:localhost,IP:127.0.0.1"
issue operator "URI:spiffe://sharedos/operator"
chmod 0755 "$dir"
chmod 0644 "$dir/ca.crt"
echo "gen-certs: CA $dir/ca.crt; certificates for audit grantstore authorizer envelope console sharedosd postgres oidc operator"
