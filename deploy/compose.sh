#!/usr/bin/env bash
# podman-compose on deploy/compose/compose.yaml with deploy/lib.sh's podman options:
#
#   deploy/compose.sh up -d | down | ps | logs SERVICE | exec SERVICE CMD… | …
#   deploy/compose.sh wait-healthy [SECONDS]   until every service's HEALTHCHECK passes [120]
#
# SHAREDOS_PROJECT (default sharedos) names the deployment: it prefixes the containers
# (<project>_<service>_1) and the volumes (<project>_<service>-data). `down` keeps the volumes.
#
# SHAREDOS_COMPOSE_VARIANT chooses the file: `sqlite` (default) compose/compose.yaml, one
# container per service on SQLite; `postgres` compose/compose.postgres.yaml, PostgreSQL and two
# replicas of each service (deploy/README.md "PostgreSQL and replicas"). There `up -d` starts the
# services group by group (postgres, then audit-*, grantstore-*, authorizer-*, envelope-*, the
# file's order), waits for PostgreSQL's HEALTHCHECK before the rest, and gives each replica the
# network alias of its group (audit-1 and audit-2 are both `audit`), which podman-compose 1.0.3
# cannot express in the file.
#
# SHAREDOS_COMPOSE_OIDC=1 (sqlite variant) adds compose/compose.oidc.yaml: the identity provider
# as one more container and --oidc_config on every service (deploy/README.md section 7).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
variant="${SHAREDOS_COMPOSE_VARIANT:-sqlite}"
case "$variant" in
  sqlite) compose_file="$SHAREDOS_DEPLOY_DIR/compose/compose.yaml" ;;
  postgres) compose_file="$SHAREDOS_DEPLOY_DIR/compose/compose.postgres.yaml" ;;
  *) echo "compose.sh: SHAREDOS_COMPOSE_VARIANT: sqlite or postgres" >&2; exit 2 ;;
esac
files=(-f "$compose_file")
if [ "${SHAREDOS_COMPOSE_OIDC:-0}" = 1 ]; then
  [ "$variant" = sqlite ] ||
    { echo "compose.sh: SHAREDOS_COMPOSE_OIDC=1 needs the sqlite variant" >&2; exit 2; }
  files+=(-f "$SHAREDOS_DEPLOY_DIR/compose/compose.oidc.yaml")
fi
project="${SHAREDOS_PROJECT:-sharedos}"
[[ "$project" =~ ^[a-z0-9][a-z0-9_-]{0,40}$ ]] ||
  { echo "compose.sh: SHAREDOS_PROJECT: lower-case letters, digits, _ and -, at most 41" >&2; exit 2; }

# The file's services in order, one a line (PyYAML: podman-compose's own dependency).
services() {
  python3 -c 'import sys, yaml
for name in yaml.safe_load(open(sys.argv[1]))["services"]: print(name)' "$compose_file"
}
# A replica's group: audit-2 -> audit; postgres -> postgres.
group_of() { echo "${1%-[0-9]*}"; }

# wait_healthy SECONDS SERVICE…: each service's container passes its HEALTHCHECK, in order.
wait_healthy() {
  local seconds="$1" service container deadline
  shift
  for service in "$@"; do
    container="${project}_${service}_1"
    deadline=$((SECONDS + seconds))
    until sharedos_podman healthcheck run "$container" > /dev/null 2>&1; do
      if [ "$SECONDS" -ge "$deadline" ]; then
        echo "compose.sh: $container is not healthy after ${seconds}s:" >&2
        sharedos_podman logs --tail 20 "$container" >&2 || true
        exit 1
      fi
      sleep 1
    done
    echo "healthy: $container"
  done
}

if [ "${1:-}" = "wait-healthy" ]; then
  shift
  seconds="${1:-120}"
  [[ "$seconds" =~ ^[0-9]{1,4}$ ]] || { echo "compose.sh: wait-healthy: SECONDS: a number" >&2; exit 2; }
  mapfile -t all < <(services)
  wait_healthy "$seconds" "${all[@]}"
  exit 0
fi

if [ "$variant" = postgres ] && [ "${1:-}" = "up" ]; then
  shift
  flags=() chosen=()
  for arg in "$@"; do
    case "$arg" in
      -d | --detach) ;;
      -*) flags+=("$arg") ;;
      *) chosen+=("$arg") ;;
    esac
  done
  [[ " $* " == *" -d "* || " $* " == *" --detach "* ]] ||
    { echo "compose.sh: the postgres variant starts detached: up -d [SERVICE…]" >&2; exit 2; }
  mapfile -t all < <(services)
  [ "${#chosen[@]}" -gt 0 ] || chosen=("${all[@]}")
  for service in "${chosen[@]}"; do
    printf '%s\n' "${all[@]}" | grep -qxF -- "$service" ||
      { echo "compose.sh: no service ${service:0:64} in $(basename "$compose_file")" >&2; exit 2; }
  done
  # Group by group, in the file's order; PostgreSQL accepting connections before the rest.
  previous=""
  for service in "${all[@]}"; do
    group="$(group_of "$service")"
    [ "$group" != "$previous" ] || continue
    previous="$group"
    members=()
    for s in "${chosen[@]}"; do [ "$(group_of "$s")" = "$group" ] && members+=("$s"); done
    [ "${#members[@]}" -gt 0 ] || continue
    SHAREDOS_COMPOSE_RUN_EXTRA="--network-alias $group" \
      sharedos_compose -p "$project" -f "$compose_file" up -d --no-deps "${flags[@]}" "${members[@]}"
    if [ "$group" = postgres ]; then wait_healthy 120 postgres; fi
  done
  exit 0
fi
sharedos_compose -p "$project" "${files[@]}" "$@"
