#!/usr/bin/env bash
# //proto:buf_breaking_test — `buf breaking` of the current service protos against the golden image
# proto/frozen/services.json (rules in proto/buf.yaml; why, in proto/frozen/README.md).
#
# Usage: buf_breaking_test.sh BUF_LIB PACKAGE_JSON PACKAGE_LOCK GOLDEN_IMAGE FILE...
set -euo pipefail
source "$1"
find_buf "$2" "$3"
golden="$(readlink -f "$4")"
shift 4

module="${TEST_TMPDIR:?run me with bazel test}/proto"
copy_module "$module" "$@"

if out="$("$BUF" breaking "$module" --against "$golden" 2>&1)"; then
  echo "OK: the service packages are wire- and source-compatible with proto/frozen/services.json."
  exit 0
fi
echo "$out"
cat <<'MSG'

FAIL: breaking change to a SharedOS service API (buf breaking, rule set FILE; see above).
Deployed clients and servers of sharedos.{grantstore,audit,authorizer,envelope}.v1 still speak the
old shape. Instead:
  * add, never delete: a removed field needs `reserved <number>; reserved "<name>";`
  * never rename or renumber a field, RPC, message, enum or enum value, nor change a type;
  * for a real break, add a new version package (sharedos.<svc>.v2) beside v1.
Only if the break is deliberate and agreed, accept it with
  bazel run //proto:update_services_buf_image
and say why in the change (see proto/frozen/README.md).
MSG
exit 1
