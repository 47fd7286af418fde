#!/usr/bin/env bash
# tools/check_layers.py on small trees: passes a tree whose includes run downwards, and fails one
# with an upward include, one with non-test code including tests/, and one whose exception list
# names an include that no longer occurs.
set -euo pipefail
check="$TEST_SRCDIR/$TEST_WORKSPACE/tools/check_layers.py"
tree="$TEST_TMPDIR/tree"

fresh_tree() {
  rm -rf "$tree"
  mkdir -p "$tree/common/a" "$tree/capability" "$tree/envelope_svc/core" "$tree/tools" \
    "$tree/tests/testing"
  echo '#include "common/a/x.h"' > "$tree/capability/c.cc"
  echo '#include "capability/c.h"' > "$tree/envelope_svc/core/e.cc"
  echo '#include "tests/testing/process.h"' > "$tree/envelope_svc/core/e_test.cc"
  : > "$tree/common/a/x.h"
}

expect() {  # expect PASSED|FAILED <what>
  local out
  out="$(python3 "$check" "$tree" || true)"
  if ! grep -q "^layers: $1\$" <<<"$out"; then
    echo "expected $1 for $2, got:"; echo "$out"; exit 1
  fi
}

fresh_tree
expect PASSED "includes that run downwards"

fresh_tree
echo '#include "envelope_svc/core/e.h"' > "$tree/common/a/x.cc"
expect FAILED "common including envelope_svc"
{ python3 "$check" "$tree" || true; } | grep -q '^common/a/x.cc:1: common includes envelope_svc' || {
  echo "the violation is not named by file and line"; exit 1; }

fresh_tree
echo '#include "tests/testing/process.h"' > "$tree/envelope_svc/core/e.cc"
expect FAILED "non-test code including tests/"

fresh_tree
printf '# reason\ncapability/c.cc envelope_svc\n' > "$tree/tools/check_layers_allow.txt"
expect FAILED "an exception that no longer occurs"

fresh_tree
echo '#include "envelope_svc/core/e.h"' > "$tree/capability/d.cc"
printf '# reason\ncapability/d.cc envelope_svc\n' > "$tree/tools/check_layers_allow.txt"
expect PASSED "an upward include listed as an exception"
echo "check_layers_test: ok"
