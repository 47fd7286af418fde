#!/usr/bin/env bash
# Fails on any C++ file (.cc, .h) that clang-format (.clang-format at the root) would change, and
# names each one. To fix: `clang-format -i <file>`, or for a branch's changes
# `git clang-format --style=file main`. Ends with `format: PASSED|FAILED` (tools/test.sh counts it).
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files -- '*.cc' '*.h' ':!third_party/**')
else
  mapfile -t files < <(find . -path ./third_party -prune -o -path './bazel-*' -prune \
    -o -path ./node_modules -prune -o \( -name '*.cc' -o -name '*.h' \) -print | sed 's|^\./||')
fi

# One clang-format process for all files: with --dry-run --Werror it reports each change as
# "<file>:<line>:<column>: error: code should be clang-formatted".
mapfile -t unformatted < <(printf '%s\0' "${files[@]}" \
  | xargs -0 clang-format --style=file --dry-run --Werror 2>&1 \
  | sed -n 's/^\(.*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' | sort -u)
for file in "${unformatted[@]}"; do
  echo "format: $file differs from clang-format --style=file"
done
echo "format: ${#files[@]} files, ${#unformatted[@]} unformatted"
if [ "${#unformatted[@]}" -eq 0 ]; then echo "format: PASSED"; exit 0; fi
echo "format: FAILED"
exit 1
