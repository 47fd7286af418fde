#!/usr/bin/env bash
# The test command: installs what is missing, then builds and runs every test, and ends with
# `N passed, N failed` counted from the test cases themselves (tools/test_summary.py).
# Extra arguments are passed to `bazel test` (e.g. `tools/test.sh --test_output=all`).
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

"$root/tools/setup.sh" || { echo "setup failed"; echo "0 passed, 1 failed"; exit 1; }

out="$root/.ci-out"
mkdir -p "$out"
bazel query 'tests(//...) except attr(tags, "manual", tests(//...))' > "$out/targets.txt" 2> "$out/query.log" || {
  cat "$out/query.log"; echo "0 passed, 1 failed"; exit 1; }

bazel test //... --keep_going --build_event_json_file="$out/bep.json" "$@"
bazel_rc=$?

python3 "$root/tools/test_summary.py" "$out/targets.txt" "$out/bep.json" "$(bazel info bazel-testlogs 2>/dev/null)"
summary_rc=$?
if [ "$bazel_rc" -ne 0 ] || [ "$summary_rc" -ne 0 ]; then
  exit 1
fi
exit 0
