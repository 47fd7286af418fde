#!/usr/bin/env bash
# Installs everything SharedOS needs to build, run and test on a fresh Debian 12 machine.
# Idempotent: installs only what is missing (one `apt-get update`, then
# `apt-get install --no-install-recommends`), then the npm test tools from the committed lock file.
# Run as root (or with passwordless sudo).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

debian_packages=(
  # Build: Debian's Bazel 4 and the system C++ libraries the WORKSPACE links from /usr.
  bazel-bootstrap pkg-config g++
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev libsqlite3-dev libgtest-dev libgmock-dev libbenchmark-dev libssl-dev libpq-dev
  libcpp-httplib-dev libboost-dev nlohmann-json3-dev libvalijson-dev libgoogle-glog-dev libre2-dev
  prometheus-cpp-dev  # metrics (common/metrics)
  libcjose-dev libjansson-dev  # JOSE: the identity provider's tokens (common/oidc, ADR 0020)
  # Tools and tests: the sqlite3 shell (tamper tests, operators), python3 (test summary),
  # node + npm (buf, the official MCP and gRPC clients).
  sqlite3 python3 nodejs npm
  prometheus  # promtool: the observability tests check the metrics text and the alert rules
  postgresql  # initdb/pg_ctl/postgres for the PostgreSQL backend's throwaway test clusters
  chromium  # headless, driven by playwright-core in //tests/console (never a downloaded browser)
  # Fuzzing and sanitizers (tools/fuzz.sh, docs/fuzzing.md): clang 14 with libFuzzer. The
  # sanitizer and libFuzzer runtimes are in libclang-rt-14-dev, which clang only recommends.
  clang libfuzzer-14-dev libclang-rt-14-dev
  # The house's checks (tools/test.sh): clang-format for tools/check_format.sh; clang (above)
  # also runs the thread-safety analysis (tools/thread_safety.sh).
  clang-format
  # Images and the compose deployment (deploy/README.md, //tests/deploy:compose_test): podman
  # with runc (crun fails in these machines' cgroup mode), its storage and network parts,
  # podman-compose, debootstrap for the Debian 12 base image; python3-yaml reads the manifests
  # (//tests/deploy:manifests_test). The CNI dnsname plugin lets the compose services find each
  # other by service name on the project network (without it, `audit` does not resolve and
  # grantstore never becomes healthy); podman does not pull it in.
  podman runc fuse-overlayfs slirp4netns uidmap podman-compose debootstrap python3-yaml
  golang-github-containernetworking-plugin-dnsname
  # The Python host client (clients/python): gRPC and protobuf for Debian's python3; its modules
  # are generated with protoc and grpc_python_plugin (protobuf-compiler-grpc, above).
  python3-grpcio python3-protobuf
)

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

missing=()
for pkg in "${debian_packages[@]}"; do
  # A package counts as present when dpkg says it is installed, or its command is already there
  # (node and npm may come with the machine rather than from Debian).
  case "$pkg" in
    nodejs) command -v node >/dev/null 2>&1 && continue ;;
    npm) command -v npm >/dev/null 2>&1 && continue ;;
    python3) command -v python3 >/dev/null 2>&1 && continue ;;
  esac
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  as_root apt-get update -q
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "setup: Debian packages already installed"
fi

if [ -f "$root/package-lock.json" ]; then
  # Reinstall only when the lock changed since the last install.
  stamp="$root/node_modules/.sharedos-lock.sha256"
  want="$(sha256sum "$root/package-lock.json" | cut -d' ' -f1)"
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    echo "setup: installing npm test tools from package-lock.json"
    # `npm install` from the committed lock, not `npm ci`: opencode-ai lists optional binaries for
    # other systems (darwin, windows, musl) that this registry does not carry, so they cannot be
    # in the lock, and `npm ci` refuses a lock without them. `npm install` installs exactly the
    # lock's versions and skips an optional package it cannot fetch.
    (cd "$root" && npm install --no-audit --no-fund --loglevel=error) || {
      echo "setup: npm install failed"; exit 1; }
    echo "$want" > "$stamp"
  else
    echo "setup: npm test tools already installed"
  fi
fi
echo "setup: done"
