#!/usr/bin/env bash
# The libraries a meaningful ThreadSanitizer run needs instrumented (tools/asan.sh --tsan,
# docs/fuzzing.md): Debian's own Abseil (20220623) and protobuf (3.21.12) sources, fetched with
# `apt-get source` from Debian's mirror, built with -fsanitize=thread into /opt/sharedos-tsan/lib
# with the SONAMEs the system libraries have, so they stand in for them in a TSan process
# (.bazelrc config tsan). Idempotent: does nothing when both are there. Needs root (apt) and about
# 15 minutes on two cores.
set -euo pipefail

prefix=/opt/sharedos-tsan
work="${SHAREDOS_TSAN_SRC:-$HOME/.cache/sharedos-tsan-src}"
flags="-fsanitize=thread -O1 -g"

if [ -e "$prefix/lib/libabsl_synchronization.so.20220623" ] && [ -e "$prefix/lib/libprotobuf.so.32" ]; then
  echo "tsan_deps: $prefix/lib has them"
  exit 0
fi

need=()
for tool in cmake ninja dpkg-source g++; do command -v "$tool" >/dev/null || need+=("$tool"); done
if [ "${#need[@]}" -gt 0 ]; then
  apt-get install -y -qq cmake ninja-build dpkg-dev g++ >/dev/null
fi
# Source packages come from the same mirror as the binary ones.
if ! grep -rqs '^Types: deb-src' /etc/apt/sources.list.d/; then
  cat > /etc/apt/sources.list.d/sharedos-deb-src.sources <<'SOURCES'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
  apt-get update -qq
fi

mkdir -p "$work"
cd "$work"
[ -d abseil-20220623.1 ] || apt-get source -qq abseil=20220623.1-1+deb12u2 || apt-get source -qq abseil
[ -d protobuf-3.21.12 ] || apt-get source -qq protobuf=3.21.12-3+deb12u1 || apt-get source -qq protobuf

echo "tsan_deps: building Abseil with TSan"
cmake -S abseil-20220623.1 -B absl-build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_STANDARD=17 -DBUILD_SHARED_LIBS=ON -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread -DCMAKE_INSTALL_PREFIX="$prefix" \
  -DCMAKE_INSTALL_LIBDIR=lib >/dev/null
ninja -C absl-build install >/dev/null

echo "tsan_deps: building protobuf with TSan"
cmake -S protobuf-3.21.12/cmake -B pb-build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -Dprotobuf_BUILD_TESTS=OFF -Dprotobuf_BUILD_SHARED_LIBS=ON -Dprotobuf_WITH_ZLIB=OFF \
  -DCMAKE_CXX_STANDARD=17 -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread \
  >/dev/null
ninja -C pb-build libprotobuf >/dev/null
built=$(find pb-build -maxdepth 1 -name 'libprotobuf.so.3.21.12*' -type f | head -1)
install -m 0755 "$built" "$prefix/lib/"
# The system's SONAME (libprotobuf.so.32), and the link name: one file under both names, so a
# process that needs either loads it once.
ln -sf "$(basename "$built")" "$prefix/lib/libprotobuf.so.32"
ln -sf "$(basename "$built")" "$prefix/lib/libprotobuf.so"
echo "tsan_deps: done ($prefix/lib)"
