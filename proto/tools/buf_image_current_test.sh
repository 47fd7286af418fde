#!/usr/bin/env bash
# //proto:buf_image_current_test — the golden proto/frozen/services.json must be the image of the
# current protos. A stale golden would let buf breaking miss the deletion of anything added since.
#
# Usage: buf_image_current_test.sh BUF_LIB PACKAGE_JSON PACKAGE_LOCK GOLDEN_IMAGE FILE...
set -euo pipefail
source "$1"
find_buf "$2" "$3"
golden="$(readlink -f "$4")"
shift 4

module="${TEST_TMPDIR:?run me with bazel test}/proto"
copy_module "$module" "$@"
build_image_json "$module" "$TEST_TMPDIR/current.json"

if diff -u --label "golden (proto/frozen/services.json)" --label "current protos" \
    "$golden" "$TEST_TMPDIR/current.json" >"$TEST_TMPDIR/diff.txt"; then
  echo "OK: proto/frozen/services.json is the image of the current protos."
  exit 0
fi
head -n 200 "$TEST_TMPDIR/diff.txt"
cat <<'MSG'

FAIL: proto/frozen/services.json is stale: the protos changed (diff above, first 200 lines).
If //proto:buf_breaking_test passes, the change is compatible: record it with
  bazel run //proto:update_services_buf_image
and commit proto/frozen/services.json with the .proto change, so later changes are checked
against it (see proto/frozen/README.md).
MSG
exit 1
