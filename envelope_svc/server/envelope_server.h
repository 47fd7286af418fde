// envelope_svc built from its options: the tool registry, the providers it attaches (the
// built-in files provider, host ToolProviders over gRPC), the MCP front door, the TurnEngine and
// the gRPC adapter, owned together with the injected authorizer client and audit writer, and a
// sweeper that ends every turn past its deadline. envelope_main.cc and sharedosd both call
// BuildEnvelopeServer. Thread-safe (its parts are).

#ifndef SHAREDOS_ENVELOPE_SVC_SERVER_ENVELOPE_SERVER_H_
#define SHAREDOS_ENVELOPE_SVC_SERVER_ENVELOPE_SERVER_H_

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "audit_svc/client/audit_writer.h"
#include "authorizer_svc/client/authorizer_client.h"
#include "common/client/channel.h"
#include "common/server/auth.h"
#include "common/server/service_main.h"
#include "common/time/clock.h"
#include "envelope_svc/core/turn_engine.h"
#include "envelope_svc/core/turn_journal.h"
#include "envelope_svc/mcp/execution_token.h"
#include "envelope_svc/mcp/mcp_server.h"
#include "envelope_svc/messaging/grpc_transport.h"
#include "envelope_svc/messaging/local_transport.h"
#include "envelope_svc/messaging/replicated_transport.h"
#include "envelope_svc/providers/files/files_provider.h"
#include "envelope_svc/providers/grpc/grpc_tool_provider.h"
#include "envelope_svc/resources/files_resources.h"
#include "envelope_svc/resources/grpc_resource_provider.h"
#include "envelope_svc/server/envelope_service.h"
#include "envelope_svc/server/routes_service.h"
#include "envelope_svc/server/turn_forwarder.h"
#include "envelope_svc/tools/tool_registry.h"

namespace sharedos::envelope::server {

// A host ToolProvider service: the provider id registry entries name, and its address.
struct HostProvider {
  std::string id;
  std::string target;
};

// A host ResourceProvider service: the resource namespace it serves, and its address.
struct HostResourceProvider {
  std::string resource_namespace;
  std::string target;
};

// The MCP front door of RUNTIME_MCP turns.
struct McpFrontDoor {
  // The execution-token secret (at least ExecutionTokenCodec::kMinSecretBytes; every replica of
  // a deployment shares it).
  std::string secret;
  mcp::McpServer::Options server;
};

struct EnvelopeServerOptions {
  // Tool registry text-proto files (ToolRegistryConfig). At least one.
  std::vector<std::string> registry_files;
  // Root of the built-in files provider's per-owner workspaces; empty: files-bound tools are not
  // offered.
  std::string files_root;
  // Per-owner quotas of the files provider (bytes and files; 0: none).
  uint64_t files_max_owner_bytes = uint64_t{1} << 30;
  uint64_t files_max_owner_files = 100000;
  // Host ToolProviders, each called with "authorization: Bearer <provider_token>" unless the
  // token is empty.
  std::vector<HostProvider> providers;
  std::string provider_token;
  // How the channels to the host ToolProviders verify them (common/client/channel.h: TLS against
  // a CA, or plaintext on loopback only).
  common::client::ChannelTls provider_tls;
  // Turn limits and timeouts (mcp_url and mcp_tokens are the builder's to set).
  core::TurnEngine::Options engine;
  // Absent: OpenTurn refuses RUNTIME_MCP.
  std::optional<McpFrontDoor> mcp;
  // The journal of open turns (ADR 0009), this envelope's own file; at start-up every turn it
  // holds is ended failed operation_aborted before the envelope serves. Empty: no journal (a
  // crash then loses the endings of the turns it interrupts).
  std::string turn_journal;
  // Whether the journal's writes are fsynced (as the audit outbox's are: --audit_outbox_durability
  // full) or only survive a crash of the process (normal).
  bool turn_journal_fsync = true;
  // The built-in in-process message transport (envelope_svc/messaging/local_transport.h): every
  // turn has messages.request, Envelope.SendMessage dispatches through it, and the server also
  // serves sharedos.envelope.v1.MessageRoutes (a host receives an agent's messages and revokes
  // route leases). False: no transport (messages.request is absent; SendMessage fails
  // message_transport_not_configured after its decision).
  bool builtin_messaging = false;
  // A host's MessageTransport service ("host:port"), called like the host ToolProviders (with
  // provider_token, verified by provider_tls). Exclusive with builtin_messaging.
  std::string message_transport;
  // Host ResourceProviders (Envelope.InvokeResource), each namespace once, called like the host
  // ToolProviders (provider_token, provider_tls). With files_root, resource namespace `files` is
  // served by the built-in files resource provider (resources/files_resources.h) unless a host
  // provider is named for it.
  std::vector<HostResourceProvider> resource_providers;
  // Envelope replicas (ADR 0011, turn_forwarder.h): with a name, turn ids name this replica and
  // a call of a turn another replica owns is forwarded there. Empty name: one replica.
  ReplicaOptions replica;
  // On SIGTERM (Drain) a replica admits no new turn and serves its open ones until they end or
  // this long has passed.
  absl::Duration drain_timeout = absl::Seconds(30);
};

// What the server is given: `authorizer` and `audit` it owns; the others it borrows, and each
// must outlive it.
struct EnvelopeServerDeps {
  std::unique_ptr<authorizer::client::AuthorizerClient> authorizer;
  std::unique_ptr<audit::client::AuditWriter> audit;
  const common::server::Authenticator& authenticator;
  const common::Clock& clock;
};

// The turn limits' bounds, each error naming its flag: INVALID_ARGUMENT "--drain_grace: must be
// 0s..600s", "--default_max_steps: must be 1..1000", "--default_timeout_ms: must be 1..600000".
absl::Status CheckTurnOptions(const core::TurnEngine::Options& options);

class EnvelopeServer final : public common::server::Servable {
 public:
  // Errors: those of CheckTurnOptions; INVALID_ARGUMENT "--registry: required"; "--registry: …"
  // (a file cannot be read or is not a valid registry), "--files_root: …" (not a directory),
  // "--mcp_secret_file: the secret must hold at least 32 bytes", those of McpServer::Bind
  // ("--mcp_host: …", "--mcp_public_url: …", the TLS flags'; UNAVAILABLE "--mcp_port: …");
  // UNAVAILABLE "--turn_journal: …" (the journal cannot be opened or its turns ended: the
  // envelope does not serve).
  static absl::StatusOr<std::unique_ptr<EnvelopeServer>> Build(EnvelopeServerDeps deps,
                                                               EnvelopeServerOptions options);

  // Stops the deadline sweeper and the MCP front door.
  ~EnvelopeServer() override;
  EnvelopeServer(const EnvelopeServer&) = delete;
  EnvelopeServer& operator=(const EnvelopeServer&) = delete;

  std::vector<grpc::Service*> services() override;
  // {"mcp", its URL} when the front door is open.
  std::vector<std::pair<std::string, std::string>> side_listeners() const override;
  void StopSideListeners() override;
  // Admits no new turn (OpenTurn UNAVAILABLE "envelope draining"), then waits until no turn runs
  // or the drain timeout has passed.
  void Drain() override;

  // Another adapter over the same engine, for a second server (sharedosd's public listener).
  std::unique_ptr<grpc::Service> NewService() {
    return std::make_unique<EnvelopeService>(*engine_, authenticator_, forwarder_.get());
  }

  // Another MessageRoutes adapter over the built-in transport; null without one. (The peers'
  // MessageTransport service is on services() only: peers reach a replica's own listener.)
  std::unique_ptr<grpc::Service> NewRoutesService();

  // How many tools the registry holds.
  size_t tool_count() const { return registry_->tools().size(); }
  // Where the MCP front door listens ("<http|https>://<host>:<port>/mcp"), or empty without one.
  std::string mcp_url() const { return mcp_ == nullptr ? "" : mcp_->listen_url(); }

 private:
  explicit EnvelopeServer(EnvelopeServerDeps deps);

  // The steps of Build, in order.
  absl::Status LoadTools(const EnvelopeServerOptions& options);
  absl::Status AttachProviders(const EnvelopeServerOptions& options);
  // The forwarder of a replica (none for one replica).
  absl::Status JoinReplicas(EnvelopeServerOptions& options);
  // Binds the front door before the engine exists, so RUNTIME_MCP turns can be told its URL.
  absl::Status BindFrontDoor(const EnvelopeServerOptions& options);
  absl::Status OpenJournal(const EnvelopeServerOptions& options);
  // The built-in transport or a host's; sets the engine's message_transport.
  absl::Status AttachMessaging(EnvelopeServerOptions& options);
  // With peers: the built-in transport shared across the replicas (ADR 0013), and the
  // MessageTransport service the peers reach this replica's through.
  absl::Status ShareMessaging(EnvelopeServerOptions& options);
  // The built-in files resources and the host ResourceProviders; sets the engine's
  // resource_providers.
  absl::Status AttachResourceProviders(EnvelopeServerOptions& options);
  // Builds the engine, ends the turns the journal holds, then serves.
  absl::Status StartEngine(core::TurnEngine::Options engine_options);

  const std::unique_ptr<authorizer::client::AuthorizerClient> authorizer_;
  const std::unique_ptr<audit::client::AuditWriter> audit_;
  const common::server::Authenticator& authenticator_;
  const common::Clock& clock_;
  std::unique_ptr<tools::ToolRegistry> registry_;
  std::unique_ptr<files::FilesProvider> files_;
  std::vector<std::unique_ptr<providers::GrpcToolProvider>> hosts_;
  tools::AttachedProviders attached_;
  std::unique_ptr<TurnForwarder> forwarder_;
  absl::Duration drain_timeout_;
  std::unique_ptr<mcp::ExecutionTokenCodec> mcp_tokens_;
  std::unique_ptr<mcp::McpServer> mcp_;
  std::unique_ptr<core::TurnJournal> journal_;
  std::unique_ptr<core::TurnEngine> engine_;
  std::unique_ptr<EnvelopeService> service_;
  // With builtin_messaging.
  std::unique_ptr<messaging::LocalMessageTransport> messages_;
  std::unique_ptr<messaging::MessageRoutesCore> routes_;
  std::unique_ptr<messaging::MessageRoutesService> routes_service_;
  // With builtin_messaging and peers (ADR 0013).
  std::unique_ptr<messaging::ReplicatedMessageTransport> shared_messages_;
  std::unique_ptr<messaging::PeerTransportCore> peer_transport_;
  std::unique_ptr<messaging::PeerTransportService> peer_transport_service_;
  // With message_transport.
  std::unique_ptr<messaging::GrpcMessageTransport> host_transport_;
  // Resource providers: the built-in files resources (with files_root), the hosts'.
  std::unique_ptr<resources::FilesResourceProvider> file_resources_;
  std::vector<std::unique_ptr<resources::GrpcResourceProvider>> resource_hosts_;
  // Every running turn past its deadline ends cancelled, checked every 100 ms of `clock_` until
  // `stopping_`.
  absl::Mutex deadlines_mu_;
  bool stopping_ ABSL_GUARDED_BY(deadlines_mu_) = false;
  std::thread deadlines_;
};

// EnvelopeServer::Build.
inline absl::StatusOr<std::unique_ptr<EnvelopeServer>> BuildEnvelopeServer(
    EnvelopeServerDeps deps, EnvelopeServerOptions options) {
  return EnvelopeServer::Build(std::move(deps), std::move(options));
}

}  // namespace sharedos::envelope::server

#endif  // SHAREDOS_ENVELOPE_SVC_SERVER_ENVELOPE_SERVER_H_
