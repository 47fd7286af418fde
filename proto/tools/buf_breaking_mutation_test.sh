#!/usr/bin/env bash
# Proves //proto:buf_breaking_test can fail: copies the protos into $TEST_TMPDIR, breaks a copy
# (a field deleted; an RPC renamed; a field renumbered) and asserts `buf breaking` against the
# golden image rejects each; the unmodified copy, and a deletion that reserves number and name,
# must pass.
#
# Usage: buf_breaking_mutation_test.sh BUF_LIB PACKAGE_JSON PACKAGE_LOCK GOLDEN_IMAGE FILE...
set -euo pipefail
source "$1"
find_buf "$2" "$3"
golden="$(readlink -f "$4")"
shift 4

tmp="${TEST_TMPDIR:?run me with bazel test}"
pristine="$tmp/pristine"
copy_module "$pristine" "$@"

failures=0
case_no=0

# run_case NAME FILE SED_EXPR EXPECT: EXPECT "-" means buf breaking must pass; anything else
# means it must fail (exit 100) with EXPECT in its output.
run_case() {
  local name="$1" file="$2" expr="$3" expect="$4"
  case_no=$((case_no + 1))
  local module="$tmp/case$case_no"
  rm -rf "$module"
  cp -r "$pristine" "$module"
  if [[ "$file" != "-" ]]; then
    sed -i -e "$expr" "$module/$file"
    if cmp -s "$pristine/$file" "$module/$file"; then
      echo "FAIL [$name]: the mutation did not apply to $file (has the proto changed?)"
      failures=$((failures + 1))
      return
    fi
  fi
  local status=0 out
  out="$("$BUF" breaking "$module" --against "$golden" 2>&1)" || status=$?
  if [[ "$expect" == "-" ]]; then
    if [[ $status -eq 0 ]]; then
      echo "ok   [$name]: passes"
    else
      echo "FAIL [$name]: expected no breaking change, got exit $status:"
      echo "$out"
      failures=$((failures + 1))
    fi
  elif [[ $status -ne 100 ]]; then
    echo "FAIL [$name]: expected buf breaking to reject (exit 100), got exit $status:"
    echo "$out"
    failures=$((failures + 1))
  elif ! grep -qF -- "$expect" <<<"$out"; then
    echo "FAIL [$name]: rejected, but not with '$expect':"
    echo "$out"
    failures=$((failures + 1))
  else
    echo "ok   [$name]: rejected: $(head -n 1 <<<"$out")"
  fi
}

grantstore=sharedos/grantstore/v1/grantstore.proto
run_case "unmodified copy" - - -
run_case "field deleted" "$grantstore" \
  '/^  string idempotency_key = 2;/d' \
  'field "2" with name "idempotency_key" on message "IssueGrantRequest" was deleted'
run_case "RPC renamed" "$grantstore" \
  's/^  rpc GetUsage(GetUsageRequest)/  rpc FetchUsage(GetUsageRequest)/' \
  'Previously present RPC "GetUsage" on service "GrantStore" was deleted'
run_case "field renumbered" sharedos/audit/v1/audit.proto \
  's/^  int64 head_sequence = 3;/  int64 head_sequence = 5;/' \
  'head_sequence'
run_case "field deleted with number and name reserved" "$grantstore" \
  's/^  string idempotency_key = 2;/  reserved 2;\n  reserved "idempotency_key";/' \
  -

if [[ $failures -ne 0 ]]; then
  echo "$failures case(s) failed"
  exit 1
fi
echo "PASS: buf breaking rejected every breaking mutation; compatible copies passed."
