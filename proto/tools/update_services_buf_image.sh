#!/usr/bin/env bash
# bazel run //proto:update_services_buf_image — rewrites proto/frozen/services.json, the golden
# image //proto:buf_breaking_test checks the service packages against. See proto/frozen/README.md.
set -euo pipefail
if [[ -z "${BUILD_WORKSPACE_DIRECTORY:-}" || $# -ne 1 ]]; then
  echo "run me with: bazel run //proto:update_services_buf_image" >&2
  exit 2
fi
root="$BUILD_WORKSPACE_DIRECTORY"
source "$1"
find_buf "$root/package.json" "$root/package-lock.json"
golden="$root/proto/frozen/services.json"

if [[ -f "$golden" ]] && ! "$BUF" breaking "$root/proto" --against "$golden"; then
  echo
  echo "NOTE: the change above is BREAKING; the new golden accepts it. Say why in the change."
fi
build_image_json "$root/proto" "$golden.tmp"
mv "$golden.tmp" "$golden"
echo "wrote $golden"
