// audit_svc: the one audit log, as its own process. The only composition root of the service:
// its own flags (where the log is and its durability) beside the shared ones (common/server).
#include <memory>
#include <string>

#include "absl/flags/flag.h"
#include "absl/status/statusor.h"
#include "audit_svc/server/audit_server.h"
#include "audit_svc/server/checkpoint_flags.h"
#include "common/server/dependency_probes.h"
#include "common/server/service_flags.h"
#include "common/status/status_macros.h"
#include "common/time/clock.h"
#include "grantstore_svc/client/grpc_credential_source.h"

ABSL_FLAG(std::string, db, "audit.db",
          "Where the log is: a SQLite file, or a postgres:// or postgresql:// URI of a PostgreSQL "
          "database (several audit_svc replicas may share one; keep the password out of the URI: "
          "libpq reads PGPASSWORD or ~/.pgpass).");
ABSL_FLAG(std::string, durability, "full",
          "full: every group commit durable on disk before it is answered (SQLite fsync, "
          "PostgreSQL synchronous_commit=on; survives power loss); normal: SQLite WAL with "
          "synchronous=NORMAL, PostgreSQL synchronous_commit=off (the last commits may be lost "
          "on a power loss or a database crash).");

ABSL_FLAG(std::string, grantstore_target, "",
          "grantstore_svc address (host:port). Optional: set, credentials issued through the "
          "control plane are honoured beside --credentials (looked up there on every call); "
          "unset, only --credentials.");
ABSL_FLAG(std::string, grantstore_token_file, "",
          "File with this service's grantstore_svc token (first line). Required with "
          "--grantstore_target.");

namespace {

namespace server = ::sharedos::common::server;

// Credentials issued through the control plane, looked up at grantstore_svc when
// --grantstore_target is set. The authenticator borrows it; it lives as long as the process
// (destroyed after RunService returns).
std::unique_ptr<server::CredentialSource> control_plane_credentials;

absl::StatusOr<std::unique_ptr<server::Servable>> Build(const server::ServiceFlags& flags) {
  ASSIGN_OR_RETURN(control_plane_credentials,
                   sharedos::grantstore::client::AttachGrantStoreCredentials(
                       *flags.authenticator, absl::GetFlag(FLAGS_grantstore_target),
                       absl::GetFlag(FLAGS_grantstore_token_file), flags.channel_tls));
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
