#include "authorizer_svc/core/fakes.h"

#include <algorithm>

namespace sharedos::authorizer::core {

using ::sharedos::protocol::v1::CapabilityGrant;

void FakeDelegationResolver::Add(CapabilityGrant grant) {
  std::string lookup_namespace = grant.namespace_id();
  AddUnder(std::move(lookup_namespace), std::move(grant));
}

void FakeDelegationResolver::AddUnder(std::string lookup_namespace, CapabilityGrant grant) {
  absl::MutexLock lock(&mu_);
  std::pair<std::string, std::string> key(std::move(lookup_namespace), grant.id());
  grants_[std::move(key)] = std::move(grant);
}

void FakeDelegationResolver::Fail(std::string grant_id, absl::Status status) {
  absl::MutexLock lock(&mu_);
  failing_[std::move(grant_id)] = std::move(status);
}

int FakeDelegationResolver::calls() const {
  absl::MutexLock lock(&mu_);
  return calls_;
}

absl::StatusOr<std::optional<CapabilityGrant>> FakeDelegationResolver::Resolve(
    absl::string_view namespace_id, absl::string_view grant_id) {
  absl::MutexLock lock(&mu_);
  ++calls_;
  if (auto it = failing_.find(grant_id); it != failing_.end()) return it->second;
  auto it = grants_.find(std::make_pair(std::string(namespace_id), std::string(grant_id)));
  if (it == grants_.end()) return std::optional<CapabilityGrant>();
  return std::optional<CapabilityGrant>(it->second);
}

void FakeUsageCounter::SetUsage(absl::string_view namespace_id, absl::string_view grant_id,
                                int64_t used) {
  absl::MutexLock lock(&mu_);
  used_[{std::string(namespace_id), std::string(grant_id)}] = used;
}

void FakeUsageCounter::SetFailure(absl::Status status) {
  absl::MutexLock lock(&mu_);
  failure_ = std::move(status);
}

int64_t FakeUsageCounter::Used(absl::string_view namespace_id, absl::string_view grant_id) const {
  absl::MutexLock lock(&mu_);
  auto it = used_.find(std::make_pair(std::string(namespace_id), std::string(grant_id)));
  return it == used_.end() ? 0 : it->second;
}

int FakeUsageCounter::calls() const {
  absl::MutexLock lock(&mu_);
  return calls_;
}

absl::StatusOr<bool> FakeUsageCounter::TryConsume(absl::string_view namespace_id,
                                                  absl::string_view grant_id, int64_t max_uses) {
  absl::MutexLock lock(&mu_);
  ++calls_;
  if (!failure_.ok()) return failure_;
  int64_t& used = used_[{std::string(namespace_id), std::string(grant_id)}];
  if (used >= max_uses) return false;
  ++used;
  return true;
}

absl::StatusOr<int64_t> FakeUsageCounter::GetUsage(absl::string_view namespace_id,
                                                   absl::string_view grant_id) {
  absl::MutexLock lock(&mu_);
  ++calls_;
  if (!failure_.ok()) return failure_;
  auto it = used_.find(std::make_pair(std::string(namespace_id), std::string(grant_id)));
  return it == used_.end() ? 0 : it->second;
}

void FakeRevocationSource::Revoke(std::string grant_id) {
  absl::MutexLock lock(&mu_);
  revoked_.insert(std::move(grant_id));
}

void FakeRevocationSource::SetFailure(absl::Status status) {
  absl::MutexLock lock(&mu_);
  failure_ = std::move(status);
}

void FakeRevocationSource::SetMalformed(bool malformed) {
  absl::MutexLock lock(&mu_);
  malformed_ = malformed;
}

std::vector<std::string> FakeRevocationSource::checked() const {
  absl::MutexLock lock(&mu_);
  return checked_;
}

absl::StatusOr<RevocationResult> FakeRevocationSource::Check(
    absl::string_view namespace_id, absl::Span<const std::string> grant_ids) {
  absl::MutexLock lock(&mu_);
  checked_.insert(checked_.end(), grant_ids.begin(), grant_ids.end());
  if (!failure_.ok()) return failure_;
  RevocationResult result;
  result.revision = 7;
  for (const std::string& id : grant_ids) {
    if (revoked_.contains(id)) result.revoked_grant_ids.push_back(id);
  }
  if (malformed_) result.revoked_grant_ids.push_back("never-asked-about");
  return result;
}

void FakeGrantVerifier::Reject(std::string grant_id) {
  absl::MutexLock lock(&mu_);
  rejected_.insert(std::move(grant_id));
}

void FakeGrantVerifier::Fail(std::string grant_id) {
  absl::MutexLock lock(&mu_);
  failing_.insert(std::move(grant_id));
}

absl::StatusOr<bool> FakeGrantVerifier::Verify(const CapabilityGrant& grant,
                                               const protocol::v1::AccessContext& context) {
  absl::MutexLock lock(&mu_);
  if (failing_.contains(grant.id())) return absl::UnavailableError("verifier down");
  return !rejected_.contains(grant.id());
}

}  // namespace sharedos::authorizer::core
