#!/usr/bin/env bash
# Issue 37's scale table: how each cost grows with its input, every curve from one run, printed
# with the ratio of its largest to its smallest point (docs/performance.md, scale table).
#
#   tools/bench/run_scale.sh [--quick | --large] [output-dir]   (from anywhere in the workspace)
#
# Full run (about 4 minutes on a quiet 2-core machine; 15-20 at load 15-25):
#   core        BM_Decide, BM_Resolve and the linear scan at 1, 16, 64 and 256 grants per
#               (actor, authority) (authorizer_svc/core:capability_authorizer_bench; more than
#               256 are refused, grant_limit_exceeded, so 4,096 has no decision to time);
#   audit       append p50, filtered Query p50, Verify from the last checkpoint and bytes per
#               record at 10k, 100k and 1M records (SQLite; tools/bench:audit_scale_bench);
#   turns       sharedosd's memory per open turn and InvokeTool p50 at 1k, 10k and 50k open
#               turns (tools/bench:turns_scale_bench);
#   grantstore  LoadAuthority p50 and CPU of an actor's 100 grants at 10k grants (100 actors) and
#               1M grants (10,000 actors) on SQLite, readers copying pages (the default) and with
#               --reader_mmap_bytes=1GiB (grantstore_svc/bench:grantstore_bench; the fixtures are
#               kept in $SHAREDOS_SCALE_FIXTURES, default /tmp, and reused while they match);
#   audit_postgres  the audit step's figures on PostgreSQL at 10k and 1M records (a throwaway
#               cluster at the server's defaults; filled by the fixture builder, --fill=store);
#   replicas    Authorize and InvokeTool throughput with 1, 2 and 3 replicas of every service on
#               one PostgreSQL, real processes (tools/bench:replicas_scale_bench).
# The PostgreSQL steps need its server binaries (tools/setup.sh installs them): without them
# each is skipped with a message saying so, and its rows read "skipped" in the table.
# --large: the full run plus audit_10m, the SQLite log at 10M records (opt-in: it does not fit
# the 15 minutes). Its fixture, a valid hash-chained log written by the fixture builder
# (audit_scale_bench --fill=store), is kept in $SHAREDOS_SCALE_FIXTURES and reused: the first
# --large run builds it (12.1 GB; 48 minutes on two cores at load ~18), later ones only measure.
# --quick: the same steps at toy sizes (about a minute): a smoke test that every row is
# produced, no figure to read.
# SHAREDOS_SCALE_STEPS="step ..." runs only those steps (e.g. "replicas audit_postgres"); the
# table then reports the others missing.
#
# Configuration: the repository's build (.bazelrc: -O2) unless SHAREDOS_BENCH_CONFIG says
# otherwise (e.g. SHAREDOS_BENCH_CONFIG='-c opt'). SHAREDOS_SCALE_BIN=<dir> runs the binaries
# under <dir> (a bazel-bin, or a test's runfiles) without building. The raw output of every
# step is kept in output-dir (default: a new directory under /tmp) next to table.md.
set -euo pipefail
quick=0
with_10m=0
if [[ "${1:-}" == "--quick" ]]; then
  quick=1
  shift
elif [[ "${1:-}" == "--large" ]]; then
  with_10m=1
  shift
fi
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$(mktemp -d "${TEST_TMPDIR:-/tmp}/sharedos-scale-XXXXXX")}"
mkdir -p "$out"

if [[ -n "${SHAREDOS_SCALE_BIN:-}" ]]; then
  bin="$SHAREDOS_SCALE_BIN"
  config=("(prebuilt: $bin)")
else
  cd "$here/../.."
  read -r -a config <<<"${SHAREDOS_BENCH_CONFIG:-}"
  targets=(//authorizer_svc/core:capability_authorizer_bench //tools/bench:audit_scale_bench
    //tools/bench:turns_scale_bench //grantstore_svc/bench:grantstore_bench
    //tools/bench:replicas_scale_bench)
  bazel build ${config[@]+"${config[@]}"} "${targets[@]}" >"$out/build.log" 2>&1 || {
    tail -30 "$out/build.log"
    exit 1
  }
  bin="$(bazel info ${config[@]+"${config[@]}"} bazel-bin 2>/dev/null)"
fi

{
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "commit: $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "config: bazel ${config[*]:-(default)} (.bazelrc: -O2); $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
  echo "mode: $([[ $quick == 1 ]] && echo quick || { [[ $with_10m == 1 ]] && echo large || echo full; })"
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$out/machine.txt"

wanted() { [[ -z "${SHAREDOS_SCALE_STEPS:-}" || " $SHAREDOS_SCALE_STEPS " == *" $1 "* ]]; }

step() {
  local name=$1
  shift
  wanted "$name" || return 0
  echo "[$(date -u +%H:%M:%S)] $name (load $(cut -d' ' -f1 /proc/loadavg))" >&2
  echo "$name: start $(date -u +%H:%M:%S), load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/machine.txt"
  "$@" >"$out/$name.txt" 2>"$out/$name.err" || {
    echo "$name failed; see $out/$name.err" >&2
    tail -20 "$out/$name.err" >&2
    exit 1
  }
  echo "$name: end $(date -u +%H:%M:%S), load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/machine.txt"
}

# A PostgreSQL step: the bench exits 2 when no server binaries are installed; the step is then
# skipped, saying so (its rows read "skipped" in the table).
pg_step() {
  local name=$1
  shift
  wanted "$name" || return 0
  echo "[$(date -u +%H:%M:%S)] $name (load $(cut -d' ' -f1 /proc/loadavg))" >&2
  echo "$name: start $(date -u +%H:%M:%S), load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/machine.txt"
  local rc=0
  "$@" >"$out/$name.txt" 2>"$out/$name.err" || rc=$?
  if [[ $rc == 2 ]]; then
    echo "$name skipped: PostgreSQL's server binaries are not installed (run tools/setup.sh):" >&2
    tail -1 "$out/$name.err" >&2
    echo "skipped: $(tail -1 "$out/$name.err")" >"$out/$name.txt"
  elif [[ $rc != 0 ]]; then
    echo "$name failed; see $out/$name.err" >&2
    tail -20 "$out/$name.err" >&2
    exit 1
  fi
  echo "$name: end $(date -u +%H:%M:%S), load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/machine.txt"
}

if [[ $quick == 1 ]]; then
  core_flags=(--benchmark_min_time=0.01)
  audit_flags=(--sizes=1000,4000 --samples=20 --verify_samples=2 --verify_tail=200 --dir="$out")
  # sharedosd's CPU is read in clock ticks (10 ms): 200 calls keep the CPU-per-call point
  # above that resolution (20 calls could read 0 ticks, and a curve from 0 has no ratio).
  turns_flags=(--turns=10,40 --calls=200 --warmup=20)
  audit_pg_flags=(--sizes=1000,4000 --samples=20 --verify_samples=2 --verify_tail=200)
  replicas_flags=(--replicas=1,2 --threads=4 --seconds=0.5 --warmup_seconds=0.2)
  audit_large_flags=(--sizes=5000 --samples=20 --verify_samples=2 --verify_tail=200)
  small=(--grants=1000 --actors=10)
  large=(--grants=10000 --actors=100)
  gs_flags=(--benchmark_min_time=0.05)
else
  core_flags=(--benchmark_repetitions=3)
  audit_flags=(--sizes=10000,100000,1000000)
  turns_flags=(--turns=1000,10000,50000)
  audit_pg_flags=(--sizes=10000,1000000)
  replicas_flags=(--replicas=1,2,3 --threads=16 --seconds=5 --warmup_seconds=1)
  audit_large_flags=(--sizes=10000000)
  small=(--grants=10000 --actors=100)
  large=(--grants=1000000 --actors=10000)
  gs_flags=(--benchmark_min_time=3)
fi
fixtures="${SHAREDOS_SCALE_FIXTURES:-/tmp}"
[[ $quick == 1 ]] && fixtures="$out"

step core "$bin/authorizer_svc/core/capability_authorizer_bench" \
  --benchmark_filter='^BM_(Decide|Resolve|Baseline_LinearScan)/(1|16|64|256)$' \
  --benchmark_format=json "${core_flags[@]}"
step audit "$bin/tools/bench/audit_scale_bench" "${audit_flags[@]}"
step turns "$bin/tools/bench/turns_scale_bench" "${turns_flags[@]}"
for reader in plain mmap; do
  mmap=()
  [[ $reader == mmap ]] && mmap=(--reader_mmap_bytes=1073741824)
  for size in small large; do
    if [[ $size == small ]]; then grants=("${small[@]}"); else grants=("${large[@]}"); fi
    echo "${grants[*]} ${mmap[*]:-}" >"$out/grantstore_${size}_${reader}_args.txt"
    step "grantstore_${size}_${reader}" "$bin/grantstore_svc/bench/grantstore_bench" "${grants[@]}" \
      --fixture="$fixtures/sharedos-scale-grants-${grants[0]#--grants=}.db" ${mmap[@]+"${mmap[@]}"} \
      --benchmark_filter='^BM_LoadAuthority100/' --benchmark_format=json "${gs_flags[@]}"
  done
done
pg_step audit_postgres "$bin/tools/bench/audit_scale_bench" --db=postgres --fill=store \
  "${audit_pg_flags[@]}"
pg_step replicas "$bin/tools/bench/replicas_scale_bench" "${replicas_flags[@]}"
if [[ $with_10m == 1 || $quick == 1 ]]; then
  # The cached fixture (reused while it holds the records; --quick: a toy one in the output).
  step audit_10m "$bin/tools/bench/audit_scale_bench" --fill=store \
    --fixture="$fixtures/sharedos-scale-audit-${audit_large_flags[0]#--sizes=}.db" \
    "${audit_large_flags[@]}"
fi
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/machine.txt"

python3 "$here/run_scale_table.py" "$out" | tee "$out/table.md"
echo "raw output: $out" >&2
