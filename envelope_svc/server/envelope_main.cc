// envelope_svc: the execution envelope (turns over gRPC), as its own process. The only
// composition root of the service: flags are read here and nowhere else.
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "audit_svc/client/audit_writer_factory.h"
#include "authorizer_svc/client/grpc_authorizer_client.h"
#include "common/server/auth.h"
#include "common/server/server_runner.h"
#include "common/time/clock.h"
#include "envelope_svc/core/turn_engine.h"
#include "envelope_svc/mcp/execution_token.h"
#include "envelope_svc/mcp/mcp_server.h"
#include "envelope_svc/providers/files/files_provider.h"
#include "envelope_svc/providers/grpc/grpc_tool_provider.h"
#include "envelope_svc/server/envelope_service.h"
#include "envelope_svc/tools/tool_registry.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"

ABSL_FLAG(std::string, host, "127.0.0.1", "Host to listen on (plaintext only on loopback).");
ABSL_FLAG(int, port, 0, "Port to listen on; 0 picks a free port (printed at start-up).");
ABSL_FLAG(std::string, credentials, "",
          "JSON credentials file (see common/server/auth.h). Required. Only host credentials "
          "may run turns; a host's scope bounds the contexts it may open turns for.");
ABSL_FLAG(std::string, authorizer_target, "", "authorizer_svc address (host:port). Required.");
ABSL_FLAG(std::string, authorizer_token_file, "",
          "File with this service's authorizer_svc token (first line). Required.");
ABSL_FLAG(std::vector<std::string>, registry, {},
          "Tool registry text-proto files (ToolRegistryConfig), comma-separated or repeated. "
          "Required.");
ABSL_FLAG(std::string, files_root, "",
          "Root directory of the built-in files provider (one workspace per owner). Empty: "
          "files-bound tools are not offered.");
ABSL_FLAG(std::vector<std::string>, provider, {},
          "Host ToolProvider services as <provider id>=<host:port>, comma-separated or repeated "
          "(e.g. --provider=notion-mcp=127.0.0.1:1234).");
ABSL_FLAG(std::string, provider_token_file, "",
          "File with the token envelope_svc presents to host ToolProviders (first line).");
ABSL_FLAG(int, default_max_steps, 16, "maxSteps of a turn whose request sets none.");
ABSL_FLAG(int, default_timeout_ms, 120000, "timeoutMs of a turn whose request sets none.");
ABSL_FLAG(absl::Duration, provider_timeout, absl::Seconds(30), "Deadline of one provider call.");
ABSL_FLAG(absl::Duration, drain_grace, absl::ZeroDuration(),
          "New tool calls are refused turn_draining this long before a turn's deadline (0: not "
          "before the deadline; at most 600s — a grace at least a turn's timeout drains it from "
          "its start).");
ABSL_FLAG(absl::Duration, ended_turn_retention, absl::Minutes(15),
          "How long an ended turn stays readable (GetTurn, CancelTurn, WatchTurn).");
ABSL_FLAG(std::string, audit, "",
          "remote | local | discard: how audit records become durable. Required.");
ABSL_FLAG(std::string, audit_target, "", "audit_svc address (host:port), remote/local.");
ABSL_FLAG(std::string, audit_token_file, "", "File with this service's audit_svc token.");
ABSL_FLAG(std::string, audit_outbox, "", "Durable audit outbox file, remote/local.");
ABSL_FLAG(std::string, audit_outbox_durability, "full",
          "Outbox commits: full (fsync each; survives a power loss) or normal (no fsync: survives "
          "a crash or kill of this process, not a power loss or OS crash).");
ABSL_FLAG(std::string, mcp_secret_file, "",
          "File holding the MCP execution-token secret (at least 32 bytes; every replica of a "
          "deployment shares it). Set: RUNTIME_MCP turns are served by the MCP front door on "
          "--mcp_port. Empty: OpenTurn refuses RUNTIME_MCP.");
ABSL_FLAG(std::string, mcp_host, "127.0.0.1",
          "Host of the MCP front door. It serves plaintext HTTP, so only a loopback host is "
          "accepted; front it with a TLS-terminating proxy to reach it from elsewhere.");
ABSL_FLAG(int, mcp_port, 0,
          "Port of the MCP front door (Streamable HTTP, path /mcp) on --mcp_host; 0 picks a free "
          "port. "
          "Printed at start-up as \"envelope_svc mcp listening on http://<host>:<port>/mcp\".");
ABSL_FLAG(std::vector<std::string>, mcp_allowed_origins, {},
          "Origins the MCP front door accepts besides its own (comma-separated).");
ABSL_FLAG(std::string, tls_cert, "", "PEM certificate; with --tls_key enables TLS.");
ABSL_FLAG(std::string, tls_key, "", "PEM private key.");

namespace {

namespace env = ::sharedos::envelope;

// The first line of a file, whitespace trimmed; nullopt when it cannot be read.
std::optional<std::string> ReadToken(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  const std::string all = text.str();
  return std::string(absl::StripAsciiWhitespace(all.substr(0, all.find('\n'))));
}

// Every value of a list flag given repeatedly (absl keeps only the last occurrence), each
// occurrence split on commas.
std::vector<std::string> Repeated(int argc, char** argv, absl::string_view name) {
  const std::string prefix = absl::StrCat("--", name, "=");
  std::vector<std::string> values;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (!absl::ConsumePrefix(&arg, prefix)) continue;
    for (absl::string_view value : absl::StrSplit(arg, ',', absl::SkipEmpty())) {
      values.emplace_back(value);
    }
  }
  return values;
}

}  // namespace

int main(int argc, char** argv) {
  namespace server = sharedos::common::server;
  server::TerminationSignals::Block();
  absl::SetProgramUsageMessage("envelope_svc: SharedOS turn execution (the Envelope service).");
  const std::vector<std::string> registries = Repeated(argc, argv, "registry");
  const std::vector<std::string> provider_flags = Repeated(argc, argv, "provider");
  absl::ParseCommandLine(argc, argv);
  sharedos::common::server::ConfigureServiceProcess();

  auto fail = [](const std::string& what) {
    std::fprintf(stderr, "envelope_svc: %s\n", what.c_str());
    return 2;
  };
  if (absl::GetFlag(FLAGS_credentials).empty()) return fail("--credentials: required");
  auto authenticator = server::Authenticator::FromFile(absl::GetFlag(FLAGS_credentials));
  if (!authenticator.ok()) return fail(std::string(authenticator.status().message()));

  if (absl::GetFlag(FLAGS_authorizer_target).empty()) return fail("--authorizer_target: required");
  if (absl::GetFlag(FLAGS_authorizer_token_file).empty()) {
    return fail("--authorizer_token_file: required");
  }
  std::optional<std::string> authorizer_token =
      ReadToken(absl::GetFlag(FLAGS_authorizer_token_file));
  if (!authorizer_token.has_value()) return fail("--authorizer_token_file: cannot be read");
  if (authorizer_token->empty()) return fail("--authorizer_token_file: empty");

  if (registries.empty()) return fail("--registry: required");
  auto registry = env::tools::ToolRegistry::LoadFiles(registries);
  if (!registry.ok()) return fail(absl::StrCat("--registry: ", registry.status().message()));

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

  const sharedos::common::Clock& clock = sharedos::common::RealClock();
  env::tools::AttachedProviders providers;
  std::unique_ptr<env::files::FilesProvider> files;
  if (!absl::GetFlag(FLAGS_files_root).empty()) {
    env::files::FilesProvider::Options files_options;
    files_options.root = absl::GetFlag(FLAGS_files_root);
    for (const auto& tool : (*registry)->tools()) {
      if (tool->provider_binding().has_files()) files_options.tools.push_back(tool->definition());
    }
    auto created = env::files::FilesProvider::Create(std::move(files_options), clock);
    if (!created.ok()) return fail(absl::StrCat("--files_root: ", created.status().message()));
    files = *std::move(created);
    providers.files = files.get();
  }

  std::string provider_token;
  if (!absl::GetFlag(FLAGS_provider_token_file).empty()) {
    std::optional<std::string> token = ReadToken(absl::GetFlag(FLAGS_provider_token_file));
    if (!token.has_value()) return fail("--provider_token_file: cannot be read");
    provider_token = *std::move(token);
  }
  std::vector<std::unique_ptr<env::providers::GrpcToolProvider>> hosts;
  for (const std::string& flag : provider_flags) {
    std::vector<std::string> parts = absl::StrSplit(flag, absl::MaxSplits('=', 1));
    if (parts.size() != 2 || parts[0].empty() || parts[1].empty()) {
      return fail(absl::StrCat("--provider: \"", flag, "\" is not <id>=<host:port>"));
    }
    if (providers.hosts.contains(parts[0])) {
      return fail(absl::StrCat("--provider: \"", parts[0], "\" given twice"));
    }
    env::providers::GrpcToolProvider::Options options;
    if (!provider_token.empty()) {
      options.prepare_context =
          [header = absl::StrCat("Bearer ", provider_token)](grpc::ClientContext& context) {
            context.AddMetadata("authorization", header);
          };
    }
    hosts.push_back(std::make_unique<env::providers::GrpcToolProvider>(
        parts[0],
        sharedos::envelope::v1::ToolProvider::NewStub(
            grpc::CreateChannel(parts[1], grpc::InsecureChannelCredentials())),
        std::move(options)));
    providers.hosts[parts[0]] = hosts.back().get();
  }

  sharedos::authorizer::client::GrpcAuthorizerClient authorizer(
      sharedos::authorizer::v1::Authorizer::NewStub(grpc::CreateChannel(
          absl::GetFlag(FLAGS_authorizer_target), grpc::InsecureChannelCredentials())),
      *std::move(authorizer_token));

  env::core::TurnEngine::Options options;
  options.default_max_steps = absl::GetFlag(FLAGS_default_max_steps);
  options.default_timeout_ms = absl::GetFlag(FLAGS_default_timeout_ms);
  options.provider_timeout = absl::GetFlag(FLAGS_provider_timeout);
  options.ended_turn_retention = absl::GetFlag(FLAGS_ended_turn_retention);
  options.drain_grace = absl::GetFlag(FLAGS_drain_grace);
  if (options.drain_grace < absl::ZeroDuration() || options.drain_grace > absl::Seconds(600)) {
    return fail("--drain_grace: must be 0s..600s");
  }
  if (options.default_max_steps < 1 || options.default_max_steps > 1000) {
    return fail("--default_max_steps: must be 1..1000");
  }
  if (options.default_timeout_ms < 1 || options.default_timeout_ms > 600000) {
    return fail("--default_timeout_ms: must be 1..600000");
  }
  // The MCP front door: bound before the engine so RUNTIME_MCP turns can be told its URL.
  std::unique_ptr<env::mcp::McpServer> mcp;
  std::unique_ptr<env::mcp::ExecutionTokenCodec> mcp_tokens;
  if (!absl::GetFlag(FLAGS_mcp_secret_file).empty()) {
    std::ifstream in(absl::GetFlag(FLAGS_mcp_secret_file), std::ios::binary);
    if (!in) return fail("--mcp_secret_file: cannot be read");
    std::ostringstream text;
    text << in.rdbuf();
    const std::string secret(absl::StripAsciiWhitespace(text.str()));
    if (secret.size() < env::mcp::ExecutionTokenCodec::kMinSecretBytes) {
      return fail("--mcp_secret_file: the secret must hold at least 32 bytes");
    }
    mcp_tokens = std::make_unique<env::mcp::ExecutionTokenCodec>(secret);
    env::mcp::McpServer::Options mcp_options;
    mcp_options.host = absl::GetFlag(FLAGS_mcp_host);
    mcp_options.port = absl::GetFlag(FLAGS_mcp_port);
    mcp_options.allowed_origins = absl::GetFlag(FLAGS_mcp_allowed_origins);
    auto bound = env::mcp::McpServer::Bind(mcp_options);
    if (!bound.ok()) return fail(absl::StrCat("--mcp_port: ", bound.status().message()));
    mcp = *std::move(bound);
    options.mcp_url = mcp->url();
    options.mcp_tokens = mcp_tokens.get();
  }
  env::core::TurnEngine engine(authorizer, **registry, providers, **audit, clock, options);
  if (mcp != nullptr) mcp->Start(engine, *mcp_tokens, clock);
  env::server::EnvelopeService service(engine, **authenticator);

  server::ServerOptions server_options;
  server_options.host = absl::GetFlag(FLAGS_host);
  server_options.port = absl::GetFlag(FLAGS_port);
  server_options.tls_cert_file = absl::GetFlag(FLAGS_tls_cert);
  server_options.tls_key_file = absl::GetFlag(FLAGS_tls_key);
  auto runner = server::ServerRunner::Start(server_options, {&service});
  if (!runner.ok()) return fail(std::string(runner.status().message()));

  // Turn deadlines: every running turn past its deadline ends cancelled.
  absl::Notification stopping;
  std::thread deadlines([&] {
    while (!stopping.WaitForNotificationWithTimeout(absl::Milliseconds(100))) {
      engine.CancelExpired();
    }
  });
  server::ReportListening("envelope_svc", (*runner)->address());
  if (mcp != nullptr) server::ReportListening("envelope_svc mcp", mcp->url());

  server::TerminationSignals::Wait();
  if (mcp != nullptr) mcp->Shutdown();
  (*runner)->Shutdown();
  (*runner)->Wait();
  stopping.Notify();
  deadlines.join();
  return 0;
}
