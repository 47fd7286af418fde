#!/usr/bin/env bash
# Builds the SharedOS images from the Bazel outputs: one per service plus sharedosd
# (deploy/images.txt), each on a Debian 12 base holding only the runtime libraries the binaries
# link (deploy/runtime-packages.txt), running as uid 10001, data on the volume /var/lib/sharedos,
# HEALTHCHECK through the gRPC health service (tools/health_probe). And the PostgreSQL variant's
# database, localhost/sharedos-postgres: Debian's postgresql-15 on its own base
# (deploy/postgres/packages.txt), the same user and volume, deploy/postgres/entrypoint.sh.
#
#   deploy/build-images.sh                  bazel build, then build every image
#   deploy/build-images.sh --bin_dir=DIR    use binaries already built, laid out as bazel-bin
#   deploy/build-images.sh --postgres_only  only localhost/sharedos-postgres (no Bazel)
#   deploy/build-images.sh --oidc_only      only localhost/sharedos-oidc (no Bazel; not built
#                                           by the other forms: it needs tools/setup.sh's
#                                           node_modules, or SHAREDOS_NODE_MODULES=DIR)
#
# And the compose OIDC profile's identity provider, localhost/sharedos-oidc: the test fixture
# tests/oidc/provider.mjs (npm oidc-provider) with only its node_modules, on a Debian 13 (trixie)
# base with Debian's nodejs 20 (oidc-provider needs Node >= 20.12; bookworm ships 18). Test and
# demo use only: its users sign in with any password (deploy/README.md section 7).
#
# No image registry is needed: the base is `debootstrap --variant=minbase bookworm` from Debian's
# package mirror (SHAREDOS_DEBIAN_MIRROR; default debootstrap's own), imported into podman. It is
# cached under ${SHAREDOS_IMAGE_CACHE:-~/.cache/sharedos} keyed by the package list, and the
# images reuse podman's layer cache, so a rebuild only copies binaries that changed.
# Run as root (debootstrap, rootful podman). Prints one line per image: "built <image>:<tag>".
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
root="$(cd "$SHAREDOS_DEPLOY_DIR/.." && pwd)"

bin_dir=""
postgres_only=0
oidc_only=0
for arg in "$@"; do
  case "$arg" in
    --bin_dir=*) bin_dir="${arg#--bin_dir=}" ;;
    --postgres_only) postgres_only=1 ;;
    --oidc_only) oidc_only=1 ;;
    *) echo "build-images: unknown argument ${arg:0:64} (usage: build-images.sh [--bin_dir=DIR] [--postgres_only] [--oidc_only])" >&2; exit 2 ;;
  esac
done
cache="${SHAREDOS_IMAGE_CACHE:-${HOME:-/root}/.cache/sharedos}"
SHAREDOS_LABEL=build-images

# Every binary the images hold: the services (images.txt), the probe and sharedosctl.
binaries() {
  sharedos_images | awk '{print $2}'
  echo tools/health_probe/health_probe
  echo tools/sharedosctl/sharedosctl
}

build_binaries() {
  local targets=() path
  while read -r path; do targets+=("//$(dirname "$path"):$(basename "$path")"); done < <(binaries)
  (cd "$root" && bazel build "${targets[@]}" >&2)
  bin_dir="$root/bazel-bin"
}

# The base rootfs as a tarball in the cache (made once per package list), imported as
# localhost/sharedos-base:<key>. Prints the image name.
base_image() {
  cached_base sharedos-base "$(sharedos_runtime_packages)"
}

# The PostgreSQL image's base: Debian's postgresql-15, without the cluster its package makes
# (the entrypoint makes its own on the volume) and without the snakeoil key of ssl-cert.
postgres_base_image() {
  cached_base sharedos-postgres-base "$(grep -vE '^\s*(#|$)' "$SHAREDOS_DEPLOY_DIR/postgres/packages.txt" |
    paste -sd, -)" postgres
}

# The identity provider's base: Debian 13's nodejs (20.x) and the CA bundle.
oidc_base_image() {
  cached_base sharedos-oidc-base "nodejs,ca-certificates" oidc trixie
}

# cached_base NAME PACKAGES [FLAVOUR [SUITE]]: debootstrap minbase SUITE (default bookworm) with
# PACKAGES, add_user, cached as a tarball keyed by the packages, layout, flavour and suite,
# imported as localhost/NAME:<key>.
cached_base() {
  local name="$1" packages="$2" flavour="${3:-}" suite="${4:-bookworm}" key image dir
  # The key: the packages and what add_user lays out (bump the layout when add_user changes).
  if [ -z "$flavour" ]; then
    key="$(printf '%s\nuid=%s\nlayout=2\n' "$packages" "$SHAREDOS_UID" | sha256sum | cut -c1-16)"
  elif [ "$suite" = bookworm ]; then
    key="$(printf '%s\nuid=%s\nlayout=2\n%s=1\n' "$packages" "$SHAREDOS_UID" "$flavour" |
      sha256sum | cut -c1-16)"
  else
    key="$(printf '%s\nuid=%s\nlayout=2\n%s=1\nsuite=%s\n' "$packages" "$SHAREDOS_UID" \
      "$flavour" "$suite" | sha256sum | cut -c1-16)"
  fi
  image="localhost/$name:$key"
  if sharedos_podman image exists "$image"; then echo "$image"; return; fi
  dir="$cache/${name#sharedos-}-$key"
  if [ ! -f "$dir/rootfs.tar" ]; then
    echo "build-images: debootstrap minbase $suite with $packages (once per package list)" >&2
    rm -rf "$dir" && mkdir -p "$dir"
    debootstrap --variant=minbase --include="$packages" "$suite" "$dir/rootfs" \
      ${SHAREDOS_DEBIAN_MIRROR:+"$SHAREDOS_DEBIAN_MIRROR"} > "$dir/debootstrap.log" 2>&1 ||
      { tail -n 20 "$dir/debootstrap.log" >&2; echo "build-images: debootstrap failed" >&2; exit 1; }
    add_user "$dir/rootfs"
    if [ "$flavour" = postgres ]; then
      rm -rf "$dir/rootfs/etc/postgresql/"* "$dir/rootfs/var/lib/postgresql/"* \
        "$dir/rootfs/etc/ssl/private/ssl-cert-snakeoil.key" "$dir/rootfs/etc/ssl/certs/ssl-cert-snakeoil.pem"
      [ -x "$dir/rootfs/usr/lib/postgresql/15/bin/postgres" ] ||
        { echo "build-images: the PostgreSQL base has no postgres 15 binary" >&2; exit 1; }
    fi
    rm -rf "$dir/rootfs/var/cache/apt/archives/"*.deb "$dir/rootfs/var/lib/apt/lists/"*
    tar -C "$dir/rootfs" --numeric-owner -cf "$dir/rootfs.tar.partial" .
    mv "$dir/rootfs.tar.partial" "$dir/rootfs.tar"
    rm -rf "$dir/rootfs"
  fi
  sharedos_podman import --quiet "$dir/rootfs.tar" "$image" > /dev/null
  echo "$image"
}

# The services' user and group (no RUN step in the images: nothing runs at build time), and the
# directories they own.
add_user() {
  local rootfs="$1"
  echo "sharedos:x:$SHAREDOS_UID:$SHAREDOS_UID:SharedOS:/var/lib/sharedos:/usr/sbin/nologin" \
    >> "$rootfs/etc/passwd"
  echo "sharedos:x:$SHAREDOS_UID:" >> "$rootfs/etc/group"
  echo "sharedos:!:19000::::::" >> "$rootfs/etc/shadow"
  # /var/lib/sharedos is the data volume (a new named volume takes this ownership and content);
  # files/ under it is the envelope's --files_root.
  mkdir -p "$rootfs/var/lib/sharedos/files" "$rootfs/etc/sharedos/tls"
  chown "$SHAREDOS_UID:$SHAREDOS_UID" "$rootfs/var/lib/sharedos" "$rootfs/var/lib/sharedos/files"
  chmod 0700 "$rootfs/var/lib/sharedos" "$rootfs/var/lib/sharedos/files"
}

# Fails naming any shared library a binary needs that the base does not hold.
check_libraries() {
  local base="$1" context="$2" listed missing
  listed="$(sharedos_podman run --rm "${SHAREDOS_PODMAN_RUN[@]}" "${SHAREDOS_PODMAN_HOST_NET[@]}" -v "$context:/check:ro" \
    "$base" sh -c 'for b in /check/bin/*; do ldd "$b"; done' 2>&1)"
  missing="$(printf '%s\n' "$listed" | grep 'not found' | sort -u || true)"
  if [ -n "$missing" ]; then
    printf '%s\n' "$missing" >&2
    echo "build-images: the base lacks these libraries; add their packages to" \
      "deploy/runtime-packages.txt" >&2
    exit 1
  fi
}

# The build context every image shares: the binaries, the probe, the health check, the
# shipped tool registry.
make_context() {
  local context="$1" path
  rm -rf "$context" && mkdir -p "$context/bin"
  while read -r path; do
    [ -x "$bin_dir/$path" ] || { echo "build-images: $bin_dir/$path is missing" >&2; exit 1; }
    cp -L "$bin_dir/$path" "$context/bin/$(basename "$path")"
  done < <(binaries)
  cp "$SHAREDOS_DEPLOY_DIR/healthcheck.sh" "$context/bin/sharedos-healthcheck"
  cp "$root/envelope_svc/config/standard_tools.textproto" "$context/standard_tools.textproto"
  chmod 0755 "$context/bin/"*
  chmod 0644 "$context/standard_tools.textproto"
}

# One image's Containerfile: the base, its binary, the probe, non-root, the data volume.
containerfile() {
  local base="$1" binary="$2" port="$3"
  cat <<CONTAINERFILE
FROM $base
COPY bin/$binary bin/health_probe bin/sharedos-healthcheck /usr/local/bin/
COPY standard_tools.textproto /etc/sharedos/standard_tools.textproto
LABEL io.sharedos.image=$SHAREDOS_LABEL
ENV SHAREDOS_HEALTH_PORT=$port
USER $SHAREDOS_UID:$SHAREDOS_UID
WORKDIR /var/lib/sharedos
VOLUME /var/lib/sharedos
EXPOSE $port
HEALTHCHECK --interval=10s --timeout=6s --start-period=5s --retries=3 CMD ["/usr/local/bin/sharedos-healthcheck"]
ENTRYPOINT ["/usr/local/bin/$binary"]
CONTAINERFILE
}

# The PostgreSQL image (deploy/postgres/): Debian's server, the entrypoint, pg_hba.conf, the
# HEALTHCHECK (pg_isready); runs as uid 10001 with the cluster on the volume.
postgres_image() {
  local base="$1" context="$cache/context-postgres"
  rm -rf "$context" && mkdir -p "$context"
  cp "$SHAREDOS_DEPLOY_DIR/postgres/entrypoint.sh" "$context/sharedos-postgres"
  cp "$SHAREDOS_DEPLOY_DIR/postgres/healthcheck.sh" "$context/sharedos-healthcheck"
  cp "$SHAREDOS_DEPLOY_DIR/postgres/pg_hba.conf" "$context/pg_hba.conf"
  chmod 0755 "$context/sharedos-postgres" "$context/sharedos-healthcheck"
  chmod 0644 "$context/pg_hba.conf"
  cat > "$context/Containerfile" <<CONTAINERFILE
FROM $base
COPY sharedos-postgres sharedos-healthcheck /usr/local/bin/
COPY pg_hba.conf /usr/local/share/sharedos-postgres/pg_hba.conf
LABEL io.sharedos.image=$SHAREDOS_LABEL
ENV PGDATA=/var/lib/sharedos/pgdata
USER $SHAREDOS_UID:$SHAREDOS_UID
WORKDIR /var/lib/sharedos
VOLUME /var/lib/sharedos
EXPOSE 5432
STOPSIGNAL SIGINT
HEALTHCHECK --interval=10s --timeout=6s --start-period=20s --retries=3 CMD ["/usr/local/bin/sharedos-healthcheck"]
ENTRYPOINT ["/usr/local/bin/sharedos-postgres"]
CONTAINERFILE
  sharedos_podman build --quiet --format docker --layers -f "$context/Containerfile" \
    -t "localhost/sharedos-postgres:$SHAREDOS_TAG" "$context" > /dev/null
  echo "built localhost/sharedos-postgres:$SHAREDOS_TAG"
}

# The identity provider (tests/oidc/provider.mjs) with only its node_modules: oidc-provider, jose
# and what they depend on, copied from the workspace's node_modules (tools/setup.sh).
oidc_image() {
  local base="$1" context="$cache/context-oidc" modules="${SHAREDOS_NODE_MODULES:-$root/node_modules}"
  [ -d "$modules/oidc-provider" ] ||
    { echo "build-images: $modules/oidc-provider is missing; run tools/setup.sh" >&2; exit 1; }
  rm -rf "$context" && mkdir -p "$context/app/node_modules"
  cp "$root/tests/oidc/provider.mjs" "$context/app/provider.mjs"
  # The closure of the two packages' dependencies, resolved as Node resolves them.
  node -e '
const path = require("path"), fs = require("fs");
const root = process.argv[1], seen = new Set();
function visit(name, from) {
  let dir = from;
  for (;;) {
    const candidate = path.join(dir, "node_modules", name);
    if (fs.existsSync(path.join(candidate, "package.json"))) { dir = candidate; break; }
    const up = path.dirname(dir);
    if (up === dir) throw new Error("unresolved " + name);
    dir = up;
  }
  if (seen.has(dir)) return;
  seen.add(dir);
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, "package.json")));
  for (const dep of Object.keys(pkg.dependencies || {})) visit(dep, dir);
}
visit("oidc-provider", root); visit("jose", root);
for (const dir of seen) console.log(path.relative(root, dir));
' "$(dirname "$modules")" | while read -r rel; do
    mkdir -p "$context/app/$(dirname "$rel")"
    cp -a "$(dirname "$modules")/$rel" "$context/app/$rel"
  done
  cat > "$context/Containerfile" <<CONTAINERFILE
FROM $base
COPY app /usr/local/lib/sharedos-oidc
LABEL io.sharedos.image=$SHAREDOS_LABEL
USER $SHAREDOS_UID:$SHAREDOS_UID
WORKDIR /usr/local/lib/sharedos-oidc
EXPOSE 9443
ENTRYPOINT ["/usr/bin/node", "/usr/local/lib/sharedos-oidc/provider.mjs"]
CONTAINERFILE
  sharedos_podman build --quiet --format docker --layers -f "$context/Containerfile" \
    -t "localhost/sharedos-oidc:$SHAREDOS_TAG" "$context" > /dev/null
  echo "built localhost/sharedos-oidc:$SHAREDOS_TAG"
}

main() {
  if [ "$postgres_only" = 1 ]; then postgres_image "$(postgres_base_image)"; return; fi
  if [ "$oidc_only" = 1 ]; then oidc_image "$(oidc_base_image)"; return; fi
  [ -n "$bin_dir" ] || build_binaries
  local base context image path port
  base="$(base_image)"
  context="$cache/context"
  make_context "$context"
  check_libraries "$base" "$context"
  while read -r image path port; do
    containerfile "$base" "$(basename "$path")" "$port" > "$context/Containerfile.$image"
    sharedos_podman build --quiet --format docker --layers \
      -f "$context/Containerfile.$image" -t "localhost/$image:$SHAREDOS_TAG" "$context" > /dev/null
    echo "built localhost/$image:$SHAREDOS_TAG"
  done < <(sharedos_images)
  postgres_image "$(postgres_base_image)"
  # A rebuild leaves the former images untagged: remove those (ours only, by label).
  sharedos_podman image prune -f --filter "label=io.sharedos.image=$SHAREDOS_LABEL" > /dev/null
}

main
