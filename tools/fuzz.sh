#!/usr/bin/env bash
# Builds every fuzz target (tagged `fuzz`) with --config=fuzz and runs each for a fixed number of
# executions, after replaying its checked-in corpus (<pkg>/corpus/<name>/, every input run once;
# fewer inputs read than the directory holds fails the target). Its own libFuzzer flags, if any,
# come from <pkg>/<name>.options. Fails on any crash, leak, timeout or sanitizer report; prints
# per target the inputs replayed, its executions, coverage (libFuzzer's cov:/ft:) and time, then
# one `fuzz: <target> PASSED|FAILED` line each (tools/test.sh counts those). docs/fuzzing.md.
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

# Executions per target in CI (the replay included), sized so that all together (with the build)
# stay within a few minutes on a 2-core machine. The three with fewer cost about 1 ms of CPU each
# early in a run (libFuzzer's and ASan's bookkeeping over a large instrumented binary, more than
# the call itself; docs/fuzzing.md), against 0.1-0.3 ms for the others.
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
  seeds="$root/$pkg/corpus/$name"
  # A target's own libFuzzer flags (e.g. -max_len), one per line: <pkg>/<name>.options.
  options=()
  if [ -f "$root/$pkg/$name.options" ]; then
    mapfile -t options < <(grep -vE '^[[:space:]]*(#|$)' "$root/$pkg/$name.options")
  fi
  start=$(date +%s)
  # libFuzzer first runs every input of both corpus directories (the checked-in corpus is
  # replayed: "INFO: seed corpus: files: N", then INITED), then the fixed number of mutations.
  # New inputs go to the scratch corpus; the checked-in corpus is only read.
  (cd "$work" && TEST_TMPDIR="$work" ASAN_OPTIONS="detect_leaks=1:abort_on_error=0" \
    UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
    "$bin/$pkg/$name" -runs="${runs:-${ci_runs[$name]:-$default_runs}}" -timeout=25 \
    -rss_limit_mb=2048 -print_final_stats=1 "${options[@]}" \
    -artifact_prefix="$work/" corpus "$seeds") > "$log" 2>&1
  rc=$?
  secs=$(( $(date +%s) - start ))
  done_line="$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n 1)"
  execs="$(grep -oE '^stat::number_of_executed_units: [0-9]+' "$log" | awk '{print $2}')"
  cov="$(printf '%s' "$done_line" | grep -oE 'cov: [0-9]+' | awk '{print $2}')"
  ft="$(printf '%s' "$done_line" | grep -oE 'ft: [0-9]+' | awk '{print $2}')"
  # Every checked-in input was read and run before the mutations (the scratch corpus starts
  # empty): libFuzzer's count of files read is at least the directory's.
  replayed="$(grep -oE 'INFO: seed corpus: files: [0-9]+' "$log" | awk '{print $NF}')"
  checked_in="$(find "$seeds" -type f | wc -l)"
  status=PASSED
  if [ "${replayed:-0}" -lt "$checked_in" ]; then
    echo "---- $target: replayed ${replayed:-no} inputs of the $checked_in in $seeds"
    status=FAILED
  fi
  if [ "$status" = FAILED ] || [ "$rc" -ne 0 ] || [ -z "$done_line" ] ||
    grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:' "$log"; then
    status=FAILED
    failed=$((failed + 1))
    echo "---- $target (exit $rc): $log"
    grep -E -A 30 'ERROR:|runtime error:' "$log" | head -n 60
    ls "$work" | grep -E '^(crash|leak|timeout|oom)-' | sed "s|^|  artifact: $work/|"
  fi
  results+=("$(printf '%-30s %-6s replayed=%-4s execs=%-9s cov=%-6s ft=%-6s %ss' \
    "$name" "$status" "${replayed:-?}" "${execs:-?}" "${cov:-?}" "${ft:-?}" "$secs")")
  echo "fuzz: $target $status"
done

printf '%s\n' "${results[@]}" | tee "$out/summary.txt"
[ "$failed" -eq 0 ]
