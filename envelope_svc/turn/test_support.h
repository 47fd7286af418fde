// Test doubles for the turn layer (testonly): a scriptable AuthorizerClient, a scriptable tool
// provider, and the tool registry and execution request the turn tests share. Thread-safe.

#ifndef SHAREDOS_ENVELOPE_SVC_TURN_TEST_SUPPORT_H_
#define SHAREDOS_ENVELOPE_SVC_TURN_TEST_SUPPORT_H_

#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/notification.h"
#include "envelope_svc/tools/tool_provider.h"
#include "envelope_svc/tools/tool_registry.h"
#include "envelope_svc/turn/authorizer_client.h"
#include "sharedos/protocol/v1/execution.pb.h"

namespace sharedos::envelope::turn::testing {

// An AuthorizerClient deciding from a few scripted rules: every lease resolves (hash
// "authority-hash-1") unless told otherwise; admission allows; every tool is discoverable
// unless withheld; Authorize allows (grant "grant-files") unless a rule for (namespace, path,
// action) says otherwise, and — like the real authorizer — a requirement naming an owner other
// than the context's is invalid_request; a no_matching_grant carries the required authority
// (authorizer_svc/core DescribeRequiredAuthority). RecordEscalation mints the ask like the
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

// A tool provider for tests: lists the definitions it was given; Invoke answers SUCCEEDED with
// output {"ok": true} unless the tool is scripted to fail (an error status), to answer a
// result for another call (invalid), or to wait for Release() (to hold a call in flight).
class FakeToolProvider : public tools::ToolProviderInterface {
 public:
  enum class Behavior { kSucceed, kError, kWrongCallId, kBlock };

  explicit FakeToolProvider(std::string id, std::vector<protocol::v1::ToolDefinition> listed = {})
      : id_(std::move(id)), listed_(std::move(listed)) {}

  void SetBehavior(const std::string& tool, Behavior behavior) ABSL_LOCKS_EXCLUDED(mu_);
  void FailListTools(absl::Status status) ABSL_LOCKS_EXCLUDED(mu_);
  // Notified when a blocked call has entered Invoke; Release() lets it answer.
  absl::Notification& entered() { return entered_; }
  void Release() { release_.Notify(); }
  std::vector<v1::InvokeRequest> invocations() const ABSL_LOCKS_EXCLUDED(mu_);

  absl::string_view id() const override { return id_; }
  absl::StatusOr<std::vector<protocol::v1::ToolDefinition>> ListTools(
      const v1::ProviderContext& context, absl::Time deadline) override ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<protocol::v1::ToolResult> Invoke(const v1::InvokeRequest& request,
                                                  absl::Time deadline) override
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const std::string id_;
  const std::vector<protocol::v1::ToolDefinition> listed_;
  absl::Notification entered_;
  absl::Notification release_;
  mutable absl::Mutex mu_;
  absl::Status list_status_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, Behavior> behaviors_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::InvokeRequest> invocations_ ABSL_GUARDED_BY(mu_);
};

// The turn tests' registry (files-bound tools run by the attached files provider):
//   files.read     read,  ceiling files/[]/read,   path appended from "path"
//   files.create   write, ceiling files/[]/create, path appended from "path" (not repeatable)
//   files.peek     read,  ceiling files/[]/read,   path + owner from "owner" (foreign owners)
//   files.fixed    read,  ceiling files/Docs/read, fixed requirement files/Other/read (outside)
//   notes.get      read,  tool namespace "notes",  ceiling notes/[]/read
//   sharedos.escalate (provider none)
// plus `extra_tools` more read tools "bulk.tool.<i>" (namespace files), for load tests.
std::unique_ptr<tools::ToolRegistry> TestRegistry(int extra_tools = 0);

// The turn tests' execution request: agent-assistant, for and owned by user-alice, in world-1
// ("project work", trace-1, namespaces files and sharedos enabled, message msg-1 "tidy my
// notes" from user-alice, now = 2026-08-11T09:00:00Z), asking for `tools`; no options.
sharedos::protocol::v1::ExecutionRequest TestExecutionRequest(
    std::initializer_list<absl::string_view> tools);

}  // namespace sharedos::envelope::turn::testing

#endif  // SHAREDOS_ENVELOPE_SVC_TURN_TEST_SUPPORT_H_
