// A scriptable AuthorizerClient for tests of the authorizer's callers (testonly). Thread-safe.

#ifndef SHAREDOS_AUTHORIZER_SVC_CLIENT_FAKE_AUTHORIZER_CLIENT_H_
#define SHAREDOS_AUTHORIZER_SVC_CLIENT_FAKE_AUTHORIZER_CLIENT_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "authorizer_svc/client/authorizer_client.h"
#include "sharedos/authorizer/v1/authorizer.pb.h"
#include "sharedos/protocol/v1/context.pb.h"

namespace sharedos::authorizer::client {

// An AuthorizerClient deciding from a few scripted rules: every lease resolves (hash
// "authority-hash-1") unless told otherwise; admission allows; every tool is discoverable
// unless withheld; Authorize allows (grant "grant-files") unless a rule for (namespace, path,
// action) says otherwise, and — like the real authorizer — a requirement naming an owner other
// than the context's is invalid_request; a no_matching_grant carries the required authority
// (capability::DescribeRequiredAuthority). RecordEscalation mints the ask like the
// real one (MintCapabilityRequest).
class FakeAuthorizerClient : public AuthorizerClient {
 public:
  enum class Method { kOpen, kClose, kAuthorize, kDiscover, kAdmit, kReach, kRecordEscalation };

  void SetLeaseUnavailable(std::string code) ABSL_LOCKS_EXCLUDED(mu_);
  void SetHostPolicyVersion(std::string version) ABSL_LOCKS_EXCLUDED(mu_);
  void DenyAdmission(std::string code, bool fail_closed = false) ABSL_LOCKS_EXCLUDED(mu_);
  // Discover (at open and at invocation), and Authorize with a declared ceiling for tool
  // `name`, answer `name` not discoverable with `code`.
  void Withhold(std::string name, std::string code, bool fail_closed = false)
      ABSL_LOCKS_EXCLUDED(mu_);
  void Unwithhold(const std::string& name) ABSL_LOCKS_EXCLUDED(mu_);
  // Authorize of exactly (namespace, path joined by '/', action) answers denied `code`.
  void DenyAuthorize(std::string resource_namespace, std::string path, std::string action,
                     std::string code, bool fail_closed = false) ABSL_LOCKS_EXCLUDED(mu_);
  void SetReach(protocol::v1::ReachResult reach) ABSL_LOCKS_EXCLUDED(mu_);
  // Calls of `method` answer `status` while it is not OK.
  void FailMethod(Method method, absl::Status status) ABSL_LOCKS_EXCLUDED(mu_);

  int calls(Method method) const ABSL_LOCKS_EXCLUDED(mu_);
  // The Authorize requests that reached a decision (not those whose declared ceiling was
  // withheld).
  std::vector<authorizer::v1::AuthorizeRequest> authorize_requests() const ABSL_LOCKS_EXCLUDED(mu_);
  std::vector<authorizer::v1::RecordEscalationRequest> escalation_requests() const
      ABSL_LOCKS_EXCLUDED(mu_);
  std::vector<std::string> closed_leases() const ABSL_LOCKS_EXCLUDED(mu_);
  size_t open_leases() const ABSL_LOCKS_EXCLUDED(mu_);

  absl::StatusOr<authorizer::v1::OpenTurnAuthorityResponse> OpenTurnAuthority(
      const authorizer::v1::OpenTurnAuthorityRequest& request, absl::Duration timeout) override
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<authorizer::v1::CloseTurnAuthorityResponse> CloseTurnAuthority(
      const authorizer::v1::CloseTurnAuthorityRequest& request, absl::Duration timeout) override
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<authorizer::v1::AuthorizeResponse> Authorize(
      const authorizer::v1::AuthorizeRequest& request, absl::Duration timeout) override
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<authorizer::v1::DiscoverResponse> Discover(
      const authorizer::v1::DiscoverRequest& request, absl::Duration timeout) override
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<authorizer::v1::AdmitTurnResponse> AdmitTurn(
      const authorizer::v1::AdmitTurnRequest& request, absl::Duration timeout) override
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<authorizer::v1::ReachResponse> Reach(const authorizer::v1::ReachRequest& request,
                                                      absl::Duration timeout) override
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<authorizer::v1::RecordEscalationResponse> RecordEscalation(
      const authorizer::v1::RecordEscalationRequest& request, absl::Duration timeout) override
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Denial {
    std::string code;
    bool fail_closed = false;
  };
  absl::Status Enter(Method method) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<protocol::v1::AccessContext> LeaseContext(const std::string& lease_id) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  int next_lease_ ABSL_GUARDED_BY(mu_) = 0;
  std::string lease_unavailable_code_ ABSL_GUARDED_BY(mu_);
  std::string host_policy_version_ ABSL_GUARDED_BY(mu_);
  std::optional<Denial> admission_denial_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, Denial> withheld_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, Denial> denied_ ABSL_GUARDED_BY(mu_);
  std::optional<protocol::v1::ReachResult> reach_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<Method, absl::Status> failing_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<Method, int> calls_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, protocol::v1::AccessContext> leases_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> closed_ ABSL_GUARDED_BY(mu_);
  std::vector<authorizer::v1::AuthorizeRequest> authorizations_ ABSL_GUARDED_BY(mu_);
  std::vector<authorizer::v1::RecordEscalationRequest> escalations_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sharedos::authorizer::client

#endif  // SHAREDOS_AUTHORIZER_SVC_CLIENT_FAKE_AUTHORIZER_CLIENT_H_
