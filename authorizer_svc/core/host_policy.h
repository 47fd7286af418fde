// The host ceiling as versioned data (ADR 0020; architecture §4): deny rules loaded once per
// turn with the authority, evaluated synchronously in-process for every grant that matched a
// request, before any use is consumed, on invocation and on discovery alike. A ceiling only
// narrows: a rule can turn an allow into host_policy_denied, never a denial into an allow.
// Value types; thread-compatible (immutable once built, so safe to share read-only).

#ifndef SHAREDOS_AUTHORIZER_SVC_CORE_HOST_POLICY_H_
#define SHAREDOS_AUTHORIZER_SVC_CORE_HOST_POLICY_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "sharedos/protocol/v1/common.pb.h"
#include "sharedos/protocol/v1/context.pb.h"

namespace sharedos::authorizer::core {

// One deny rule. A rule denies a request when every field matches; an empty list matches
// everything, and "*" in `actions` matches every action.
struct HostPolicyRule {
  // Named in the denial's metadata. Non-empty, unique within a policy.
  std::string id;
  // The resource namespace (exact).
  std::string resource_namespace;
  std::vector<std::string> path;
  // SCOPE_EXACT: the request path equals `path`; SCOPE_DESCENDANTS: `path` is a segment
  // prefix of the request path.
  protocol::v1::Scope scope = protocol::v1::SCOPE_EXACT;
  std::vector<std::string> actions;
  std::vector<protocol::v1::Address> actors;
  std::vector<std::string> purposes;
};

struct HostPolicy {
  // Non-empty (a policy without a version is unavailable).
  std::string version;
  std::vector<HostPolicyRule> rules;
};

// The turn's policy: absent (no ceiling installed), loaded, or unavailable (fail closed).
class HostPolicyState {
 public:
  enum class Status { kAbsent, kLoaded, kUnavailable };

  static HostPolicyState Absent() { return HostPolicyState(Status::kAbsent, {}); }
  static HostPolicyState Unavailable() { return HostPolicyState(Status::kUnavailable, {}); }
  // Loaded when `policy` is well formed; unavailable when its version is empty or a rule has
  // an empty or duplicate id, an empty namespace or an unspecified scope.
  static HostPolicyState Loaded(HostPolicy policy);

  Status status() const { return status_; }
  // Meaningful when loaded.
  const HostPolicy& policy() const { return policy_; }

 private:
  HostPolicyState(Status status, HostPolicy policy) : status_(status), policy_(std::move(policy)) {}

  Status status_;
  HostPolicy policy_;
};

// True when `rule` applies to the context's actor and purpose (the part fixed for a turn).
bool RuleAppliesTo(const HostPolicyRule& rule, const protocol::v1::AccessContext& context);

// True when `rule` covers the requirement's namespace, path and action.
bool RuleCovers(const HostPolicyRule& rule, const protocol::v1::CapabilityRequirement& requirement);

// The first rule of `policy` denying `requirement` for `context`, or nullptr.
const HostPolicyRule* FirstDenyingRule(const HostPolicy& policy,
                                       const protocol::v1::CapabilityRequirement& requirement,
                                       const protocol::v1::AccessContext& context);

}  // namespace sharedos::authorizer::core

#endif  // SHAREDOS_AUTHORIZER_SVC_CORE_HOST_POLICY_H_
