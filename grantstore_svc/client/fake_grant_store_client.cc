#include "grantstore_svc/client/fake_grant_store_client.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/message_differencer.h"

namespace sharedos::grantstore::client {
namespace {

using ::google::protobuf::util::MessageDifferencer;
using ::sharedos::protocol::v1::CapabilityGrant;

}  // namespace

int64_t FakeGrantStoreClient::IssueGrant(CapabilityGrant grant) {
  absl::MutexLock lock(&mu_);
  StoredGrant& stored = grants_[{grant.namespace_id(), grant.id()}];
  stored.grant = std::move(grant);
  stored.issued_revision = ++revision_;
  stored.sequence = ++sequence_;
  stored.revoked_revision.reset();
  return revision_;
}

int64_t FakeGrantStoreClient::RevokeGrant(const std::string& namespace_id,
                                          const std::string& grant_id, absl::Time revoked_at) {
  absl::MutexLock lock(&mu_);
  auto it = grants_.find({namespace_id, grant_id});
  if (it == grants_.end()) return revision_;
  it->second.revoked = it->second.grant;
  it->second.revoked.mutable_revoked_at()->set_seconds(absl::ToUnixSeconds(revoked_at));
  it->second.revoked_revision = ++revision_;
  return revision_;
}

int64_t FakeGrantStoreClient::PutHostPolicy(v1::HostPolicy policy) {
  absl::MutexLock lock(&mu_);
  const std::string namespace_id = policy.namespace_id();
  policies_[namespace_id][++revision_] = std::move(policy);
  return revision_;
}

void FakeGrantStoreClient::SetHostPolicyUnavailable(const std::string& namespace_id,
                                                    bool unavailable) {
  absl::MutexLock lock(&mu_);
  policy_unavailable_[namespace_id] = unavailable;
}

void FakeGrantStoreClient::SetUsage(const std::string& namespace_id, const std::string& grant_id,
                                    int64_t uses) {
  absl::MutexLock lock(&mu_);
  usage_[{namespace_id, grant_id}] = uses;
}

int64_t FakeGrantStoreClient::Usage(const std::string& namespace_id,
                                    const std::string& grant_id) const {
  absl::MutexLock lock(&mu_);
  auto it = usage_.find({namespace_id, grant_id});
  return it == usage_.end() ? 0 : it->second;
}

int64_t FakeGrantStoreClient::revision() const {
  absl::MutexLock lock(&mu_);
  return revision_;
}

std::vector<v1::RecordEscalationRequest> FakeGrantStoreClient::escalations() const {
  absl::MutexLock lock(&mu_);
  return escalations_;
}

void FakeGrantStoreClient::SetDown(bool down) {
  absl::MutexLock lock(&mu_);
  down_ = down;
}

void FakeGrantStoreClient::SetLatency(absl::Duration latency) {
  absl::MutexLock lock(&mu_);
  latency_ = latency;
}

void FakeGrantStoreClient::FailMethod(Method method, absl::Status status) {
  absl::MutexLock lock(&mu_);
  if (status.ok()) {
    failing_.erase(method);
  } else {
    failing_[method] = std::move(status);
  }
}

int FakeGrantStoreClient::calls(Method method) const {
  absl::MutexLock lock(&mu_);
  auto it = calls_.find(method);
  return it == calls_.end() ? 0 : it->second;
}

absl::Status FakeGrantStoreClient::Enter(Method method, const CallOptions& options) {
  ++calls_[method];
  if (down_) return absl::UnavailableError("grantstore_svc unreachable (fake: down)");
  if (latency_ > options.deadline) {
    return absl::DeadlineExceededError("grantstore_svc did not answer in time (fake: slow)");
  }
  if (auto it = failing_.find(method); it != failing_.end()) return it->second;
  return absl::OkStatus();
}

absl::Status FakeGrantStoreClient::CheckRevision(bool has_at_revision, int64_t at_revision) const {
  if (has_at_revision && (at_revision < 0 || at_revision > revision_)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "at_revision ", at_revision, " cannot be served: the store is at ", revision_));
  }
  return absl::OkStatus();
}

std::optional<CapabilityGrant> FakeGrantStoreClient::AsOf(const StoredGrant& stored,
                                                          int64_t revision) {
  if (stored.issued_revision > revision) return std::nullopt;
  if (stored.revoked_revision.has_value() && *stored.revoked_revision <= revision) {
    return stored.revoked;
  }
  return stored.grant;
}

absl::StatusOr<v1::LoadAuthorityResponse> FakeGrantStoreClient::LoadAuthority(
    const v1::LoadAuthorityRequest& request, const CallOptions& options) {
  absl::MutexLock lock(&mu_);
  if (absl::Status entered = Enter(Method::kLoadAuthority, options); !entered.ok()) {
    return entered;
  }
  if (request.namespace_id().empty()) return absl::InvalidArgumentError("namespace_id: empty");
  if (!request.has_actor()) return absl::InvalidArgumentError("actor: required");
  if (!request.has_authority()) return absl::InvalidArgumentError("authority: required");
  if (absl::Status status = CheckRevision(request.has_at_revision(), request.at_revision());
      !status.ok()) {
    return status;
  }
  const int64_t at = request.has_at_revision() ? request.at_revision() : revision_;
  std::vector<const StoredGrant*> matching;
  for (const auto& [key, stored] : grants_) {
    if (key.first != request.namespace_id()) continue;
    if (!MessageDifferencer::Equals(stored.grant.subject(), request.actor()) ||
        !MessageDifferencer::Equals(stored.grant.issuer(), request.authority())) {
      continue;
    }
    if (stored.issued_revision <= at) matching.push_back(&stored);
  }
  std::sort(matching.begin(), matching.end(),
            [](const StoredGrant* a, const StoredGrant* b) { return a->sequence < b->sequence; });
  if (matching.size() > 256) {
    return absl::ResourceExhaustedError("grant_limit_exceeded: more than 256 grants");
  }
  v1::LoadAuthorityResponse response;
  for (const StoredGrant* stored : matching) *response.add_grants() = *AsOf(*stored, at);
  response.set_revision(at);
  if (auto unavailable = policy_unavailable_.find(request.namespace_id());
      unavailable != policy_unavailable_.end() && unavailable->second) {
    response.mutable_host_policy()->mutable_unavailable()->set_detail("fake: unavailable");
    return response;
  }
  const v1::HostPolicy* policy = nullptr;
  if (auto it = policies_.find(request.namespace_id()); it != policies_.end()) {
    for (const auto& [revision, version] : it->second) {
      if (revision <= at) policy = &version;
    }
  }
  if (policy != nullptr) {
    *response.mutable_host_policy()->mutable_loaded() = *policy;
  } else {
    response.mutable_host_policy()->mutable_absent();
  }
  return response;
}

absl::StatusOr<v1::ResolveGrantResponse> FakeGrantStoreClient::ResolveGrant(
    const v1::ResolveGrantRequest& request, const CallOptions& options) {
  absl::MutexLock lock(&mu_);
  if (absl::Status entered = Enter(Method::kResolveGrant, options); !entered.ok()) return entered;
  if (request.namespace_id().empty() || request.grant_id().empty()) {
    return absl::InvalidArgumentError("namespace_id, grant_id: empty");
  }
  if (absl::Status status = CheckRevision(request.has_at_revision(), request.at_revision());
      !status.ok()) {
    return status;
  }
  const int64_t at = request.has_at_revision() ? request.at_revision() : revision_;
  auto it = grants_.find({request.namespace_id(), request.grant_id()});
  std::optional<CapabilityGrant> grant;
  if (it != grants_.end()) grant = AsOf(it->second, at);
  if (!grant.has_value()) {
    return absl::NotFoundError(absl::StrCat("grant ", request.grant_id(), " not found"));
  }
  v1::ResolveGrantResponse response;
  *response.mutable_grant() = *std::move(grant);
  return response;
}

absl::StatusOr<v1::TryConsumeResponse> FakeGrantStoreClient::TryConsume(
    const v1::TryConsumeRequest& request, const CallOptions& options) {
  absl::MutexLock lock(&mu_);
  if (absl::Status entered = Enter(Method::kTryConsume, options); !entered.ok()) return entered;
  if (request.max_uses() < 1) return absl::InvalidArgumentError("max_uses: less than 1");
  if (grants_.find({request.namespace_id(), request.grant_id()}) == grants_.end()) {
    return absl::NotFoundError(absl::StrCat("grant ", request.grant_id(), " not found"));
  }
  int64_t& uses = usage_[{request.namespace_id(), request.grant_id()}];
  v1::TryConsumeResponse response;
  if (uses < request.max_uses()) {
    ++uses;
    response.set_consumed(true);
  }
  response.set_uses(uses);
  return response;
}

absl::StatusOr<v1::GetUsageResponse> FakeGrantStoreClient::GetUsage(
    const v1::GetUsageRequest& request, const CallOptions& options) {
  absl::MutexLock lock(&mu_);
  if (absl::Status entered = Enter(Method::kGetUsage, options); !entered.ok()) return entered;
  if (grants_.find({request.namespace_id(), request.grant_id()}) == grants_.end()) {
    return absl::NotFoundError(absl::StrCat("grant ", request.grant_id(), " not found"));
  }
  auto it = usage_.find({request.namespace_id(), request.grant_id()});
  v1::GetUsageResponse response;
  response.set_uses(it == usage_.end() ? 0 : it->second);
  return response;
}

absl::StatusOr<v1::CheckRevocationsResponse> FakeGrantStoreClient::CheckRevocations(
    const v1::CheckRevocationsRequest& request, const CallOptions& options) {
  absl::MutexLock lock(&mu_);
  if (absl::Status entered = Enter(Method::kCheckRevocations, options); !entered.ok()) {
    return entered;
  }
  if (request.grant_ids().empty() || request.grant_ids_size() > 256) {
    return absl::InvalidArgumentError("grant_ids: must hold 1..256 ids");
  }
  v1::CheckRevocationsResponse response;
  response.set_revision(revision_);
  for (const std::string& id : request.grant_ids()) {
    auto it = grants_.find({request.namespace_id(), id});
    if (it == grants_.end() || it->second.revoked_revision.has_value()) {
      response.add_revoked_grant_ids(id);
    }
  }
  return response;
}

absl::StatusOr<v1::RecordEscalationResponse> FakeGrantStoreClient::RecordEscalation(
    const v1::RecordEscalationRequest& request, const CallOptions& options) {
  absl::MutexLock lock(&mu_);
  if (absl::Status entered = Enter(Method::kRecordEscalation, options); !entered.ok()) {
    return entered;
  }
  if (request.namespace_id().empty() || request.execution_id().empty()) {
    return absl::InvalidArgumentError("namespace_id, execution_id: empty");
  }
  v1::RecordEscalationResponse response;
  if (!request.escalation_id().empty()) {
    for (const v1::RecordEscalationRequest& stored : escalations_) {
      if (stored.escalation_id() != request.escalation_id()) continue;
      if (!MessageDifferencer::Equals(stored, request)) {
        return absl::FailedPreconditionError(
            absl::StrCat("escalation ", request.escalation_id(), " recorded with other content"));
      }
      response.set_escalation_id(stored.escalation_id());
      return response;
    }
  }
  v1::RecordEscalationRequest stored = request;
  if (stored.escalation_id().empty()) {
    stored.set_escalation_id(absl::StrCat("esc-fake-", escalations_.size() + 1));
  }
  ++revision_;
  response.set_escalation_id(stored.escalation_id());
  escalations_.push_back(std::move(stored));
  return response;
}

}  // namespace sharedos::grantstore::client
