#!/bin/sh
# The PostgreSQL image's entrypoint (deploy/README.md "PostgreSQL and replicas"): Debian's
# PostgreSQL 15 as the image's user (uid 10001, never root), data on the volume.
#
#   first start   initdb into $PGDATA (written beside, renamed into place, so a start cut short
#                 leaves no half cluster): superuser "postgres" (which can never log in: see
#                 pg_hba.conf), a role "sharedos" owning the database "sharedos"
#   every start   the role's password set from the secret file (single-user mode, no network):
#                 the file is the source of truth, so rotating it is "edit, restart"; then the
#                 server on 0.0.0.0:5432, TLS required (hostssl, the deployment's certificate),
#                 SCRAM passwords, no Unix socket
#
# Environment (defaults in brackets):
#   PGDATA                          the cluster [/var/lib/sharedos/pgdata]
#   SHAREDOS_POSTGRES_PASSWORD_FILE the role's password, one line of [A-Za-z0-9_-], 16..256
#                                   [/etc/sharedos/postgres/postgres.password]
#   SHAREDOS_POSTGRES_TLS_DIR       tls.crt, tls.key [/etc/sharedos/tls]
# The password never appears on a command line, in the environment of the server or in a log:
# it is read by the shell (a builtin) and written to the single-user server's stdin.
set -eu
bin=/usr/lib/postgresql/15/bin
data="${PGDATA:-/var/lib/sharedos/pgdata}"
password_file="${SHAREDOS_POSTGRES_PASSWORD_FILE:-/etc/sharedos/postgres/postgres.password}"
tls="${SHAREDOS_POSTGRES_TLS_DIR:-/etc/sharedos/tls}"
hba=/usr/local/share/sharedos-postgres/pg_hba.conf
fail() { echo "sharedos-postgres: $*" >&2; exit 1; }

[ "$(id -u)" -ne 0 ] || fail "refusing to run as root"
[ -r "$password_file" ] || fail "$password_file: missing or unreadable (deploy/gen-secrets.sh)"
[ -r "$tls/tls.crt" ] && [ -r "$tls/tls.key" ] ||
  fail "$tls/tls.crt and tls.key: missing or unreadable (deploy/gen-certs.sh)"
IFS= read -r password < "$password_file" || true
case "$password" in
  *[!A-Za-z0-9_-]*) fail "$password_file: the password must be [A-Za-z0-9_-] only" ;;
esac
[ "${#password}" -ge 16 ] && [ "${#password}" -le 256 ] ||
  fail "$password_file: the password must be 16 to 256 characters"

single() {  # SQL on stdin, through a single-user server (no listener at all)
  "$bin/postgres" --single -D "$1" -c listen_addresses= -c unix_socket_directories= \
    -c log_min_error_statement=panic postgres > /dev/null
}

umask 077
if [ ! -s "$data/PG_VERSION" ]; then
  [ ! -e "$data" ] || [ -z "$(ls -A "$data")" ] || fail "$data: not empty and not a cluster"
  echo "sharedos-postgres: first start: initdb $data"
  rm -rf "$data.init"
  "$bin/initdb" --pgdata="$data.init" --username=postgres --encoding=UTF8 --locale=C.UTF-8 \
    --auth-local=reject --auth-host=reject > "$data.init.log" 2>&1 ||
    { cat "$data.init.log" >&2; fail "initdb failed"; }
  printf '%s\n' "CREATE ROLE sharedos LOGIN;" "CREATE DATABASE sharedos OWNER sharedos;" |
    single "$data.init" || fail "creating the role and database failed"
  rm -f "$data.init.log"
  [ ! -e "$data" ] || rmdir "$data"
  mv "$data.init" "$data"
fi
printf "ALTER ROLE sharedos LOGIN NOSUPERUSER PASSWORD '%s';\n" "$password" | single "$data" ||
  fail "setting the role's password failed"
unset password

exec "$bin/postgres" -D "$data" -c listen_addresses='*' -c port=5432 \
  -c unix_socket_directories= -c hba_file="$hba" -c password_encryption=scram-sha-256 \
  -c ssl=on -c ssl_cert_file="$tls/tls.crt" -c ssl_key_file="$tls/tls.key" \
  -c ssl_min_protocol_version=TLSv1.2 -c log_destination=stderr
