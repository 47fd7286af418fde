#!/bin/sh
# The images' HEALTHCHECK: the gRPC health service of the process in this container, over TLS
# when the container has a CA. Environment (defaults in brackets):
#   SHAREDOS_HEALTH_PORT         the service's port [the image's]
#   SHAREDOS_HEALTH_HOST         where it listens [127.0.0.1]
#   SHAREDOS_HEALTH_CA           the CA its certificate chains to [/etc/sharedos/tls/ca.crt if present]
#   SHAREDOS_HEALTH_SERVER_NAME  the name in its certificate [the host]
#   SHAREDOS_HEALTH_CLIENT_CERT, SHAREDOS_HEALTH_CLIENT_KEY  under mTLS
set -eu
host="${SHAREDOS_HEALTH_HOST:-127.0.0.1}"
ca="${SHAREDOS_HEALTH_CA:-}"
if [ -z "$ca" ] && [ -f /etc/sharedos/tls/ca.crt ]; then ca=/etc/sharedos/tls/ca.crt; fi
set -- "--target=$host:${SHAREDOS_HEALTH_PORT:?SHAREDOS_HEALTH_PORT is not set}" --timeout=5s
if [ -n "$ca" ]; then set -- "$@" "--tls_ca=$ca"; fi
if [ -n "${SHAREDOS_HEALTH_SERVER_NAME:-}" ]; then
  set -- "$@" "--tls_server_name=$SHAREDOS_HEALTH_SERVER_NAME"
fi
if [ -n "${SHAREDOS_HEALTH_CLIENT_CERT:-}" ]; then
  set -- "$@" "--tls_client_cert=$SHAREDOS_HEALTH_CLIENT_CERT" \
    "--tls_client_key=${SHAREDOS_HEALTH_CLIENT_KEY:?SHAREDOS_HEALTH_CLIENT_KEY is not set}"
fi
exec /usr/local/bin/health_probe "$@"
