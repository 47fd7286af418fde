#!/usr/bin/env bash
# Starts tests/oidc/provider.mjs with the workspace's node_modules (the script's real location
# resolves the npm packages; tools/setup.sh installs them). Arguments pass through.
set -euo pipefail
here="$(dirname "$(realpath "${BASH_SOURCE[0]}")")"
script="$(realpath "$here/provider.mjs")"
root="$(dirname "$(dirname "$(dirname "$script")")")"
if [ ! -d "$root/node_modules/oidc-provider" ]; then
  echo "oidc-provider is missing under $root/node_modules: run tools/setup.sh" >&2
  exit 1
fi
exec node "$script" "$@"
