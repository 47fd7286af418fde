// An in-memory GrantStoreClient for tests, with the store's revision semantics (every mutation
// takes the next revision; LoadAuthority/ResolveGrant read at any revision already reached) and
// programmable failures: the whole store down, a store slower than the caller's deadline, or
// one method failing. Time is simulated: "slow" never sleeps, a call whose deadline is shorter
// than the configured latency answers DEADLINE_EXCEEDED at once. Thread-safe.

#ifndef SHAREDOS_GRANTSTORE_SVC_CLIENT_FAKE_GRANT_STORE_CLIENT_H_
#define SHAREDOS_GRANTSTORE_SVC_CLIENT_FAKE_GRANT_STORE_CLIENT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grantstore_svc/client/grant_store_client.h"
#include "sharedos/protocol/v1/grant.pb.h"

namespace sharedos::grantstore::client {

class FakeGrantStoreClient : public GrantStoreClient {
 public:
  enum class Method {
    kLoadAuthority,
    kResolveGrant,
    kTryConsume,
    kGetUsage,
    kCheckRevocations,
    kRecordEscalation,
  };

  // --- The store's contents (what an operator would do through the admin API) ---

  // Issues (or re-issues, replacing) a grant at the next revision; returns that revision.
  int64_t IssueGrant(protocol::v1::CapabilityGrant grant) ABSL_LOCKS_EXCLUDED(mu_);
  // Revokes a grant at the next revision, stamping `revoked_at`; returns the revision.
  int64_t RevokeGrant(const std::string& namespace_id, const std::string& grant_id,
                      absl::Time revoked_at) ABSL_LOCKS_EXCLUDED(mu_);
  // Installs the namespace's host policy at the next revision; returns the revision.
  int64_t PutHostPolicy(v1::HostPolicy policy) ABSL_LOCKS_EXCLUDED(mu_);
  // From now on LoadAuthority answers the namespace's policy as unavailable.
  void SetHostPolicyUnavailable(const std::string& namespace_id, bool unavailable)
      ABSL_LOCKS_EXCLUDED(mu_);
  void SetUsage(const std::string& namespace_id, const std::string& grant_id, int64_t uses)
      ABSL_LOCKS_EXCLUDED(mu_);
  int64_t Usage(const std::string& namespace_id, const std::string& grant_id) const
      ABSL_LOCKS_EXCLUDED(mu_);
  int64_t revision() const ABSL_LOCKS_EXCLUDED(mu_);
  // Every escalation stored, in order.
  std::vector<v1::RecordEscalationRequest> escalations() const ABSL_LOCKS_EXCLUDED(mu_);

  // --- Faults ---

  // While down, every call answers UNAVAILABLE.
  void SetDown(bool down) ABSL_LOCKS_EXCLUDED(mu_);
  // Every call "takes" `latency`: calls whose deadline is shorter answer DEADLINE_EXCEEDED.
  void SetLatency(absl::Duration latency) ABSL_LOCKS_EXCLUDED(mu_);
  // Calls of `method` answer `status` while it is not OK (pass OkStatus() to clear).
  void FailMethod(Method method, absl::Status status) ABSL_LOCKS_EXCLUDED(mu_);
  // Calls of `method` made so far (failed ones included).
  int calls(Method method) const ABSL_LOCKS_EXCLUDED(mu_);

  absl::StatusOr<v1::LoadAuthorityResponse> LoadAuthority(const v1::LoadAuthorityRequest& request,
                                                          const CallOptions& options) override
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<v1::ResolveGrantResponse> ResolveGrant(const v1::ResolveGrantRequest& request,
                                                        const CallOptions& options) override
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<v1::TryConsumeResponse> TryConsume(const v1::TryConsumeRequest& request,
                                                    const CallOptions& options) override
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<v1::GetUsageResponse> GetUsage(const v1::GetUsageRequest& request,
                                                const CallOptions& options) override
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<v1::CheckRevocationsResponse> CheckRevocations(
      const v1::CheckRevocationsRequest& request, const CallOptions& options) override
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<v1::RecordEscalationResponse> RecordEscalation(
      const v1::RecordEscalationRequest& request, const CallOptions& options) override
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  using Key = std::pair<std::string, std::string>;  // (namespace, id)

  // One grant's history: issued at `issued_revision`, revoked at `revoked_revision` (with the
  // grant as revoked) when set.
  struct StoredGrant {
    protocol::v1::CapabilityGrant grant;
    int64_t issued_revision = 0;
    int64_t sequence = 0;
    std::optional<int64_t> revoked_revision;
    protocol::v1::CapabilityGrant revoked;
  };

  // Counts the call and applies the programmed faults.
  absl::Status Enter(Method method, const CallOptions& options) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status CheckRevision(bool has_at_revision, int64_t at_revision) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The grant as of `revision`, or nullopt when it did not exist then.
  static std::optional<protocol::v1::CapabilityGrant> AsOf(const StoredGrant& stored,
                                                           int64_t revision);

  mutable absl::Mutex mu_;
  int64_t revision_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t sequence_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<Key, StoredGrant> grants_ ABSL_GUARDED_BY(mu_);
  // namespace → (revision → policy) history.
  std::map<std::string, std::map<int64_t, v1::HostPolicy>> policies_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, bool> policy_unavailable_ ABSL_GUARDED_BY(mu_);
  std::map<Key, int64_t> usage_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::RecordEscalationRequest> escalations_ ABSL_GUARDED_BY(mu_);
  bool down_ ABSL_GUARDED_BY(mu_) = false;
  absl::Duration latency_ ABSL_GUARDED_BY(mu_) = absl::ZeroDuration();
  absl::flat_hash_map<Method, absl::Status> failing_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<Method, int> calls_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sharedos::grantstore::client

#endif  // SHAREDOS_GRANTSTORE_SVC_CLIENT_FAKE_GRANT_STORE_CLIENT_H_
