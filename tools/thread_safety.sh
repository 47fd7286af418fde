#!/usr/bin/env bash
# Compiles every C++ target with clang's thread-safety analysis (--config=tsa, .bazelrc): each
# ABSL_GUARDED_BY / ABSL_EXCLUSIVE_LOCKS_REQUIRED / ABSL_LOCKS_EXCLUDED is checked, and a violation
# fails the build (-Werror). Runs only clang's front end (tools/thread_safety/clang_syntax_only.sh
# is the build's compiler: -fsyntax-only, then an empty object file; no code generated, nothing
# linked, no tests: the gcc build links and tests). protoc still generates the .pb.h/.grpc.pb.h
# our sources include; the generated .pb.cc files themselves are not analysed.
# First proves the analysis runs: tools/thread_safety:canary, which reads a guarded member without
# its lock (in a plain class and in an instantiated class template), must fail to compile, for
# those two reasons. Prints `thread-safety: PASSED|FAILED` (tools/test.sh counts it).
#
#   tools/thread_safety.sh            every target
#   tools/thread_safety.sh FLAGS…     FLAGS added to the clang build (e.g. --disk_cache= : no cache)
#   TSA_OUTPUT_BASE=…                 where the clang build's Bazel output base lives
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

# Its own output base, as tools/fuzz.sh: changing the compiler reconfigures the auto-detected C++
# toolchain, which would throw away the gcc build's outputs in the normal one.
output_base="${TSA_OUTPUT_BASE:-$HOME/.cache/sharedos-tsa/$(printf '%s' "$root" | sha256sum | cut -c1-16)}"
bazel_tsa() { bazel --output_base="$output_base" "$@"; }
# The wrapper's path is part of every compile's command line, so its objects (empty) never stand
# in, in a cache, for a real compiler's. Bazel does not track the wrapper's contents: after
# editing it, use a fresh TSA_OUTPUT_BASE.
tsa_flags=(--config=tsa "--repo_env=CC=$root/tools/thread_safety/clang_syntax_only.sh" "$@")
out="$root/.ci-out/thread_safety"
rm -rf "$out"
mkdir -p "$out"

# clang (Debian's clang 14) is installed by tools/setup.sh, which tools/test.sh runs first.
for tool in clang clang++; do
  if ! command -v "$tool" > /dev/null 2>&1; then
    echo "thread-safety: $tool is not installed (tools/setup.sh installs it)"
    echo "thread-safety: FAILED"
    exit 1
  fi
done

start=$(date +%s)
if bazel_tsa build "${tsa_flags[@]}" --symlink_prefix=/ //tools/thread_safety:canary \
    > "$out/canary.log" 2>&1; then
  echo "thread-safety: the canary compiled, so the analysis is not running (see $out/canary.log)"
  echo "thread-safety: FAILED"
  exit 1
fi
if ! grep -q "reading variable 'value_' requires holding mutex" "$out/canary.log" \
    || ! grep -q "reading variable 'boxed_' requires holding mutex" "$out/canary.log"; then
  tail -n 20 "$out/canary.log"
  echo "thread-safety: the canary failed for another reason than the analysis (or one of its"
  echo "thread-safety: two violations, the plain one and the one in a template, was not reported)"
  echo "thread-safety: FAILED"
  exit 1
fi

# The normal output base answers the query (a query does not configure the toolchain; and a
# pattern such as //... here would walk the workspace's bazel-* symlinks into the other output
# base). The canary is tagged manual, so it is not among them.
mapfile -t targets < <(bazel query 'kind("cc_(library|binary|test)", //...) except attr(tags, "manual", //...)' \
  2> "$out/query.log")
if [ "${#targets[@]}" -eq 0 ]; then
  cat "$out/query.log"
  echo "thread-safety: FAILED"
  exit 1
fi

# compilation_outputs: the object files only.
if ! bazel_tsa build "${tsa_flags[@]}" --symlink_prefix=/ --keep_going \
    --output_groups=compilation_outputs -- "${targets[@]}" > "$out/build.log" 2>&1; then
  grep -E "error:|warning:" "$out/build.log" | sort -u | head -n 60
  tail -n 5 "$out/build.log"
  echo "thread-safety: FAILED"
  exit 1
fi
echo "thread-safety: checked ${#targets[@]} targets in $(( $(date +%s) - start ))s"
echo "thread-safety: PASSED"
