#include "envelope_svc/turn/test_support.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "authorizer_svc/core/address.h"
#include "authorizer_svc/core/capability_request.h"
#include "common/time/proto_time.h"
#include "google/protobuf/text_format.h"

namespace sharedos::envelope::turn::testing {
namespace {

namespace az = ::sharedos::authorizer::v1;
namespace pb = ::sharedos::protocol::v1;

std::string RuleKey(absl::string_view resource_namespace, absl::string_view path,
                    absl::string_view action) {
  return absl::StrCat(resource_namespace, "|", path, "|", action);
}

constexpr char kPathSchema[] = R"json({
  "type": "object",
  "properties": {"path": {"type": "string", "maxLength": 1024}},
  "required": ["path"],
  "additionalProperties": false
})json";

constexpr char kPeekSchema[] = R"json({
  "type": "object",
  "properties": {"path": {"type": "string"}, "owner": {"type": "object"}},
  "required": ["path", "owner"],
  "additionalProperties": false
})json";

constexpr char kEmptySchema[] = R"json({"type": "object", "additionalProperties": false})json";

std::string Quoted(absl::string_view json) {
  std::string out = "'";
  for (char c : json) {
    if (c == '\n') continue;
    if (c == '\'')
      out += "\\'";
    else
      out.push_back(c);
  }
  return out + "'";
}

std::string ToolText(absl::string_view name, absl::string_view tool_namespace,
                     absl::string_view read_write, absl::string_view ceiling,
                     absl::string_view requirement, absl::string_view provider,
                     absl::string_view schema, absl::string_view annotations = "") {
  return absl::StrCat("tools {\n  definition {\n    name: '", name,
                      "'\n    description: 'Test tool ", name, ".'\n    namespace: '",
                      tool_namespace, "'\n    source: 'sharedos'\n    read_write: ", read_write,
                      "\n    ", annotations, "\n    required_capability { ", ceiling, " }\n  }\n  ",
                      "requirement { ", requirement, " }\n  provider { ", provider,
                      " }\n  input_schema_json: ", Quoted(schema), "\n}\n");
}

}  // namespace

// ---- FakeAuthorizerClient ----

void FakeAuthorizerClient::SetLeaseUnavailable(std::string code) {
  absl::MutexLock lock(&mu_);
  lease_unavailable_code_ = std::move(code);
}

void FakeAuthorizerClient::SetHostPolicyVersion(std::string version) {
  absl::MutexLock lock(&mu_);
  host_policy_version_ = std::move(version);
}

void FakeAuthorizerClient::DenyAdmission(std::string code, bool fail_closed) {
  absl::MutexLock lock(&mu_);
  admission_denial_ = Denial{std::move(code), fail_closed};
}

void FakeAuthorizerClient::Withhold(std::string name, std::string code, bool fail_closed) {
  absl::MutexLock lock(&mu_);
  withheld_[std::move(name)] = Denial{std::move(code), fail_closed};
}

void FakeAuthorizerClient::Unwithhold(const std::string& name) {
  absl::MutexLock lock(&mu_);
  withheld_.erase(name);
}

void FakeAuthorizerClient::DenyAuthorize(std::string resource_namespace, std::string path,
                                         std::string action, std::string code, bool fail_closed) {
  absl::MutexLock lock(&mu_);
  denied_[RuleKey(resource_namespace, path, action)] = Denial{std::move(code), fail_closed};
}

void FakeAuthorizerClient::SetReach(pb::ReachResult reach) {
  absl::MutexLock lock(&mu_);
  reach_ = std::move(reach);
}

void FakeAuthorizerClient::FailMethod(Method method, absl::Status status) {
  absl::MutexLock lock(&mu_);
  if (status.ok()) {
    failing_.erase(method);
  } else {
    failing_[method] = std::move(status);
  }
}

int FakeAuthorizerClient::calls(Method method) const {
  absl::MutexLock lock(&mu_);
  auto it = calls_.find(method);
  return it == calls_.end() ? 0 : it->second;
}

std::vector<az::AuthorizeRequest> FakeAuthorizerClient::authorize_requests() const {
  absl::MutexLock lock(&mu_);
  return authorizations_;
}

std::vector<az::RecordEscalationRequest> FakeAuthorizerClient::escalation_requests() const {
  absl::MutexLock lock(&mu_);
  return escalations_;
}

std::vector<std::string> FakeAuthorizerClient::closed_leases() const {
  absl::MutexLock lock(&mu_);
  return closed_;
}

size_t FakeAuthorizerClient::open_leases() const {
  absl::MutexLock lock(&mu_);
  return leases_.size();
}

absl::Status FakeAuthorizerClient::Enter(Method method) {
  ++calls_[method];
  auto it = failing_.find(method);
  return it == failing_.end() ? absl::OkStatus() : it->second;
}

absl::StatusOr<pb::AccessContext> FakeAuthorizerClient::LeaseContext(
    const std::string& lease_id) const {
  auto it = leases_.find(lease_id);
  if (it == leases_.end()) return absl::NotFoundError("lease closed");
  return it->second;
}

absl::StatusOr<az::OpenTurnAuthorityResponse> FakeAuthorizerClient::OpenTurnAuthority(
    const az::OpenTurnAuthorityRequest& request, absl::Duration) {
  absl::MutexLock lock(&mu_);
  if (absl::Status status = Enter(Method::kOpen); !status.ok()) return status;
  az::OpenTurnAuthorityResponse response;
  response.set_lease_id(absl::StrCat("lease-", ++next_lease_));
  leases_[response.lease_id()] = request.context();
  if (!lease_unavailable_code_.empty()) {
    response.set_status(az::LEASE_STATUS_UNAVAILABLE);
    response.set_code(lease_unavailable_code_);
    return response;
  }
  response.set_status(az::LEASE_STATUS_RESOLVED);
  response.set_authority_hash("authority-hash-1");
  response.set_revision(7);
  response.set_grant_count(1);
  if (!host_policy_version_.empty()) {
    response.set_host_policy_version(host_policy_version_);
    response.set_host_policy_status(az::HOST_POLICY_STATUS_LOADED);
  } else {
    response.set_host_policy_status(az::HOST_POLICY_STATUS_ABSENT);
  }
  return response;
}

absl::StatusOr<az::CloseTurnAuthorityResponse> FakeAuthorizerClient::CloseTurnAuthority(
    const az::CloseTurnAuthorityRequest& request, absl::Duration) {
  absl::MutexLock lock(&mu_);
  if (absl::Status status = Enter(Method::kClose); !status.ok()) return status;
  leases_.erase(request.lease_id());
  closed_.push_back(request.lease_id());
  return az::CloseTurnAuthorityResponse();
}

absl::StatusOr<az::AuthorizeResponse> FakeAuthorizerClient::Authorize(
    const az::AuthorizeRequest& request, absl::Duration) {
  absl::MutexLock lock(&mu_);
  if (absl::Status status = Enter(Method::kAuthorize); !status.ok()) return status;
  absl::StatusOr<pb::AccessContext> context = LeaseContext(request.lease_id());
  if (!context.ok()) return context.status();
  az::AuthorizeResponse response;
  if (request.has_declared_ceiling()) {
    // Discovery first, as Discover answers it (a failing Discover fails this part too).
    if (auto failing = failing_.find(Method::kDiscover); failing != failing_.end()) {
      return failing->second;
    }
    az::DiscoveryEntry* entry = response.mutable_discovery();
    entry->set_name(request.tool());
    if (auto it = withheld_.find(request.tool()); it != withheld_.end()) {
      entry->set_reason_code(it->second.code);
      entry->set_fail_closed(it->second.fail_closed);
      return response;  // withheld: no decision
    }
    entry->set_discoverable(true);
    entry->set_reason_code("allowed");
  }
  authorizations_.push_back(request);
  pb::AuthorizationDecision* decision = response.mutable_decision();
  const pb::ResourceRef& resource = request.requirement().resource();
  if (resource.has_owner() &&
      !authorizer::core::AddressEquals(resource.owner(), context->owner())) {
    decision->set_reason_code("invalid_request");
    return response;
  }
  auto denied = denied_.find(RuleKey(resource.namespace_(), absl::StrJoin(resource.path(), "/"),
                                     request.requirement().action()));
  if (denied == denied_.end()) {
    decision->set_allowed(true);
    decision->set_reason_code("allowed");
    decision->set_matched_grant_id("grant-files");
    response.set_consumed(request.consume());
    return response;
  }
  decision->set_reason_code(denied->second.code);
  response.set_fail_closed(denied->second.fail_closed);
  if (denied->second.code == "no_matching_grant") {
    absl::StatusOr<pb::CapabilityRequest> required =
        authorizer::core::DescribeRequiredAuthority(*context, request.requirement());
    if (required.ok()) *decision->mutable_required_authority() = *std::move(required);
  }
  if (denied->second.code == "grant_exhausted") decision->set_matched_grant_id("grant-files");
  return response;
}

absl::StatusOr<az::DiscoverResponse> FakeAuthorizerClient::Discover(
    const az::DiscoverRequest& request, absl::Duration) {
  absl::MutexLock lock(&mu_);
  if (absl::Status status = Enter(Method::kDiscover); !status.ok()) return status;
  if (absl::StatusOr<pb::AccessContext> context = LeaseContext(request.lease_id()); !context.ok()) {
    return context.status();
  }
  az::DiscoverResponse response;
  int withheld = 0;
  for (const az::ToolRequirement& tool : request.tools()) {
    az::DiscoveryEntry* entry = response.add_entries();
    entry->set_name(tool.name());
    auto it = withheld_.find(tool.name());
    if (it == withheld_.end()) {
      entry->set_discoverable(true);
      entry->set_reason_code("allowed");
    } else {
      entry->set_reason_code(it->second.code);
      entry->set_fail_closed(it->second.fail_closed);
      ++withheld;
    }
  }
  response.set_withheld_count(withheld);
  return response;
}

absl::StatusOr<az::AdmitTurnResponse> FakeAuthorizerClient::AdmitTurn(
    const az::AdmitTurnRequest& request, absl::Duration) {
  absl::MutexLock lock(&mu_);
  if (absl::Status status = Enter(Method::kAdmit); !status.ok()) return status;
  if (absl::StatusOr<pb::AccessContext> context = LeaseContext(request.lease_id()); !context.ok()) {
    return context.status();
  }
  az::AdmitTurnResponse response;
  if (admission_denial_.has_value()) {
    response.mutable_decision()->set_reason_code(admission_denial_->code);
    response.set_fail_closed(admission_denial_->fail_closed);
  } else {
    response.mutable_decision()->set_allowed(true);
    response.mutable_decision()->set_reason_code("allowed");
    response.mutable_decision()->set_matched_grant_id("grant-execution");
  }
  return response;
}

absl::StatusOr<az::ReachResponse> FakeAuthorizerClient::Reach(const az::ReachRequest& request,
                                                              absl::Duration) {
  absl::MutexLock lock(&mu_);
  if (absl::Status status = Enter(Method::kReach); !status.ok()) return status;
  az::ReachResponse response;
  if (reach_.has_value()) {
    *response.mutable_reach() = *reach_;
  } else {
    response.mutable_reach()->set_status(pb::REACH_STATUS_COMPUTED);
  }
  return response;
}

absl::StatusOr<az::RecordEscalationResponse> FakeAuthorizerClient::RecordEscalation(
    const az::RecordEscalationRequest& request, absl::Duration) {
  absl::MutexLock lock(&mu_);
  if (absl::Status status = Enter(Method::kRecordEscalation); !status.ok()) return status;
  escalations_.push_back(request);
  absl::StatusOr<pb::AccessContext> context = LeaseContext(request.lease_id());
  if (!context.ok()) return context.status();
  if (request.has_operation_instant()) *context->mutable_now() = request.operation_instant();
  az::RecordEscalationResponse response;
  pb::Escalation* escalation = response.mutable_escalation();
  escalation->set_reason(request.reason());
  *escalation->mutable_reviewer() = context->owner();
  *escalation->mutable_requested_at() = context->now();
  escalation->set_status(pb::ESCALATION_STATUS_PENDING);
  if (request.has_requested_authority_ask()) {
    pb::CapabilityRequest ask;
    *ask.mutable_capabilities() = request.requested_authority_ask().capabilities();
    ask.set_purpose(request.requested_authority_ask().purpose());
    absl::StatusOr<pb::CapabilityRequest> minted =
        authorizer::core::MintCapabilityRequest(*context, ask);
    if (!minted.ok()) return absl::InvalidArgumentError(minted.status().message());
    *escalation->mutable_requested_authority() = *std::move(minted);
  }
  response.set_escalation_id(absl::StrCat("esc-", escalations_.size()));
  return response;
}

// ---- FakeToolProvider ----

void FakeToolProvider::SetBehavior(const std::string& tool, Behavior behavior) {
  absl::MutexLock lock(&mu_);
  behaviors_[tool] = behavior;
}

void FakeToolProvider::FailListTools(absl::Status status) {
  absl::MutexLock lock(&mu_);
  list_status_ = std::move(status);
}

std::vector<v1::InvokeRequest> FakeToolProvider::invocations() const {
  absl::MutexLock lock(&mu_);
  return invocations_;
}

absl::StatusOr<std::vector<pb::ToolDefinition>> FakeToolProvider::ListTools(
    const v1::ProviderContext&, absl::Time) {
  absl::MutexLock lock(&mu_);
  if (!list_status_.ok()) return list_status_;
  return listed_;
}

absl::StatusOr<pb::ToolResult> FakeToolProvider::Invoke(const v1::InvokeRequest& request,
                                                        absl::Time) {
  Behavior behavior = Behavior::kSucceed;
  {
    absl::MutexLock lock(&mu_);
    invocations_.push_back(request);
    if (auto it = behaviors_.find(request.tool()); it != behaviors_.end()) behavior = it->second;
  }
  if (behavior == Behavior::kError) return absl::UnavailableError("backend down");
  if (behavior == Behavior::kBlock) {
    entered_.Notify();
    release_.WaitForNotification();
  }
  pb::ToolResult result;
  result.set_call_id(behavior == Behavior::kWrongCallId ? "another-call" : request.call_id());
  result.set_tool(request.tool());
  result.set_status(pb::TOOL_RESULT_STATUS_SUCCEEDED);
  (*result.mutable_output()->mutable_struct_value()->mutable_fields())["ok"].set_bool_value(true);
  *result.mutable_completed_at() = *common::ToProtoTimestamp(absl::UnixEpoch());
  return result;
}

// ---- Registry ----

std::unique_ptr<tools::ToolRegistry> TestRegistry(int extra_tools) {
  constexpr absl::string_view kAppend =
      "path_from_arguments { path_argument: 'path' mode: PATH_MODE_APPEND }";
  std::string text;
  text += ToolText("files.read", "files", "READ_WRITE_READ",
                   "resource { namespace: 'files' } action: 'read'", kAppend, "files {}",
                   kPathSchema, "annotations { read_only: true idempotent: true }");
  text += ToolText("files.create", "files", "READ_WRITE_WRITE",
                   "resource { namespace: 'files' } action: 'create'", kAppend, "files {}",
                   kPathSchema);
  text += ToolText("files.peek", "files", "READ_WRITE_READ",
                   "resource { namespace: 'files' } action: 'read'",
                   "path_from_arguments { path_argument: 'path' mode: PATH_MODE_APPEND "
                   "owner_argument: 'owner' }",
                   "files {}", kPeekSchema);
  text += ToolText("files.fixed", "files", "READ_WRITE_READ",
                   "resource { namespace: 'files' path: 'Docs' } action: 'read'",
                   "fixed { resource { namespace: 'files' path: 'Other' } action: 'read' }",
                   "files {}", kEmptySchema);
  text += ToolText("host.echo", "files", "READ_WRITE_READ",
                   "resource { namespace: 'files' } action: 'read'", "ceiling {}",
                   "grpc { provider_id: 'host-1' }", kEmptySchema);
  text += ToolText("notes.get", "notes", "READ_WRITE_READ",
                   "resource { namespace: 'notes' } action: 'read'", "ceiling {}", "files {}",
                   kEmptySchema);
  for (int i = 0; i < extra_tools; ++i) {
    text += ToolText(absl::StrCat("bulk.tool.", i), "files", "READ_WRITE_READ",
                     absl::StrCat("resource { namespace: 'files' path: 'Bulk' path: 'p", i,
                                  "' } action: 'read'"),
                     "ceiling {}", "files {}", kPathSchema);
  }
  text += R"pb(
    tools {
      definition {
        name: 'sharedos.escalate'
        description: 'Ask a human for authority this turn lacks. Give the reason; the turn ends escalated and a reviewer decides.'
        namespace: 'sharedos'
        source: 'sharedos'
        read_write: READ_WRITE_READ
        annotations { read_only: true }
        required_capability {
          resource { namespace: 'sharedos' path: 'escalation' }
          action: 'request'
        }
      }
      requirement { ceiling {} }
      provider { none {} }
      input_schema_json: '{"type": "object", "properties": {"reason": {"type": "string", "minLength": 1, "maxLength": 512}}, "required": ["reason"], "additionalProperties": false}'
    }
  )pb";
  absl::StatusOr<v1::ToolRegistryConfig> config =
      tools::ToolRegistry::ParseConfig(text, "test_registry");
  if (!config.ok()) {
    fprintf(stderr, "TestRegistry: %s\n", config.status().ToString().c_str());
    abort();
  }
  absl::StatusOr<std::unique_ptr<tools::ToolRegistry>> registry =
      tools::ToolRegistry::Create({*config});
  if (!registry.ok()) {
    fprintf(stderr, "TestRegistry: %s\n", registry.status().ToString().c_str());
    abort();
  }
  return *std::move(registry);
}

// ---- Execution request ----

pb::ExecutionRequest TestExecutionRequest(std::initializer_list<absl::string_view> tools) {
  constexpr char kText[] = R"pb(
    version: "1"
    execution_id: "exec-1"
    agent { agent_id: "agent-assistant" }
    context {
      namespace_id: "world-1"
      actor { agent_id: "agent-assistant" }
      authority { human_user_id: "user-alice" }
      owner { human_user_id: "user-alice" }
      purpose: "project work"
      trace_id: "trace-1"
      enabled_tool_namespaces: "files"
      enabled_tool_namespaces: "sharedos"
      now { seconds: 1786438800 }
    }
    message {
      version: "1"
      id: "msg-1"
      sender { human_user_id: "user-alice" }
      receiver { agent_id: "agent-assistant" }
      purpose: "project work"
      payload { string_value: "tidy my notes" }
      trace_id: "trace-1"
      created_at { seconds: 1786438800 }
    }
  )pb";
  pb::ExecutionRequest request;
  if (!google::protobuf::TextFormat::ParseFromString(kText, &request)) {
    fprintf(stderr, "TestExecutionRequest: the text does not parse\n");
    abort();
  }
  for (absl::string_view tool : tools) request.add_tools(std::string(tool));
  return request;
}

}  // namespace sharedos::envelope::turn::testing
