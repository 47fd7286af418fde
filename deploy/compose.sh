#!/usr/bin/env bash
# podman-compose on deploy/compose/compose.yaml with deploy/lib.sh's podman options:
#
#   deploy/compose.sh up -d | down | ps | logs SERVICE | exec SERVICE CMD… | …
#   deploy/compose.sh wait-healthy [SECONDS]   until every service's HEALTHCHECK passes [120]
#
# SHAREDOS_PROJECT (default sharedos) names the deployment: it prefixes the containers
# (<project>_<service>_1) and the volumes (<project>_<service>-data). `down` keeps the volumes.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
compose_file="$SHAREDOS_DEPLOY_DIR/compose/compose.yaml"
project="${SHAREDOS_PROJECT:-sharedos}"
[[ "$project" =~ ^[a-z0-9][a-z0-9_-]{0,40}$ ]] ||
  { echo "compose.sh: SHAREDOS_PROJECT: lower-case letters, digits, _ and -, at most 41" >&2; exit 2; }

if [ "${1:-}" = "wait-healthy" ]; then
  shift
  seconds="${1:-120}"
  [[ "$seconds" =~ ^[0-9]{1,4}$ ]] || { echo "compose.sh: wait-healthy: SECONDS: a number" >&2; exit 2; }
  for service in audit grantstore authorizer envelope; do
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
  exit 0
fi
sharedos_compose -p "$project" -f "$compose_file" "$@"
