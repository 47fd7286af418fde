// sharedosd: SharedOS in one process on its embedded default — SQLite files in one data
// directory, every service built by its own Build… (the same as its own binary's). Composition
// only.
//
// Inside the process the services call each other directly, without channels or credentials
// (ADR 0014, T4): every writer appends to the audit log as its own service principal
// (AuditServer::NewInProcessWriter: pre-effect records committed before they are answered, the
// outbox delivered into the log), the authorizer reads the grant store's core
// (LocalGrantStoreClient) and the envelope calls the authorizer's core
// (AuthorizerServer::NewInProcessClient). Built leaf first: the audit log, the grant store
// (writing into the log), the authorizer (loading from the store), the envelope.
//   public  audit_svc, grantstore_svc, authorizer_svc, envelope_svc (--host:--port; the same
//           cores), for operators, hosts and reviewers — no service credential is minted, so
//           the data-plane methods of the access table are nobody's from outside.
// The MCP front door (envelope_svc/mcp) listens on its own port (--mcp_port) for harnesses of
// RUNTIME_MCP turns; its listener flags (envelope_svc/mcp/mcp_flags.h) and the console's
// (console/console_flags.h) are the ones envelope_svc and the console binary link.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "audit_svc/server/audit_server.h"
#include "audit_svc/server/checkpoint_flags.h"
#include "authorizer_svc/server/authorizer_server.h"
#include "common/client/rpc_client_metrics.h"
#include "common/logging/log.h"
#include "common/metrics/metrics.h"
#include "common/server/auth.h"
#include "common/server/capacity_flags.h"
#include "common/server/dependency_probes.h"
#include "common/server/oidc_flags.h"
#include "common/server/secret_file.h"
#include "common/server/server_runner.h"
#include "common/server/service_main.h"
#include "common/server/status_service.h"
#include "common/server/tls.h"
#include "common/server/tls_flags.h"
#include "common/status/status_macros.h"
#include "common/time/clock.h"
#include "console/console_flags.h"
#include "console/console_server.h"
#include "console/oidc_provider.h"
#include "envelope_svc/mcp/mcp_flags.h"
#include "envelope_svc/server/envelope_server.h"
#include "envelope_svc/server/limit_flags.h"
#include "grantstore_svc/client/local_grant_store_client.h"
#include "grantstore_svc/server/grantstore_server.h"
#include "grantstore_svc/server/idp_flags.h"
#include "sharedosd/bootstrap.h"
#include "sharedosd/demo.h"

ABSL_FLAG(std::string, host, "127.0.0.1",
          "Host to listen on: plaintext only on loopback; any host with --tls_cert and --tls_key "
          "(--tls_client_ca: mTLS).");
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
ABSL_FLAG(std::string, metrics_host, "127.0.0.1",
          "Host of the Prometheus /metrics endpoint (plain HTTP: loopback only).");
ABSL_FLAG(int, metrics_port, -1,
          "Port of the Prometheus endpoint http://<metrics_host>:<port>/metrics; 0 picks a free "
          "port; -1: no metrics. Printed as \"sharedosd metrics on <url>\".");
ABSL_FLAG(absl::Duration, health_interval, absl::Seconds(2),
          "How often the embedded stores (audit.db, grants.db) are probed; grpc.health.v1 reports "
          "NOT_SERVING while one cannot be read.");
ABSL_FLAG(bool, demo, false,
          "Seed the demo world world-demo on start (idempotent: what exists is kept) and print "
          "the README quickstart commands.");

namespace {

namespace server = ::sharedos::common::server;
namespace audit = ::sharedos::audit::server;
namespace grantstore = ::sharedos::grantstore::server;
namespace authorizer = ::sharedos::authorizer::server;
namespace envelope = ::sharedos::envelope::server;

constexpr char kName[] = "sharedosd";

// What the flags ask of the services, checked before anything is written (the data directory's
// paths are filled in later).
struct Settings {
  audit::AuditServerOptions audit;
  // With the MCP front door's listener (options.mcp) from its flags.
  envelope::EnvelopeServerOptions envelope;
  // Where the console listens; nullopt without --console_port.
  std::optional<sharedos::console::ConsoleOptions> console;
};

// The four services, in tier order, and the servers they run on.
struct Deployment {
  // Null without --metrics_port.
  std::unique_ptr<sharedos::common::metrics::Metrics> metrics;
  std::unique_ptr<sharedos::common::metrics::MetricsExposer> metrics_exposer;
  sharedos::sharedosd::DataDir data;
  // --oidc_config: the identity provider's token verifier, attached to `authenticator` (declared
  // before it, so it outlives it). Null without the flag.
  std::unique_ptr<sharedos::common::oidc::OidcBearerVerifier> oidc;
  std::unique_ptr<server::Authenticator> authenticator;
  std::unique_ptr<audit::AuditServer> audit;
  std::unique_ptr<grantstore::GrantStoreServer> grantstore;
  std::unique_ptr<authorizer::AuthorizerServer> authorizer;
  std::unique_ptr<envelope::EnvelopeServer> envelope;
  std::vector<std::unique_ptr<grpc::Service>> public_services;
  // sharedos.status.v1 for the four services, on the public tier.
  std::unique_ptr<server::StatusService> status;
  std::unique_ptr<server::ServerRunner> public_tier;
  // With --oidc_config and --console_port: the provider people sign in at in the console.
  std::unique_ptr<sharedos::console::ConfiguredOidcProvider> console_oidc;
  // Null without --console_port.
  std::unique_ptr<sharedos::console::ConsoleServer> console;
};

absl::StatusOr<Settings> ReadSettings() {
  Settings settings;
  RETURN_IF_ERROR(server::ApplyCapacityFlags());
  ASSIGN_OR_RETURN(settings.audit.durability,
                   audit::ParseAuditDurability(absl::GetFlag(FLAGS_durability)));
  settings.audit.binary_name = kName;
  audit::ApplyCheckpointFlags(settings.audit);
  // --mcp_port's -1 (the default) is --port + 1 here, or a free port beside a free one.
  RETURN_IF_ERROR(sharedos::envelope::mcp::ApplyMcpListenerFlags(
      absl::GetFlag(FLAGS_port) == 0 ? 0 : absl::GetFlag(FLAGS_port) + 1,
      settings.envelope.mcp.emplace().server));
  // The envelope's limits (limit_flags.h), the front door's included.
  RETURN_IF_ERROR(envelope::ApplyLimitFlags(settings.envelope));
  // --console_port's -1 (the default) is no console here.
  ASSIGN_OR_RETURN(settings.console, sharedos::console::ConsoleListenerFromFlags(std::nullopt));
  // Plaintext off loopback, or unusable TLS files, is refused before the data directory is made.
  RETURN_IF_ERROR(server::CheckServerTls(server::ServerTlsFromFlags(), absl::GetFlag(FLAGS_host)));
  RETURN_IF_ERROR(server::CheckHealthInterval(absl::GetFlag(FLAGS_health_interval)));
  return settings;
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

std::string FilesRoot(const sharedos::sharedosd::DataDir& data) {
  return absl::GetFlag(FLAGS_files_root).empty() ? data.files_root()
                                                 : absl::GetFlag(FLAGS_files_root);
}

// The writer of service `name` in this process: into the log directly as service:<name>, its
// outbox beside (delivered into the log too: no channel, no credential).
absl::StatusOr<std::unique_ptr<sharedos::audit::client::AuditWriter>> AuditWriter(
    Deployment& d, const std::string& name) {
  return d.audit->NewInProcessWriter(absl::StrCat("service:", name), d.data.outbox(name),
                                     {d.metrics.get(), name});
}

sharedos::authorizer::core::AuthorizerCore::Options AuthorizerCoreOptions(Deployment& d) {
  sharedos::authorizer::core::AuthorizerCore::Options options;
  options.metrics = d.metrics.get();
  return options;
}

// The audit log, the grant store (writing into the log) and the authorizer (loading from the
// store), each calling the one below directly.
absl::Status BuildInternalServices(Settings settings, Deployment& d) {
  const sharedos::common::Clock& clock = sharedos::common::RealClock();
  settings.audit.db_path = d.data.audit_db();
  ASSIGN_OR_RETURN(
      d.audit, audit::BuildAuditServer({*d.authenticator, clock, d.metrics.get()}, settings.audit));

  grantstore::GrantStoreServerOptions grantstore_options;
  grantstore_options.store.path = d.data.grants_db();
  ASSIGN_OR_RETURN(auto grantstore_audit, AuditWriter(d, "grantstore"));
  grantstore::GrantStoreServerDeps grantstore_deps{std::move(grantstore_audit), *d.authenticator,
                                                   clock, d.metrics.get()};
  grantstore::ApplyIdpFlags(grantstore_deps);
  // The grant store compared with the log's control-plane records (docs/adr/0021): a grants.db
  // restored behind audit.db serves nothing until the operator accepts it.
  audit::AuditServer* log = d.audit.get();
  grantstore_deps.audit_query = [log](const sharedos::audit::v1::QueryRequest& request) {
    return log->Query(request);
  };
  ASSIGN_OR_RETURN(d.grantstore, grantstore::BuildGrantStoreServer(std::move(grantstore_deps),
                                                                   grantstore_options));

  ASSIGN_OR_RETURN(std::string lease_secret,
                   server::ReadSecretFile(d.data.lease_secret(), server::SecretPart::kWholeFile));
  ASSIGN_OR_RETURN(auto authorizer_audit, AuditWriter(d, "authorizer"));
  ASSIGN_OR_RETURN(d.authorizer,
                   authorizer::BuildAuthorizerServer(
                       {std::make_unique<sharedos::grantstore::client::LocalGrantStoreClient>(
                            d.grantstore->core()),
                        std::move(authorizer_audit), *d.authenticator, clock},
                       {std::move(lease_secret), AuthorizerCoreOptions(d)}));
  return absl::OkStatus();
}

// The envelope: the registry, the built-in files provider and the MCP front door, deciding
// through the authorizer's core in this process.
absl::Status BuildEnvelope(const char* argv0, Settings settings, Deployment& d) {
  envelope::EnvelopeServerOptions& options = settings.envelope;
  options.registry_files = {absl::GetFlag(FLAGS_registry).empty()
                                ? Runfile(argv0, "envelope_svc/config/standard_tools.textproto")
                                : absl::GetFlag(FLAGS_registry)};
  options.files_root = FilesRoot(d.data);
  // Two agents talk on the embedded default (envelope_svc/messaging/local_transport.h).
  options.builtin_messaging = true;
  options.engine.metrics = d.metrics.get();
  envelope::McpFrontDoor& mcp = *options.mcp;  // its listener from the flags (ReadSettings)
  mcp.server.metrics = d.metrics.get();
  ASSIGN_OR_RETURN(mcp.secret,
                   server::ReadSecretFile(d.data.mcp_secret(), server::SecretPart::kWholeFile));
  mcp.server.tls = server::ServerTlsFromFlags();
  // The envelope's open turns, beside its outbox: ended at the next start (ADR 0009).
  options.turn_journal = absl::StrCat(d.data.outbox("envelope"), ".turns");
  // As durable as the audit log (--durability): fsynced under full, a process crash under normal.
  options.turn_journal_fsync = absl::GetFlag(FLAGS_durability) != "normal";
  ASSIGN_OR_RETURN(auto envelope_audit, AuditWriter(d, "envelope"));
  ASSIGN_OR_RETURN(d.envelope, envelope::BuildEnvelopeServer(
                                   {d.authorizer->NewInProcessClient(), std::move(envelope_audit),
                                    *d.authenticator, sharedos::common::RealClock()},
                                   std::move(options)));
  return absl::OkStatus();
}

// The public tier: every service, the same cores, on --host:--port.
absl::Status StartPublicTier(Deployment& d) {
  d.public_services.push_back(d.audit->NewService());
  d.public_services.push_back(d.grantstore->NewService());
  d.public_services.push_back(d.authorizer->NewService());
  d.public_services.push_back(d.envelope->NewService());
  d.public_services.push_back(d.envelope->NewRoutesService());
  audit::AuditServer* log = d.audit.get();
  d.status = std::make_unique<server::StatusService>(
      *d.authenticator, std::vector<server::StatusInfo>{
                            {"audit_svc", d.data.audit_db(), [log] { return log->Head(); }},
                            {"grantstore_svc", d.data.grants_db(), nullptr},
                            {"authorizer_svc", "", nullptr},
                            {"envelope_svc", "", nullptr}});
  std::vector<grpc::Service*> services;
  for (const auto& service : d.public_services) services.push_back(service.get());
  services.push_back(d.status.get());
  server::ServerOptions options;
  options.host = absl::GetFlag(FLAGS_host);
  options.port = absl::GetFlag(FLAGS_port);
  options.metrics = d.metrics.get();
  options.tls = server::ServerTlsFromFlags();
  // Ready while both embedded stores can be read (the services run on them) and the grant store
  // is not behind the log (docs/adr/0021).
  options.dependencies = {server::StoreDependency(d.data.audit_db(), "audit_store"),
                          server::StoreDependency(d.data.grants_db(), "grant_store")};
  for (auto& check : d.grantstore->AnchorDependencies()) {
    options.dependencies.push_back(std::move(check));
  }
  options.health_interval = absl::GetFlag(FLAGS_health_interval);
  ASSIGN_OR_RETURN(d.public_tier, server::ServerRunner::Start(options, services));
  d.status->Attach(d.public_tier.get());
  return absl::OkStatus();
}

// With --console_port: the reviewer console, calling the public tier's services in-process with
// the signed-in credential (it has no authority of its own).
absl::Status StartConsole(std::optional<sharedos::console::ConsoleOptions> options, Deployment& d) {
  if (!options.has_value()) return absl::OkStatus();
  std::shared_ptr<grpc::Channel> channel = d.public_tier->InProcessChannel();
  // With --oidc_config: people also sign in at the identity provider (console/oidc_provider.h).
  if (d.oidc != nullptr) {
    ASSIGN_OR_RETURN(d.console_oidc,
                     sharedos::console::ConfiguredOidcProvider::Create(d.oidc->stack()));
  }
  ASSIGN_OR_RETURN(d.console, sharedos::console::ConsoleServer::Start(
                                  *std::move(options), *d.authenticator, channel, channel,
                                  sharedos::common::RealClock(), d.console_oidc.get()));
  return absl::OkStatus();
}

// With --demo: the demo world, seeded through the grant store's core; a line per item.
absl::Status SeedDemo(Deployment& d) {
  // A grant store behind the log (a restored grants.db) seeds nothing until it is accepted: say
  // so and serve (sharedosctl status names it; sharedosctl grants accept-restore).
  if (const auto* anchor = d.grantstore->anchor(); anchor != nullptr) {
    if (absl::Status serving = anchor->Serving(); !serving.ok()) {
      std::printf("sharedosd: demo: not seeded: %s\n", std::string(serving.message()).c_str());
      return absl::OkStatus();
    }
  }
  auto seeded = sharedos::sharedosd::SeedDemo(d.grantstore->core(), FilesRoot(d.data));
  if (!seeded.ok()) {
    return absl::Status(seeded.status().code(),
                        absl::StrCat("--demo: ", seeded.status().message()));
  }
  for (const std::string& line : *seeded) std::printf("sharedosd: demo: %s\n", line.c_str());
  return absl::OkStatus();
}

// Everything, in order: the data directory, the internal services, the demo world, the envelope,
// the public tier.
absl::Status Start(const char* argv0, const Settings& settings, Deployment& d) {
  if (absl::GetFlag(FLAGS_metrics_port) >= 0) {
    d.metrics = std::make_unique<sharedos::common::metrics::Metrics>();
    // Channels to providers and transports are timed (sharedos_rpc_client_seconds).
    sharedos::common::client::InstallClientMetrics(d.metrics.get());
    ASSIGN_OR_RETURN(d.metrics_exposer, sharedos::common::metrics::MetricsExposer::Start(
                                            *d.metrics, absl::GetFlag(FLAGS_metrics_host),
                                            absl::GetFlag(FLAGS_metrics_port)));
  }
  ASSIGN_OR_RETURN(d.data, sharedos::sharedosd::PrepareDataDir(absl::GetFlag(FLAGS_data_dir)));
  ASSIGN_OR_RETURN(d.authenticator, server::Authenticator::FromFile(d.data.credentials()));
  ASSIGN_OR_RETURN(d.oidc,
                   server::AttachOidcFromFlags(*d.authenticator, sharedos::common::RealClock()));
  RETURN_IF_ERROR(BuildInternalServices(settings, d));
  if (absl::GetFlag(FLAGS_demo)) RETURN_IF_ERROR(SeedDemo(d));
  RETURN_IF_ERROR(BuildEnvelope(argv0, settings, d));
  RETURN_IF_ERROR(StartPublicTier(d));
  return StartConsole(settings.console, d);
}

// The start-up lines tools, tests and the README wait for.
void ReportStarted(const Deployment& d) {
  server::ReportListening(kName, d.public_tier->address());
  server::ReportListening(absl::StrCat(kName, " mcp"), d.envelope->mcp_url());
  if (d.metrics_exposer != nullptr) {
    sharedos::common::metrics::ReportMetricsListening(kName, *d.metrics_exposer);
  }
  if (d.console != nullptr) std::printf("%s console on %s\n", kName, d.console->url().c_str());
  std::printf(
      "sharedosd: data directory %s (audit.db, grants.db)\n"
      "sharedosd: serving sharedos.envelope.v1.Envelope, sharedos.grantstore.v1.GrantStore, "
      "sharedos.audit.v1.AuditLog and sharedos.authorizer.v1.Authorizer\n"
      "sharedosd: %zu tools registered; files workspaces under %s\n"
      "sharedosd: admin token in %s, host token in %s (send as \"authorization: Bearer <token>\")\n"
      "sharedosd: stop with Ctrl-C\n",
      d.data.root.c_str(), d.envelope->tool_count(), FilesRoot(d.data).c_str(),
      d.data.admin_token().c_str(), d.data.host_token().c_str());
  if (absl::GetFlag(FLAGS_demo)) std::printf("%s", sharedos::sharedosd::DemoNextSteps().c_str());
  std::fflush(stdout);
}

// The effective configuration, one structured line (no secret: tokens and keys live in files).
void LogConfig(const Deployment& d) {
  namespace logging = ::sharedos::common::logging;
  logging::Log(logging::Level::kInfo, "config", "",
               {{"host", absl::GetFlag(FLAGS_host)},
                {"port", d.public_tier->port()},
                {"mcp_url", d.envelope->mcp_url()},
                {"metrics_url", d.metrics_exposer ? d.metrics_exposer->url() : ""},
                {"data_dir", d.data.root},
                {"files_root", FilesRoot(d.data)},
                {"registry", absl::GetFlag(FLAGS_registry)},
                {"durability", absl::GetFlag(FLAGS_durability)},
                {"drain_grace", absl::FormatDuration(envelope::DrainGraceFlag())},
                {"demo", absl::GetFlag(FLAGS_demo)},
                {"oidc_config", server::OidcConfigFlag()},
                {"tools", static_cast<long long>(d.envelope->tool_count())}});
}

// The front door first, then the public tier.
void Stop(Deployment& d) {
  if (d.console != nullptr) d.console->Shutdown();
  d.envelope->StopSideListeners();
  d.public_tier->Shutdown();
  d.public_tier->Wait();
  d.status->Attach(nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  server::ParseServiceCommandLine(
      argc, argv,
      {kName,
       "sharedosd: SharedOS in one process on SQLite (the embedded default).",
       {{"mcp_port",
         "Port of the MCP front door (Streamable HTTP, path /mcp) on --mcp_host; 0 picks a free "
         "port; -1 (the default): --port + 1 (50052 by default), or a free port when --port is "
         "0. Printed at start-up as \"sharedosd mcp listening on http://<host>:<port>/mcp\"."},
        {"console_port",
         "Port of the reviewer console (a web UI on --console_host; HTTPS with --tls_cert and "
         "--tls_key, else plaintext HTTP on loopback only); 0 picks a free port; -1 (the "
         "default): no console. Printed as \"sharedosd console on <url>\"."}}});
  sharedos::common::logging::SetService(kName);
  absl::StatusOr<Settings> settings = ReadSettings();
  if (!settings.ok()) return server::Fail(kName, settings.status());
  Deployment d;
  if (absl::Status started = Start(argv[0], *settings, d); !started.ok()) {
    return server::Fail(kName, started);
  }
  ReportStarted(d);
  LogConfig(d);
  server::TerminationSignals::Wait();
  Stop(d);
  std::printf("sharedosd: stopped\n");
  return 0;
}
