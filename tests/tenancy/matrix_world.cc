#include "tests/tenancy/matrix_world.h"

#include <sys/stat.h>

#include <tuple>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "audit_svc/core/checkpoint_testing.h"
#include "common/status/status_macros.h"
#include "httplib.h"
#include "tests/testing/demo_world.h"
#include "tests/testing/process.h"

namespace sharedos::tenancy {
namespace {

namespace pb = ::sharedos::protocol::v1;
namespace gs = ::sharedos::grantstore::v1;
namespace ev1 = ::sharedos::envelope::v1;
namespace av1 = ::sharedos::audit::v1;
namespace demo = ::sharedos::testing::demo;
using Service = ::sharedos::testing::FourProcessDeployment::Service;

constexpr int kCallSeconds = 10;

absl::Status MakeDir(const std::string& path) {
  if (mkdir(path.c_str(), 0700) == 0 || errno == EEXIST) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("cannot create ", path));
}

// A gRPC error as an absl::Status naming `what`.
absl::Status Failed(const std::string& what, const grpc::Status& status) {
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      absl::StrCat(what, ": ", status.error_message()));
}

const char* CodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "CANCELLED";
    case grpc::StatusCode::UNKNOWN:
      return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED:
      return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL:
      return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS:
      return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    default:
      return "UNKNOWN_CODE";
  }
}

pb::Address Agent(const std::string& id) {
  pb::Address address;
  address.set_agent_id(id);
  return address;
}

// "a-x" of "A/x".
std::string Slug(const Target& target) {
  return absl::AsciiStrToLower(absl::StrReplaceAll(target.name, {{"/", "-"}}));
}

// A channel to `target`; one naming several addresses ("ipv4:a,b") spreads calls over them, as
// SharedOS's own channels do.
std::shared_ptr<grpc::Channel> Channel(const std::string& target) {
  grpc::ChannelArguments arguments;
  if (absl::StartsWith(target, "ipv4:")) arguments.SetLoadBalancingPolicyName("round_robin");
  return grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), arguments);
}

gs::IssueCredentialRequest CredentialRequest(const std::string& id, const pb::Address& principal,
                                             gs::CredentialRole role,
                                             std::vector<std::string> namespaces,
                                             std::vector<std::string> owners = {}) {
  gs::IssueCredentialRequest request;
  request.set_credential_id(id);
  *request.mutable_principal() = principal;
  request.set_role(role);
  for (const std::string& name : namespaces) request.mutable_scope()->add_namespaces(name);
  for (const std::string& owner : owners) request.mutable_scope()->add_owners(owner);
  return request;
}

pb::Address Human(const std::string& id) {
  pb::Address address;
  address.set_human_user_id(id);
  return address;
}

pb::Address ServiceAddress(const std::string& id) {
  pb::Address address;
  address.set_service_id(id);
  return address;
}

// The value of cookie `name` among Set-Cookie headers ("" when absent).
std::string CookieOf(const std::vector<std::string>& set_cookies, const std::string& name) {
  for (const std::string& header : set_cookies) {
    if (!absl::StartsWith(header, name + "=")) continue;
    const size_t end = header.find(';');
    return header.substr(name.size() + 1,
                         end == std::string::npos ? std::string::npos : end - name.size() - 1);
  }
  return "";
}

Role MakeRole(const std::string& column, const std::string& token, bool exists,
              const std::string& static_id) {
  Role role;
  role.column = column;
  role.token = token;
  role.exists = exists;
  role.static_id = static_id;
  return role;
}

HttpAnswer FromHttplib(const httplib::Result& result) {
  HttpAnswer answer;
  if (!result) {
    answer.status = -1;
    answer.body = httplib::to_string(result.error());
    return answer;
  }
  answer.status = result->status;
  answer.body = result->body;
  answer.location = result->get_header_value("Location");
  for (size_t i = 0; i < result->get_header_value_count("Set-Cookie"); ++i) {
    answer.set_cookies.push_back(result->get_header_value("Set-Cookie", i));
  }
  return answer;
}

}  // namespace

std::string DeploymentName(DeploymentKind kind) {
  switch (kind) {
    case DeploymentKind::kSharedosd:
      return "Sharedosd";
    case DeploymentKind::kFourProcesses:
      return "FourProcesses";
    case DeploymentKind::kReplicatedPostgres:
      return "ReplicatedPostgres";
  }
  return "unknown";
}

Got FromStatus(const grpc::Status& status) {
  switch (status.error_code()) {
    case grpc::StatusCode::PERMISSION_DENIED:
      return {"denied", status.error_message()};
    case grpc::StatusCode::NOT_FOUND:
      return {"hidden", status.error_message()};
    case grpc::StatusCode::UNAUTHENTICATED:
      return {"unauth", status.error_message()};
    default:
      return {CodeName(status.error_code()), status.error_message()};
  }
}

Got Answered(const grpc::Status& status, bool has_target, const std::string& detail) {
  if (!status.ok()) return FromStatus(status);
  if (has_target) return {"ok", ""};
  return {"empty", detail};
}

pb::Address Target::Owner() const { return Human(owner_id); }

// ---------------------------------------------------------------- start

absl::StatusOr<std::unique_ptr<World>> World::Start(DeploymentKind kind, const std::string& dir) {
  std::unique_ptr<World> world(new World(kind));
  world->files_root_ = dir + "/files";
  RETURN_IF_ERROR(MakeDir(world->files_root_));
  // The demo world's three tools, for every deployment alike.
  RETURN_IF_ERROR(testing::WriteFile(dir + "/registry.textproto", demo::RegistryText()));
  // The checkpoint key lives outside every data directory.
  RETURN_IF_ERROR(MakeDir(dir + "/secrets"));
  RETURN_IF_ERROR(audit::core::testing::WriteNewEd25519Key(dir + "/secrets/checkpoint.key"));
  if (kind == DeploymentKind::kSharedosd) {
    RETURN_IF_ERROR(world->StartSharedosd(dir));
  } else {
    RETURN_IF_ERROR(world->StartFourProcesses(dir));
  }
  for (const auto& [name, ns, owner] :
       {std::tuple<const char*, const char*, const char*>{"A/x", "world-a", "user-x"},
        {"A/y", "world-a", "user-y"},
        {"B/x", "world-b", "user-x"}}) {
    Target target;
    target.name = name;
    target.ns = ns;
    target.owner_id = owner;
    world->targets_.push_back(std::move(target));
  }
  return world;
}

World::~World() {
  // Every turn still open ends first: replicated envelopes serve their open turns for up to
  // --replica_drain_timeout when stopped.
  if (envelope_ != nullptr) {
    for (const auto& [turn_id, host_token] : opened_) {
      ev1::CancelTurnRequest cancel;
      cancel.set_turn_id(turn_id);
      ev1::CancelTurnResponse cancelled;
      envelope_->CancelTurn(As(host_token).get(), cancel, &cancelled).IgnoreError();
    }
  }
  envelope_.reset();
  routes_.reset();
  peer_transport_.reset();
  grants_.reset();
  audit_.reset();
  authorizer_.reset();
  statuses_.clear();
}

absl::Status World::StartSharedosd(const std::string& dir) {
  testing::SharedosdDeployment::Options options;
  options.data_dir = dir + "/data";
  options.files_root = files_root_;
  options.registry = dir + "/registry.textproto";
  options.console = true;
  options.args = {"--checkpoint_key_file=" + dir + "/secrets/checkpoint.key"};
  ASSIGN_OR_RETURN(sharedosd_, testing::SharedosdDeployment::Start(std::move(options)));
  const std::string& address = sharedosd_->address();
  Connect(address, address, address, address, address, {address});
  console_url_ = sharedosd_->console_url();
  roles_.push_back(MakeRole("operator", sharedosd_->admin_token(), true, "admin"));
  // sharedosd mints no service credential: its services call each other in process.
  for (const char* service : {"authorizer", "envelope", "grantstore", "audit"}) {
    roles_.push_back(MakeRole(service, "", false, service));
  }
  return absl::OkStatus();
}

absl::Status World::StartFourProcesses(const std::string& dir) {
  testing::FourProcessDeployment::Options options;
  options.dir = dir + "/run";
  RETURN_IF_ERROR(MakeDir(options.dir));
  options.registry = dir + "/registry.textproto";
  options.files_root = files_root_;
  options.audit_args = {"--checkpoint_key_file=" + dir + "/secrets/checkpoint.key"};
  // As the compose and Kubernetes deployments run them: audit_svc honours the credentials the
  // control plane issues, and the grant store serves the console.
  options.audit_credential_lookup = true;
  options.console = true;
  if (kind_ == DeploymentKind::kReplicatedPostgres) {
    ASSIGN_OR_RETURN(postgres_, testing::CreateClusterWithDatabase("tenancy"));
    options.database = postgres_.uri;
    options.replicate_all = true;
  }
  ASSIGN_OR_RETURN(four_, testing::FourProcessDeployment::Start(std::move(options)));
  const bool replicated = kind_ == DeploymentKind::kReplicatedPostgres;
  auto dialed = [&](Service service) {
    return replicated ? four_->target(service) : four_->address(service);
  };
  std::vector<std::string> processes;
  for (Service service :
       {Service::kAudit, Service::kAuditReplica, Service::kGrantstore, Service::kGrantstoreReplica,
        Service::kAuthorizer, Service::kAuthorizerReplica, Service::kEnvelope,
        Service::kEnvelopeReplica}) {
    if (four_->running(service)) processes.push_back(four_->address(service));
  }
  Connect(dialed(Service::kEnvelope), dialed(Service::kGrantstore), dialed(Service::kAudit),
          dialed(Service::kAuthorizer), four_->address(Service::kEnvelope), processes);
  console_url_ = four_->console_url();
  const testing::DeploymentCredentials& credentials = four_->credentials();
  envelope_token_ = credentials.envelope_token;
  roles_.push_back(MakeRole("operator", credentials.admin_token, true, "ops"));
  roles_.push_back(MakeRole("authorizer", credentials.authorizer_token, true, "authorizer"));
  roles_.push_back(MakeRole("envelope", credentials.envelope_token, true, "envelope"));
  roles_.push_back(MakeRole("grantstore", credentials.grantstore_token, true, "grantstore"));
  roles_.push_back(MakeRole("audit", credentials.audit_token, true, "audit"));
  return absl::OkStatus();
}

void World::Connect(const std::string& envelope, const std::string& grantstore,
                    const std::string& audit, const std::string& authorizer,
                    const std::string& peer_transport, const std::vector<std::string>& processes) {
  std::shared_ptr<grpc::Channel> envelope_channel = Channel(envelope);
  envelope_ = ev1::Envelope::NewStub(envelope_channel);
  routes_ = ev1::MessageRoutes::NewStub(envelope_channel);
  peer_transport_ = ev1::MessageTransport::NewStub(Channel(peer_transport));
  grants_ = gs::GrantStore::NewStub(Channel(grantstore));
  audit_ = av1::AuditLog::NewStub(Channel(audit));
  authorizer_ = authorizer::v1::Authorizer::NewStub(Channel(authorizer));
  for (const std::string& process : processes) {
    statuses_.push_back(status::v1::Status::NewStub(Channel(process)));
  }
}

// ---------------------------------------------------------------- accessors and builders

const Role& World::role(const std::string& column) const {
  for (const Role& role : roles_) {
    if (role.column == column) return role;
  }
  static const Role* missing = new Role(MakeRole("missing", "", false, ""));
  return *missing;
}

Target& World::target(const std::string& name) {
  for (Target& target : targets_) {
    if (target.name == name) return target;
  }
  return targets_.front();
}

std::unique_ptr<grpc::ClientContext> World::As(const std::string& token) {
  auto context = std::make_unique<grpc::ClientContext>();
  if (!token.empty()) context->AddMetadata("authorization", "Bearer " + token);
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(kCallSeconds));
  return context;
}

std::string World::Fresh(const std::string& prefix) {
  return absl::StrCat(prefix, "-", ++next_id_);
}

pb::AccessContext World::Context(const Target& target, const std::string& trace_id) const {
  pb::AccessContext context;
  context.set_namespace_id(target.ns);
  *context.mutable_actor() = Agent(demo::kAgent);
  *context.mutable_authority() = target.Owner();
  *context.mutable_owner() = target.Owner();
  context.set_purpose("keep notes");
  context.set_trace_id(trace_id);
  context.add_enabled_tool_namespaces("files");
  context.add_enabled_tool_namespaces("sharedos");
  context.mutable_now()->set_seconds(demo::kNowSeconds);
  return context;
}

ev1::OpenTurnRequest World::TurnRequest(const Target& target, const std::string& execution_id,
                                        const std::string& trace_id) const {
  ev1::OpenTurnRequest request = demo::TurnRequest(execution_id, trace_id);
  pb::ExecutionRequest* execution = request.mutable_execution_request();
  *execution->mutable_context() = Context(target, trace_id);
  *execution->mutable_message()->mutable_sender() = target.Owner();
  // The fixture turns outlive the whole matrix run.
  execution->mutable_options()->set_max_steps(1000);
  execution->mutable_options()->set_max_tool_calls(10000);
  execution->mutable_options()->set_timeout_ms(600000);
  return request;
}

pb::MessageEnvelope World::Message(const Target& target, const std::string& receiver) {
  pb::MessageEnvelope message;
  message.set_version("1");
  message.set_id(Fresh("msg"));
  *message.mutable_sender() = Agent(demo::kAgent);
  *message.mutable_receiver() = Agent(receiver);
  message.set_purpose("keep notes");
  message.mutable_payload()->set_string_value(absl::StrCat("a note of ", target.name));
  message.set_trace_id(target.turn_trace);
  message.mutable_created_at()->set_seconds(demo::kNowSeconds + 1);
  return message;
}

pb::Capability World::Capability(const Target& target, const std::string& resource_namespace,
                                 const std::vector<std::string>& path, const std::string& action,
                                 pb::Scope scope) const {
  pb::Capability capability;
  capability.mutable_resource()->set_namespace_(resource_namespace);
  for (const std::string& segment : path) capability.mutable_resource()->add_path(segment);
  *capability.mutable_resource()->mutable_owner() = target.Owner();
  capability.add_actions(action);
  capability.set_scope(scope);
  return capability;
}

Target* World::TargetOfTrace(const std::string& trace_id) {
  for (Target& target : targets_) {
    if (target.turn_trace == trace_id) return &target;
  }
  return nullptr;
}

absl::StatusOr<std::pair<std::string, std::string>> World::Issue(
    const gs::IssueCredentialRequest& request) {
  gs::IssueCredentialResponse response;
  grpc::Status status =
      grants_->IssueCredential(As(operator_role().token).get(), request, &response);
  if (!status.ok()) return Failed("IssueCredential " + request.credential_id(), status);
  return std::make_pair(response.credential().credential_id(), response.secret());
}

// ---------------------------------------------------------------- arming

absl::Status World::IssueRoles() {
  struct Issued {
    const char* column;
    gs::IssueCredentialRequest request;
  };
  const std::vector<Issued> issued = {
      {"admin-A",
       CredentialRequest("admin-a", Human("op-a"), gs::CREDENTIAL_ROLE_ADMIN, {"world-a"})},
      {"admin-B",
       CredentialRequest("admin-b", Human("op-b"), gs::CREDENTIAL_ROLE_ADMIN, {"world-b"})},
      {"host-A/x", CredentialRequest("host-a-x", ServiceAddress("host-a-x"),
                                     gs::CREDENTIAL_ROLE_HOST, {"world-a"}, {"human:user-x"})},
      {"host-A/y", CredentialRequest("host-a-y", ServiceAddress("host-a-y"),
                                     gs::CREDENTIAL_ROLE_HOST, {"world-a"}, {"human:user-y"})},
      {"reviewer-x",
       CredentialRequest("reviewer-x", Human("user-x"), gs::CREDENTIAL_ROLE_REVIEWER, {"world-a"})},
      {"reviewer-y",
       CredentialRequest("reviewer-y", Human("user-y"), gs::CREDENTIAL_ROLE_REVIEWER, {"world-a"})},
  };
  std::vector<Role> roles = {roles_.front()};  // the operator
  for (const Issued& one : issued) {
    ASSIGN_OR_RETURN(auto credential, Issue(one.request));
    Role role = MakeRole(one.column, credential.second, true, "");
    role.issued = one.request;
    roles.push_back(std::move(role));
  }
  for (size_t i = 1; i < roles_.size(); ++i) roles.push_back(roles_[i]);  // the services
  roles.push_back(MakeRole("none", "", true, ""));
  roles_ = std::move(roles);
  return absl::OkStatus();
}

absl::Status World::Arm() {
  RETURN_IF_ERROR(IssueRoles());
  for (const char* owner : {"user-x", "user-y"}) {
    const std::string dir = absl::StrCat(files_root_, "/human/", owner, "/workspace/Workspace");
    std::string partial = files_root_;
    for (const std::string part : {"human", owner, "workspace", "Workspace"}) {
      partial = absl::StrCat(partial, "/", part);
      RETURN_IF_ERROR(MakeDir(partial));
    }
    RETURN_IF_ERROR(testing::WriteFile(dir + "/notes.txt", absl::StrCat("notes of ", owner, "\n")));
  }
  for (const char* ns : {"world-a", "world-b"}) {
    gs::PutHostPolicyRequest put;
    put.mutable_policy()->set_namespace_id(ns);
    put.mutable_policy()->set_version("armed");
    gs::HostPolicyRule* rule = put.mutable_policy()->add_rules();
    rule->set_id("nothing-the-matrix-uses");
    rule->set_resource_namespace("matrix-unused");
    rule->set_scope(pb::SCOPE_DESCENDANTS);
    gs::PutHostPolicyResponse response;
    grpc::Status status = grants_->PutHostPolicy(As(operator_role().token).get(), put, &response);
    if (!status.ok()) return Failed(absl::StrCat("PutHostPolicy ", ns), status);
  }
  for (Target& target : targets_) RETURN_IF_ERROR(ArmTarget(target));
  for (Target& target : targets_) RETURN_IF_ERROR(AwaitTurnEnded(target));
  return absl::OkStatus();
}

absl::Status World::ArmTarget(Target& target) {
  const std::string slug = Slug(target);
  target.host_id = "fixture-host-" + slug;
  ASSIGN_OR_RETURN(auto host, Issue(CredentialRequest(
                                  target.host_id, ServiceAddress(target.host_id),
                                  gs::CREDENTIAL_ROLE_HOST, {target.ns}, {target.OwnerKey()})));
  target.host_token = host.second;

  // The owner's grant to the agent, owner bound on every capability.
  gs::IssueGrantRequest issue;
  pb::CapabilityGrant* grant = issue.mutable_grant();
  target.grant_id = "grant-" + target.owner_id;
  grant->set_id(target.grant_id);
  grant->set_namespace_id(target.ns);
  *grant->mutable_subject() = Agent(demo::kAgent);
  *grant->mutable_issuer() = target.Owner();
  *grant->add_capabilities() =
      Capability(target, "sharedos.execution", {"agent", demo::kAgent}, "invoke", pb::SCOPE_EXACT);
  *grant->add_capabilities() =
      Capability(target, "files", {"Workspace"}, "read", pb::SCOPE_DESCENDANTS);
  *grant->add_capabilities() =
      Capability(target, "files", {"Scratch"}, "create", pb::SCOPE_DESCENDANTS);
  *grant->add_capabilities() =
      Capability(target, "sharedos", {"escalation"}, "request", pb::SCOPE_EXACT);
  for (const char* receiver : {"agent-helper", "agent-notes"}) {
    *grant->add_capabilities() =
        Capability(target, "sharedos.messaging", {"agent", receiver}, "send", pb::SCOPE_EXACT);
  }
  grant->mutable_constraints()->set_delegation_depth(1);
  grant->mutable_issued_at()->set_seconds(1700000000);
  gs::IssueGrantResponse issued;
  grpc::Status status = grants_->IssueGrant(As(operator_role().token).get(), issue, &issued);
  if (!status.ok()) return Failed("IssueGrant " + target.grant_id, status);

  target.turn_execution = "run-" + slug;
  target.turn_trace = "trace-run-" + slug;
  ASSIGN_OR_RETURN(target.turn_id, OpenTurn(target, target.turn_execution, target.turn_trace));
  ASSIGN_OR_RETURN(target.escalation_id,
                   NewEscalation(target, &target.escalation_execution, &target.escalation_trace));
  gs::GetEscalationRequest get;
  get.set_escalation_id(target.escalation_id);
  gs::GetEscalationResponse got;
  status = grants_->GetEscalation(As(operator_role().token).get(), get, &got);
  if (!status.ok()) return Failed("GetEscalation " + target.escalation_id, status);
  target.escalation = got.escalation();

  // A leased route agent-assistant → agent-notes (the one RevokeRoute revokes).
  ev1::SendMessageRequest send;
  send.set_turn_id(target.turn_id);
  *send.mutable_message() = Message(target, "agent-notes");
  ev1::SendMessageResponse sent;
  status = envelope_->SendMessage(As(target.host_token).get(), send, &sent);
  if (!status.ok()) return Failed("SendMessage to agent-notes", status);
  if (sent.receipt().status() != ev1::MESSAGE_DELIVERY_STATUS_ACCEPTED) {
    return absl::InternalError(
        absl::StrCat("SendMessage to agent-notes: ", sent.receipt().ShortDebugString()));
  }
  if (!envelope_token_.empty()) {
    ASSIGN_OR_RETURN(target.lease_id, NewLease(target));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> World::OpenTurn(const Target& target, const std::string& execution_id,
                                            const std::string& trace_id) {
  ev1::OpenTurnResponse opened;
  grpc::Status status = envelope_->OpenTurn(As(target.host_token).get(),
                                            TurnRequest(target, execution_id, trace_id), &opened);
  if (!status.ok()) return Failed("OpenTurn " + execution_id, status);
  if (!opened.turn_id().empty()) opened_.emplace_back(opened.turn_id(), target.host_token);
  if (opened.has_result()) {
    return absl::InternalError(absl::StrCat(
        "OpenTurn ", execution_id, " ended at admission: ", opened.result().ShortDebugString()));
  }
  return opened.turn_id();
}

absl::StatusOr<std::string> World::NewEscalation(Target& target, std::string* execution_id,
                                                 std::string* trace_id) {
  const std::string execution = Fresh("esc-" + Slug(target));
  const std::string trace = "trace-" + execution;
  ASSIGN_OR_RETURN(const std::string turn, OpenTurn(target, execution, trace));
  ev1::InvokeToolRequest invoke;
  invoke.set_turn_id(turn);
  pb::ToolCall* call = invoke.mutable_call();
  call->set_id("call-" + execution);
  call->set_tool("files.create");
  call->set_trace_id(trace);
  (*call->mutable_arguments()->mutable_fields())["path"].set_string_value(
      absl::StrCat("Workspace/", execution, ".txt"));
  (*call->mutable_arguments()->mutable_fields())["content"].set_string_value("summary");
  call->mutable_requested_at()->set_seconds(demo::kNowSeconds + 1);
  ev1::InvokeToolResponse refused;
  grpc::Status status = envelope_->InvokeTool(As(target.host_token).get(), invoke, &refused);
  if (!status.ok()) return Failed("InvokeTool files.create " + execution, status);
  if (!refused.has_required_authority()) {
    return absl::InternalError(
        absl::StrCat("files.create in ", execution,
                     " was not refused no_matching_grant: ", refused.result().ShortDebugString()));
  }
  ev1::FinishTurnRequest finish;
  finish.set_turn_id(turn);
  finish.mutable_escalate()->set_reason("needs to write the summary");
  *finish.mutable_escalate()->mutable_requested_authority() = refused.required_authority();
  ev1::FinishTurnResponse finished;
  status = envelope_->FinishTurn(As(target.host_token).get(), finish, &finished);
  if (!status.ok()) return Failed("FinishTurn escalate " + execution, status);
  if (finished.escalation_id().empty()) {
    return absl::InternalError(absl::StrCat(
        "FinishTurn ", execution, " named no escalation: ", finished.result().ShortDebugString()));
  }
  if (execution_id != nullptr) *execution_id = execution;
  if (trace_id != nullptr) *trace_id = trace;
  return finished.escalation_id();
}

absl::StatusOr<std::string> World::NewLease(const Target& target) {
  authorizer::v1::OpenTurnAuthorityRequest open;
  *open.mutable_context() = Context(target, "trace-lease-" + Slug(target));
  open.set_turn_id(Fresh("lease-" + Slug(target)));
  authorizer::v1::OpenTurnAuthorityResponse opened;
  grpc::Status status = authorizer_->OpenTurnAuthority(As(envelope_token_).get(), open, &opened);
  if (!status.ok()) return Failed("OpenTurnAuthority", status);
  if (opened.status() != authorizer::v1::LEASE_STATUS_RESOLVED) {
    return absl::InternalError(absl::StrCat("OpenTurnAuthority: ", opened.ShortDebugString()));
  }
  return opened.lease_id();
}

absl::StatusOr<std::string> World::NewReply(const Target& target) {
  // A request agent-assistant → agent-peer and its reply, both through one replica's peer
  // transport: AwaitReply then has the reply waiting.
  ev1::TransportSendRequest send;
  send.set_namespace_id(target.ns);
  *send.mutable_owner() = target.Owner();
  *send.mutable_message() = Message(target, "agent-peer");
  const pb::MessageEnvelope request = send.message();
  ev1::TransportSendResponse sent;
  grpc::Status status = peer_transport_->Send(As(envelope_token_).get(), send, &sent);
  if (!status.ok()) return Failed("MessageTransport.Send (request)", status);
  pb::MessageEnvelope* reply = send.mutable_message();
  reply->set_id(Fresh("reply"));
  *reply->mutable_sender() = request.receiver();
  *reply->mutable_receiver() = request.sender();
  reply->set_reply_to(request.id());
  status = peer_transport_->Send(As(envelope_token_).get(), send, &sent);
  if (!status.ok()) return Failed("MessageTransport.Send (reply)", status);
  if (sent.receipt().status() != ev1::MESSAGE_DELIVERY_STATUS_DELIVERED) {
    return absl::InternalError(
        absl::StrCat("MessageTransport.Send (reply): ", sent.receipt().ShortDebugString()));
  }
  spare_requests_[absl::StrCat("reply|", target.name)] = request;
  return request.id();
}

absl::Status World::AwaitTurnEnded(const Target& target) {
  grpc::ClientContext context;
  context.AddMetadata("authorization", "Bearer " + operator_role().token);
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  av1::TailRequest tail;
  tail.mutable_filter()->set_namespace_id(target.ns);
  tail.mutable_filter()->set_execution_id(target.escalation_execution);
  tail.set_from_sequence(1);
  auto reader = audit_->Tail(&context, tail);
  av1::TailResponse response;
  bool ended = false;
  while (!ended && reader->Read(&response)) {
    ended = response.record().event().type() == pb::AUDIT_EVENT_TYPE_TURN_ENDED;
  }
  context.TryCancel();
  grpc::Status status = reader->Finish();
  if (ended) return absl::OkStatus();
  return Failed("Tail until turn.ended of " + target.escalation_execution, status);
}

// ---------------------------------------------------------------- spares

absl::StatusOr<std::string> World::Spare(const std::string& kind, Target& target) {
  const std::string key = absl::StrCat(kind, "|", target.name);
  auto it = spares_.find(key);
  if (it != spares_.end()) return it->second;
  std::string made;
  if (kind == "turn") {
    const std::string execution = Fresh("spare-" + Slug(target));
    ASSIGN_OR_RETURN(made, OpenTurn(target, execution, "trace-" + execution));
  } else if (kind == "escalation") {
    ASSIGN_OR_RETURN(made, NewEscalation(target, nullptr, nullptr));
  } else if (kind == "grant") {
    gs::IssueGrantRequest issue;
    pb::CapabilityGrant* grant = issue.mutable_grant();
    grant->set_id(Fresh("spare-grant"));
    grant->set_namespace_id(target.ns);
    *grant->mutable_subject() = Agent("agent-helper");
    *grant->mutable_issuer() = target.Owner();
    *grant->add_capabilities() =
        Capability(target, "files", {"Workspace"}, "read", pb::SCOPE_DESCENDANTS);
    grant->mutable_constraints();
    grant->mutable_issued_at()->set_seconds(1700000000);
    gs::IssueGrantResponse issued;
    grpc::Status status = grants_->IssueGrant(As(operator_role().token).get(), issue, &issued);
    if (!status.ok()) return Failed("IssueGrant " + grant->id(), status);
    made = grant->id();
  } else if (kind == "credential") {
    const std::string id = Fresh("spare-host-" + Slug(target));
    ASSIGN_OR_RETURN(auto credential,
                     Issue(CredentialRequest(id, ServiceAddress(id), gs::CREDENTIAL_ROLE_HOST,
                                             {target.ns}, {target.OwnerKey()})));
    made = credential.first;
  } else if (kind == "lease") {
    ASSIGN_OR_RETURN(made, NewLease(target));
  } else if (kind == "reply") {
    ASSIGN_OR_RETURN(made, NewReply(target));
  } else {
    return absl::InvalidArgumentError("no spare of kind " + kind);
  }
  spares_[key] = made;
  return made;
}

void World::Spend(const std::string& kind, const Target& target) {
  spares_.erase(absl::StrCat(kind, "|", target.name));
}

const pb::MessageEnvelope& World::SpareRequest(const Target& target) {
  return spare_requests_[absl::StrCat("reply|", target.name)];
}

absl::Status World::SendToHelper(Target& target) {
  ev1::SendMessageRequest send;
  send.set_turn_id(target.turn_id);
  *send.mutable_message() = Message(target, "agent-helper");
  ev1::SendMessageResponse sent;
  grpc::Status status = envelope_->SendMessage(As(target.host_token).get(), send, &sent);
  if (!status.ok()) return Failed("SendMessage to agent-helper", status);
  if (sent.receipt().status() != ev1::MESSAGE_DELIVERY_STATUS_ACCEPTED) {
    return absl::InternalError(
        absl::StrCat("SendMessage to agent-helper: ", sent.receipt().ShortDebugString()));
  }
  ++target.inbox;
  return absl::OkStatus();
}

// ---------------------------------------------------------------- the console

HttpAnswer World::ConsoleGet(const std::string& path, const std::string& cookie) {
  httplib::Client client(console_url_.substr(0, console_url_.size() - 1));
  client.set_connection_timeout(kCallSeconds, 0);
  client.set_read_timeout(kCallSeconds, 0);
  httplib::Headers headers;
  if (!cookie.empty()) headers.emplace("Cookie", cookie);
  return FromHttplib(client.Get(path, headers));
}

HttpAnswer World::ConsolePost(const std::string& path, const std::string& form,
                              const std::string& cookie) {
  httplib::Client client(console_url_.substr(0, console_url_.size() - 1));
  client.set_connection_timeout(kCallSeconds, 0);
  client.set_read_timeout(kCallSeconds, 0);
  httplib::Headers headers;
  if (!cookie.empty()) headers.emplace("Cookie", cookie);
  return FromHttplib(client.Post(path, headers, form, "application/x-www-form-urlencoded"));
}

HttpAnswer World::SignIn(const std::string& secret) {
  HttpAnswer form = ConsoleGet("/signin", "");
  const std::string token = CookieOf(form.set_cookies, "sos_signin");
  if (form.status != 200 || token.empty()) return form;
  return ConsolePost("/signin", absl::StrCat("signin=", token, "&secret=", secret),
                     "sos_signin=" + token);
}

const World::Session& World::SignedIn(const Role& role) {
  auto it = sessions_.find(role.column);
  if (it != sessions_.end()) return it->second;
  Session& session = sessions_[role.column];
  if (role.token.empty()) {
    session.refused = Got{"unauth", "no credential: no session"};
    return session;
  }
  HttpAnswer signed_in = SignIn(role.token);
  const std::string id = CookieOf(signed_in.set_cookies, "sos_session");
  if (signed_in.status != 303 || id.empty()) {
    session.refused = Got{signed_in.status == 401   ? "unauth"
                          : signed_in.status == 403 ? "denied"
                                                    : absl::StrCat("http ", signed_in.status),
                          "refused at sign-in"};
    return session;
  }
  session.cookie = "sos_session=" + id;
  HttpAnswer queue = ConsoleGet("/queue", session.cookie);
  const std::string marker = "name=\"csrf\" value=\"";
  const size_t at = queue.body.find(marker);
  if (at != std::string::npos) {
    const size_t start = at + marker.size();
    session.csrf = queue.body.substr(start, queue.body.find('"', start) - start);
  }
  return session;
}

}  // namespace sharedos::tenancy
