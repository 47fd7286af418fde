#!/usr/bin/env bash
# The protocol "1" freeze check: regenerates the image of a descriptor set with descriptor_digest
# and compares it with the golden. Exit 0 when identical; 1 (with the diff and what to do) when not;
# 2 when the image cannot be made.
#
# Usage: check_frozen.sh DESCRIPTOR_DIGEST DESCRIPTOR_SET GOLDEN
set -euo pipefail

if [[ $# -ne 3 ]]; then
  echo "usage: $0 DESCRIPTOR_DIGEST DESCRIPTOR_SET GOLDEN" >&2
  exit 2
fi
digest="$1"
descriptor_set="$2"
golden="$3"

work="$(mktemp -d "${TEST_TMPDIR:-${TMPDIR:-/tmp}}/frozen.XXXXXX")"
trap 'rm -rf "$work"' EXIT

if ! "$digest" "$descriptor_set" >"$work/actual.txt"; then
  echo "FROZEN CHECK ERROR: descriptor_digest could not read $descriptor_set" >&2
  exit 2
fi
if [[ ! -s "$golden" ]]; then
  echo "FROZEN CHECK ERROR: golden $golden is missing or empty" >&2
  exit 2
fi

if diff -u --label "golden (proto/frozen/protocol_v1.golden.txt)" --label "current protos" \
    "$golden" "$work/actual.txt" >"$work/diff.txt"; then
  echo "OK: protocol \"1\" (sharedos.protocol.v1) matches the frozen golden image."
  exit 0
fi

cat "$work/diff.txt"
cat <<'MSG'

FAIL: protocol "1" is FROZEN, and this change alters it (diff above: - golden, + now).

Readers of protocol "1" are strict: they reject any field, enum value or shape they do not know.
So even ONE MORE (optional) field breaks every deployed "1" reader, and so does a removed,
renamed, renumbered or retyped field or a new enum value.

The version must move: changing these objects means moving the protocol version for EVERY object
that carries it — ExecutionRequest, ExecutionEvent, ExecutionResult, MessageEnvelope,
RuntimeManifest, AuditEvent, ToolCatalog — in the same change (a new sharedos.protocol.v2
package), with an ADR in docs/adr/ that says why.

Otherwise undo the change to proto/sharedos/protocol/v1/.

(Only if the golden itself is wrong — never to accept a protocol change — regenerate it with
`bazel run //proto:update_frozen_golden`; see proto/frozen/README.md.)
MSG
exit 1
