#!/usr/bin/env bash
# The one place podman's options for SharedOS are chosen; sourced by build-images.sh, compose.sh,
# gen-certs.sh, gen-secrets.sh and the tests. On these machines crun fails in the cgroup mode, so
# every podman call runs with runc and cgroupfs, and every container with bounded ulimits
# (deploy/containers.conf holds the same choices for whatever else runs podman). Networking:
# one-off runs use the host's (--network=host, SHAREDOS_PODMAN_HOST_NET); the compose deployment
# its project's bridge network, where each service listens off loopback, so with TLS only:
# podman-compose 1.0.3 (Debian 12) always adds the project network to each container, which
# podman refuses beside network_mode: host.
# Source it; it defines functions and variables prefixed sharedos_/SHAREDOS_.

SHAREDOS_DEPLOY_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export CONTAINERS_CONF="$SHAREDOS_DEPLOY_DIR/containers.conf"
SHAREDOS_PODMAN_GLOBAL=(--runtime runc --cgroup-manager=cgroupfs)
SHAREDOS_PODMAN_RUN=(--ulimit nofile=20000:20000 --ulimit nproc=1024:1024)
SHAREDOS_PODMAN_HOST_NET=(--network=host)
# The uid and gid the services run as in every image (never root); mounted secrets, keys and
# data must be readable by it.
SHAREDOS_UID=10001
# The tag of every image build-images.sh makes.
SHAREDOS_TAG="${SHAREDOS_TAG:-dev}"

# podman with the global options.
sharedos_podman() {
  podman "${SHAREDOS_PODMAN_GLOBAL[@]}" "$@"
}

# podman-compose with the same options (global, and for each container it runs), plus
# SHAREDOS_COMPOSE_RUN_EXTRA when set (compose.sh: a replica group's network alias).
sharedos_compose() {
  podman-compose --podman-args="${SHAREDOS_PODMAN_GLOBAL[*]}" \
    --podman-run-args="${SHAREDOS_PODMAN_RUN[*]}${SHAREDOS_COMPOSE_RUN_EXTRA:+ $SHAREDOS_COMPOSE_RUN_EXTRA}" "$@"
}

# The images of SharedOS binaries, from images.txt: prints "image binary port" lines (not the
# PostgreSQL image, whose binary is "-": build-images.sh builds it apart).
sharedos_images() {
  grep -vE '^\s*(#|$)' "$SHAREDOS_DEPLOY_DIR/images.txt" | awk '$2 != "-"'
}

# The base image's Debian packages, from runtime-packages.txt, comma-separated.
sharedos_runtime_packages() {
  grep -vE '^\s*(#|$)' "$SHAREDOS_DEPLOY_DIR/runtime-packages.txt" | paste -sd, -
}
