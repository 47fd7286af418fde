# What both compose tests start with (sourced): a fixed PATH, the runfiles root, the README
# and an output file; `fail`; root and the container tools checked (failing, never skipping).
export PATH="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
root="$TEST_SRCDIR/sharedos"
readme="$root/deploy/README.md"
out="$TEST_TMPDIR/quickstart.out"

fail() { echo "FAIL: $*"; exit 1; }
[ "$(id -u)" -eq 0 ] || fail "the compose test runs podman as root (run as root, as CI does)"
for tool in podman podman-compose debootstrap runc openssl python3; do
  command -v "$tool" > /dev/null || fail "$tool is not installed; run tools/setup.sh"
done

# readme_block MARKER: the sh block between <!-- MARKER:begin --> and <!-- MARKER:end --> of
# deploy/README.md (fails when there is none).
readme_block() {
  local block
  block="$(sed -n "/^<!-- $1:begin -->\$/,/^<!-- $1:end -->\$/p" "$readme" |
    sed -e '1,/^```sh$/d' -e '/^```$/,$d')"
  [ -n "$block" ] || { echo "FAIL: deploy/README.md: no sh block between the $1 markers" >&2; exit 1; }
  printf '%s\n' "$block"
}
