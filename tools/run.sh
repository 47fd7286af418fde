#!/usr/bin/env bash
# The run command: installs what is missing, builds, and starts SharedOS on its embedded default
# with the demo world seeded (--demo; README "Quickstart").
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
"$root/tools/setup.sh"
bazel build //sharedosd:sharedosd //tools/sharedosctl:sharedosctl
exec "$root/bazel-bin/sharedosd/sharedosd" --demo "$@"
