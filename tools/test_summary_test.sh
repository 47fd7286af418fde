#!/usr/bin/env bash
# Proves tools/test_summary.py counts test cases from real-shaped inputs and can fail:
# passing and failing gtest cases, a skipped case, a target that crashed with no failing case in
# its XML, and a target that never built (no XML, no summary).
set -euo pipefail
script="$TEST_SRCDIR/sharedos/tools/test_summary.py"
d="$TEST_TMPDIR/summary"
rm -rf "$d" && mkdir -p "$d/logs/pkg/good" "$d/logs/pkg/bad" "$d/logs/pkg/crash"

cat > "$d/logs/pkg/good/test.xml" <<'XML'
<testsuites><testsuite name="S">
<testcase name="a" status="run" result="completed"/>
<testcase name="b" status="run" result="completed"/>
<testcase name="c" status="run" result="skipped"/>
</testsuite></testsuites>
XML
cat > "$d/logs/pkg/bad/test.xml" <<'XML'
<testsuites><testsuite name="S">
<testcase name="a" status="run" result="completed"/>
<testcase name="b" status="run" result="completed"><failure message="boom"/></testcase>
</testsuite></testsuites>
XML
cat > "$d/logs/pkg/crash/test.xml" <<'XML'
<testsuites><testsuite name="S"><testcase name="a" status="run" result="completed"/></testsuite></testsuites>
XML
bep() {
  for pair in "$@"; do
    printf '{"id":{"testSummary":{"label":"%s"}},"testSummary":{"overallStatus":"%s"}}\n' "${pair%%=*}" "${pair#*=}"
  done
}

# All green.
printf '//pkg:good\n' > "$d/targets"
bep "//pkg:good=PASSED" > "$d/bep.json"
out=$(python3 "$script" "$d/targets" "$d/bep.json" "$d/logs") && rc=0 || rc=$?
[ "$rc" -eq 0 ] || { echo "green run exited $rc"; exit 1; }
[ "$(echo "$out" | tail -1)" = "2 passed, 0 failed, 1 skipped" ] || { echo "got: $out"; exit 1; }

# A failing case, a crash and a target that never built.
printf '//pkg:good\n//pkg:bad\n//pkg:crash\n//pkg:unbuilt\n' > "$d/targets"
bep "//pkg:good=PASSED" "//pkg:bad=FAILED" "//pkg:crash=FAILED" > "$d/bep.json"
out=$(python3 "$script" "$d/targets" "$d/bep.json" "$d/logs") && rc=0 || rc=$?
[ "$rc" -ne 0 ] || { echo "red run exited 0"; exit 1; }
# good: 2 passed; bad: 1 passed 1 failed; crash: 1 passed + 1 failed (target); unbuilt: 1 failed.
[ "$(echo "$out" | tail -1)" = "4 passed, 3 failed, 1 skipped" ] || { echo "got: $out"; exit 1; }
echo "$out" | grep -q "broken target: //pkg:unbuilt (NO_STATUS)" || { echo "got: $out"; exit 1; }
echo "$out" | grep -q "broken target: //pkg:crash (FAILED)" || { echo "got: $out"; exit 1; }
# The failing case is named with its message.
echo "$out" | grep -q "failed case: //pkg:bad .b:" || { echo "got: $out"; exit 1; }
echo "$out" | grep -qx "boom" || { echo "got: $out"; exit 1; }

# A failure message of 1 MB is cut to a few KB.
big=$(head -c 1000000 /dev/zero | tr '\0' 'x')
printf '<testsuites><testsuite name="S"><testcase name="b"><failure message="%s"/></testcase></testsuite></testsuites>\n' \
  "$big" > "$d/logs/pkg/bad/test.xml"
printf '//pkg:bad\n' > "$d/targets"
bep "//pkg:bad=FAILED" > "$d/bep.json"
out=$(python3 "$script" "$d/targets" "$d/bep.json" "$d/logs") || true
[ "${#out}" -lt 10000 ] || { echo "a 1 MB message printed ${#out} bytes"; exit 1; }

# No targets at all is a failure, never a silent pass.
: > "$d/targets"
python3 "$script" "$d/targets" "$d/bep.json" "$d/logs" > /dev/null && { echo "empty run passed"; exit 1; }
echo ok
