#include "tests/conformance/deployment.h"

#include <atomic>
#include <chrono>
#include <fstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "audit_svc/client/audit_writer_factory.h"
#include "audit_svc/core/audit_log.h"
#include "audit_svc/server/audit_service.h"
#include "audit_svc/storage/sqlite_audit_store.h"
#include "authorizer_svc/core/authorizer_core.h"
#include "common/client/channel.h"
#include "common/client/health_check.h"
#include "common/server/auth.h"
#include "common/server/server_runner.h"
#include "common/status/status_macros.h"
#include "common/time/clock.h"
#include "common/time/rfc3339.h"
#include "envelope_svc/core/turn_engine.h"
#include "envelope_svc/messaging/local_transport.h"
#include "envelope_svc/providers/files/files_provider.h"
#include "envelope_svc/resources/files_resources.h"
#include "envelope_svc/server/routes_service.h"
#include "envelope_svc/tools/tool_registry.h"
#include "grantstore_svc/client/grpc_grant_store_client.h"
#include "grantstore_svc/core/credentials.h"
#include "grantstore_svc/core/grant_store_core.h"
#include "grantstore_svc/server/grantstore_service.h"
#include "grantstore_svc/storage/open_grant_store.h"
#include "grantstore_svc/storage/sqlite_grant_store.h"
#include "grpcpp/grpcpp.h"
#include "sharedos/authorizer/v1/authorizer.grpc.pb.h"
#include "sharedos/envelope/v1/envelope.grpc.pb.h"
#include "sharedos/envelope/v1/messaging.grpc.pb.h"
#include "tests/testing/deployment.h"
#include "tests/testing/postgres_cluster.h"
#include "tests/testing/process.h"

namespace sharedos::conformance {
namespace {

namespace gv1 = ::sharedos::grantstore::v1;
namespace av1 = ::sharedos::authorizer::v1;
namespace ev1 = ::sharedos::envelope::v1;
namespace env = ::sharedos::envelope;

constexpr char kAdminToken[] = "conformance-admin-token-0123456789";
constexpr char kHostToken[] = "conformance-host-token-0123456789";
constexpr char kLeaseSecret[] = "conformance-lease-secret-0123456789abcdef0123";
constexpr char kMcpSecret[] = "conformance-mcp-secret-0123456789abcdef0123456789";
constexpr char kOtherHostToken[] = "conformance-other-host-token-0123456789";
// world.json's "bob" and "orchestrator".
constexpr char kBobKey[] = "human:user-bob";
constexpr char kOrchestratorKey[] = "agent:agent-orchestrator";

// The conformance host's scope: the world's namespace; its owner and bob (the tenancy rows' other
// owner); as authorities, the owner and the orchestrator the agent's grants are derived under.
common::server::HostScope HostScopeOf(const DeploymentOptions& options) {
  common::server::HostScope scope;
  scope.namespaces = {options.namespace_id};
  scope.owners = {options.owner_key, std::string(kBobKey)};
  scope.authorities = {options.owner_key, std::string(kOrchestratorKey)};
  return scope;
}

// The other host: bob's alone.
common::server::HostScope OtherHostScopeOf(const DeploymentOptions& options) {
  common::server::HostScope scope;
  scope.namespaces = {options.namespace_id};
  scope.owners = {std::string(kBobKey)};
  return scope;
}

// Who may call either deployment: the admin, the services, and the conformance hosts, scoped to
// the world's namespace and owners.
testing::DeploymentCredentials Credentials(const DeploymentOptions& options) {
  testing::DeploymentCredentials credentials;
  credentials.admin_token = kAdminToken;
  credentials.host_token = kHostToken;
  credentials.host_name = "conformance-host";
  credentials.host_namespaces = {options.namespace_id};
  credentials.host_owners = HostScopeOf(options).owners;
  credentials.host_authorities = HostScopeOf(options).authorities;
  credentials.reviewer_principal = options.owner_key;
  credentials.lease_secret = kLeaseSecret;
  credentials.mcp_secret = kMcpSecret;
  credentials.other_host_token = kOtherHostToken;
  credentials.other_host_owners = OtherHostScopeOf(options).owners;
  return credentials;
}

std::string CredentialsJson(const DeploymentOptions& options) {
  return testing::CredentialsJson(Credentials(options));
}

std::unique_ptr<grpc::ClientContext> As(const std::string& token) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->AddMetadata("authorization", "Bearer " + token);
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  return context;
}

absl::Status FromGrpc(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

// The grant-material surfaces both deployments expose to the host credential: the control plane
// and the audit log (each expected to refuse a host).
std::vector<Surface> ControlPlaneSurfaces(gv1::GrantStore::StubInterface& grants,
                                          audit::v1::AuditLog::StubInterface& audit,
                                          const std::string& namespace_id,
                                          const std::string& token) {
  std::vector<Surface> surfaces;
  surfaces.push_back(
      {"GrantStore.ListGrants", [&grants, namespace_id, token]() -> absl::StatusOr<std::string> {
         gv1::ListGrantsRequest request;
         request.mutable_filter()->set_namespace_id(namespace_id);
         gv1::ListGrantsResponse response;
         RETURN_IF_ERROR(FromGrpc(grants.ListGrants(As(token).get(), request, &response)));
         return response.SerializeAsString();
       }});
  surfaces.push_back(
      {"GrantStore.LoadAuthority", [&grants, namespace_id, token]() -> absl::StatusOr<std::string> {
         gv1::LoadAuthorityRequest request;
         request.set_namespace_id(namespace_id);
         request.mutable_actor()->set_agent_id("agent-mallory");
         request.mutable_authority()->set_agent_id("agent-orchestrator");
         gv1::LoadAuthorityResponse response;
         RETURN_IF_ERROR(FromGrpc(grants.LoadAuthority(As(token).get(), request, &response)));
         return response.SerializeAsString();
       }});
  surfaces.push_back({"GrantStore.ListEscalations",
                      [&grants, namespace_id, token]() -> absl::StatusOr<std::string> {
                        gv1::ListEscalationsRequest request;
                        request.set_namespace_id(namespace_id);
                        gv1::ListEscalationsResponse response;
                        RETURN_IF_ERROR(
                            FromGrpc(grants.ListEscalations(As(token).get(), request, &response)));
                        return response.SerializeAsString();
                      }});
  surfaces.push_back(
      {"AuditLog.Query", [&audit, namespace_id, token]() -> absl::StatusOr<std::string> {
         audit::v1::QueryRequest request;
         request.mutable_filter()->set_namespace_id(namespace_id);
         audit::v1::QueryResponse response;
         RETURN_IF_ERROR(FromGrpc(audit.Query(As(token).get(), request, &response)));
         return response.SerializeAsString();
       }});
  return surfaces;
}

// ---------------------------------------------------------------- kernel

// The grant store as the authorizer reaches it, with outages switched on by the runner.
class FaultInjectingGrantStore final : public grantstore::client::GrantStoreClient {
 public:
  explicit FaultInjectingGrantStore(grantstore::client::GrantStoreClient& inner) : inner_(inner) {}
  void SetOutage(bool store, bool usage) {
    store_down_ = store;
    usage_down_ = usage;
  }

  absl::StatusOr<gv1::LoadAuthorityResponse> LoadAuthority(
      const gv1::LoadAuthorityRequest& request,
      const grantstore::client::CallOptions& options) override {
    if (store_down_) return Down();
    return inner_.LoadAuthority(request, options);
  }
  absl::StatusOr<gv1::ResolveGrantResponse> ResolveGrant(
      const gv1::ResolveGrantRequest& request,
      const grantstore::client::CallOptions& options) override {
    if (store_down_) return Down();
    return inner_.ResolveGrant(request, options);
  }
  absl::StatusOr<gv1::TryConsumeResponse> TryConsume(
      const gv1::TryConsumeRequest& request,
      const grantstore::client::CallOptions& options) override {
    if (store_down_ || usage_down_) return Down();
    return inner_.TryConsume(request, options);
  }
  absl::StatusOr<gv1::GetUsageResponse> GetUsage(
      const gv1::GetUsageRequest& request,
      const grantstore::client::CallOptions& options) override {
    if (store_down_ || usage_down_) return Down();
    return inner_.GetUsage(request, options);
  }
  absl::StatusOr<gv1::CheckRevocationsResponse> CheckRevocations(
      const gv1::CheckRevocationsRequest& request,
      const grantstore::client::CallOptions& options) override {
    if (store_down_) return Down();
    return inner_.CheckRevocations(request, options);
  }
  absl::StatusOr<gv1::RecordEscalationResponse> RecordEscalation(
      const gv1::RecordEscalationRequest& request,
      const grantstore::client::CallOptions& options) override {
    if (store_down_) return Down();
    return inner_.RecordEscalation(request, options);
  }

 private:
  static absl::Status Down() { return absl::UnavailableError("grantstore_svc unreachable"); }
  grantstore::client::GrantStoreClient& inner_;
  std::atomic<bool> store_down_{false};
  std::atomic<bool> usage_down_{false};
};

// The envelope's AuthorizerClient over the AuthorizerCore in this process. With
// `allow_everything` (the negative control) every decision is turned into an allow.
class DirectAuthorizerClient final : public sharedos::authorizer::client::AuthorizerClient {
 public:
  DirectAuthorizerClient(authorizer::core::AuthorizerCore& authorizer, bool allow_everything)
      : authorizer_(authorizer), allow_everything_(allow_everything) {}

  absl::StatusOr<av1::OpenTurnAuthorityResponse> OpenTurnAuthority(
      const av1::OpenTurnAuthorityRequest& request, absl::Duration) override {
    return authorizer_.OpenTurnAuthority(request);
  }
  absl::StatusOr<av1::CloseTurnAuthorityResponse> CloseTurnAuthority(
      const av1::CloseTurnAuthorityRequest& request, absl::Duration) override {
    return authorizer_.CloseTurnAuthority(request);
  }
  absl::StatusOr<av1::AuthorizeResponse> Authorize(const av1::AuthorizeRequest& request,
                                                   absl::Duration) override {
    absl::StatusOr<av1::AuthorizeResponse> response = authorizer_.Authorize(request);
    if (!allow_everything_ || !response.ok()) return response;
    if (response->has_discovery()) {
      response->mutable_discovery()->set_discoverable(true);
      response->mutable_discovery()->set_reason_code("allowed");
      response->mutable_discovery()->set_fail_closed(false);
    }
    protocol::v1::AuthorizationDecision* decision = response->mutable_decision();
    decision->set_allowed(true);
    decision->set_reason_code("allowed");
    decision->clear_required_authority();
    response->set_fail_closed(false);
    return response;
  }
  absl::StatusOr<av1::DiscoverResponse> Discover(const av1::DiscoverRequest& request,
                                                 absl::Duration) override {
    return authorizer_.Discover(request);
  }
  absl::StatusOr<av1::AdmitTurnResponse> AdmitTurn(const av1::AdmitTurnRequest& request,
                                                   absl::Duration) override {
    return authorizer_.AdmitTurn(request);
  }
  absl::StatusOr<av1::ReachResponse> Reach(const av1::ReachRequest& request,
                                           absl::Duration) override {
    return authorizer_.Reach(request);
  }
  absl::StatusOr<av1::RecordEscalationResponse> RecordEscalation(
      const av1::RecordEscalationRequest& request, absl::Duration) override {
    return authorizer_.RecordEscalation(request);
  }

 private:
  authorizer::core::AuthorizerCore& authorizer_;
  const bool allow_everything_;
};

// The host seat calling the engine directly (the adversary's scope: the conformance world).
class DirectHost final : public HostApi {
 public:
  DirectHost(env::core::TurnEngine& engine, env::messaging::LocalMessageTransport& transport,
             common::server::HostScope scope)
      : engine_(engine), routes_(transport), scope_(std::move(scope)) {}
  absl::StatusOr<ev1::OpenTurnResponse> OpenTurn(const ev1::OpenTurnRequest& request) override {
    return engine_.OpenTurn(request, scope_);
  }
  absl::StatusOr<ev1::InvokeToolResponse> InvokeTool(
      const ev1::InvokeToolRequest& request) override {
    return engine_.InvokeTool(request, scope_);
  }
  absl::StatusOr<ev1::FinishTurnResponse> FinishTurn(
      const ev1::FinishTurnRequest& request) override {
    return engine_.FinishTurn(request, scope_);
  }
  absl::StatusOr<ev1::GetTurnResponse> GetTurn(const ev1::GetTurnRequest& request) override {
    return engine_.GetTurn(request, scope_);
  }
  // The host side of the built-in transport: the same checks and scope as MessageRoutes.
  absl::StatusOr<ev1::RevokeRouteResponse> RevokeRoute(
      const ev1::RevokeRouteRequest& request) override {
    return routes_.RevokeRoute(request, scope_);
  }
  absl::StatusOr<ev1::ReceiveResponse> Receive(const ev1::ReceiveRequest& request) override {
    return routes_.Receive(request, scope_);
  }
  absl::StatusOr<ev1::UpdateToolNamespacesResponse> UpdateToolNamespaces(
      const ev1::UpdateToolNamespacesRequest& request) override {
    return engine_.UpdateToolNamespaces(request, scope_);
  }
  absl::StatusOr<ev1::SendMessageResponse> SendMessage(
      const ev1::SendMessageRequest& request) override {
    return engine_.SendMessage(request, scope_);
  }
  absl::StatusOr<ev1::InvokeResourceResponse> InvokeResource(
      const ev1::InvokeResourceRequest& request) override {
    return engine_.InvokeResource(request, scope_);
  }

 private:
  env::core::TurnEngine& engine_;
  env::messaging::MessageRoutesCore routes_;
  const common::server::HostScope scope_;
};

absl::Status Plant(grantstore::storage::GrantStore& store,
                   const protocol::v1::CapabilityGrant& grant) {
  ASSIGN_OR_RETURN(auto transaction, store.BeginWrite());
  RETURN_IF_ERROR(transaction->InsertGrant(grant));
  return transaction->Commit();
}

absl::Time WorldStart() {
  absl::Time start;
  std::string error;
  absl::ParseTime(absl::RFC3339_full, "2026-08-18T09:00:00Z", &start, &error);
  return start;
}

class KernelDeployment final : public Deployment {
 public:
  explicit KernelDeployment(DeploymentOptions options)
      : options_(std::move(options)), clock_(WorldStart()) {}

  ~KernelDeployment() override {
    for (auto* runner : {&grantstore_runner_, &audit_runner_}) {
      if (*runner) (*runner)->Shutdown();
    }
  }

  absl::Status Start() {
    ASSIGN_OR_RETURN(authenticator_,
                     common::server::Authenticator::FromJson(CredentialsJson(options_)));
    // Each writer as its own service principal (ADR 0014, T4).
    const testing::DeploymentCredentials credentials = Credentials(options_);
    for (const auto& [name, token] :
         {std::pair<std::string, std::string>{"authorizer", credentials.authorizer_token},
          {"envelope", credentials.envelope_token},
          {"grantstore", credentials.grantstore_token}}) {
      RETURN_IF_ERROR(testing::WriteFile(options_.dir + "/" + name + ".token", token + "\n"));
    }
    common::server::ServerOptions internal;
    internal.listen = false;

    ASSIGN_OR_RETURN(auto audit_store,
                     audit::storage::SqliteAuditStore::Open(options_.dir + "/audit.db", {}));
    audit_log_ = std::make_unique<audit::core::AuditLog>(std::move(audit_store), clock_,
                                                         audit::core::AuditLog::Options{});
    audit_service_ = std::make_unique<audit::server::AuditService>(*audit_log_, *authenticator_);
    ASSIGN_OR_RETURN(audit_runner_,
                     common::server::ServerRunner::Start(internal, {audit_service_.get()}));
    auto writer = [&](const std::string& name) {
      audit::client::AuditWriterConfig config;
      config.mode = "remote";
      config.token_file = options_.dir + "/" + name + ".token";
      config.outbox_path = options_.dir + "/" + name + ".outbox";
      return audit::client::NewAuditWriterOverChannel(config, audit_runner_->InProcessChannel());
    };
    ASSIGN_OR_RETURN(grantstore_audit_, writer("grantstore"));
    ASSIGN_OR_RETURN(authorizer_audit_, writer("authorizer"));
    ASSIGN_OR_RETURN(envelope_audit_, writer("envelope"));

    grantstore::storage::SqliteGrantStore::Options store_options;
    store_options.path = options_.dir + "/grants.db";
    ASSIGN_OR_RETURN(grant_store_,
                     grantstore::storage::SqliteGrantStore::Open(store_options, clock_));
    grantstore_core_ = std::make_unique<grantstore::core::GrantStoreCore>(
        *grant_store_, *grantstore_audit_, clock_);
    // Credentials issued through the control plane authenticate, as in grantstore_svc.
    credential_source_ = std::make_unique<grantstore::core::StoreCredentialSource>(*grant_store_);
    authenticator_->AttachSource(credential_source_.get());
    grantstore_service_ =
        std::make_unique<grantstore::server::GrantStoreService>(*grantstore_core_, *authenticator_);
    ASSIGN_OR_RETURN(grantstore_runner_,
                     common::server::ServerRunner::Start(internal, {grantstore_service_.get()}));
    grantstore_client_ = std::make_unique<grantstore::client::GrpcGrantStoreClient>(
        grantstore_runner_->InProcessChannel(), credentials.authorizer_token);
    faults_ = std::make_unique<FaultInjectingGrantStore>(*grantstore_client_);
    authorizer_core_ = std::make_unique<authorizer::core::AuthorizerCore>(
        *faults_, *authorizer_audit_, clock_, kLeaseSecret,
        authorizer::core::AuthorizerCore::Options{});
    authorizer_client_ =
        std::make_unique<DirectAuthorizerClient>(*authorizer_core_, options_.allow_everything);

    std::vector<std::string> paths;
    for (const std::string& registry : options_.registries) {
      paths.push_back(testing::RunfilePath(registry));
    }
    ASSIGN_OR_RETURN(registry_, env::tools::ToolRegistry::LoadFiles(paths));
    env::files::FilesProvider::Options files_options;
    files_options.root = options_.files_root;
    for (const auto& tool : registry_->tools()) {
      if (tool->provider_binding().has_files()) files_options.tools.push_back(tool->definition());
    }
    ASSIGN_OR_RETURN(files_, env::files::FilesProvider::Create(std::move(files_options), clock_));
    notion_ =
        std::make_unique<NotionFixture>(options_.notion_provider_id, options_.notion_definition);
    if (options_.broker_listing_fails) notion_->FailListing();
    env::tools::AttachedProviders with_broker;
    with_broker.files = files_.get();
    with_broker.hosts[options_.notion_provider_id] = notion_.get();
    env::tools::AttachedProviders without_broker;
    without_broker.files = files_.get();
    // Each envelope with its built-in transport, as envelope_svc serves it.
    messages_ = std::make_unique<env::messaging::LocalMessageTransport>(clock_);
    messages_unattached_ = std::make_unique<env::messaging::LocalMessageTransport>(clock_);
    env::core::TurnEngine::Options engine_options;
    engine_options.message_transport = messages_.get();
    // The files plane's workspaces as resources, as envelope_svc serves them with --files_root.
    file_resources_ = std::make_unique<env::resources::FilesResourceProvider>(*files_);
    engine_options.resource_providers["files"] = file_resources_.get();
    engine_ = std::make_unique<env::core::TurnEngine>(*authorizer_client_, *registry_, with_broker,
                                                      *envelope_audit_, clock_, engine_options);
    engine_options.message_transport = messages_unattached_.get();
    engine_unattached_ = std::make_unique<env::core::TurnEngine>(
        *authorizer_client_, *registry_, without_broker, *envelope_audit_, clock_, engine_options);
    const common::server::HostScope scope = HostScopeOf(options_);
    host_ = std::make_unique<DirectHost>(*engine_, *messages_, scope);
    host_unattached_ =
        std::make_unique<DirectHost>(*engine_unattached_, *messages_unattached_, scope);
    other_host_ = std::make_unique<DirectHost>(*engine_, *messages_, OtherHostScopeOf(options_));
    grants_stub_ = gv1::GrantStore::NewStub(grantstore_runner_->InProcessChannel());
    audit_stub_ = audit::v1::AuditLog::NewStub(audit_runner_->InProcessChannel());
    return absl::OkStatus();
  }

  std::string column() const override { return "kernel"; }
  HostApi& host(bool broker) override { return broker ? *host_ : *host_unattached_; }
  HostApi& other_host() override { return *other_host_; }
  gv1::GrantStore::StubInterface& grants() override { return *grants_stub_; }
  audit::v1::AuditLog::StubInterface& audit() override { return *audit_stub_; }
  std::string admin_token() const override { return kAdminToken; }
  std::string host_token() const override { return kHostToken; }
  absl::Time Now() override { return clock_.Now(); }
  void Tick() override { clock_.AdvanceTime(absl::Seconds(1)); }
  absl::Status PassBeyond(absl::Time instant) override {
    if (clock_.Now() <= instant) clock_.SetTime(instant + absl::Seconds(1));
    return absl::OkStatus();
  }
  absl::Status Outage(const std::string& what) override {
    if (what == "usage") {
      faults_->SetOutage(false, true);
    } else if (what == "grantstore") {
      faults_->SetOutage(true, true);
    } else {
      return absl::InvalidArgumentError(absl::StrCat("outage: unknown \"", what, "\""));
    }
    return absl::OkStatus();
  }
  absl::Status Recover() override {
    faults_->SetOutage(false, false);
    return absl::OkStatus();
  }
  NotionFixture& notion() override { return *notion_; }
  absl::Status PlantGrant(const protocol::v1::CapabilityGrant& grant) override {
    return Plant(*grant_store_, grant);
  }
  std::vector<Surface> Surfaces(const std::string& token) override {
    return ControlPlaneSurfaces(*grants_stub_, *audit_stub_, options_.namespace_id, token);
  }

 private:
  const DeploymentOptions options_;
  common::SimulatedClock clock_;
  std::unique_ptr<common::server::Authenticator> authenticator_;
  std::unique_ptr<audit::core::AuditLog> audit_log_;
  std::unique_ptr<audit::server::AuditService> audit_service_;
  std::unique_ptr<common::server::ServerRunner> audit_runner_;
  std::unique_ptr<audit::client::AuditWriter> grantstore_audit_, authorizer_audit_, envelope_audit_;
  std::unique_ptr<grantstore::storage::SqliteGrantStore> grant_store_;
  std::unique_ptr<grantstore::core::GrantStoreCore> grantstore_core_;
  std::unique_ptr<grantstore::server::GrantStoreService> grantstore_service_;
  std::unique_ptr<common::server::ServerRunner> grantstore_runner_;
  std::unique_ptr<grantstore::client::GrpcGrantStoreClient> grantstore_client_;
  std::unique_ptr<FaultInjectingGrantStore> faults_;
  std::unique_ptr<authorizer::core::AuthorizerCore> authorizer_core_;
  std::unique_ptr<DirectAuthorizerClient> authorizer_client_;
  std::unique_ptr<env::tools::ToolRegistry> registry_;
  std::unique_ptr<env::files::FilesProvider> files_;
  std::unique_ptr<env::resources::FilesResourceProvider> file_resources_;
  std::unique_ptr<NotionFixture> notion_;
  std::unique_ptr<env::core::TurnEngine> engine_, engine_unattached_;
  std::unique_ptr<DirectHost> host_, host_unattached_, other_host_;
  std::unique_ptr<grantstore::core::StoreCredentialSource> credential_source_;
  std::unique_ptr<env::messaging::LocalMessageTransport> messages_;
  std::unique_ptr<env::messaging::LocalMessageTransport> messages_unattached_;
  std::unique_ptr<gv1::GrantStore::Stub> grants_stub_;
  std::unique_ptr<audit::v1::AuditLog::Stub> audit_stub_;
};

// ---------------------------------------------------------------- processes

class GrpcHost final : public HostApi {
 public:
  GrpcHost(const std::shared_ptr<grpc::Channel>& channel, std::string token)
      : stub_(ev1::Envelope::NewStub(channel)),
        routes_(ev1::MessageRoutes::NewStub(channel)),
        token_(std::move(token)) {}
  absl::StatusOr<ev1::OpenTurnResponse> OpenTurn(const ev1::OpenTurnRequest& request) override {
    ev1::OpenTurnResponse response;
    RETURN_IF_ERROR(FromGrpc(stub_->OpenTurn(As(token_).get(), request, &response)));
    return response;
  }
  absl::StatusOr<ev1::InvokeToolResponse> InvokeTool(
      const ev1::InvokeToolRequest& request) override {
    ev1::InvokeToolResponse response;
    RETURN_IF_ERROR(FromGrpc(stub_->InvokeTool(As(token_).get(), request, &response)));
    return response;
  }
  absl::StatusOr<ev1::FinishTurnResponse> FinishTurn(
      const ev1::FinishTurnRequest& request) override {
    ev1::FinishTurnResponse response;
    RETURN_IF_ERROR(FromGrpc(stub_->FinishTurn(As(token_).get(), request, &response)));
    return response;
  }
  absl::StatusOr<ev1::GetTurnResponse> GetTurn(const ev1::GetTurnRequest& request) override {
    ev1::GetTurnResponse response;
    RETURN_IF_ERROR(FromGrpc(stub_->GetTurn(As(token_).get(), request, &response)));
    return response;
  }
  absl::StatusOr<ev1::RevokeRouteResponse> RevokeRoute(
      const ev1::RevokeRouteRequest& request) override {
    ev1::RevokeRouteResponse response;
    RETURN_IF_ERROR(FromGrpc(routes_->RevokeRoute(As(token_).get(), request, &response)));
    return response;
  }
  absl::StatusOr<ev1::ReceiveResponse> Receive(const ev1::ReceiveRequest& request) override {
    ev1::ReceiveResponse response;
    RETURN_IF_ERROR(FromGrpc(routes_->Receive(As(token_).get(), request, &response)));
    return response;
  }
  absl::StatusOr<ev1::UpdateToolNamespacesResponse> UpdateToolNamespaces(
      const ev1::UpdateToolNamespacesRequest& request) override {
    ev1::UpdateToolNamespacesResponse response;
    RETURN_IF_ERROR(FromGrpc(stub_->UpdateToolNamespaces(As(token_).get(), request, &response)));
    return response;
  }
  absl::StatusOr<ev1::SendMessageResponse> SendMessage(
      const ev1::SendMessageRequest& request) override {
    ev1::SendMessageResponse response;
    RETURN_IF_ERROR(FromGrpc(stub_->SendMessage(As(token_).get(), request, &response)));
    return response;
  }
  absl::StatusOr<ev1::InvokeResourceResponse> InvokeResource(
      const ev1::InvokeResourceRequest& request) override {
    ev1::InvokeResourceResponse response;
    RETURN_IF_ERROR(FromGrpc(stub_->InvokeResource(As(token_).get(), request, &response)));
    return response;
  }

 private:
  std::unique_ptr<ev1::Envelope::Stub> stub_;
  std::unique_ptr<ev1::MessageRoutes::Stub> routes_;
  const std::string token_;
};

// The four services as processes (tests/testing/deployment.h), with a second envelope without
// the broker, and the broker (the notion fixture) served from this process.
class ProcessDeployment final : public Deployment {
 public:
  explicit ProcessDeployment(DeploymentOptions options) : options_(std::move(options)) {}

  ~ProcessDeployment() override {
    processes_.reset();
    if (notion_runner_) notion_runner_->Shutdown();
    postgres_.cluster.reset();
  }

  absl::Status Start() {
    notion_ =
        std::make_unique<NotionFixture>(options_.notion_provider_id, options_.notion_definition);
    ASSIGN_OR_RETURN(notion_runner_, common::server::ServerRunner::Start({}, {notion_.get()}));

    testing::FourProcessDeployment::Options options;
    options.dir = options_.dir;
    std::vector<std::string> registries;
    for (const std::string& registry : options_.registries) {
      registries.push_back(testing::RunfilePath(registry));
    }
    options.registry = absl::StrJoin(registries, ",");
    options.files_root = options_.files_root;
    options.credentials = Credentials(options_);
    options.providers = {{options_.notion_provider_id, notion_runner_->address()}};
    options.provider_token = true;
    options.unattached_envelope = true;
    options.mcp = options_.mcp;
    // The calls between services get 10-20 s instead of 2 (the flags' default; the envelope's
    // call holds the authorizer's, so it gets more): a CLI column runs a real CLI beside the four
    // services on two cores, and a grant store slowed past 2 s by that load ended a turn
    // authority_unavailable, which no row declares. No row stalls a service (an outage stops its
    // process, which fails fast), so no row waits on these deadlines.
    options.envelope_args.push_back("--authorizer_timeout=20s");
    options.authorizer_args.push_back("--grantstore_timeout=10s");
    if (options_.replicated) {
      // Two replicas of every service on one PostgreSQL database (issue 18).
      ASSIGN_OR_RETURN(postgres_, testing::CreateClusterWithDatabase("conformance"));
      options.database = postgres_.uri;
      options.replicate_all = true;
    }
    absl::StatusOr<std::unique_ptr<testing::FourProcessDeployment>> started =
        testing::FourProcessDeployment::Start(std::move(options));
    if (!started.ok()) {
      // An envelope without the MCP front door refuses its flags or never reports its URL.
      const absl::string_view message = started.status().message();
      if (options_.mcp &&
          (absl::StrContains(message, "mcp_") || absl::StrContains(message, "mcp listening"))) {
        return absl::UnimplementedError(
            "MCP front door (issue 8): envelope_svc serves no MCP endpoint");
      }
      return started.status();
    }
    processes_ = *std::move(started);

    // Replicated: every call goes round-robin over a service's replicas (a turn's calls reach
    // the envelope that does not own it half of the time, and are forwarded).
    ASSIGN_OR_RETURN(auto envelope, Channel(processes_->target(Service::kEnvelope)));
    host_ = std::make_unique<GrpcHost>(envelope, kHostToken);
    other_host_ = std::make_unique<GrpcHost>(envelope, kOtherHostToken);
    ASSIGN_OR_RETURN(auto unattached, Channel(processes_->address(Service::kUnattachedEnvelope)));
    host_unattached_ = std::make_unique<GrpcHost>(unattached, kHostToken);
    ASSIGN_OR_RETURN(auto grants, Channel(processes_->target(Service::kGrantstore)));
    grants_stub_ = gv1::GrantStore::NewStub(grants);
    ASSIGN_OR_RETURN(auto audit, Channel(processes_->target(Service::kAudit)));
    audit_stub_ = audit::v1::AuditLog::NewStub(audit);
    ASSIGN_OR_RETURN(auto authorizer, Channel(processes_->target(Service::kAuthorizer)));
    authorizer_stub_ = av1::Authorizer::NewStub(authorizer);
    callers_of_the_grant_store_ = {authorizer, envelope, audit};
    return absl::OkStatus();
  }

  std::string column() const override { return options_.replicated ? "grpc-replicated" : "grpc"; }
  HostApi& host(bool broker) override { return broker ? *host_ : *host_unattached_; }
  HostApi& other_host() override { return *other_host_; }
  gv1::GrantStore::StubInterface& grants() override { return *grants_stub_; }
  audit::v1::AuditLog::StubInterface& audit() override { return *audit_stub_; }
  std::string admin_token() const override { return kAdminToken; }
  std::string host_token() const override { return kHostToken; }
  absl::Time Now() override { return absl::Now(); }
  void Tick() override {}
  absl::Status PassBeyond(absl::Time instant) override {
    // Waiting for the real clock to pass a declared instant (no condition to poll but time).
    const absl::Time limit = absl::Now() + absl::Seconds(60);
    while (absl::Now() <= instant) {
      if (absl::Now() > limit) return absl::DeadlineExceededError("clock did not pass instant");
      absl::SleepFor(absl::Milliseconds(50));
    }
    return absl::OkStatus();
  }
  absl::Status Outage(const std::string& what) override {
    if (what != "usage" && what != "grantstore") {
      return absl::InvalidArgumentError(absl::StrCat("outage: unknown \"", what, "\""));
    }
    // Usage counting lives in grantstore_svc: either outage stops the process — every replica
    // of it — however it exits (the row grades what the others recorded).
    for (Service grantstore : GrantStores()) {
      if (processes_->running(grantstore)) processes_->Stop(grantstore).IgnoreError();
    }
    return absl::OkStatus();
  }
  absl::Status Recover() override {
    for (Service grantstore : GrantStores()) {
      if (!processes_->running(grantstore)) RETURN_IF_ERROR(processes_->Restart(grantstore));
    }
    // The grant store is back, but the services that call it may not have found it yet (each
    // reports itself ready only once its dependencies answer, common/server/readiness.h): the
    // next row starts when they serve again, not while their channels are still reconnecting.
    const absl::Time limit = absl::Now() + absl::Seconds(120);
    for (const std::shared_ptr<grpc::Channel>& channel : callers_of_the_grant_store_) {
      while (true) {
        absl::StatusOr<common::client::HealthStatus> health =
            common::client::CheckHealth(channel, "", absl::Seconds(2));
        if (health.ok() && *health == common::client::HealthStatus::kServing) break;
        if (absl::Now() > limit) {
          return absl::DeadlineExceededError(
              "recover: a service that calls the grant store did not serve again within 120 s");
        }
        absl::SleepFor(absl::Milliseconds(100));
      }
    }
    return absl::OkStatus();
  }
  NotionFixture& notion() override { return *notion_; }
  absl::Status PlantGrant(const protocol::v1::CapabilityGrant& grant) override {
    // The grant store's SQLite file, or the PostgreSQL database its replicas share.
    ASSIGN_OR_RETURN(auto store, grantstore::storage::OpenGrantStore(processes_->grantstore_db()));
    return Plant(*store, grant);
  }
  std::vector<Surface> Surfaces(const std::string& token) override {
    std::vector<Surface> surfaces =
        ControlPlaneSurfaces(*grants_stub_, *audit_stub_, options_.namespace_id, token);
    surfaces.push_back(
        {"Authorizer.OpenTurnAuthority", [this, token]() -> absl::StatusOr<std::string> {
           av1::OpenTurnAuthorityRequest request;
           request.set_turn_id("turn-surface-probe");
           request.mutable_context()->set_namespace_id(options_.namespace_id);
           av1::OpenTurnAuthorityResponse response;
           RETURN_IF_ERROR(
               FromGrpc(authorizer_stub_->OpenTurnAuthority(As(token).get(), request, &response)));
           return response.SerializeAsString();
         }});
    return surfaces;
  }
  std::string envelope_address() const override { return processes_->envelope_address(); }

 private:
  using Service = testing::FourProcessDeployment::Service;

  std::vector<Service> GrantStores() const {
    if (!options_.replicated) return {Service::kGrantstore};
    return {Service::kGrantstore, Service::kGrantstoreReplica};
  }
  // A channel spreading calls over every address `target` names (common/client/channel.h).
  static absl::StatusOr<std::shared_ptr<grpc::Channel>> Channel(const std::string& target) {
    return common::client::NewChannel(target, common::client::ChannelTls{}, "target");
  }

  const DeploymentOptions options_;
  testing::OwnedDatabase postgres_;  // replicated only
  std::unique_ptr<NotionFixture> notion_;
  std::unique_ptr<common::server::ServerRunner> notion_runner_;
  std::unique_ptr<testing::FourProcessDeployment> processes_;
  std::unique_ptr<GrpcHost> host_, host_unattached_, other_host_;
  std::unique_ptr<gv1::GrantStore::Stub> grants_stub_;
  std::unique_ptr<audit::v1::AuditLog::Stub> audit_stub_;
  std::unique_ptr<av1::Authorizer::Stub> authorizer_stub_;
  // The authorizer, the envelope and the audit log: each calls the grant store (Recover).
  std::vector<std::shared_ptr<grpc::Channel>> callers_of_the_grant_store_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Deployment>> StartKernelDeployment(
    const DeploymentOptions& options) {
  auto deployment = std::make_unique<KernelDeployment>(options);
  RETURN_IF_ERROR(deployment->Start());
  return deployment;
}

absl::StatusOr<std::unique_ptr<Deployment>> StartProcessDeployment(
    const DeploymentOptions& options) {
  auto deployment = std::make_unique<ProcessDeployment>(options);
  RETURN_IF_ERROR(deployment->Start());
  return deployment;
}

}  // namespace sharedos::conformance
