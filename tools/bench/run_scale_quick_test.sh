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
  "audit append p50 (one event) vs records | 1,000: " \
  "audit Query p50 (one trace's 10 records) vs records | 1,000: " \
  "audit Verify from the last checkpoint (same records checked) vs records | 1,000: " \
  "audit database bytes per record vs records | 1,000: " \
  "sharedosd memory per open turn vs open turns | 10: " \
  "InvokeTool p50 vs open turns | 10: " \
  "grant store LoadAuthority p50 (an actor's 100 grants; readers copy pages (default)) vs grants stored | 1,000: " \
  "grant store LoadAuthority CPU per call (readers with mmap, 1 GiB) vs grants stored | 1,000: "; do
  grep -qF -- "| $row" "$table" || fail "row missing: $row"
done
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
