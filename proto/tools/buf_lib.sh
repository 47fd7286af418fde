#!/usr/bin/env bash
# Shared by the buf tests and the image update: locating buf, building the canonical JSON image.
# Source it; it defines functions and sets nothing else.

# find_buf PACKAGE_JSON PACKAGE_LOCK: sets BUF to the workspace's node_modules/.bin/buf, found by
# resolving the runfiles symlink of the root package.json back to the source tree. Exits 1 with
# what to do when node_modules is missing or holds another version than package-lock.json pins.
find_buf() {
  local package_json lock root want have
  package_json="$(readlink -f "$1")"
  lock="$(readlink -f "$2")"
  root="$(dirname "$package_json")"
  BUF="$root/node_modules/.bin/buf"
  if [[ ! -x "$BUF" ]]; then
    cat <<MSG
FAIL: buf is not installed: $BUF is missing.
The buf breaking check needs the npm devDependencies of $root/package.json.
Run tools/setup.sh (it runs \`npm ci\` in the workspace root), then rerun the test.
MSG
    exit 1
  fi
  # The npm wrapper .bin/buf is a node script; bazel's test PATH is /usr/bin:/bin, and node may
  # come with the machine rather than from Debian.
  export PATH="$PATH:/usr/local/bin"
  if ! command -v node >/dev/null 2>&1; then
    echo "FAIL: node is not on PATH ($PATH); run tools/setup.sh, then rerun the test."
    exit 1
  fi
  want="$(node -p 'require(process.argv[1]).packages["node_modules/@bufbuild/buf"].version' "$lock")"
  if ! have="$("$BUF" --version 2>&1)"; then
    echo "FAIL: $BUF does not run: $have"
    echo "Run tools/setup.sh (npm ci in the workspace root), then rerun the test."
    exit 1
  fi
  if [[ "$have" != "$want" ]]; then
    echo "FAIL: node_modules has buf $have but package-lock.json pins $want."
    echo "Run tools/setup.sh (npm ci in the workspace root), then rerun the test."
    exit 1
  fi
  # buf keeps a cache; keep it out of \$HOME (unset or read-only under bazel test).
  export BUF_CACHE_DIR="${TEST_TMPDIR:-${TMPDIR:-/tmp}}/buf-cache"
}

# build_image_json MODULE_DIR OUT: the canonical image of a module — buf's image (imports
# included, source info excluded: buf breaking needs neither comments nor locations of the
# against side) as JSON indented one space per level, so a change to it reads as a diff.
build_image_json() {
  local module="$1" out="$2"
  "$BUF" build "$module" --exclude-source-info -o "$out.compact.json"
  node -e '
    const fs = require("fs");
    const image = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
    fs.writeFileSync(process.argv[2], JSON.stringify(image, null, 1) + "\n");
  ' "$out.compact.json" "$out"
  rm -f "$out.compact.json"
}

# copy_module DEST FILE...: copies buf.yaml and the .proto files among FILE (runfiles paths
# under proto/) into DEST, dereferencing symlinks, keeping their paths below proto/.
copy_module() {
  local dest="$1" src rel
  shift
  mkdir -p "$dest"
  for src in "$@"; do
    case "$src" in
      proto/buf.yaml | proto/*.proto | */proto/buf.yaml | */proto/*.proto) ;;
      *) continue ;;
    esac
    rel="${src#*proto/}"
    mkdir -p "$dest/$(dirname "$rel")"
    cp -L "$src" "$dest/$rel"
  done
  if [[ ! -f "$dest/buf.yaml" ]]; then
    echo "FAIL: proto/buf.yaml is not among the test's data" >&2
    exit 1
  fi
}
