// sharedosd: SharedOS in one process on its embedded default — SQLite files in one data
// directory, every service wired through its own gRPC interface over in-process channels.
//
// Tiers, leaf first (a service's clients need the channel of the tier below, which exists only
// once that tier has started):
//   internal A  audit_svc                      (in-process only: post-effect outboxes deliver
//                                               through it)
//   internal B  grantstore_svc                 (in-process only; the authorizer loads through it)
//   internal C  authorizer_svc                 (in-process only)
//   public      audit_svc, grantstore_svc, authorizer_svc, envelope_svc
//               (--host:--port; the same cores)
// On the hot paths no channel is used: every writer appends to the audit log directly
// (LogAuditWriter, pre-effect records committed before they are answered), and the envelope
// calls the AuthorizerCore directly (LocalAuthorizerClient).
// The MCP front door (envelope_svc/mcp) listens on its own port (--mcp_port) for harnesses of
// RUNTIME_MCP turns.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/synchronization/notification.h"
#include "audit_svc/client/audit_writer_factory.h"
#include "audit_svc/client/log_audit_writer.h"
#include "audit_svc/core/audit_log.h"
#include "audit_svc/server/audit_service.h"
#include "audit_svc/storage/sqlite_audit_store.h"
#include "authorizer_svc/client/local_authorizer_client.h"
#include "authorizer_svc/core/authorizer_core.h"
#include "authorizer_svc/server/authorizer_service.h"
#include "common/server/auth.h"
#include "common/server/server_runner.h"
#include "common/time/clock.h"
#include "envelope_svc/core/turn_engine.h"
#include "envelope_svc/mcp/execution_token.h"
#include "envelope_svc/mcp/mcp_server.h"
#include "envelope_svc/providers/files/files_provider.h"
#include "envelope_svc/server/envelope_service.h"
#include "envelope_svc/tools/tool_registry.h"
#include "envelope_svc/tools/turn_tools.h"
#include "grantstore_svc/client/grpc_grant_store_client.h"
#include "grantstore_svc/core/grant_store_core.h"
#include "grantstore_svc/server/grantstore_service.h"
#include "grantstore_svc/storage/sqlite_grant_store.h"
#include "sharedosd/bootstrap.h"
#include "sharedosd/demo.h"

ABSL_FLAG(std::string, host, "127.0.0.1", "Host to listen on (plaintext only on loopback).");
ABSL_FLAG(int, port, 50051, "Port to listen on; 0 picks a free port and prints it.");
ABSL_FLAG(std::string, data_dir, "sharedos-data", "Directory holding the SQLite files and tokens.");
ABSL_FLAG(std::string, registry, "",
          "Tool registry (text proto). Default: the standard files.* tools and sharedos.escalate "
          "shipped beside the binary (envelope_svc/config/standard_tools.textproto).");
ABSL_FLAG(std::string, files_root, "",
          "Root of the built-in files provider's per-owner workspaces. Default: <data_dir>/files.");
ABSL_FLAG(std::string, durability, "full",
          "Audit log durability: full (fsync per group commit) or normal (survives a process "
          "kill, not a power loss).");
ABSL_FLAG(std::string, mcp_host, "127.0.0.1",
          "Host of the MCP front door. It serves plaintext HTTP, so only a loopback host is "
          "accepted; front it with a TLS-terminating proxy to reach it from elsewhere.");
ABSL_FLAG(int, mcp_port, -1,
          "Port of the MCP front door (Streamable HTTP, path /mcp) on --mcp_host; 0 picks a free "
          "port; "
          "-1: --port + 1 (50052 by default), or a free port when --port is 0. Printed at start-up "
          "as \"sharedosd mcp listening on http://<host>:<port>/mcp\".");
ABSL_FLAG(absl::Duration, drain_grace, absl::ZeroDuration(),
          "New tool calls are refused turn_draining this long before a turn's deadline (0: not "
          "before the deadline; at most 600s — a grace at least a turn's timeout drains it from "
          "its start).");
ABSL_FLAG(bool, demo, false,
          "Seed the demo world world-demo on start (idempotent: what exists is kept) and print "
          "the README quickstart commands.");

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

// A file shipped with the binary: in its own runfiles tree, or in the one it was started from
// (a test's, where runfiles of data dependencies are merged).
std::string Runfile(const char* argv0, const std::string& relative) {
  std::vector<std::string> roots = {std::string(argv0) + ".runfiles"};
  for (const char* variable : {"RUNFILES_DIR", "TEST_SRCDIR"}) {
    if (const char* value = std::getenv(variable)) roots.push_back(value);
  }
  for (const std::string& root : roots) {
    const std::string candidate = root + "/sharedos/" + relative;
    if (std::ifstream(candidate).good()) return candidate;
  }
  return roots.front() + "/sharedos/" + relative;
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
  server::ConfigureServiceProcess();
  const absl::Duration drain_grace = absl::GetFlag(FLAGS_drain_grace);
  if (drain_grace < absl::ZeroDuration() || drain_grace > absl::Seconds(600)) {
    return Fail("--drain_grace: must be 0s..600s");
  }

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

  // Internal tier A: the audit log (a schema upgrade of an existing log runs inside Open, once;
  // say so before it starts — any error is Open's to report).
  auto upgrade = sharedos::audit::storage::SqliteAuditStore::PendingUpgrade(data->audit_db());
  if (upgrade.ok() && !upgrade->empty()) std::fprintf(stderr, "sharedosd: %s\n", upgrade->c_str());
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

  // Internal tier B: the grant store. In-process writers append to the audit log directly
  // (LogAuditWriter); the outbox client over tier A only holds post-effect records while the log
  // cannot take them.
  auto grantstore_outbox = sharedos::audit::client::NewAuditWriterOverChannel(
      {"remote", "", data->service_token(), data->outbox("grantstore")},
      (*tier_a)->InProcessChannel());
  if (!grantstore_outbox.ok()) return Fail(std::string(grantstore_outbox.status().message()));
  sharedos::audit::client::LogAuditWriter grantstore_audit(audit_log, **grantstore_outbox);
  sharedos::grantstore::storage::SqliteGrantStore::Options grant_options;
  grant_options.path = data->grants_db();
  auto grant_store = sharedos::grantstore::storage::SqliteGrantStore::Open(grant_options);
  if (!grant_store.ok()) return Fail(std::string(grant_store.status().message()));
  sharedos::grantstore::core::GrantStoreCore grantstore(**grant_store, grantstore_audit, clock);
  sharedos::grantstore::server::GrantStoreService grantstore_internal(grantstore, **authenticator);
  auto tier_b = server::ServerRunner::Start(internal, {&grantstore_internal});
  if (!tier_b.ok()) return Fail(std::string(tier_b.status().message()));

  // Internal tier C: the authorizer, loading from B and recording into the log directly.
  auto authorizer_outbox = sharedos::audit::client::NewAuditWriterOverChannel(
      {"remote", "", data->service_token(), data->outbox("authorizer")},
      (*tier_a)->InProcessChannel());
  if (!authorizer_outbox.ok()) return Fail(std::string(authorizer_outbox.status().message()));
  sharedos::audit::client::LogAuditWriter authorizer_audit(audit_log, **authorizer_outbox);
  sharedos::grantstore::client::GrpcGrantStoreClient grantstore_client(
      (*tier_b)->InProcessChannel(), FirstLine(data->service_token()));
  sharedos::authorizer::core::AuthorizerCore authorizer(
      grantstore_client, authorizer_audit, clock, ReadFile(data->lease_secret()),
      sharedos::authorizer::core::AuthorizerCore::Options{});
  sharedos::authorizer::server::AuthorizerService authorizer_internal(authorizer,
                                                                     **authenticator);
  auto tier_c = server::ServerRunner::Start(internal, {&authorizer_internal});
  if (!tier_c.ok()) return Fail(std::string(tier_c.status().message()));

  const std::string files_root = absl::GetFlag(FLAGS_files_root).empty()
                                     ? data->files_root()
                                     : absl::GetFlag(FLAGS_files_root);
  if (absl::GetFlag(FLAGS_demo)) {
    auto seeded = sharedos::sharedosd::SeedDemo(grantstore, files_root);
    if (!seeded.ok()) return Fail("--demo: " + std::string(seeded.status().message()));
    for (const std::string& line : *seeded) std::printf("sharedosd: demo: %s\n", line.c_str());
  }

  // The envelope: tools from the registry, the built-in files provider, decisions through C.
  namespace env = sharedos::envelope;
  std::string registry_path = absl::GetFlag(FLAGS_registry);
  if (registry_path.empty()) {
    registry_path = Runfile(argv[0], "envelope_svc/config/standard_tools.textproto");
  }
  auto registry = env::tools::ToolRegistry::LoadFiles({registry_path});
  if (!registry.ok()) return Fail("--registry: " + std::string(registry.status().message()));
  env::files::FilesProvider::Options files_options;
  files_options.root = files_root;
  for (const auto& tool : (*registry)->tools()) {
    if (tool->provider_binding().has_files()) files_options.tools.push_back(tool->definition());
  }
  auto files = env::files::FilesProvider::Create(std::move(files_options), clock);
  if (!files.ok()) return Fail("--files_root: " + std::string(files.status().message()));
  env::tools::AttachedProviders providers;
  providers.files = files->get();
  auto envelope_outbox = sharedos::audit::client::NewAuditWriterOverChannel(
      {"remote", "", data->service_token(), data->outbox("envelope")},
      (*tier_a)->InProcessChannel());
  if (!envelope_outbox.ok()) return Fail(std::string(envelope_outbox.status().message()));
  sharedos::audit::client::LogAuditWriter envelope_audit(audit_log, **envelope_outbox);
  // The envelope decides through the authorizer's logic directly (same process, no channel).
  sharedos::authorizer::client::LocalAuthorizerClient authorizer_client(authorizer);
  // The MCP front door: bound first so RUNTIME_MCP turns can be told its URL.
  sharedos::envelope::mcp::McpServer::Options mcp_options;
  mcp_options.host = absl::GetFlag(FLAGS_mcp_host);
  mcp_options.port = absl::GetFlag(FLAGS_mcp_port);
  if (mcp_options.port < 0) {
    mcp_options.port = absl::GetFlag(FLAGS_port) == 0 ? 0 : absl::GetFlag(FLAGS_port) + 1;
  }
  auto mcp = sharedos::envelope::mcp::McpServer::Bind(mcp_options);
  if (!mcp.ok()) return Fail("--mcp_port: " + std::string(mcp.status().message()));
  const sharedos::envelope::mcp::ExecutionTokenCodec mcp_tokens(ReadFile(data->mcp_secret()));
  env::core::TurnEngine::Options engine_options;
  engine_options.drain_grace = drain_grace;
  engine_options.mcp_url = (*mcp)->url();
  engine_options.mcp_tokens = &mcp_tokens;
  env::core::TurnEngine engine(authorizer_client, **registry, providers, envelope_audit, clock,
                               engine_options);
  (*mcp)->Start(engine, mcp_tokens, clock);

  // Public tier: every service, same cores.
  sharedos::audit::server::AuditService audit_public(audit_log, **authenticator);
  sharedos::grantstore::server::GrantStoreService grantstore_public(grantstore, **authenticator);
  sharedos::authorizer::server::AuthorizerService authorizer_public(authorizer, **authenticator);
  env::server::EnvelopeService envelope_public(engine, **authenticator);
  server::ServerOptions options;
  options.host = absl::GetFlag(FLAGS_host);
  options.port = absl::GetFlag(FLAGS_port);
  auto runner = server::ServerRunner::Start(
      options, {&audit_public, &grantstore_public, &authorizer_public, &envelope_public});
  if (!runner.ok()) return Fail(std::string(runner.status().message()));

  server::ReportListening("sharedosd", (*runner)->address());
  server::ReportListening("sharedosd mcp", (*mcp)->url());
  std::printf(
      "sharedosd: data directory %s (audit.db, grants.db)\n"
      "sharedosd: serving sharedos.envelope.v1.Envelope, sharedos.grantstore.v1.GrantStore, "
      "sharedos.audit.v1.AuditLog and sharedos.authorizer.v1.Authorizer\n"
      "sharedosd: %zu tools registered; files workspaces under %s\n"
      "sharedosd: admin token in %s, host token in %s (send as \"authorization: Bearer <token>\")\n"
      "sharedosd: stop with Ctrl-C\n",
      data->root.c_str(), (*registry)->tools().size(), files_root.c_str(),
      data->admin_token().c_str(), data->host_token().c_str());
  if (absl::GetFlag(FLAGS_demo)) std::printf("%s", sharedos::sharedosd::DemoNextSteps().c_str());
  std::fflush(stdout);

  // Turn deadlines: every running turn past its deadline ends cancelled.
  absl::Notification stopping;
  std::thread deadlines([&] {
    while (!stopping.WaitForNotificationWithTimeout(absl::Milliseconds(100))) {
      engine.CancelExpired();
    }
  });

  server::TerminationSignals::Wait();
  (*mcp)->Shutdown();
  (*runner)->Shutdown();
  (*tier_c)->Shutdown();
  (*tier_b)->Shutdown();
  (*tier_a)->Shutdown();
  (*runner)->Wait();
  stopping.Notify();
  deadlines.join();
  std::printf("sharedosd: stopped\n");
  return 0;
}
