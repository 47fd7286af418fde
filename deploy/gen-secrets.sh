#!/usr/bin/env bash
# Makes a deployment's bearer tokens and secrets:
#
#   deploy/gen-secrets.sh DIR [--host_namespaces=world-a,world-b] [--host_owners=human:alice,…]
#       [--uid=UID]
#
#   DIR/admin.token, DIR/host.token      for operators (sharedosctl) and the product backend;
#                                        never mounted into a service
#   DIR/credentials/credentials.json     every service: the admin ("ops"), service ("services")
#                                        and host ("host") credentials, as SHA-256 digests only
#   DIR/service-token/service.token      grantstore, authorizer, envelope: presented to the
#                                        services they call
#   DIR/lease/lease.secret               authorizer: signs decision leases
#   DIR/mcp/mcp.secret                   envelope: signs MCP execution tokens
#   DIR/postgres/postgres.password       the PostgreSQL variant: the password of the database role
#                                        "sharedos" (the PostgreSQL image sets it at each start)
#   DIR/postgres/pgpass                  the same password as a libpq password file, for audit
#                                        and grantstore (PGPASSFILE): never in a --db URI
#
# Existing files are kept (run it again to add what is missing; delete a file to rotate it).
# Secrets are 0600, owned by UID (default 10001, the images' user) when run as root. More
# credentials (reviewers, scoped hosts and admins) are issued at run time with
# `sharedosctl credentials issue`.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

dir="${1:?usage: gen-secrets.sh DIR [--host_namespaces=…] [--host_owners=…] [--uid=UID]}"
shift
host_namespaces=world-demo
host_owners=human:user-alice
uid="$SHAREDOS_UID"
for arg in "$@"; do
  case "$arg" in
    --host_namespaces=*) host_namespaces="${arg#--host_namespaces=}" ;;
    --host_owners=*) host_owners="${arg#--host_owners=}" ;;
    --uid=*) uid="${arg#--uid=}" ;;
    *) echo "gen-secrets: unknown argument ${arg:0:64}" >&2; exit 2 ;;
  esac
done
list_re='^[A-Za-z0-9:._-]{1,128}(,[A-Za-z0-9:._-]{1,128}){0,63}$'
[[ "$host_namespaces" =~ $list_re ]] ||
  { echo "gen-secrets: --host_namespaces: a comma-separated list of names" >&2; exit 2; }
[[ "$host_owners" =~ $list_re ]] ||
  { echo "gen-secrets: --host_owners: a comma-separated list of kind:id" >&2; exit 2; }
[[ "$uid" =~ ^[0-9]{1,9}$ ]] || { echo "gen-secrets: --uid: not a number" >&2; exit 2; }

umask 077
mkdir -p "$dir/credentials" "$dir/service-token" "$dir/lease" "$dir/mcp" "$dir/postgres"

# new FILE: a random secret into FILE unless it exists.
new() {
  [ -s "$1" ] || printf 'sos_%s\n' "$(openssl rand -hex 32)" > "$1"
}
new "$dir/admin.token"
new "$dir/host.token"
new "$dir/service-token/service.token"
[ -s "$dir/lease/lease.secret" ] || openssl rand -hex 32 | tr -d '\n' > "$dir/lease/lease.secret"
[ -s "$dir/mcp/mcp.secret" ] || openssl rand -hex 32 | tr -d '\n' > "$dir/mcp/mcp.secret"
# Hex: nothing to escape in the password file's host:port:database:user:password line.
[ -s "$dir/postgres/postgres.password" ] ||
  openssl rand -hex 32 > "$dir/postgres/postgres.password"
printf '*:*:sharedos:sharedos:%s\n' "$(head -n 1 "$dir/postgres/postgres.password")" \
  > "$dir/postgres/pgpass.new"
mv "$dir/postgres/pgpass.new" "$dir/postgres/pgpass"

digest() { head -n 1 "$1" | tr -d '[:space:]' | sha256sum | cut -d' ' -f1; }
json_list() { printf '"%s"' "$1" | sed 's/,/", "/g'; }
cat > "$dir/credentials/credentials.json.new" <<JSON
{"credentials": [
  {"name": "ops", "role": "admin", "token_sha256": "$(digest "$dir/admin.token")"},
  {"name": "services", "role": "service", "token_sha256": "$(digest "$dir/service-token/service.token")"},
  {"name": "host", "role": "host", "token_sha256": "$(digest "$dir/host.token")",
   "scope": {"namespaces": [$(json_list "$host_namespaces")], "owners": [$(json_list "$host_owners")]}}
]}
JSON
mv "$dir/credentials/credentials.json.new" "$dir/credentials/credentials.json"

if [ "$(id -u)" -eq 0 ]; then
  chown -R "$uid:$uid" "$dir/credentials" "$dir/service-token" "$dir/lease" "$dir/mcp" \
    "$dir/postgres"
fi
chmod 0755 "$dir" "$dir/credentials" "$dir/service-token" "$dir/lease" "$dir/mcp" "$dir/postgres"
echo "gen-secrets: admin.token and host.token in $dir; service secrets in credentials/," \
  "service-token/, lease/, mcp/, postgres/"
