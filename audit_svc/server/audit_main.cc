// audit_svc: the one audit log, as its own process. The only composition root of the service.
#include <cstdio>
#include <memory>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "audit_svc/core/audit_log.h"
#include "audit_svc/server/audit_service.h"
#include "audit_svc/storage/sqlite_audit_store.h"
#include "common/server/auth.h"
#include "common/server/server_runner.h"
#include "common/time/clock.h"

ABSL_FLAG(std::string, host, "127.0.0.1", "Host to listen on (plaintext only on loopback).");
ABSL_FLAG(int, port, 0, "Port to listen on; 0 picks a free port (printed at start-up).");
ABSL_FLAG(std::string, db, "audit.db", "SQLite file holding the log.");
ABSL_FLAG(std::string, durability, "full",
          "full: fsync every group commit (survives power loss); normal: WAL with "
          "synchronous=NORMAL (survives a process kill, not a power loss).");
ABSL_FLAG(std::string, credentials, "",
          "JSON credentials file (see common/server/auth.h). Required.");
ABSL_FLAG(std::string, tls_cert, "", "PEM certificate; with --tls_key enables TLS.");
ABSL_FLAG(std::string, tls_key, "", "PEM private key.");

int main(int argc, char** argv) {
  namespace server = sharedos::common::server;
  server::TerminationSignals::Block();
  absl::SetProgramUsageMessage("audit_svc: the SharedOS audit log (append-only, hash-chained).");
  absl::ParseCommandLine(argc, argv);
  sharedos::common::server::ConfigureServiceProcess();

  auto fail = [](const std::string& what) {
    std::fprintf(stderr, "audit_svc: %s\n", what.c_str());
    return 2;
  };
  sharedos::audit::storage::SqliteAuditStore::Durability durability;
  const std::string durability_flag = absl::GetFlag(FLAGS_durability);
  if (durability_flag == "full") {
    durability = sharedos::audit::storage::SqliteAuditStore::Durability::kFull;
  } else if (durability_flag == "normal") {
    durability = sharedos::audit::storage::SqliteAuditStore::Durability::kNormal;
  } else {
    return fail("--durability: must be full or normal");
  }
  if (absl::GetFlag(FLAGS_credentials).empty()) return fail("--credentials: required");
  auto authenticator = server::Authenticator::FromFile(absl::GetFlag(FLAGS_credentials));
  if (!authenticator.ok()) return fail(std::string(authenticator.status().message()));

  // A schema upgrade of an existing log runs inside Open, once; say so before it starts (any
  // error is Open's to report).
  auto upgrade = sharedos::audit::storage::SqliteAuditStore::PendingUpgrade(absl::GetFlag(FLAGS_db));
  if (upgrade.ok() && !upgrade->empty()) std::fprintf(stderr, "audit_svc: %s\n", upgrade->c_str());
  auto store = sharedos::audit::storage::SqliteAuditStore::Open(absl::GetFlag(FLAGS_db), {durability});
  if (!store.ok()) return fail(std::string(store.status().message()));
  sharedos::audit::core::AuditLog log(*std::move(store), sharedos::common::RealClock(),
                                      sharedos::audit::core::AuditLog::Options{});
  sharedos::audit::server::AuditService service(log, **authenticator);

  server::ServerOptions options;
  options.host = absl::GetFlag(FLAGS_host);
  options.port = absl::GetFlag(FLAGS_port);
  options.tls_cert_file = absl::GetFlag(FLAGS_tls_cert);
  options.tls_key_file = absl::GetFlag(FLAGS_tls_key);
  auto runner = server::ServerRunner::Start(options, {&service});
  if (!runner.ok()) return fail(std::string(runner.status().message()));
  server::ReportListening("audit_svc", (*runner)->address());

  server::TerminationSignals::Wait();
  (*runner)->Shutdown();
  (*runner)->Wait();
  return 0;
}
