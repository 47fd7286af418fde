#include "authorizer_svc/core/grantstore_ports.h"

#include "absl/strings/str_cat.h"

namespace sharedos::authorizer::core {

namespace v1 = ::sharedos::grantstore::v1;

absl::StatusOr<bool> GrantStoreUsageCounter::TryConsume(absl::string_view namespace_id,
                                                        absl::string_view grant_id,
                                                        int64_t max_uses) {
  v1::TryConsumeRequest request;
  request.set_namespace_id(std::string(namespace_id));
  request.set_grant_id(std::string(grant_id));
  request.set_max_uses(max_uses);
  absl::StatusOr<v1::TryConsumeResponse> response = client_.TryConsume(request, options_);
  if (!response.ok()) return response.status();
  return response->consumed();
}

absl::StatusOr<int64_t> GrantStoreUsageCounter::GetUsage(absl::string_view namespace_id,
                                                         absl::string_view grant_id) {
  v1::GetUsageRequest request;
  request.set_namespace_id(std::string(namespace_id));
  request.set_grant_id(std::string(grant_id));
  absl::StatusOr<v1::GetUsageResponse> response = client_.GetUsage(request, options_);
  if (!response.ok()) return response.status();
  return response->uses();
}

absl::StatusOr<bool> BatchUsageCounter::TryConsume(absl::string_view, absl::string_view, int64_t) {
  return absl::FailedPreconditionError("a discovery batch never consumes");
}

absl::StatusOr<int64_t> BatchUsageCounter::GetUsage(absl::string_view namespace_id,
                                                    absl::string_view grant_id) {
  const std::string key = absl::StrCat(namespace_id.size(), ":", namespace_id, grant_id);
  {
    absl::MutexLock lock(&mu_);
    if (auto it = answers_.find(key); it != answers_.end()) return it->second;
  }
  absl::StatusOr<int64_t> answer = counter_.GetUsage(namespace_id, grant_id);
  absl::MutexLock lock(&mu_);
  return answers_.try_emplace(key, std::move(answer)).first->second;
}

absl::StatusOr<std::optional<protocol::v1::CapabilityGrant>> RevisionDelegationResolver::Resolve(
    absl::string_view namespace_id, absl::string_view grant_id) {
  std::pair<std::string, std::string> key(namespace_id, grant_id);
  {
    absl::MutexLock lock(&mu_);
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  }
  v1::ResolveGrantRequest request;
  request.set_namespace_id(key.first);
  request.set_grant_id(key.second);
  request.set_at_revision(revision_);
  absl::StatusOr<v1::ResolveGrantResponse> response = client_.ResolveGrant(request, options_);
  std::optional<protocol::v1::CapabilityGrant> answer;
  if (response.ok()) {
    answer = std::move(*response->mutable_grant());
  } else if (response.status().code() != absl::StatusCode::kNotFound) {
    return response.status();
  }
  absl::MutexLock lock(&mu_);
  return cache_.try_emplace(std::move(key), std::move(answer)).first->second;
}

absl::StatusOr<RevocationResult> GrantStoreRevocationSource::Check(
    absl::string_view namespace_id, absl::Span<const std::string> grant_ids) {
  v1::CheckRevocationsRequest request;
  request.set_namespace_id(std::string(namespace_id));
  for (const std::string& id : grant_ids) request.add_grant_ids(id);
  absl::StatusOr<v1::CheckRevocationsResponse> response =
      client_.CheckRevocations(request, options_);
  if (!response.ok()) return response.status();
  RevocationResult result;
  result.revision = response->revision();
  result.revoked_grant_ids.assign(response->revoked_grant_ids().begin(),
                                  response->revoked_grant_ids().end());
  return result;
}

}  // namespace sharedos::authorizer::core
