#!/usr/bin/env bash
# The run command: installs what is missing, builds, and starts SharedOS on its embedded default.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
"$root/tools/setup.sh"
bazel build //sharedosd:sharedosd
exec "$root/bazel-bin/sharedosd/sharedosd" "$@"
