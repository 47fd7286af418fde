#!/usr/bin/env bash
# Proves //proto:protocol_v1_frozen_test can fail: copies the protocol "1" protos into
# $TEST_TMPDIR, mutates a copy in each way a strict "1" reader would reject, builds a descriptor set
# with /usr/bin/protoc and runs the same check (check_frozen.sh) against the checked-in golden.
# Every mutation must be rejected with the "version must move" message; the unmodified copy must pass.
#
# Usage: frozen_mutation_test.sh DESCRIPTOR_DIGEST CHECK_FROZEN GOLDEN PROTO...
set -euo pipefail

digest="$(realpath "$1")"
check="$(realpath "$2")"
golden="$(realpath "$3")"
shift 3
protoc=/usr/bin/protoc
tmp="${TEST_TMPDIR:?run me with bazel test}"
pristine="$tmp/pristine"
mkdir -p "$pristine/sharedos/protocol/v1"
for src in "$@"; do
  case "$src" in
    */sharedos/protocol/v1/*.proto) cp "$(realpath "$src")" "$pristine/sharedos/protocol/v1/" ;;
  esac
done
files=()
for f in "$pristine"/sharedos/protocol/v1/*.proto; do files+=("sharedos/protocol/v1/$(basename "$f")"); done
if [[ ${#files[@]} -lt 7 ]]; then
  echo "FAIL: expected the 7 protocol \"1\" protos, got ${#files[@]}: $*" >&2
  exit 1
fi

failures=0
case_no=0

# run_case NAME FILE SED_EXPR EXPECT_IN_DIFF: copies the pristine tree, applies SED_EXPR to FILE
# (none when FILE is "-"), and checks the outcome: "-" expects a pass, anything else a rejection
# whose output contains the "version must move" message and EXPECT_IN_DIFF.
run_case() {
  local name="$1" file="$2" expr="$3" expect="$4"
  case_no=$((case_no + 1))
  local root="$tmp/case$case_no"
  rm -rf "$root"
  cp -r "$pristine" "$root"
  if [[ "$file" != "-" ]]; then
    sed -i -e "$expr" "$root/sharedos/protocol/v1/$file"
    if cmp -s "$pristine/sharedos/protocol/v1/$file" "$root/sharedos/protocol/v1/$file"; then
      echo "FAIL [$name]: the mutation did not apply to $file (has the proto changed?)"
      failures=$((failures + 1))
      return
    fi
  fi
  if ! (cd "$root" && "$protoc" -I. --include_imports --descriptor_set_out="$root/set.pb" \
        "${files[@]}") >"$root/protoc.log" 2>&1; then
    echo "FAIL [$name]: protoc rejected the mutated copy:"
    cat "$root/protoc.log"
    failures=$((failures + 1))
    return
  fi
  local status=0
  "$check" "$digest" "$root/set.pb" "$golden" >"$root/check.log" 2>&1 || status=$?
  if [[ "$expect" == "-" ]]; then
    if [[ $status -eq 0 ]]; then
      echo "ok   [$name]: passes"
    else
      echo "FAIL [$name]: the unmodified copy was rejected (exit $status):"
      cat "$root/check.log"
      failures=$((failures + 1))
    fi
    return
  fi
  if [[ $status -ne 1 ]]; then
    echo "FAIL [$name]: expected rejection (exit 1), got exit $status:"
    cat "$root/check.log"
    failures=$((failures + 1))
  elif ! grep -q 'The version must move' "$root/check.log" ||
       ! grep -q 'ExecutionRequest, ExecutionEvent, ExecutionResult, MessageEnvelope' "$root/check.log" ||
       ! grep -q 'docs/adr/' "$root/check.log"; then
    echo "FAIL [$name]: rejected, but without the \"version must move\" message:"
    cat "$root/check.log"
    failures=$((failures + 1))
  elif ! grep -qF -- "$expect" "$root/check.log"; then
    echo "FAIL [$name]: rejected, but the diff does not show '$expect':"
    cat "$root/check.log"
    failures=$((failures + 1))
  else
    echo "ok   [$name]: rejected, version must move"
  fi
}

run_case "unmodified copy" - - -
run_case "optional field added to AuditEvent" audit.proto \
  's|^  google.protobuf.Struct metadata = 27;|&\n  optional string extra_note = 28;|' \
  '+  field 28 extra_note json=extraNote optional string proto3_optional'
run_case "field renamed" context.proto \
  's|^  string purpose = 5;|  string intent = 5;|' \
  '+  field 5 intent json=intent optional string'
run_case "field renumbered" context.proto \
  's|^  string trace_id = 6;|  string trace_id = 9;|' \
  '+  field 9 trace_id json=traceId optional string'
run_case "field type changed" execution.proto \
  's|^  int64 sequence = 5;|  int32 sequence = 5;|' \
  '+  field 5 sequence json=sequence optional int32'
run_case "enum value added" grant.proto \
  's|^  ESCALATION_STATUS_PENDING = 1;|&\n  ESCALATION_STATUS_APPROVED = 2;|' \
  '+  value 2 ESCALATION_STATUS_APPROVED'
run_case "field removed" message.proto \
  '/^  string reply_to = 9;/d' \
  '-  field 9 reply_to json=replyTo optional string'
run_case "proto3 optional dropped" common.proto \
  's|^  optional int64 max_uses = 4;|  int64 max_uses = 4;|' \
  '+  field 4 max_uses json=maxUses optional int64'
run_case "json_name changed" tool.proto \
  's|^  string catalog_hash = 3;|  string catalog_hash = 3 [json_name = "hash"];|' \
  '+  field 3 catalog_hash json=hash optional string'

if [[ $failures -ne 0 ]]; then
  echo "$failures case(s) failed"
  exit 1
fi
echo "PASS: every mutation of protocol \"1\" was rejected; the unmodified copy passed."
