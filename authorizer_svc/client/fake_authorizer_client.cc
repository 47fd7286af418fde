#include "authorizer_svc/client/fake_authorizer_client.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "capability/address.h"
#include "capability/capability_request.h"

namespace sharedos::authorizer::client {
namespace {

namespace az = ::sharedos::authorizer::v1;
namespace pb = ::sharedos::protocol::v1;

std::string RuleKey(absl::string_view resource_namespace, absl::string_view path,
                    absl::string_view action) {
  return absl::StrCat(resource_namespace, "|", path, "|", action);
}

}  // namespace

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
  if (resource.has_owner() && !capability::AddressEquals(resource.owner(), context->owner())) {
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
        capability::DescribeRequiredAuthority(*context, request.requirement());
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
    absl::StatusOr<pb::CapabilityRequest> minted = capability::MintCapabilityRequest(*context, ask);
    if (!minted.ok()) return absl::InvalidArgumentError(minted.status().message());
    *escalation->mutable_requested_authority() = *std::move(minted);
  }
  response.set_escalation_id(absl::StrCat("esc-", escalations_.size()));
  return response;
}

}  // namespace sharedos::authorizer::client
