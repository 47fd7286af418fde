#!/usr/bin/env bash
# Generates the Python message and gRPC modules of every SharedOS proto into OUT_DIR (default
# clients/python/gen), with Debian's protoc (protobuf-compiler) and grpc_python_plugin
# (protobuf-compiler-grpc), which match Debian's python3-protobuf and python3-grpcio. Nothing is
# checked in: run it after a checkout and after every proto change (the test runs it too).
#   clients/python/generate.sh [OUT_DIR] [PROTO_ROOT]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${1:-$here/gen}"
proto_root="${2:-$here/../../proto}"
mkdir -p "$out"
mapfile -t protos < <(cd "$proto_root" && find sharedos -name '*.proto' | sort)
protoc -I"$proto_root" --python_out="$out" \
  --plugin=protoc-gen-grpc_python=/usr/bin/grpc_python_plugin --grpc_python_out="$out" \
  "${protos[@]}"
echo "generated ${#protos[@]} protos into $out"
