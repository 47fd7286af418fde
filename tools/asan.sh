#!/usr/bin/env bash
# The unit tests under sanitizers: a documented job, not part of .ci/run (it rebuilds everything
# instrumented). docs/fuzzing.md "Sanitizer runs of the unit tests".
#
#   tools/asan.sh                         every test (not those tagged postgres or fuzz) under
#                                         ASan + UBSan (--config=asan)
#   tools/asan.sh //audit_svc/...         only these
#   tools/asan.sh --postgres [targets]    also the tests tagged postgres (each starts its own
#                                         throwaway cluster with initdb/pg_ctl, as in tools/test.sh)
#   tools/asan.sh --tsan                  ThreadSanitizer (--config=tsan) over the concurrent parts:
#                                         group commit, the outboxes, the lease table, checkpoints,
#                                         concurrent turns, the message transports (first builds
#                                         Abseil and protobuf with TSan: tools/tsan_deps.sh)
#   SAN_OUTPUT_BASE=…                     where the sanitizer build's Bazel output base lives
#
# Each mode has an output base of its own (like tools/fuzz.sh): the normal build keeps its
# outputs, and no bazel-* symlinks are made. Prints Bazel's per-test lines and a last line
# `sanitizers: <mode> <passed>/<total> tests passed` (exit 0 only when all passed).
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

mode=asan
tag_filter=-postgres,-fuzz,-manual,-no-sanitizers
targets=()
for arg in "$@"; do
  case "$arg" in
    --tsan) mode=tsan ;;
    --asan) mode=asan ;;
    --postgres) tag_filter=-fuzz,-manual,-no-sanitizers ;;
    *) targets+=("$arg") ;;
  esac
done
if [ "${#targets[@]}" -eq 0 ]; then
  if [ "$mode" = tsan ]; then
    targets=(//audit_svc/core:audit_log_test //audit_svc/core:checkpoint_test
             //audit_svc/client:outbox_test //audit_svc/client:audit_client_test
             //authorizer_svc/core:authorizer_core_test
             //authorizer_svc/core:capability_authorizer_test
             //authorizer_svc/core:resolved_authority_test
             //envelope_svc/core:turn_engine_load_test
             //envelope_svc/messaging:local_transport_test
             //envelope_svc/messaging:replicated_transport_test)
  else
    # Every package of the repository. Not //...: the bazel-<name> links of the normal build
    # point into another output base, which this server would descend into and fail to load.
    targets=(//:all)
    for dir in */; do
      dir="${dir%/}"
      case "$dir" in bazel-* | node_modules) continue ;; esac
      targets+=("//$dir/...")
    done
  fi
fi

# TSan sees absl::Mutex only when Abseil itself is instrumented, and protobuf's inline code must
# agree with its library: both are built from Debian's sources once (tools/tsan_deps.sh).
if [ "$mode" = tsan ]; then
  "$root/tools/tsan_deps.sh" || { echo "sanitizers: tsan 0/0 tests passed (tools/tsan_deps.sh failed)"; exit 1; }
fi

output_base="${SAN_OUTPUT_BASE:-$HOME/.cache/sharedos-$mode/$(printf '%s' "$root" | sha256sum | cut -c1-16)}"
out="$root/.ci-out/$mode"
mkdir -p "$out"
log="$out/bazel.log"

bazel --output_base="$output_base" test --config="$mode" --symlink_prefix=/ --keep_going \
  --test_tag_filters="$tag_filter" --build_tests_only \
  --test_env=LSAN_OPTIONS=suppressions="$root/tools/lsan.supp" \
  --test_env=TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions="$root/tools/tsan.supp" \
  -- "${targets[@]}" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}

passed=$(grep -cE '^//[^ ]+ +(\(cached\) )?PASSED' "$log" || true)
total=$(grep -cE '^//[^ ]+ +(\(cached\) )?(PASSED|FAILED|TIMEOUT|FLAKY|NO STATUS)|^//[^ ]+ +FAILED TO BUILD' "$log" || true)
echo "sanitizers: $mode $passed/$total tests passed"
exit "$status"
