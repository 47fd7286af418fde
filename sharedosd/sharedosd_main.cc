// sharedosd: SharedOS in one process on its embedded default — SQLite files in one data
// directory, every service wired through its own gRPC interface over in-process channels.
//
// Tiers, leaf first (a service's clients need the channel of the tier below, which exists only
// once that tier has started):
//   internal A  audit_svc                      (in-process only)
//   internal B  grantstore_svc                 (in-process only; writes audit through A)
//   internal C  authorizer_svc                 (in-process only; grantstore B, audit A)
//   public      audit_svc, grantstore_svc, authorizer_svc   (--host:--port; the same cores)
// The envelope service joins as it is built (see README "Status").
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "audit_svc/client/audit_writer_factory.h"
#include "audit_svc/core/audit_log.h"
#include "audit_svc/server/audit_service.h"
#include "audit_svc/storage/sqlite_audit_store.h"
#include "authorizer_svc/server/authorizer_service.h"
#include "authorizer_svc/service/turn_authorizer.h"
#include "common/server/auth.h"
#include "common/server/server_runner.h"
#include "common/time/clock.h"
#include "grantstore_svc/client/grpc_grant_store_client.h"
#include "grantstore_svc/core/grant_store_core.h"
#include "grantstore_svc/server/grantstore_service.h"
#include "grantstore_svc/storage/sqlite_grant_store.h"
#include "sharedosd/bootstrap.h"

ABSL_FLAG(std::string, host, "127.0.0.1", "Host to listen on (plaintext only on loopback).");
ABSL_FLAG(int, port, 50051, "Port to listen on; 0 picks a free port and prints it.");
ABSL_FLAG(std::string, data_dir, "sharedos-data", "Directory holding the SQLite files and tokens.");
ABSL_FLAG(std::string, durability, "full",
          "Audit log durability: full (fsync per group commit) or normal (survives a process "
          "kill, not a power loss).");

namespace {

int Fail(const std::string& what) {
  std::fprintf(stderr, "sharedosd: %s\n", what.c_str());
  return 2;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

std::string FirstLine(const std::string& path) {
  std::string content = ReadFile(path);
  return content.substr(0, content.find('\n'));
}

}  // namespace

int main(int argc, char** argv) {
  namespace server = sharedos::common::server;
  server::TerminationSignals::Block();
  absl::SetProgramUsageMessage(
      "sharedosd: SharedOS in one process on SQLite (the embedded default).");
  absl::ParseCommandLine(argc, argv);

  auto data = sharedos::sharedosd::PrepareDataDir(absl::GetFlag(FLAGS_data_dir));
  if (!data.ok()) return Fail(std::string(data.status().message()));
  auto authenticator = server::Authenticator::FromFile(data->credentials());
  if (!authenticator.ok()) return Fail(std::string(authenticator.status().message()));
  sharedos::audit::storage::SqliteAuditStore::Options audit_options;
  const std::string durability = absl::GetFlag(FLAGS_durability);
  if (durability == "normal") {
    audit_options.durability = sharedos::audit::storage::SqliteAuditStore::Durability::kNormal;
  } else if (durability != "full") {
    return Fail("--durability: must be full or normal");
  }
  const sharedos::common::Clock& clock = sharedos::common::RealClock();

  // Internal tier A: the audit log.
  auto audit_store =
      sharedos::audit::storage::SqliteAuditStore::Open(data->audit_db(), audit_options);
  if (!audit_store.ok()) return Fail(std::string(audit_store.status().message()));
  sharedos::audit::core::AuditLog audit_log(*std::move(audit_store), clock,
                                            sharedos::audit::core::AuditLog::Options{});
  sharedos::audit::server::AuditService audit_internal(audit_log, **authenticator);
  server::ServerOptions internal;
  internal.listen = false;
  auto tier_a = server::ServerRunner::Start(internal, {&audit_internal});
  if (!tier_a.ok()) return Fail(std::string(tier_a.status().message()));

  // Internal tier B: the grant store, writing audit through tier A like any remote writer.
  auto grantstore_audit = sharedos::audit::client::NewAuditWriterOverChannel(
      {"remote", "", data->service_token(), data->outbox("grantstore")},
      (*tier_a)->InProcessChannel());
  if (!grantstore_audit.ok()) return Fail(std::string(grantstore_audit.status().message()));
  sharedos::grantstore::storage::SqliteGrantStore::Options grant_options;
  grant_options.path = data->grants_db();
  auto grant_store = sharedos::grantstore::storage::SqliteGrantStore::Open(grant_options);
  if (!grant_store.ok()) return Fail(std::string(grant_store.status().message()));
  sharedos::grantstore::core::GrantStoreCore grantstore(**grant_store, **grantstore_audit, clock);
  sharedos::grantstore::server::GrantStoreService grantstore_internal(grantstore, **authenticator);
  auto tier_b = server::ServerRunner::Start(internal, {&grantstore_internal});
  if (!tier_b.ok()) return Fail(std::string(tier_b.status().message()));

  // Internal tier C: the authorizer, loading from B and recording into A.
  auto authorizer_audit = sharedos::audit::client::NewAuditWriterOverChannel(
      {"remote", "", data->service_token(), data->outbox("authorizer")},
      (*tier_a)->InProcessChannel());
  if (!authorizer_audit.ok()) return Fail(std::string(authorizer_audit.status().message()));
  sharedos::grantstore::client::GrpcGrantStoreClient grantstore_client(
      (*tier_b)->InProcessChannel(), FirstLine(data->service_token()));
  sharedos::authorizer::service::TurnAuthorizer authorizer(
      grantstore_client, **authorizer_audit, clock, ReadFile(data->lease_secret()),
      sharedos::authorizer::service::TurnAuthorizer::Options{});
  sharedos::authorizer::server::AuthorizerService authorizer_internal(authorizer,
                                                                     **authenticator);
  auto tier_c = server::ServerRunner::Start(internal, {&authorizer_internal});
  if (!tier_c.ok()) return Fail(std::string(tier_c.status().message()));

  // Public tier: every service, same cores.
  sharedos::audit::server::AuditService audit_public(audit_log, **authenticator);
  sharedos::grantstore::server::GrantStoreService grantstore_public(grantstore, **authenticator);
  sharedos::authorizer::server::AuthorizerService authorizer_public(authorizer, **authenticator);
  server::ServerOptions options;
  options.host = absl::GetFlag(FLAGS_host);
  options.port = absl::GetFlag(FLAGS_port);
  auto runner = server::ServerRunner::Start(
      options, {&audit_public, &grantstore_public, &authorizer_public});
  if (!runner.ok()) return Fail(std::string(runner.status().message()));

  server::ReportListening("sharedosd", (*runner)->address());
  std::printf(
      "sharedosd: data directory %s (audit.db, grants.db)\n"
      "sharedosd: serving sharedos.audit.v1.AuditLog, sharedos.grantstore.v1.GrantStore and "
      "sharedos.authorizer.v1.Authorizer\n"
      "sharedosd: admin token in %s, host token in %s (send as \"authorization: Bearer <token>\")\n"
      "sharedosd: the envelope service (turns, tools, MCP) is not wired in yet (README, \"Status\")\n"
      "sharedosd: stop with Ctrl-C\n",
      data->root.c_str(), data->admin_token().c_str(), data->host_token().c_str());
  std::fflush(stdout);

  server::TerminationSignals::Wait();
  (*runner)->Shutdown();
  (*tier_c)->Shutdown();
  (*tier_b)->Shutdown();
  (*tier_a)->Shutdown();
  (*runner)->Wait();
  std::printf("sharedosd: stopped\n");
  return 0;
}
