// audit_svc: the one audit log, as its own process. The only composition root of the service:
// its own flags (where the log is and its durability) beside the shared ones (common/server).
#include <memory>
#include <string>

#include "absl/flags/flag.h"
#include "absl/status/statusor.h"
#include "audit_svc/server/audit_server.h"
#include "audit_svc/server/checkpoint_flags.h"
#include "common/server/control_plane_credentials.h"
#include "common/server/dependency_probes.h"
#include "common/server/service_flags.h"
#include "common/status/status_macros.h"
#include "common/time/clock.h"

ABSL_FLAG(std::string, db, "audit.db",
          "Where the log is: a SQLite file, or a postgres:// or postgresql:// URI of a PostgreSQL "
          "database (several audit_svc replicas may share one; keep the password out of the URI: "
          "libpq reads PGPASSWORD or ~/.pgpass).");
ABSL_FLAG(std::string, durability, "full",
          "full: every group commit durable on disk before it is answered (SQLite fsync, "
          "PostgreSQL synchronous_commit=on; survives power loss); normal: SQLite WAL with "
          "synchronous=NORMAL, PostgreSQL synchronous_commit=off (the last commits may be lost "
          "on a power loss or a database crash).");

namespace {

namespace server = ::sharedos::common::server;

// Credentials issued through the control plane, looked up at grantstore_svc when
// --grantstore_target is set (both flags, and the lookup's client, come from the library this
// binary links for them: grantstore_svc/client:grantstore_flags, a higher plane this file does not
// include). The authenticator borrows it; it lives as long as the process (destroyed after
// RunService returns).
std::unique_ptr<server::CredentialSource> control_plane_credentials;

absl::StatusOr<std::unique_ptr<server::Servable>> Build(const server::ServiceFlags& flags) {
  ASSIGN_OR_RETURN(control_plane_credentials,
                   server::AttachControlPlaneCredentials(*flags.authenticator, flags.channel_tls));
  sharedos::audit::server::AuditServerOptions options;
  options.db_path = absl::GetFlag(FLAGS_db);
  ASSIGN_OR_RETURN(options.durability,
                   sharedos::audit::server::ParseAuditDurability(absl::GetFlag(FLAGS_durability)));
  sharedos::audit::server::ApplyCheckpointFlags(options);
  ASSIGN_OR_RETURN(
      auto built,
      sharedos::audit::server::BuildAuditServer(
          {*flags.authenticator, sharedos::common::RealClock(), flags.metrics.get()}, options));
  sharedos::audit::server::AuditServer* audit = built.get();
  return server::WithDependencies(std::move(built), {server::StoreDependency(options.db_path)},
                                  {"", options.db_path, [audit] { return audit->Head(); }});
}

}  // namespace

int main(int argc, char** argv) {
  return server::RunService(
      argc, argv,
      {"audit_svc", "audit_svc: the SharedOS audit log (append-only, hash-chained).", {}}, Build);
}
