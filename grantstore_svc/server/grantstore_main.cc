// grantstore_svc: the control plane's authority store, as its own process. The only composition
// root of the service: its own flags (the store's file and tuning) beside the shared ones
// (common/server, and the audit writer's in audit_svc/client).
#include <cstdint>
#include <memory>
#include <string>

#include "absl/flags/flag.h"
#include "absl/status/statusor.h"
#include "audit_svc/client/audit_writer_flags.h"
#include "common/server/dependency_probes.h"
#include "common/server/service_flags.h"
#include "common/status/status_macros.h"
#include "common/time/clock.h"
#include "grantstore_svc/server/grantstore_server.h"
#include "grantstore_svc/server/idp_flags.h"

ABSL_FLAG(std::string, db, "grantstore.db",
          "Where the store is: a SQLite file, or a postgres:// or postgresql:// URI of a "
          "PostgreSQL database (several grantstore_svc replicas may share one; keep the password "
          "out of the URI: libpq reads PGPASSWORD or ~/.pgpass). --reader_mmap_bytes and "
          "--usage_durability tune SQLite only.");
ABSL_FLAG(int64_t, reader_mmap_bytes, 0,
          "Map up to this many bytes of the database into reader connections (PRAGMA mmap_size; "
          "0: off). Faster LoadAuthority on large stores; an I/O error then faults the process "
          "instead of failing the read.");
ABSL_FLAG(std::string, usage_durability, "full",
          "full: fsync every consumed use (survives power loss); normal: WAL synchronous=NORMAL "
          "for usage counters only (survives a process kill, not a power loss).");

namespace {

namespace server = ::sharedos::common::server;
namespace grantstore = ::sharedos::grantstore;

absl::StatusOr<std::unique_ptr<server::Servable>> Build(const server::ServiceFlags& flags) {
  grantstore::server::GrantStoreServerOptions options;
  options.store.path = absl::GetFlag(FLAGS_db);
  options.store.reader_mmap_bytes = absl::GetFlag(FLAGS_reader_mmap_bytes);
  ASSIGN_OR_RETURN(const bool full, server::IsFullDurability(
                                        "usage_durability", absl::GetFlag(FLAGS_usage_durability)));
  options.store.usage_durability =
      full ? grantstore::storage::SqliteGrantStore::UsageDurability::kFull
           : grantstore::storage::SqliteGrantStore::UsageDurability::kNormal;
  ASSIGN_OR_RETURN(auto audit, sharedos::audit::client::NewAuditWriterFromFlags(flags.metrics.get(),
                                                                                "grantstore"));
  ASSIGN_OR_RETURN(auto dependencies, sharedos::audit::client::AuditDependenciesFromFlags());
  dependencies.push_back(server::StoreDependency(options.store.path));
  grantstore::server::GrantStoreServerDeps deps{std::move(audit), *flags.authenticator,
                                                sharedos::common::RealClock(), flags.metrics.get()};
  grantstore::server::ApplyIdpFlags(deps);
  // The store compared with the log's control-plane records (docs/adr/0021); not with discard.
  ASSIGN_OR_RETURN(deps.audit_query, sharedos::audit::client::AuditQueryFromFlags());
  ASSIGN_OR_RETURN(auto built, grantstore::server::BuildGrantStoreServer(std::move(deps), options));
  for (auto& check : built->AnchorDependencies()) dependencies.push_back(std::move(check));
  return server::WithDependencies(std::move(built), std::move(dependencies),
                                  {"", options.store.path, nullptr});
}

}  // namespace

int main(int argc, char** argv) {
  const server::ServiceBinary binary{
      "grantstore_svc",
      "grantstore_svc: SharedOS grants, host policy and escalations (the authority store).",
      {{"audit", "remote | local | discard: how control-plane events reach audit_svc. Required."}}};
  return server::RunService(argc, argv, binary, Build);
}
