#!/usr/bin/env bash
# The C/C++ compiler of tools/thread_safety.sh's build (--repo_env=CC=<this file>): clang, but a
# compile of a target object runs only clang's front end (-fsyntax-only, which is where the
# thread-safety analysis and every other -Werror warning of the front end are decided) and then
# writes an empty object file for Bazel. No code is generated, so the check costs a parse and
# the semantic analysis of each file, not its optimisation.
#
#   - a compile (`-c … -o bazel-out/<target config>/….o`) of the repository's own source:
#     `clang <same arguments> -fsyntax-only` (the dependency file `-MD -MF` is still written,
#     so Bazel's check of undeclared includes still runs), then an empty object file;
#   - a compile of a generated source (protoc's .pb.cc under bazel-out/) or of an external one:
#     not analysed (not the repository's code; its headers are analysed where our sources include
#     them), an empty object file and a dependency file naming the source only;
#   - anything else (Bazel's toolchain detection, a link, a tool built for the host): clang as is.
# The objects are empty, so nothing this build produces can be linked; it is a check, not a build.
set -uo pipefail

clang_bin="${SHAREDOS_TSA_CLANG:-clang}"

compile=0
output=""
depfile=""
source=""
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[i]}" in
    -c) compile=1; source="${args[i + 1]:-}" ;;
    -o) output="${args[i + 1]:-}" ;;
    -MF) depfile="${args[i + 1]:-}" ;;
  esac
done

case "$output" in
  bazel-out/host/*) exec "$clang_bin" "$@" ;;
  bazel-out/*.o) ;;
  *) exec "$clang_bin" "$@" ;;
esac
if [ "$compile" -ne 1 ] || [ -z "$source" ]; then
  exec "$clang_bin" "$@"
fi

case "$source" in
  bazel-out/* | external/*)
    if [ -n "$depfile" ]; then
      printf '%s: %s\n' "$output" "$source" > "$depfile" || exit 1
    fi
    ;;
  *)
    "$clang_bin" "$@" -fsyntax-only || exit $?
    ;;
esac
: > "$output"
