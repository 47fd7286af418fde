#!/usr/bin/env bash
# run_scale.sh --quick over the built binaries: every step runs, and the table it prints has
# every curve with a figure at each point and its largest/smallest ratio (run_scale_table.py
# exits 1 on a missing row). Toy sizes: no figure is read, no time is asserted.
set -euo pipefail
root="${TEST_SRCDIR}/${TEST_WORKSPACE:-sharedos}"
out="${TEST_TMPDIR}/scale"
table="${TEST_TMPDIR}/table.md"

SHAREDOS_SCALE_BIN="$root" "$root/tools/bench/run_scale.sh" --quick "$out" >"$table"

fail() {
  echo "FAIL: $*" >&2
  cat "$table" >&2
  exit 1
}
for row in \
  "decision (BM_Decide, CPU) vs grants per (actor, authority) | 1: " \
  "resolution (BM_Resolve, CPU) vs grants per (actor, authority) | 1: " \
  "linear scan (baseline, CPU) vs grants per (actor, authority) | 1: " \
  "linear scan / BM_Decide | 1: " \
  "audit (SQLite) append p50 (one event) vs records | 1,000: " \
  "audit (SQLite) Query p50 (one trace's 10 records) vs records | 1,000: " \
  "audit (SQLite) Verify from the last checkpoint (same records checked) vs records | 1,000: " \
  "audit (SQLite) database bytes per record vs records | 1,000: " \
  "audit (SQLite, with the 10M fixture) append p50 (one event) vs records | 1,000: " \
  "sharedosd memory per open turn vs open turns | 10: " \
  "InvokeTool p50 vs open turns | 10: " \
  "grant store LoadAuthority p50 (an actor's 100 grants; readers copy pages (default)) vs grants stored | 1,000: " \
  "grant store LoadAuthority CPU per call (readers with mmap, 1 GiB) vs grants stored | 1,000: "; do
  grep -qF -- "| $row" "$table" || fail "row missing: $row"
done
# The PostgreSQL steps: measured where its server binaries are installed (tools/setup.sh),
# otherwise each says it was skipped and why.
if grep -q "^skipped:" "$out/audit_postgres.txt"; then
  grep -qF -- "| audit (PostgreSQL) | skipped: " "$table" || fail "no skipped row for audit_postgres"
else
  for row in \
    "audit (PostgreSQL) append p50 (one event) vs records | 1,000: " \
    "audit (PostgreSQL) database bytes per record vs records | 1,000: " \
    "PostgreSQL / SQLite at 1,000 records | append p50: "; do
    grep -qF -- "| $row" "$table" || fail "row missing: $row"
  done
fi
if grep -q "^skipped:" "$out/replicas.txt"; then
  grep -qF -- "| replicas (every service, one PostgreSQL) | skipped: " "$table" ||
    fail "no skipped row for replicas"
else
  for row in \
    "replicas: Authorize throughput (calls/s) vs replicas of every service | 1: " \
    "replicas: InvokeTool throughput (calls/s) vs replicas of every service | 1: " \
    "replicas: InvokeTool: services' CPU per call vs replicas of every service | 1: "; do
    grep -qF -- "| $row" "$table" || fail "row missing: $row"
  done
fi
# Every curve row carries its ratio.
curves=$(grep -c ' vs ' "$table")
ratios=$(grep ' vs ' "$table" | grep -c '| \*\*[0-9.,]*×\*\* |')
[[ "$curves" -ge 10 && "$curves" == "$ratios" ]] || fail "$ratios ratios for $curves curves"

# The table's own check can fail: a step's output removed, the row is reported missing.
rm "$out/turns.txt"
if python3 "$root/tools/bench/run_scale_table.py" "$out" >/dev/null 2>"${TEST_TMPDIR}/err"; then
  fail "run_scale_table.py accepted a run without its turns output"
fi
grep -q "missing rows: sharedosd memory per open turn" "${TEST_TMPDIR}/err" ||
  fail "no missing-row report: $(cat "${TEST_TMPDIR}/err")"
echo PASS
