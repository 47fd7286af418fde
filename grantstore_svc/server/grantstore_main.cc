// grantstore_svc: the control plane's authority store, as its own process. The only composition
// root of the service: flags are read here and nowhere else.
#include <cstdio>
#include <memory>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "audit_svc/client/audit_writer_factory.h"
#include "common/server/auth.h"
#include "common/server/server_runner.h"
#include "common/time/clock.h"
#include "grantstore_svc/core/grant_store_core.h"
#include "grantstore_svc/server/grantstore_service.h"
#include "grantstore_svc/storage/sqlite_grant_store.h"

ABSL_FLAG(std::string, host, "127.0.0.1", "Host to listen on (plaintext only on loopback).");
ABSL_FLAG(int, port, 0, "Port to listen on; 0 picks a free port (printed at start-up).");
ABSL_FLAG(std::string, db, "grantstore.db", "SQLite file holding the store.");
ABSL_FLAG(std::string, credentials, "",
          "JSON credentials file (see common/server/auth.h). Required.");
ABSL_FLAG(std::string, audit, "",
          "remote | local | discard: how control-plane events reach audit_svc. Required.");
ABSL_FLAG(std::string, audit_target, "", "audit_svc address (host:port), remote/local.");
ABSL_FLAG(std::string, audit_token_file, "", "File with this service's audit_svc token.");
ABSL_FLAG(std::string, audit_outbox, "", "Durable audit outbox file, remote/local.");
ABSL_FLAG(std::string, audit_outbox_durability, "full",
          "Outbox commits: full (fsync each; survives a power loss) or normal (no fsync: survives "
          "a crash or kill of this process, not a power loss or OS crash).");
ABSL_FLAG(std::string, usage_durability, "full",
          "full: fsync every consumed use (survives power loss); normal: WAL synchronous=NORMAL "
          "for usage counters only (survives a process kill, not a power loss).");
ABSL_FLAG(int64_t, reader_mmap_bytes, 0,
          "Map up to this many bytes of the database into reader connections (PRAGMA mmap_size; "
          "0: off). Faster LoadAuthority on large stores; an I/O error then faults the process "
          "instead of failing the read.");
ABSL_FLAG(std::string, tls_cert, "", "PEM certificate; with --tls_key enables TLS.");
ABSL_FLAG(std::string, tls_key, "", "PEM private key.");

int main(int argc, char** argv) {
  namespace server = sharedos::common::server;
  namespace storage = sharedos::grantstore::storage;
  server::TerminationSignals::Block();
  absl::SetProgramUsageMessage(
      "grantstore_svc: SharedOS grants, host policy and escalations (the authority store).");
  absl::ParseCommandLine(argc, argv);
  sharedos::common::server::ConfigureServiceProcess();

  auto fail = [](const std::string& what) {
    std::fprintf(stderr, "grantstore_svc: %s\n", what.c_str());
    return 2;
  };
  storage::SqliteGrantStore::Options store_options;
  store_options.path = absl::GetFlag(FLAGS_db);
  store_options.reader_mmap_bytes = absl::GetFlag(FLAGS_reader_mmap_bytes);
  const std::string usage_durability = absl::GetFlag(FLAGS_usage_durability);
  if (usage_durability == "full") {
    store_options.usage_durability = storage::SqliteGrantStore::UsageDurability::kFull;
  } else if (usage_durability == "normal") {
    store_options.usage_durability = storage::SqliteGrantStore::UsageDurability::kNormal;
  } else {
    return fail("--usage_durability: must be full or normal");
  }
  if (absl::GetFlag(FLAGS_credentials).empty()) return fail("--credentials: required");
  auto authenticator = server::Authenticator::FromFile(absl::GetFlag(FLAGS_credentials));
  if (!authenticator.ok()) return fail(std::string(authenticator.status().message()));

  sharedos::audit::client::AuditWriterConfig audit_config;
  audit_config.mode = absl::GetFlag(FLAGS_audit);
  audit_config.target = absl::GetFlag(FLAGS_audit_target);
  audit_config.token_file = absl::GetFlag(FLAGS_audit_token_file);
  audit_config.outbox_path = absl::GetFlag(FLAGS_audit_outbox);
  auto outbox_fsync =
      sharedos::audit::client::OutboxFsyncFromFlag(absl::GetFlag(FLAGS_audit_outbox_durability));
  if (!outbox_fsync.ok()) return fail(std::string(outbox_fsync.status().message()));
  auto audit = sharedos::audit::client::NewAuditWriter(audit_config, *outbox_fsync);
  if (!audit.ok()) return fail(std::string(audit.status().message()));

  auto store = storage::SqliteGrantStore::Open(store_options);
  if (!store.ok()) return fail(std::string(store.status().message()));
  sharedos::grantstore::core::GrantStoreCore core(**store, **audit, sharedos::common::RealClock());
  sharedos::grantstore::server::GrantStoreService service(core, **authenticator);

  server::ServerOptions options;
  options.host = absl::GetFlag(FLAGS_host);
  options.port = absl::GetFlag(FLAGS_port);
  options.tls_cert_file = absl::GetFlag(FLAGS_tls_cert);
  options.tls_key_file = absl::GetFlag(FLAGS_tls_key);
  auto runner = server::ServerRunner::Start(options, {&service});
  if (!runner.ok()) return fail(std::string(runner.status().message()));
  server::ReportListening("grantstore_svc", (*runner)->address());

  server::TerminationSignals::Wait();
  (*runner)->Shutdown();
  (*runner)->Wait();
  return 0;
}
