#!/usr/bin/env bash
# Compiles every C++ target with clang's thread-safety analysis (--config=tsa, .bazelrc): each
# ABSL_GUARDED_BY / ABSL_EXCLUSIVE_LOCKS_REQUIRED / ABSL_LOCKS_EXCLUDED is checked, and a violation
# fails the build (-Werror). Runs only clang's front end (tools/thread_safety/clang_syntax_only.sh
# is the build's compiler: -fsyntax-only, then an empty object file; no code generated, nothing
# linked, no tests: the gcc build links and tests). protoc still generates the .pb.h/.grpc.pb.h
# our sources include; the generated .pb.cc files themselves are not analysed.
# First proves the analysis runs: tools/thread_safety:canary, which reads a guarded member without
# its lock (in a plain class and in an instantiated class template), must fail to compile, for
# those two reasons. Ends with `thread-safety: PASSED|FAILED` (a counted case of tools/test.sh);
# on a refusal the line before it names the first error as `file:line:column: error: …`, and
# the full compiler output is in .ci-out/thread_safety/build.log.
#
#   tools/thread_safety.sh            every target
#   tools/thread_safety.sh FLAGS…     FLAGS added to the clang build (e.g. --disk_cache= : no cache)
#   TSA_TARGETS='//common/server:x …' only those targets (after touching a mutex; the canary runs
#                                     first all the same)
#   TSA_OUTPUT_BASE=…                 where the clang build's Bazel output base lives (created if
#                                     missing; default under ~/.cache/sharedos-tsa/)
#
# One run at a time per output base (a lock beside it; a second run waits), and the output base's
# Bazel server is shut down when the run ends, so it holds no memory afterwards.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

# Its own output base, as tools/fuzz.sh: changing the compiler reconfigures the auto-detected C++
# toolchain, which would throw away the gcc build's outputs in the normal one.
output_base="${TSA_OUTPUT_BASE:-$HOME/.cache/sharedos-tsa/$(printf '%s' "$root" | sha256sum | cut -c1-16)}"
output_base="${output_base%/}"
mkdir -p "$(dirname "$output_base")" || { echo "thread-safety: FAILED"; exit 1; }
# The server exits by itself after 10 idle minutes should the shutdown below never run (the
# script killed).
# (fd 9, the lock below, is not handed to Bazel: its server would keep the lock while it lives.)
bazel_tsa() { bazel --output_base="$output_base" --max_idle_secs=600 "$@" 9>&-; }

# Bazel serialises the commands on one output base, but a run is several of them (canary, build,
# shutdown): a second run would interleave with them, shut the server down under the first, and
# rewrite its logs. The lock makes it wait for the first to end.
exec 9> "$output_base.lock" || { echo "thread-safety: FAILED"; exit 1; }
if ! flock -n 9; then
  echo "thread-safety: another run holds $output_base.lock; waiting for it"
  flock 9
fi
trap 'bazel_tsa shutdown > /dev/null 2>&1' EXIT
trap 'exit 130' INT TERM

# The wrapper's path is part of every compile's command line, so its objects (empty) never stand
# in, in a cache, for a real compiler's. Bazel does not track the wrapper's contents, so their
# digest goes into every action's environment: after an edit of the wrapper no cached result of
# the old one is reused (in the output base or a disk cache).
wrapper="$root/tools/thread_safety/clang_syntax_only.sh"
wrapper_digest="$(sha256sum "$wrapper" | cut -c1-16)"
tsa_flags=(--config=tsa "--repo_env=CC=$wrapper" "--action_env=SHAREDOS_TSA_WRAPPER=$wrapper_digest"
  "$@")
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

# The CPU time of this output base's Bazel server and of every action it ran (it is started by
# this run and shut down at its end), in seconds.
server_cpu_seconds() {
  local pid stat fields
  pid="$(cat "$output_base/server/server.pid.txt" 2> /dev/null)" || return 0
  stat="$(cat "/proc/$pid/stat" 2> /dev/null)" || return 0
  read -ra fields <<< "${stat##*) }"  # fields[0] is stat's 3rd field; utime is its 14th
  echo $(((fields[11] + fields[12] + fields[13] + fields[14]) / $(getconf CLK_TCK)))
}

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
if [ -n "${TSA_TARGETS:-}" ]; then
  read -ra targets <<< "$TSA_TARGETS"
else
  mapfile -t targets < <(bazel query 'kind("cc_(library|binary|test)", //...) except attr(tags, "manual", //...)' \
    2> "$out/query.log" 9>&-)
fi
if [ "${#targets[@]}" -eq 0 ]; then
  cat "$out/query.log" 2> /dev/null
  echo "thread-safety: FAILED"
  exit 1
fi

# compilation_outputs: the object files only.
bazel_tsa build "${tsa_flags[@]}" --symlink_prefix=/ --keep_going \
  --output_groups=compilation_outputs -- "${targets[@]}" > "$out/build.log" 2>&1
build_rc=$?
elapsed=$(($(date +%s) - start))
cpu="$(server_cpu_seconds)"
cost="${elapsed}s${cpu:+, ${cpu}s of CPU}"
if [ "$build_rc" -ne 0 ]; then
  # Every distinct diagnostic, in the order clang gave them (clang's paths are the repository's).
  grep -E '^[^ :]+:[0-9]+:[0-9]+: (fatal error|error|warning):' "$out/build.log" \
    | awk '!seen[$0]++' | head -n 30
  grep -E '^(ERROR|FAILED):' "$out/build.log" | awk '!seen[$0]++' | tail -n 3
  first="$(grep -m 1 -E '^[^ :]+:[0-9]+:[0-9]+: (fatal error|error):' "$out/build.log")"
  first="${first:-$(grep -m 1 -E '^ERROR:' "$out/build.log")}"
  echo "thread-safety: ${#targets[@]} targets in ${cost}; full output: $out/build.log"
  echo "thread-safety: first error: ${first:-none reported, exit code $build_rc (see the log)}"
  echo "thread-safety: FAILED"
  exit 1
fi
echo "thread-safety: checked ${#targets[@]} targets in ${cost}"
echo "thread-safety: PASSED"
