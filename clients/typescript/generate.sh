#!/usr/bin/env bash
# Generates the TypeScript messages and @grpc/grpc-js clients of every SharedOS proto into
# OUT_DIR (default clients/typescript/gen) with Debian's protoc and ts-proto's plugin from the
# workspace's node_modules (package-lock.json, installed by tools/setup.sh). Nothing generated is
# checked in: run it after a checkout and after every proto change (the test runs it too).
#   clients/typescript/generate.sh [OUT_DIR] [PROTO_ROOT] [NODE_MODULES]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${1:-$here/gen}"
proto_root="${2:-$here/../../proto}"
node_modules="${3:-$here/../../node_modules}"
plugin="$node_modules/.bin/protoc-gen-ts_proto"
[ -x "$plugin" ] || { echo "generate.sh: $plugin is missing: run tools/setup.sh (npm ci)" >&2; exit 1; }
mkdir -p "$out"
mapfile -t protos < <(cd "$proto_root" && find sharedos -name '*.proto' | sort)
# Services as @grpc/grpc-js clients; int64 as number (sequences and counters stay far below
# 2^53); Struct and Value as plain JSON values; Timestamp as Date.
protoc -I"$proto_root" --plugin=protoc-gen-ts_proto="$plugin" --ts_proto_out="$out" \
  --ts_proto_opt=outputServices=grpc-js,env=node,esModuleInterop=true,forceLong=number,useOptionals=messages \
  "${protos[@]}"
echo "generated ${#protos[@]} protos into $out"
