#!/usr/bin/env bash
# Builds every fuzz target (tagged `fuzz`) with --config=fuzz and runs each for a fixed number of
# executions from its seed corpus. Fails on any crash, leak, timeout or sanitizer report; prints
# per target its executions, coverage (libFuzzer's cov:/ft:) and time, then one
# `fuzz: <target> PASSED|FAILED` line each (tools/test.sh counts those). docs/fuzzing.md.
#
#   tools/fuzz.sh                     every target, its CI number of executions (below)
#   tools/fuzz.sh --runs=1000000 //envelope_svc/mcp/fuzz:mcp_handler_fuzzer
#   FUZZ_OUTPUT_BASE=…                 where the fuzz build's Bazel output base lives
#
# The build has its own --output_base: changing the compiler reconfigures Bazel's auto-detected
# C++ toolchain, which in the normal output base would throw away the gcc build's outputs; and it
# makes no bazel-* symlinks (they would point the workspace's at the fuzz output base).
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

# Executions per target in CI, sized so that all together (with the build) stay within ~5 minutes
# on a 2-core machine. The slow ones write files with fsync (files), build whole registries from
# ~20 KB configs (tool_registry) or run a turn engine (mcp_handler): about 200-500 executions/s.
default_runs=50000
declare -A ci_runs=([files_path_fuzzer]=5000 [tool_registry_fuzzer]=4000 [mcp_handler_fuzzer]=5000)
runs="${FUZZ_RUNS:-}"
targets=()
for arg in "$@"; do
  case "$arg" in
    --runs=*) runs="${arg#--runs=}" ;;
    *) targets+=("$arg") ;;
  esac
done

output_base="${FUZZ_OUTPUT_BASE:-$HOME/.cache/sharedos-fuzz/$(printf '%s' "$root" | sha256sum | cut -c1-16)}"
bazel_fuzz() { bazel --output_base="$output_base" "$@"; }
out="$root/.ci-out/fuzz"
rm -rf "$out"
mkdir -p "$out"

if [ "${#targets[@]}" -eq 0 ]; then
  # The normal output base answers the query (a query does not configure the toolchain).
  mapfile -t targets < <(bazel query 'attr(tags, "\bfuzz\b", kind(cc_binary, //...))' \
    2> "$out/query.log")
  if [ "${#targets[@]}" -eq 0 ]; then
    cat "$out/query.log"
    echo "fuzz: query FAILED"
    exit 1
  fi
fi

build_start=$(date +%s)
if ! bazel_fuzz build --config=fuzz --symlink_prefix=/ --keep_going "${targets[@]}" > "$out/build.log" 2>&1; then
  tail -n 40 "$out/build.log"
  for target in "${targets[@]}"; do echo "fuzz: $target FAILED (build)"; done
  exit 1
fi
echo "fuzz: built ${#targets[@]} targets in $(( $(date +%s) - build_start ))s"
bin="$(bazel_fuzz info --config=fuzz bazel-bin 2>/dev/null)"

failed=0
results=()
for target in "${targets[@]}"; do
  pkg="${target#//}"; pkg="${pkg%%:*}"; name="${target##*:}"
  work="$out/$name"
  mkdir -p "$work/corpus"
  log="$work/fuzz.log"
  start=$(date +%s)
  # New inputs go to the scratch corpus; the checked-in seeds are only read.
  (cd "$work" && TEST_TMPDIR="$work" ASAN_OPTIONS="detect_leaks=1:abort_on_error=0" \
    UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
    "$bin/$pkg/$name" -runs="${runs:-${ci_runs[$name]:-$default_runs}}" -timeout=25 \
    -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$work/" corpus "$root/$pkg/corpus/$name") > "$log" 2>&1
  rc=$?
  secs=$(( $(date +%s) - start ))
  done_line="$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n 1)"
  execs="$(grep -oE '^stat::number_of_executed_units: [0-9]+' "$log" | awk '{print $2}')"
  cov="$(printf '%s' "$done_line" | grep -oE 'cov: [0-9]+' | awk '{print $2}')"
  ft="$(printf '%s' "$done_line" | grep -oE 'ft: [0-9]+' | awk '{print $2}')"
  status=PASSED
  if [ "$rc" -ne 0 ] || [ -z "$done_line" ] ||
    grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:' "$log"; then
    status=FAILED
    failed=$((failed + 1))
    echo "---- $target (exit $rc): $log"
    grep -E -A 30 'ERROR:|runtime error:' "$log" | head -n 60
    ls "$work" | grep -E '^(crash|leak|timeout|oom)-' | sed "s|^|  artifact: $work/|"
  fi
  results+=("$(printf '%-58s %-6s execs=%-9s cov=%-6s ft=%-6s %ss' \
    "$name" "$status" "${execs:-?}" "${cov:-?}" "${ft:-?}" "$secs")")
  echo "fuzz: $target $status"
done

printf '%s\n' "${results[@]}" | tee "$out/summary.txt"
[ "$failed" -eq 0 ]
