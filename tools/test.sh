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

summary="$(python3 "$root/tools/test_summary.py" "$out/targets.txt" "$out/bep.json" "$(bazel info bazel-testlogs 2>/dev/null)")"
summary_rc=$?

# The fuzz targets (docs/fuzzing.md): each run for its fixed number of executions under ASan and
# UBSan, one case per target in the count. SHAREDOS_SKIP_FUZZ=1 leaves them out.
fuzz_passed=0
fuzz_failed=0
if [ "${SHAREDOS_SKIP_FUZZ:-0}" != "1" ]; then
  "$root/tools/fuzz.sh" 2>&1 | tee "$out/fuzz.log"
  fuzz_rc=${PIPESTATUS[0]}
  fuzz_passed=$(grep -cE '^fuzz: .* PASSED$' "$out/fuzz.log")
  fuzz_failed=$(grep -cE '^fuzz: .* FAILED' "$out/fuzz.log")
  if [ "$fuzz_rc" -ne 0 ] && [ "$fuzz_failed" -eq 0 ]; then fuzz_failed=1; fi
fi

# The checks of the house, one case each (docs/adr/0022-the-house-checked.md): no include from a
# lower plane to a higher one (tools/check_layers.py), every C++ file as clang-format writes it
# (tools/check_format.sh), and clang's thread-safety analysis over every C++ target
# (tools/thread_safety.sh: clang's front end, in its own output base, whose Bazel server it shuts
# down at its end). SHAREDOS_SKIP_CHECKS=1 leaves them out.
checks_passed=0
checks_failed=0
if [ "${SHAREDOS_SKIP_CHECKS:-0}" != "1" ]; then
  for check in "python3 tools/check_layers.py" tools/check_format.sh tools/thread_safety.sh; do
    name="$(basename "${check##* }")"
    $check > "$out/${name}.log" 2>&1
    check_rc=$?
    grep -vE '^(thread-safety|format|layers): [^ ]+$' "$out/${name}.log" | tail -n 40
    last_line="$(tail -n 1 "$out/${name}.log")"
    echo "$last_line"
    if [ "$check_rc" -eq 0 ] && [[ "$last_line" == *": PASSED" ]]; then
      checks_passed=$((checks_passed + 1))
    else
      checks_failed=$((checks_failed + 1))
    fi
  done
fi

# test_summary.py's last line is `N passed, N failed[, N skipped]`; the fuzz cases and the checks
# join it.
printf '%s\n' "$summary" | sed '$d'
last="$(printf '%s\n' "$summary" | tail -n 1)"
unit_passed="$(printf '%s' "$last" | grep -oE '^[0-9]+')"
unit_failed="$(printf '%s' "$last" | grep -oE '[0-9]+ failed' | grep -oE '[0-9]+')"
passed=$(( ${unit_passed:-0} + fuzz_passed + checks_passed ))
failed=$(( ${unit_failed:-1} + fuzz_failed + checks_failed ))
skipped="$(printf '%s' "$last" | grep -oE ', [0-9]+ skipped')"
echo "${passed} passed, ${failed} failed${skipped}"
if [ "$bazel_rc" -ne 0 ] || [ "$summary_rc" -ne 0 ] || [ "$fuzz_failed" -ne 0 ] \
    || [ "$checks_failed" -ne 0 ]; then
  exit 1
fi
exit 0
