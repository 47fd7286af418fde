#include "envelope_svc/server/envelope_server.h"

#include <cstdio>
#include <functional>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/status/status_macros.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"

namespace sharedos::envelope::server {
namespace {

// What every call to a host's provider or transport carries: "authorization: Bearer <token>"
// (nothing without a token).
std::function<void(grpc::ClientContext&)> ProviderCredential(const std::string& token) {
  if (token.empty()) return nullptr;
  return [header = absl::StrCat("Bearer ", token)](grpc::ClientContext& context) {
    context.AddMetadata("authorization", header);
  };
}

}  // namespace

absl::Status CheckTurnOptions(const core::TurnEngine::Options& options) {
  if (options.drain_grace < absl::ZeroDuration() || options.drain_grace > absl::Seconds(600)) {
    return absl::InvalidArgumentError("--drain_grace: must be 0s..600s");
  }
  if (options.default_max_steps < 1 || options.default_max_steps > 1000) {
    return absl::InvalidArgumentError("--default_max_steps: must be 1..1000");
  }
  if (options.default_timeout_ms < 1 || options.default_timeout_ms > 600000) {
    return absl::InvalidArgumentError("--default_timeout_ms: must be 1..600000");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<EnvelopeServer>> EnvelopeServer::Build(
    EnvelopeServerDeps deps, EnvelopeServerOptions options) {
  RETURN_IF_ERROR(CheckTurnOptions(options.engine));
  std::unique_ptr<EnvelopeServer> server(new EnvelopeServer(std::move(deps)));
  RETURN_IF_ERROR(server->LoadTools(options));
  RETURN_IF_ERROR(server->AttachProviders(options));
  RETURN_IF_ERROR(server->JoinReplicas(options));
  RETURN_IF_ERROR(server->BindFrontDoor(options));
  RETURN_IF_ERROR(server->OpenJournal(options));
  RETURN_IF_ERROR(server->AttachMessaging(options));
  RETURN_IF_ERROR(server->AttachResourceProviders(options));
  RETURN_IF_ERROR(server->StartEngine(std::move(options.engine)));
  return server;
}

absl::Status EnvelopeServer::AttachMessaging(EnvelopeServerOptions& options) {
  if (options.builtin_messaging && !options.message_transport.empty()) {
    return absl::InvalidArgumentError(
        "--message_transport: a host transport replaces the built-in one; give "
        "--builtin_messaging=false");
  }
  if (options.builtin_messaging) {
    messages_ = std::make_unique<messaging::LocalMessageTransport>(clock_);
    routes_ = std::make_unique<messaging::MessageRoutesCore>(*messages_);
    routes_service_ = std::make_unique<messaging::MessageRoutesService>(*routes_, authenticator_,
                                                                        forwarder_.get());
    options.engine.message_transport = messages_.get();
    RETURN_IF_ERROR(ShareMessaging(options));
  }
  if (!options.message_transport.empty()) {
    messaging::GrpcMessageTransport::Options transport_options;
    transport_options.prepare_context = ProviderCredential(options.provider_token);
    absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = common::client::NewChannel(
        options.message_transport, options.provider_tls, "--message_transport");
    if (!channel.ok()) return channel.status();
    host_transport_ = std::make_unique<messaging::GrpcMessageTransport>(
        v1::MessageTransport::NewStub(*std::move(channel)), std::move(transport_options));
    options.engine.message_transport = host_transport_.get();
  }
  return absl::OkStatus();
}

absl::Status EnvelopeServer::ShareMessaging(EnvelopeServerOptions& options) {
  if (forwarder_ == nullptr || forwarder_->replicas().size() < 2) return absl::OkStatus();
  if (options.replica.token.empty()) {
    return absl::InvalidArgumentError(
        "--replica_token_file: required with --replica_peers and the built-in messaging (a "
        "world's messages live at one replica, which its peers reach with this service "
        "credential; ADR 0013)");
  }
  std::map<std::string, std::unique_ptr<messaging::MessageTransportInterface>> peers;
  for (const std::string& name : forwarder_->replicas()) {
    if (name == forwarder_->name()) continue;
    messaging::GrpcMessageTransport::Options transport_options;
    transport_options.prepare_context = ProviderCredential(options.replica.token);
    peers[name] = std::make_unique<messaging::GrpcMessageTransport>(
        v1::MessageTransport::NewStub(forwarder_->channel(name)), std::move(transport_options));
  }
  shared_messages_ = std::make_unique<messaging::ReplicatedMessageTransport>(
      forwarder_->name(), *messages_, std::move(peers));
  peer_transport_ = std::make_unique<messaging::PeerTransportCore>(*messages_);
  peer_transport_service_ =
      std::make_unique<messaging::PeerTransportService>(*peer_transport_, authenticator_);
  options.engine.message_transport = shared_messages_.get();
  return absl::OkStatus();
}

absl::Status EnvelopeServer::AttachResourceProviders(EnvelopeServerOptions& options) {
  resources::ResourceProviders& attached = options.engine.resource_providers;
  for (const HostResourceProvider& host : options.resource_providers) {
    if (attached.count(host.resource_namespace) > 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--resource_provider: \"", host.resource_namespace, "\" given twice"));
    }
    resources::GrpcResourceProvider::Options provider_options;
    provider_options.prepare_context = ProviderCredential(options.provider_token);
    absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
        common::client::NewChannel(host.target, options.provider_tls, "--resource_provider");
    if (!channel.ok()) return channel.status();
    resource_hosts_.push_back(std::make_unique<resources::GrpcResourceProvider>(
        v1::ResourceProvider::NewStub(*std::move(channel)), std::move(provider_options)));
    attached[host.resource_namespace] = resource_hosts_.back().get();
  }
  if (files_ != nullptr && attached.count("files") == 0) {
    file_resources_ = std::make_unique<resources::FilesResourceProvider>(*files_);
    attached["files"] = file_resources_.get();
  }
  return absl::OkStatus();
}

std::vector<grpc::Service*> EnvelopeServer::services() {
  std::vector<grpc::Service*> services = {service_.get()};
  if (routes_service_ != nullptr) services.push_back(routes_service_.get());
  if (peer_transport_service_ != nullptr) services.push_back(peer_transport_service_.get());
  return services;
}

std::unique_ptr<grpc::Service> EnvelopeServer::NewRoutesService() {
  if (routes_ == nullptr) return nullptr;
  return std::make_unique<messaging::MessageRoutesService>(*routes_, authenticator_,
                                                           forwarder_.get());
}

EnvelopeServer::EnvelopeServer(EnvelopeServerDeps deps)
    : authorizer_(std::move(deps.authorizer)),
      audit_(std::move(deps.audit)),
      authenticator_(deps.authenticator),
      clock_(deps.clock) {}

EnvelopeServer::~EnvelopeServer() {
  if (deadlines_.joinable()) {
    {
      absl::MutexLock lock(&deadlines_mu_);
      stopping_ = true;
    }
    deadlines_.join();
  }
  StopSideListeners();
}

absl::Status EnvelopeServer::LoadTools(const EnvelopeServerOptions& options) {
  if (options.registry_files.empty()) return absl::InvalidArgumentError("--registry: required");
  absl::StatusOr<std::unique_ptr<tools::ToolRegistry>> registry =
      tools::ToolRegistry::LoadFiles(options.registry_files);
  if (!registry.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--registry: ", registry.status().message()));
  }
  registry_ = *std::move(registry);
  return absl::OkStatus();
}

absl::Status EnvelopeServer::AttachProviders(const EnvelopeServerOptions& options) {
  if (!options.files_root.empty()) {
    files::FilesProvider::Options files_options;
    files_options.root = options.files_root;
    files_options.max_owner_bytes = options.files_max_owner_bytes;
    files_options.max_owner_files = options.files_max_owner_files;
    for (const auto& tool : registry_->tools()) {
      if (tool->provider_binding().has_files()) files_options.tools.push_back(tool->definition());
    }
    absl::StatusOr<std::unique_ptr<files::FilesProvider>> created =
        files::FilesProvider::Create(std::move(files_options), clock_);
    if (!created.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--files_root: ", created.status().message()));
    }
    files_ = *std::move(created);
    attached_.files = files_.get();
  }
  for (const HostProvider& host : options.providers) {
    providers::GrpcToolProvider::Options provider_options;
    provider_options.prepare_context = ProviderCredential(options.provider_token);
    absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
        common::client::NewChannel(host.target, options.provider_tls, "--provider");
    if (!channel.ok()) return channel.status();
    hosts_.push_back(std::make_unique<providers::GrpcToolProvider>(
        host.id, v1::ToolProvider::NewStub(*std::move(channel)), std::move(provider_options)));
    attached_.hosts[host.id] = hosts_.back().get();
  }
  return absl::OkStatus();
}

absl::Status EnvelopeServer::JoinReplicas(EnvelopeServerOptions& options) {
  drain_timeout_ = options.drain_timeout;
  if (options.replica.name.empty()) {
    if (!options.replica.peers.empty() || !options.replica.mcp_peers.empty()) {
      return absl::InvalidArgumentError("--replica_peers: needs --replica_name");
    }
    return absl::OkStatus();
  }
  if (options.drain_timeout < absl::ZeroDuration() || options.drain_timeout > absl::Seconds(600)) {
    return absl::InvalidArgumentError("--replica_drain_timeout: must be 0s..600s");
  }
  absl::StatusOr<std::unique_ptr<TurnForwarder>> forwarder = TurnForwarder::Create(options.replica);
  if (!forwarder.ok()) return forwarder.status();
  forwarder_ = *std::move(forwarder);
  options.engine.replica_name = forwarder_->name();
  if (options.mcp.has_value()) {
    options.mcp->server.forward = [forwarder = forwarder_.get()](
                                      const std::string& turn_id,
                                      const common::http::Request& request,
                                      common::http::Response& response) {
      return forwarder->ProxyMcp(turn_id, request, response);
    };
  }
  return absl::OkStatus();
}

void EnvelopeServer::Drain() {
  if (forwarder_ == nullptr || engine_ == nullptr) return;
  engine_->StopAdmitting();
  std::fprintf(stderr, "envelope: draining %zu open turn(s)\n", engine_->running_turns());
  const size_t running = engine_->AwaitNoneRunning(drain_timeout_);
  std::fprintf(stderr, "envelope: drained (%zu turn(s) still open)\n", running);
}

absl::Status EnvelopeServer::BindFrontDoor(const EnvelopeServerOptions& options) {
  if (!options.mcp.has_value()) return absl::OkStatus();
  if (options.mcp->secret.size() < mcp::ExecutionTokenCodec::kMinSecretBytes) {
    return absl::InvalidArgumentError("--mcp_secret_file: the secret must hold at least 32 bytes");
  }
  absl::StatusOr<std::unique_ptr<mcp::McpServer>> bound = mcp::McpServer::Bind(options.mcp->server);
  if (!bound.ok()) return bound.status();
  mcp_ = *std::move(bound);
  mcp_tokens_ = std::make_unique<mcp::ExecutionTokenCodec>(options.mcp->secret);
  return absl::OkStatus();
}

absl::Status EnvelopeServer::OpenJournal(const EnvelopeServerOptions& options) {
  if (options.turn_journal.empty()) return absl::OkStatus();
  absl::StatusOr<std::unique_ptr<core::TurnJournal>> journal =
      core::TurnJournal::Open(options.turn_journal, options.turn_journal_fsync);
  if (!journal.ok()) {
    return absl::UnavailableError(absl::StrCat("--turn_journal: ", journal.status().message()));
  }
  journal_ = *std::move(journal);
  return absl::OkStatus();
}

absl::Status EnvelopeServer::StartEngine(core::TurnEngine::Options engine_options) {
  if (mcp_ != nullptr) {
    engine_options.mcp_url = mcp_->url();
    engine_options.mcp_tokens = mcp_tokens_.get();
  }
  engine_options.journal = journal_.get();
  engine_ = std::make_unique<core::TurnEngine>(*authorizer_, *registry_, attached_, *audit_, clock_,
                                               std::move(engine_options));
  // The turns the last process left open end before anyone is served (ADR 0009).
  absl::StatusOr<int> recovered = engine_->RecoverInterrupted();
  if (!recovered.ok()) {
    return absl::UnavailableError(
        absl::StrCat("--turn_journal: open turns not ended: ", recovered.status().message()));
  }
  if (*recovered > 0) {
    std::fprintf(stderr,
                 "envelope: ended %d turn(s) left open by the last stop (operation_aborted)\n",
                 *recovered);
  }
  if (mcp_ != nullptr) mcp_->Start(*engine_, *mcp_tokens_, clock_);
  service_ = std::make_unique<EnvelopeService>(*engine_, authenticator_, forwarder_.get());
  deadlines_ = std::thread([this] {
    // Waits 100 ms of the clock; true once stopping.
    auto stopped = [this] {
      absl::MutexLock lock(&deadlines_mu_);
      auto stopping = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(deadlines_mu_) { return stopping_; };
      return clock_.AwaitWithTimeout(&deadlines_mu_, absl::Condition(&stopping),
                                     absl::Milliseconds(100));
    };
    while (!stopped()) engine_->CancelExpired();
  });
  return absl::OkStatus();
}

std::vector<std::pair<std::string, std::string>> EnvelopeServer::side_listeners() const {
  if (mcp_ == nullptr) return {};
  return {{"mcp", mcp_->listen_url()}};
}

void EnvelopeServer::StopSideListeners() {
  if (mcp_ != nullptr) mcp_->Shutdown();
}

}  // namespace sharedos::envelope::server
