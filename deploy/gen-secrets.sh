#!/usr/bin/env bash
# Makes a deployment's bearer tokens and secrets:
#
#   deploy/gen-secrets.sh DIR [--host_namespaces=world-a,world-b] [--host_owners=human:alice,…]
#       [--host_authorities=agent:orchestrator,…] [--uid=UID]
#
#   DIR/admin.token, DIR/host.token      for operators (sharedosctl) and the product backend;
#                                        never mounted into a service
#   DIR/credentials/credentials.json     every service: the admin ("ops"), host ("host") and the
#                                        five service credentials, as SHA-256 digests only
#   DIR/<service>-token/<service>.token  for each of audit, grantstore, authorizer, envelope,
#                                        console (the reviewer console's own process: it only
#                                        looks up the credentials people sign in with): the
#                                        token that service (and only it) presents to the services
#                                        it calls, as the principal service:<service>; each in a
#                                        directory of its own, mounted into that service alone
#   DIR/lease/lease.secret               authorizer: signs decision leases
#   DIR/mcp/mcp.secret                   envelope: signs MCP execution tokens
#   DIR/checkpoint/checkpoint.key        audit: the Ed25519 key that signs audit checkpoints
#                                        (docs/adr/0019-checkpoints-on-by-default.md); every
#                                        replica of the audit log signs with the same one
#   DIR/checkpoint.pub.pem               its public half, for operators: `sharedosctl audit verify
#                                        --checkpoints=… --public_key=DIR/checkpoint.pub.pem`
#   DIR/postgres/postgres.password       the PostgreSQL variant: the password of the database role
#                                        "sharedos" (the PostgreSQL image sets it at each start)
#   DIR/postgres/pgpass                  the same password as a libpq password file, for audit
#                                        and grantstore (PGPASSFILE): never in a --db URI
#   DIR/oidc-console/console.secret      the console's OAuth client secret at the identity
#                                        provider (--oidc_config's console.client_secret_file):
#                                        the compose OIDC profile registers it with its provider;
#                                        with the organisation's provider, put the secret it
#                                        issued here instead (deploy/README.md section 7)
#
# One token per service, never one shared by several (docs/adr/0014-tenants-apart.md, T4): the
# access table admits each service principal only to the calls its job needs, so a service's
# token is worth no more than that service — and a shared "services" token is admitted to
# nothing. The host credential may name the authorities its turns may run under
# (--host_authorities, scope "authorities"); without it a turn's authority must be one of
# --host_owners.
#
# Existing files are kept (run it again to add what is missing; delete a file to rotate it).
# A service-token/ directory left by an earlier version (the shared token) is removed.
# Secrets are 0600, owned by UID (default 10001, the images' user) when run as root. More
# credentials (reviewers, scoped hosts and admins) are issued at run time with
# `sharedosctl credentials issue`.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

dir="${1:?usage: gen-secrets.sh DIR [--host_namespaces=…] [--host_owners=…] [--uid=UID]}"
shift
host_namespaces=world-demo
host_owners=human:user-alice
host_authorities=""
uid="$SHAREDOS_UID"
for arg in "$@"; do
  case "$arg" in
    --host_namespaces=*) host_namespaces="${arg#--host_namespaces=}" ;;
    --host_owners=*) host_owners="${arg#--host_owners=}" ;;
    --host_authorities=*) host_authorities="${arg#--host_authorities=}" ;;
    --uid=*) uid="${arg#--uid=}" ;;
    *) echo "gen-secrets: unknown argument ${arg:0:64}" >&2; exit 2 ;;
  esac
done
list_re='^[A-Za-z0-9:._-]{1,128}(,[A-Za-z0-9:._-]{1,128}){0,63}$'
[[ "$host_namespaces" =~ $list_re ]] ||
  { echo "gen-secrets: --host_namespaces: a comma-separated list of names" >&2; exit 2; }
[[ "$host_owners" =~ $list_re ]] ||
  { echo "gen-secrets: --host_owners: a comma-separated list of kind:id" >&2; exit 2; }
[ -z "$host_authorities" ] || [[ "$host_authorities" =~ $list_re ]] ||
  { echo "gen-secrets: --host_authorities: a comma-separated list of kind:id" >&2; exit 2; }
[[ "$uid" =~ ^[0-9]{1,9}$ ]] || { echo "gen-secrets: --uid: not a number" >&2; exit 2; }

# The services, each with its own token (the principal service:<name>).
services=(audit grantstore authorizer envelope console)
token_dirs=()
for service in "${services[@]}"; do token_dirs+=("$dir/$service-token"); done

umask 077
mkdir -p "$dir/credentials" "${token_dirs[@]}" "$dir/lease" "$dir/mcp" "$dir/postgres" \
  "$dir/checkpoint" "$dir/oidc-console"

# new FILE: a random secret into FILE unless it exists.
new() {
  [ -s "$1" ] || printf 'sos_%s\n' "$(openssl rand -hex 32)" > "$1"
}
new "$dir/admin.token"
new "$dir/host.token"
for service in "${services[@]}"; do new "$dir/$service-token/$service.token"; done
# The one token every service used to share: admitted to nothing now, so not kept around.
if [ -e "$dir/service-token" ]; then
  rm -rf "$dir/service-token"
  echo "gen-secrets: removed service-token/ (one token shared by every service, admitted to" \
    "nothing since ADR 0014; each service now has <service>-token/)"
fi
[ -s "$dir/lease/lease.secret" ] || openssl rand -hex 32 | tr -d '\n' > "$dir/lease/lease.secret"
[ -s "$dir/mcp/mcp.secret" ] || openssl rand -hex 32 | tr -d '\n' > "$dir/mcp/mcp.secret"
[ -s "$dir/oidc-console/console.secret" ] ||
  openssl rand -hex 32 > "$dir/oidc-console/console.secret"
if [ ! -s "$dir/checkpoint/checkpoint.key" ]; then
  openssl genpkey -algorithm ed25519 -out "$dir/checkpoint/checkpoint.key.new"
  mv "$dir/checkpoint/checkpoint.key.new" "$dir/checkpoint/checkpoint.key"
fi
openssl pkey -in "$dir/checkpoint/checkpoint.key" -pubout -out "$dir/checkpoint.pub.pem"
chmod 0644 "$dir/checkpoint.pub.pem"
# Hex: nothing to escape in the password file's host:port:database:user:password line.
[ -s "$dir/postgres/postgres.password" ] ||
  openssl rand -hex 32 > "$dir/postgres/postgres.password"
printf '*:*:sharedos:sharedos:%s\n' "$(head -n 1 "$dir/postgres/postgres.password")" \
  > "$dir/postgres/pgpass.new"
mv "$dir/postgres/pgpass.new" "$dir/postgres/pgpass"

digest() { head -n 1 "$1" | tr -d '[:space:]' | sha256sum | cut -d' ' -f1; }
json_list() { printf '"%s"' "$1" | sed 's/,/", "/g'; }
authorities=""
[ -z "$host_authorities" ] || authorities=", \"authorities\": [$(json_list "$host_authorities")]"
{
  printf '{"credentials": [\n'
  printf '  {"name": "ops", "role": "admin", "token_sha256": "%s"},\n' "$(digest "$dir/admin.token")"
  for service in "${services[@]}"; do
    printf '  {"name": "%s", "role": "service", "token_sha256": "%s"},\n' "$service" \
      "$(digest "$dir/$service-token/$service.token")"
  done
  printf '  {"name": "host", "role": "host", "token_sha256": "%s",\n' "$(digest "$dir/host.token")"
  printf '   "scope": {"namespaces": [%s], "owners": [%s]%s}}\n]}\n' \
    "$(json_list "$host_namespaces")" "$(json_list "$host_owners")" "$authorities"
} > "$dir/credentials/credentials.json.new"
mv "$dir/credentials/credentials.json.new" "$dir/credentials/credentials.json"

if [ "$(id -u)" -eq 0 ]; then
  chown -R "$uid:$uid" "$dir/credentials" "${token_dirs[@]}" "$dir/lease" "$dir/mcp" \
    "$dir/postgres" "$dir/checkpoint" "$dir/oidc-console"
fi
chmod 0755 "$dir" "$dir/credentials" "${token_dirs[@]}" "$dir/lease" "$dir/mcp" "$dir/postgres" \
  "$dir/checkpoint" "$dir/oidc-console"
echo "gen-secrets: admin.token and host.token in $dir; service secrets in credentials/," \
  "$(printf '%s-token/, ' "${services[@]}")lease/, mcp/, postgres/, checkpoint/, oidc-console/;" \
  "the checkpoints' public key in $dir/checkpoint.pub.pem"
