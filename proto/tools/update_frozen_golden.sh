#!/usr/bin/env bash
# bazel run //proto:update_frozen_golden — rewrites proto/frozen/protocol_v1.golden.txt from the
# current protocol "1" protos. Deliberate use only: see proto/frozen/README.md.
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: bazel run //proto:update_frozen_golden" >&2
  exit 2
fi
if [[ -z "${BUILD_WORKSPACE_DIRECTORY:-}" ]]; then
  echo "run me with: bazel run //proto:update_frozen_golden" >&2
  exit 2
fi
digest="$1"
descriptor_set="$2"
golden="$BUILD_WORKSPACE_DIRECTORY/proto/frozen/protocol_v1.golden.txt"

"$digest" "$descriptor_set" >"$golden.tmp"
mv "$golden.tmp" "$golden"
echo "wrote $golden — review the diff: protocol \"1\" is frozen (proto/frozen/README.md)."
