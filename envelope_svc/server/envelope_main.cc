// envelope_svc: the execution envelope (turns over gRPC), as its own process. The only
// composition root of the service: its own flags (authorizer_svc, tools and providers, turn
// limits) beside the shared ones (common/server, the audit writer's in audit_svc/client, the MCP
// front door's listener in envelope_svc/mcp/mcp_flags.h).
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "audit_svc/client/audit_writer_factory.h"
#include "audit_svc/client/audit_writer_flags.h"
#include "authorizer_svc/client/grpc_authorizer_client.h"
#include "common/server/dependency_probes.h"
#include "common/server/repeated_flag.h"
#include "common/server/secret_file.h"
#include "common/server/service_flags.h"
#include "common/status/status_macros.h"
#include "common/time/clock.h"
#include "envelope_svc/mcp/mcp_flags.h"
#include "envelope_svc/server/envelope_server.h"
#include "envelope_svc/server/limit_flags.h"
#include "grantstore_svc/client/grantstore_flags.h"

// Defined by audit_writer_flags (the outbox the turn journal sits beside).
ABSL_DECLARE_FLAG(std::string, audit_outbox_durability);

ABSL_FLAG(std::string, authorizer_target, "", "authorizer_svc address (host:port). Required.");
ABSL_FLAG(std::string, authorizer_token_file, "",
          "File with this service's authorizer_svc token (first line). Required.");
// Every occurrence of a "comma-separated or repeated" list flag is kept
// (common/server/repeated_flag.h).
ABSL_FLAG(std::vector<std::string>, registry, {},
          "Tool registry text-proto files (ToolRegistryConfig), comma-separated or repeated. "
          "Required.")
    .OnUpdate(sharedos::common::server::RecordOccurrence<&FLAGS_registry>);
ABSL_FLAG(std::string, files_root, "",
          "Root directory of the built-in files provider (one workspace per owner). Empty: "
          "files-bound tools are not offered.");
ABSL_FLAG(std::vector<std::string>, provider, {},
          "Host ToolProvider services as <provider id>=<host:port>, comma-separated or repeated "
          "(e.g. --provider=notion-mcp=127.0.0.1:1234); verified with --tls_ca like every "
          "channel (plaintext only to loopback).")
    .OnUpdate(sharedos::common::server::RecordOccurrence<&FLAGS_provider>);
ABSL_FLAG(std::vector<std::string>, resource_provider, {},
          "Host ResourceProvider services as <resource namespace>=<host:port>, comma-separated or "
          "repeated (e.g. --resource_provider=calendar=127.0.0.1:1235), called like --provider "
          "(--provider_token_file, --tls_ca). With --files_root, namespace files is served "
          "built in unless named here.")
    .OnUpdate(sharedos::common::server::RecordOccurrence<&FLAGS_resource_provider>);
ABSL_FLAG(std::string, provider_token_file, "",
          "File with the token envelope_svc presents to host ToolProviders (first line).");
ABSL_FLAG(int, default_max_steps, 16, "maxSteps of a turn whose request sets none.");
ABSL_FLAG(int, default_timeout_ms, 120000, "timeoutMs of a turn whose request sets none.");
ABSL_FLAG(absl::Duration, provider_timeout, absl::Seconds(30), "Deadline of one provider call.");
ABSL_FLAG(absl::Duration, ended_turn_retention, absl::Minutes(15),
          "How long an ended turn stays readable (GetTurn, CancelTurn, WatchTurn).");
ABSL_FLAG(std::string, mcp_secret_file, "",
          "File holding the MCP execution-token secret (at least 32 bytes; every replica of a "
          "deployment shares it). Set: RUNTIME_MCP turns are served by the MCP front door on "
          "--mcp_host:--mcp_port. Empty: OpenTurn refuses RUNTIME_MCP.");
ABSL_FLAG(std::string, turn_journal, "",
          "SQLite file journaling this envelope's open turns (its own; never shared with another "
          "envelope). At start-up every turn it holds — open when the process last stopped — is "
          "ended failed operation_aborted before serving. Empty: <--audit_outbox>.turns when "
          "--audit_outbox is set, else no journal.");

ABSL_FLAG(std::string, message_transport, "",
          "A host's sharedos.envelope.v1.MessageTransport (host:port), called with "
          "--provider_token_file; needs --builtin_messaging=false.");
ABSL_FLAG(std::string, replica_name, "",
          "This envelope's name among its replicas behind one address (ADR 0011; [a-z0-9-], at "
          "most 32). Set: every turn id names it and a call of a turn another replica owns is "
          "forwarded there (--replica_peers, --replica_mcp_peers). Empty: one replica.");
ABSL_FLAG(std::vector<std::string>, replica_peers, {},
          "The other replicas' gRPC addresses as <name>=<host:port>, comma-separated (an entry "
          "naming this replica is ignored); reached with the client TLS flags (--tls_ca, ...).");
ABSL_FLAG(std::vector<std::string>, replica_mcp_peers, {},
          "The other replicas' MCP front doors as <name>=<url> (e.g. "
          "r2=https://10.0.0.2:7443/mcp), comma-separated; https verified with --tls_ca.");
ABSL_FLAG(std::string, replica_token_file, "",
          "File with the service credential (first line) this replica presents to its peers' "
          "sharedos.envelope.v1.MessageTransport: with --replica_peers and the built-in "
          "messaging, each world's messages live at one replica (ADR 0013). Required then.");
ABSL_FLAG(absl::Duration, replica_drain_timeout, absl::Seconds(30),
          "On SIGTERM a replica reports NOT_SERVING, opens no new turn and serves its open ones "
          "until they end or this long has passed (0s..600s), then exits.");
ABSL_FLAG(bool, builtin_messaging, true,
          "Serve the built-in in-process message transport: messages.request in every turn, "
          "Envelope.SendMessage, and sharedos.envelope.v1.MessageRoutes (route leases).");

namespace {

namespace server = ::sharedos::common::server;
namespace env = ::sharedos::envelope::server;

// Credentials issued through the control plane, looked up at grantstore_svc when
// --grantstore_target is set. The authenticator borrows it; it lives as long as the process
// (destroyed after RunService returns).
std::unique_ptr<server::CredentialSource> control_plane_credentials;

// Values of list flag `flag` as <key>=<host:port>, each key once.
absl::StatusOr<std::vector<std::pair<std::string, std::string>>> KeyedTargets(
    absl::string_view flag, absl::string_view key_name, const std::vector<std::string>& values) {
  std::vector<std::pair<std::string, std::string>> targets;
  for (const std::string& value : values) {
    std::vector<std::string> parts = absl::StrSplit(value, absl::MaxSplits('=', 1));
    if (parts.size() != 2 || parts[0].empty() || parts[1].empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag, ": \"", value, "\" is not <", key_name, ">=<host:port>"));
    }
    for (const auto& target : targets) {
      if (target.first == parts[0]) {
        return absl::InvalidArgumentError(
            absl::StrCat("--", flag, ": \"", parts[0], "\" given twice"));
      }
    }
    targets.emplace_back(parts[0], parts[1]);
  }
  return targets;
}

// --provider values as <id>=<host:port>, each id once.
absl::StatusOr<std::vector<env::HostProvider>> HostProviders(
    const std::vector<std::string>& values) {
  ASSIGN_OR_RETURN(auto targets, KeyedTargets("provider", "id", values));
  std::vector<env::HostProvider> hosts;
  for (auto& [id, target] : targets) hosts.push_back({id, target});
  return hosts;
}

// --resource_provider values as <resource namespace>=<host:port>, each namespace once.
absl::StatusOr<std::vector<env::HostResourceProvider>> HostResourceProviders(
    const std::vector<std::string>& values) {
  ASSIGN_OR_RETURN(auto targets, KeyedTargets("resource_provider", "resource namespace", values));
  std::vector<env::HostResourceProvider> hosts;
  for (auto& [resource_namespace, target] : targets) hosts.push_back({resource_namespace, target});
  return hosts;
}

// The MCP front door the flags ask for (none without --mcp_secret_file).
absl::StatusOr<std::optional<env::McpFrontDoor>> FrontDoor() {
  if (absl::GetFlag(FLAGS_mcp_secret_file).empty()) return std::nullopt;
  env::McpFrontDoor mcp;
  ASSIGN_OR_RETURN(mcp.secret,
                   server::ReadFlagSecret("mcp_secret_file", absl::GetFlag(FLAGS_mcp_secret_file),
                                          server::SecretPart::kWholeFileTrimmed));
  // --mcp_port's -1 (the default) is a free port here.
  RETURN_IF_ERROR(sharedos::envelope::mcp::ApplyMcpListenerFlags(0, mcp.server));
  return mcp;
}

// --turn_journal, or the default derived from the audit outbox beside it (ADR 0009).
std::string TurnJournalPath() {
  if (!absl::GetFlag(FLAGS_turn_journal).empty()) return absl::GetFlag(FLAGS_turn_journal);
  const std::string outbox = sharedos::audit::client::AuditWriterConfigFromFlags().outbox_path;
  return outbox.empty() ? "" : absl::StrCat(outbox, ".turns");
}

// Everything but the injected clients, from the flags.
absl::StatusOr<env::EnvelopeServerOptions> Options() {
  env::EnvelopeServerOptions options;
  options.registry_files = server::AllOccurrences(FLAGS_registry);
  options.files_root = absl::GetFlag(FLAGS_files_root);
  options.builtin_messaging = absl::GetFlag(FLAGS_builtin_messaging);
  options.message_transport = absl::GetFlag(FLAGS_message_transport);
  if (!absl::GetFlag(FLAGS_provider_token_file).empty()) {
    ASSIGN_OR_RETURN(
        options.provider_token,
        server::ReadFlagSecret("provider_token_file", absl::GetFlag(FLAGS_provider_token_file),
                               server::SecretPart::kFirstLine));
  }
  ASSIGN_OR_RETURN(options.providers, HostProviders(server::AllOccurrences(FLAGS_provider)));
  ASSIGN_OR_RETURN(options.resource_providers,
                   HostResourceProviders(server::AllOccurrences(FLAGS_resource_provider)));
  options.engine.default_max_steps = absl::GetFlag(FLAGS_default_max_steps);
  options.engine.default_timeout_ms = absl::GetFlag(FLAGS_default_timeout_ms);
  options.engine.provider_timeout = absl::GetFlag(FLAGS_provider_timeout);
  options.engine.ended_turn_retention = absl::GetFlag(FLAGS_ended_turn_retention);
  ASSIGN_OR_RETURN(options.mcp, FrontDoor());
  options.replica.name = absl::GetFlag(FLAGS_replica_name);
  ASSIGN_OR_RETURN(options.replica.peers,
                   env::ParseReplicaPeers(absl::GetFlag(FLAGS_replica_peers), "--replica_peers"));
  ASSIGN_OR_RETURN(
      options.replica.mcp_peers,
      env::ParseReplicaPeers(absl::GetFlag(FLAGS_replica_mcp_peers), "--replica_mcp_peers"));
  if (!absl::GetFlag(FLAGS_replica_token_file).empty()) {
    ASSIGN_OR_RETURN(
        options.replica.token,
        server::ReadFlagToken("replica_token_file", absl::GetFlag(FLAGS_replica_token_file)));
  }
  options.drain_timeout = absl::GetFlag(FLAGS_replica_drain_timeout);
  options.turn_journal = TurnJournalPath();
  // The journal is as durable as the outbox beside it.
  ASSIGN_OR_RETURN(options.turn_journal_fsync, sharedos::audit::client::OutboxFsyncFromFlag(
                                                   absl::GetFlag(FLAGS_audit_outbox_durability)));
  return options;
}

absl::StatusOr<std::unique_ptr<server::Servable>> Build(const server::ServiceFlags& flags) {
  ASSIGN_OR_RETURN(control_plane_credentials,
                   sharedos::grantstore::client::AttachGrantStoreCredentialsFromFlags(
                       *flags.authenticator, flags.channel_tls));
  ASSIGN_OR_RETURN(
      server::Upstream authorizer,
      server::ReadUpstream("authorizer", absl::GetFlag(FLAGS_authorizer_target),
                           absl::GetFlag(FLAGS_authorizer_token_file), flags.channel_tls));
  ASSIGN_OR_RETURN(env::EnvelopeServerOptions options, Options());
  RETURN_IF_ERROR(env::ApplyLimitFlags(options));
  options.provider_tls = flags.channel_tls;
  options.replica.tls = flags.channel_tls;
  if (options.mcp.has_value()) options.mcp->server.tls = flags.server.tls;
  options.engine.metrics = flags.metrics.get();
  if (options.mcp.has_value()) options.mcp->server.metrics = flags.metrics.get();
  ASSIGN_OR_RETURN(auto audit, sharedos::audit::client::NewAuditWriterFromFlags(flags.metrics.get(),
                                                                                "envelope"));
  ASSIGN_OR_RETURN(auto dependencies, sharedos::audit::client::AuditDependenciesFromFlags());
  dependencies.push_back(server::ServiceDependency("authorizer", authorizer.channel));
  ASSIGN_OR_RETURN(auto built,
                   env::BuildEnvelopeServer(
                       {std::make_unique<sharedos::authorizer::client::GrpcAuthorizerClient>(
                            sharedos::authorizer::v1::Authorizer::NewStub(authorizer.channel),
                            std::move(authorizer.token)),
                        std::move(audit), *flags.authenticator, sharedos::common::RealClock()},
                       std::move(options)));
  return server::WithDependencies(std::move(built), std::move(dependencies));
}

}  // namespace

int main(int argc, char** argv) {
  const server::ServiceBinary binary{
      "envelope_svc",
      "envelope_svc: SharedOS turn execution (the Envelope service).",
      {{"credentials",
        "JSON credentials file (see common/server/auth.h). Required. Only host credentials "
        "may run turns; a host's scope bounds the contexts it may open turns for."},
       {"mcp_port",
        "Port of the MCP front door (Streamable HTTP, path /mcp) on --mcp_host; 0 or -1 (the "
        "default) picks a free port. Printed at start-up as \"envelope_svc mcp listening on "
        "http://<host>:<port>/mcp\"."}}};
  return server::RunService(argc, argv, binary, Build);
}
