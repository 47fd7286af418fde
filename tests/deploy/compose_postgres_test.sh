#!/usr/bin/env bash
# The compose PostgreSQL variant built and run for real (issue 18's "done when"): builds the
# images from this test's binaries (deploy/build-images.sh, with localhost/sharedos-postgres),
# makes a CA, certificates and secrets, starts SHAREDOS_COMPOSE_VARIANT=postgres — PostgreSQL and
# two replicas of each service, TLS on every hop — on free loopback ports, and checks:
#   - each group's shared name (audit, grantstore, authorizer, envelope) resolves to both of its
#     replicas inside the network, each replica holds only its own service's token (ADR 0014),
#     and PostgreSQL refuses plaintext and a wrong password;
#   - deploy/README.md's PostgreSQL quickstart block, verbatim: the first turn through envelope-1
#     (its id names envelope-1; escalated), approval through grantstore-2, the next turn through
#     envelope-2 (its id names envelope-2; the write succeeds), `audit verify` through both audit
#     replicas agreeing on one chain; the audit log read through audit-2 holds both replicas'
#     turns;
#   - one replica of each service killed (podman kill audit-1, grantstore-1, authorizer-1,
#     envelope-1): the next turn through envelope-2 still succeeds (tried up to six times 5 s
#     apart: while callers reconnect to the surviving replicas a turn is refused at admission,
#     fail closed, e.g. `failed audit_unavailable`), its records written through audit-2; audit-1 started again reads them (a record written through one replica, read
#     through the other) and the chain verifies.
# Needs root, podman, podman-compose and debootstrap (tools/setup.sh); fails, never skips.
set -euo pipefail
source "$TEST_SRCDIR/sharedos/tests/deploy/compose_lib.sh"
block="$(readme_block compose-postgres-quickstart)"

read -r p_env p_mcp p_env2 p_mcp2 p_gs p_gs2 p_audit p_audit2 p_console < <(python3 -c '
import socket
socks = [socket.socket() for _ in range(9)]
for s in socks: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))')
export SHAREDOS_ENVELOPE_PORT="$p_env" SHAREDOS_MCP_PORT="$p_mcp"
export SHAREDOS_ENVELOPE2_PORT="$p_env2" SHAREDOS_MCP2_PORT="$p_mcp2"
export SHAREDOS_GRANTSTORE_PORT="$p_gs" SHAREDOS_GRANTSTORE2_PORT="$p_gs2"
export SHAREDOS_AUDIT_PORT="$p_audit" SHAREDOS_AUDIT2_PORT="$p_audit2"
export SHAREDOS_CONSOLE_PORT="$p_console"
export SHAREDOS_COMPOSE_VARIANT=postgres SHAREDOS_PROJECT="sospg$$"
export SHAREDOS_CERTS_DIR="$TEST_TMPDIR/certs" SHAREDOS_SECRETS_DIR="$TEST_TMPDIR/secrets"
home="$(getent passwd "$(id -u)" | cut -d: -f6)"
export SHAREDOS_IMAGE_CACHE="${SHAREDOS_IMAGE_CACHE:-${home:-/root}/.cache/sharedos}"

work="$TEST_TMPDIR/work"
mkdir -p "$work/bazel-bin/tools/sharedosctl"
ln -sfn "$root/deploy" "$work/deploy"
ln -sf "$root/tools/sharedosctl/sharedosctl" "$work/bazel-bin/tools/sharedosctl/sharedosctl"
compose() { "$work/deploy/compose.sh" "$@"; }
source "$root/deploy/lib.sh"
container() { echo "${SHAREDOS_PROJECT}_$1_1"; }

dump_logs() {
  for service in postgres audit-1 audit-2 grantstore-1 grantstore-2 authorizer-1 authorizer-2 \
      envelope-1 envelope-2; do
    echo "--- $service:"; sharedos_podman logs --tail 25 "$(container "$service")" 2>&1 || true
  done
}
cleanup() {
  compose down > "$TEST_TMPDIR/down.log" 2>&1 || true
  sharedos_podman volume ls -q --filter "label=io.podman.compose.project=$SHAREDOS_PROJECT" |
    xargs -r podman "${SHAREDOS_PODMAN_GLOBAL[@]}" volume rm -f > /dev/null 2>&1 || true
  sharedos_podman network rm -f "${SHAREDOS_PROJECT}_default" > /dev/null 2>&1 || true
}
trap cleanup EXIT

started=$SECONDS
"$root/deploy/build-images.sh" --bin_dir="$root" || fail "build-images.sh failed"
echo "images built in $((SECONDS - started))s"
"$root/deploy/gen-certs.sh" "$SHAREDOS_CERTS_DIR" > /dev/null
"$root/deploy/gen-secrets.sh" "$SHAREDOS_SECRETS_DIR" > /dev/null

started=$SECONDS
compose up -d > "$TEST_TMPDIR/up.log" 2>&1 || { cat "$TEST_TMPDIR/up.log"; dump_logs; fail "compose up"; }
compose wait-healthy 180 || { dump_logs; fail "a service did not become healthy"; }
echo "up and healthy in $((SECONDS - started))s"

echo "--- each shared name resolves to both replicas"
for group in audit grantstore authorizer envelope; do
  addresses="$(sharedos_podman exec "$(container envelope-1)" getent ahostsv4 "$group" |
    awk '{print $1}' | sort -u)"
  want="$(for n in 1 2; do sharedos_podman inspect "$(container "$group-$n")" \
    --format '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}'; done | sort -u)"
  [ "$(echo "$want" | wc -l)" -eq 2 ] || fail "$group: the replicas have no two addresses: $want"
  [ "$addresses" = "$want" ] || fail "$group resolves to [$addresses], its replicas are [$want]"
  echo "$group -> $(echo "$addresses" | paste -sd' ')"
done

echo "--- each replica holds only its own service's token"
for group in audit grantstore authorizer envelope; do
  for n in 1 2; do
    held="$(sharedos_podman exec "$(container "$group-$n")" ls -A /etc/sharedos/token |
      paste -sd' ')" || fail "cannot list $group-$n's /etc/sharedos/token"
    [ "$held" = "$group.token" ] || fail "$group-$n holds [$held] in /etc/sharedos/token, want $group.token"
  done
done
echo "each replica holds its own service's token only"

echo "--- PostgreSQL refuses plaintext, a wrong password and the superuser (TLS, SCRAM)"
# psql inside the PostgreSQL container, over TCP as any client of the network would.
psql_in() {
  sharedos_podman exec "$@" "$(container postgres)" /usr/lib/postgresql/15/bin/psql -X -w \
    -c 'select 1' 2>&1 || true
}
refused="$(psql_in -e PGCONNECT_TIMEOUT=5 -e PGDATABASE=sharedos -e PGUSER=sharedos \
  -e PGHOST=127.0.0.1 -e PGSSLMODE=disable)"
echo "$refused" | grep -q 'no pg_hba.conf entry' || fail "plaintext was not refused: $refused"
refused="$(psql_in -e PGDATABASE=sharedos -e PGUSER=sharedos -e PGHOST=127.0.0.1 \
  -e PGSSLMODE=require -e PGPASSWORD=not-the-password-0000)"
echo "$refused" | grep -q 'password authentication failed' || fail "a wrong password was not refused: $refused"
refused="$(psql_in -e PGDATABASE=postgres -e PGUSER=postgres -e PGHOST=127.0.0.1 -e PGSSLMODE=require)"
echo "$refused" | grep -q 'no pg_hba.conf entry' || fail "the superuser was not refused: $refused"
echo "refused: plaintext, a wrong password, the superuser"
# The right password, from the mounted password file, over TLS verified against the CA; every
# connection of the role sharedos (the four store replicas') is TLS.
tls="$(psql_in -e PGPASSFILE=/etc/sharedos/postgres/pgpass -e PGHOST=postgres -e PGDATABASE=sharedos \
  -e PGUSER=sharedos -e PGSSLMODE=verify-full -e PGSSLROOTCERT=/etc/sharedos/tls/ca.crt)"
echo "$tls" | grep -q '(1 row)' || fail "the password file over TLS did not connect: $tls"
count="$(sharedos_podman exec -e PGPASSFILE=/etc/sharedos/postgres/pgpass -e PGHOST=postgres \
  -e PGDATABASE=sharedos -e PGUSER=sharedos -e PGSSLMODE=verify-full \
  -e PGSSLROOTCERT=/etc/sharedos/tls/ca.crt "$(container postgres)" \
  /usr/lib/postgresql/15/bin/psql -X -w -At -c "select count(*) filter (where s.ssl),
    count(*) filter (where not s.ssl) from pg_stat_activity a join pg_stat_ssl s using (pid)
    where a.usename = 'sharedos' and a.pid <> pg_backend_pid()")" || fail "psql: $count"
[ "${count#*|}" = 0 ] && [ "${count%|*}" -ge 1 ] ||
  fail "the stores' connections are not all TLS (tls|plaintext): $count"
echo "stores' connections: ${count%|*} over TLS, none plaintext"
logs="$(sharedos_podman logs "$(container postgres)" 2>&1)"
password="$(cat "$SHAREDOS_SECRETS_DIR/postgres/postgres.password")"
case "$logs" in *"$password"*) fail "PostgreSQL's log holds the password" ;; esac
case "$(sharedos_podman inspect "$(container audit-1)" "$(container postgres)")" in
  *"$password"*) fail "a container's configuration holds the password" ;;
esac
unset password

echo "--- deploy/README.md's PostgreSQL quickstart:"
echo "$block"
echo "---"
if ! (cd "$work" && bash -euo pipefail -c "$block") > "$out" 2>&1; then
  cat "$out"; dump_logs; fail "the quickstart block failed"
fi
cat "$out"
check() { grep -qE "$1" "$out" || fail "expected: $2"; }
check '^turn turn-envelope-1\.[0-9a-f-]+ opened' "the first turn opened at envelope-1"
check 'files\.read Workspace/notes\.txt: succeeded' "the read allowed"
check 'files\.create Workspace/summary\.txt: denied no_matching_grant' "the write refused no_matching_grant"
check '^turn: escalated$' "the first turn escalated"
check 'is approved; issued grant' "the escalation approved"
check '^turn turn-envelope-2\.[0-9a-f-]+ opened' "the second turn opened at envelope-2"
check 'files\.create Workspace/summary\.txt: succeeded' "the second write succeeded"
check '^turn: succeeded$' "the second turn succeeded"
counts="$(sed -n 's/^ok: \([0-9]*\) records verify.*/\1/p' "$out")"
[ "$(echo "$counts" | wc -l)" -eq 2 ] && [ "$(echo "$counts" | sort -u | wc -l)" -eq 1 ] ||
  fail "audit verify through audit-1 and audit-2 disagree or failed: $counts"
records="$(echo "$counts" | head -n 1)"

# sharedosctl against replica N (1 or 2) of the envelope, the grant store and the audit log.
ctl() {
  local n="$1" env gs audit
  shift
  if [ "$n" = 1 ]; then env="$p_env" gs="$p_gs" audit="$p_audit"; else env="$p_env2" gs="$p_gs2" audit="$p_audit2"; fi
  SHAREDOS_TARGET="127.0.0.1:$env" SHAREDOS_GRANTSTORE_TARGET="127.0.0.1:$gs" \
    SHAREDOS_AUDIT_TARGET="127.0.0.1:$audit" "$root/tools/sharedosctl/sharedosctl" \
    --tls_ca="$SHAREDOS_CERTS_DIR/ca.crt" --token_file="$SHAREDOS_SECRETS_DIR/admin.token" "$@"
}
# execution N FILE: the execution id of the turn envelope-N opened, from sharedosctl's output.
execution() { sed -n "s/^turn turn-envelope-$1\.[^ ]* opened (execution \([^,) ]*\).*/\1/p" "$2" | tail -n 1; }
# Both envelopes' turns, read back through audit-2 by their executions: each ended.
for n in 1 2; do
  exec_id="$(execution "$n" "$out")"
  [ -n "$exec_id" ] || fail "no execution id for envelope-$n's turn in the quickstart's output"
  query="$(ctl 2 audit query --namespace=world-demo --execution="$exec_id")" ||
    fail "audit query through audit-2: $query"
  echo "$query" | grep -q 'turn\.ended' || fail "audit-2 does not show envelope-$n's turn $exec_id ended: $query"
  echo "audit-2 reads envelope-$n's turn (execution $exec_id)"
done

echo "--- one replica of each service killed: audit-1, grantstore-1, authorizer-1, envelope-1"
for service in audit-1 grantstore-1 authorizer-1 envelope-1; do
  sharedos_podman kill "$(container "$service")" > /dev/null || fail "podman kill $service"
done
compose exec -T envelope-2 rm files/human/user-alice/workspace/Workspace/summary.txt \
  > /dev/null 2>&1 || fail "cannot remove summary.txt through envelope-2"
# A caller whose connection went to a killed replica reconnects to the other: allow a few tries.
third=""
for attempt in 1 2 3 4 5 6; do
  if third="$(ctl 2 turn --host_token_file="$SHAREDOS_SECRETS_DIR/host.token" 2>&1)" &&
      echo "$third" | grep -q '^turn: succeeded$'; then
    break
  fi
  echo "attempt $attempt: $(echo "$third" | tail -n 2 | paste -sd' ')"
  sleep 5
done
echo "$third"
echo "$third" | grep -q '^turn: succeeded$' || { dump_logs; fail "the next turn failed with one replica of each service down"; }
echo "$third" | grep -qE '^turn turn-envelope-2\.' || fail "the turn did not open at envelope-2"
after="$(ctl 2 audit verify)" || fail "audit verify through audit-2: $after"
echo "$after"
written="$(echo "$after" | sed -n 's/^ok: \([0-9]*\) records verify.*/\1/p')"
[ -n "$written" ] && [ "$written" -gt "$records" ] ||
  fail "the turn's records did not reach the log through audit-2 ($records before): $after"

echo "--- audit-1 started again reads what audit-2 wrote"
sharedos_podman start "$(container audit-1)" > /dev/null || fail "podman start audit-1"
deadline=$((SECONDS + 60))
until sharedos_podman healthcheck run "$(container audit-1)" > /dev/null 2>&1; do
  [ "$SECONDS" -lt "$deadline" ] || { dump_logs; fail "audit-1 not healthy after its restart"; }
  sleep 1
done
again="$(ctl 1 audit verify)" || fail "audit verify through audit-1: $again"
echo "$again"
[ "$(echo "$again" | sed -n 's/^ok: \([0-9]*\) records verify.*/\1/p')" -ge "$written" ] ||
  fail "audit-1 sees fewer records than audit-2 wrote ($written): $again"
echo "$third" > "$TEST_TMPDIR/third.out"
third_exec="$(execution 2 "$TEST_TMPDIR/third.out")"
[ -n "$third_exec" ] || fail "no execution id in the third turn's output"
query="$(ctl 1 audit query --namespace=world-demo --execution="$third_exec")" ||
  fail "audit query through audit-1: $query"
echo "$query" | grep -q 'turn\.ended' ||
  fail "audit-1 does not show the turn $third_exec, written through audit-2: $query"
echo "ok: $records records after the quickstart, $written after the turn with one replica of each down; read back through both audit replicas"
