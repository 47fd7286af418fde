// In-memory fakes of the authorizer's ports, for tests and benchmarks. Thread-safe.

#ifndef SHAREDOS_AUTHORIZER_SVC_CORE_FAKES_H_
#define SHAREDOS_AUTHORIZER_SVC_CORE_FAKES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "authorizer_svc/core/delegation.h"
#include "authorizer_svc/core/ports.h"

namespace sharedos::authorizer::core {

// Answers from a map of grants keyed by (namespace, id); ids in `failing` answer `failure`.
class FakeDelegationResolver : public DelegationResolver {
 public:
  void Add(protocol::v1::CapabilityGrant grant) ABSL_LOCKS_EXCLUDED(mu_);
  // Answers `grant` when asked for its id in `lookup_namespace` (a resolver gone wrong).
  void AddUnder(std::string lookup_namespace, protocol::v1::CapabilityGrant grant)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Resolving `grant_id` fails with `status` from now on.
  void Fail(std::string grant_id, absl::Status status) ABSL_LOCKS_EXCLUDED(mu_);
  int calls() const ABSL_LOCKS_EXCLUDED(mu_);

  absl::StatusOr<std::optional<protocol::v1::CapabilityGrant>> Resolve(
      absl::string_view namespace_id, absl::string_view grant_id) override ABSL_LOCKS_EXCLUDED(mu_);

 private:
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::pair<std::string, std::string>, protocol::v1::CapabilityGrant> grants_
      ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, absl::Status> failing_ ABSL_GUARDED_BY(mu_);
  int calls_ ABSL_GUARDED_BY(mu_) = 0;
};

// The reference's in-memory usage store: consume iff current < max, then +1.
class FakeUsageCounter : public UsageCounter {
 public:
  void SetUsage(absl::string_view namespace_id, absl::string_view grant_id, int64_t used)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Every call fails with `status` while it is not OK.
  void SetFailure(absl::Status status) ABSL_LOCKS_EXCLUDED(mu_);
  int64_t Used(absl::string_view namespace_id, absl::string_view grant_id) const
      ABSL_LOCKS_EXCLUDED(mu_);
  int calls() const ABSL_LOCKS_EXCLUDED(mu_);

  absl::StatusOr<bool> TryConsume(absl::string_view namespace_id, absl::string_view grant_id,
                                  int64_t max_uses) override ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<int64_t> GetUsage(absl::string_view namespace_id,
                                   absl::string_view grant_id) override ABSL_LOCKS_EXCLUDED(mu_);

 private:
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::pair<std::string, std::string>, int64_t> used_ ABSL_GUARDED_BY(mu_);
  absl::Status failure_ ABSL_GUARDED_BY(mu_);
  int calls_ ABSL_GUARDED_BY(mu_) = 0;
};

// Reports the ids in its revoked set that were asked about.
class FakeRevocationSource : public RevocationSource {
 public:
  void Revoke(std::string grant_id) ABSL_LOCKS_EXCLUDED(mu_);
  void SetFailure(absl::Status status) ABSL_LOCKS_EXCLUDED(mu_);
  // Answers with an id nobody asked about (a malformed answer).
  void SetMalformed(bool malformed) ABSL_LOCKS_EXCLUDED(mu_);
  // Every id asked about, in order.
  std::vector<std::string> checked() const ABSL_LOCKS_EXCLUDED(mu_);

  absl::StatusOr<RevocationResult> Check(absl::string_view namespace_id,
                                         absl::Span<const std::string> grant_ids) override
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  mutable absl::Mutex mu_;
  absl::flat_hash_set<std::string> revoked_ ABSL_GUARDED_BY(mu_);
  absl::Status failure_ ABSL_GUARDED_BY(mu_);
  bool malformed_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::string> checked_ ABSL_GUARDED_BY(mu_);
};

// Rejects the grants in its rejected set (false) and fails for those in its failing set.
class FakeGrantVerifier : public GrantVerifier {
 public:
  void Reject(std::string grant_id) ABSL_LOCKS_EXCLUDED(mu_);
  void Fail(std::string grant_id) ABSL_LOCKS_EXCLUDED(mu_);

  absl::StatusOr<bool> Verify(const protocol::v1::CapabilityGrant& grant,
                              const protocol::v1::AccessContext& context) override
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  mutable absl::Mutex mu_;
  absl::flat_hash_set<std::string> rejected_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::string> failing_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sharedos::authorizer::core

#endif  // SHAREDOS_AUTHORIZER_SVC_CORE_FAKES_H_
