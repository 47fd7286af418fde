#!/usr/bin/env bash
# Runs every series of issue 23's speed table in one go and prints the table with this run's
# ratios. Every ratio is to a part measured in the same run (the no-op gRPC floor of the same
# server, one fsync's p50 on the same disk, BM_Decide/256, the naive linear scan).
#
#   tools/bench/run_all.sh [output-dir]      (from anywhere in the workspace; ~6-10 minutes)
#
# Configuration: bazel -c opt (plus .bazelrc) unless SHAREDOS_BENCH_CONFIG says otherwise (e.g.
# SHAREDOS_BENCH_CONFIG=--compilation_mode=fastbuild: the repository's -O2 build, with assertions); it is printed
# with the table. The raw output of every bench is kept in output-dir (default: a new directory
# under /tmp) next to table.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:-$(mktemp -d /tmp/sharedos-bench-XXXXXX)}"
mkdir -p "$out"

targets=(//tools/bench:authorizer_bench //tools/bench:envelope_bench //tools/bench:invoke_bench
  //authorizer_svc/core:capability_authorizer_bench)
read -r -a config <<<"${SHAREDOS_BENCH_CONFIG:--c opt}"
bazel build "${config[@]}" "${targets[@]}" >"$out/build.log" 2>&1 || {
  tail -30 "$out/build.log"
  exit 1
}
bin="$(bazel info "${config[@]}" bazel-bin 2>/dev/null)"

{
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "config: bazel ${config[*]} (.bazelrc: -O2); $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$out/machine.txt"

step() {
  local name=$1
  shift
  echo "[$(date -u +%H:%M:%S)] $name" >&2
  "$@" >"$out/$name.txt" 2>"$out/$name.err" || {
    echo "$name failed; see $out/$name.err" >&2
    tail -20 "$out/$name.err" >&2
    exit 1
  }
}

step core "$bin/authorizer_svc/core/capability_authorizer_bench" \
  --benchmark_filter='BM_Decide/256$|BM_Resolve/256$|BM_Baseline_LinearScan/256$' \
  --benchmark_repetitions=5 --benchmark_format=json
step authorizer "$bin/tools/bench/authorizer_bench" --rounds=3 --calls=2000 --seconds=3
step envelope "$bin/tools/bench/envelope_bench" --rounds=3 --calls=1000 --opens=200 --turns=200 \
  --series=sharedosd
step invoke_normal "$bin/tools/bench/invoke_bench" --rounds=3 --calls=1000 \
  --deployments=four,sharedosd --audit_durability=normal --audit_mode=local \
  --outbox_durability=normal
step invoke_full "$bin/tools/bench/invoke_bench" --rounds=3 --calls=1000 --deployments=sharedosd \
  --audit_durability=full
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/machine.txt"

python3 "$(dirname "$0")/run_all_table.py" "$out" | tee "$out/table.md"
echo "raw output: $out" >&2
