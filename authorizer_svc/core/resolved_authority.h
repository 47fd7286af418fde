// Authority resolution (`TrustedAuthorityResolver`, semantics §3.2): a turn's grants, checked
// and precompiled for fast decisions, with their snapshot and the turn's host policy.

#ifndef SHAREDOS_AUTHORIZER_SVC_CORE_RESOLVED_AUTHORITY_H_
#define SHAREDOS_AUTHORIZER_SVC_CORE_RESOLVED_AUTHORITY_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "authorizer_svc/core/host_policy.h"
#include "capability/eligibility.h"
#include "capability/reason_codes.h"
#include "google/protobuf/timestamp.pb.h"
#include "sharedos/protocol/v1/context.pb.h"
#include "sharedos/protocol/v1/grant.pb.h"

namespace sharedos::authorizer::core {

// What was loaded for the turn (recorded on `authority.resolved`).
struct AuthoritySnapshot {
  // semantics §10.3 authorityHash (64 lowercase hex).
  std::string hash;
  // Sorted by UTF-16 code unit.
  std::vector<std::string> grant_ids;
  int grant_count = 0;
  // context.now.
  google::protobuf::Timestamp loaded_at;
};

namespace internal {

// The precompiled form the decision path reads. Strings a request is compared against are
// interned to dense ids; capabilities that can never match (an owner other than the context
// owner, an unspecified scope) are left out of the indexes.
struct CompiledCapability {
  uint32_t grant = 0;
  // Into CompiledAuthority::segments.
  uint32_t path_begin = 0;
  uint32_t path_size = 0;
  // segments[path_begin] when the path is not empty (a quick reject: every predicate needs
  // the first segments equal when both paths have one).
  uint32_t first_segment = 0;
  bool descendants = false;
};

struct CompiledGrant {
  // First failing of issuer, subject, namespace against the resolved context.
  std::optional<capability::RejectionReason> scope_rejection;
  capability::GrantActivity activity;
  // No scope rejection, window open at admission and purpose included: only expiry (and a
  // verifier, when installed) can still make the grant ineligible.
  bool eligible_at_admission = false;
  bool has_parent = false;
  std::optional<int64_t> max_uses;
};

// The part of the precompiled form that depends only on the grants (as validated, in order) and
// the context's owner, shared by every resolution of the same grants for the same owner.
struct CompiledIndex {
  std::vector<CompiledCapability> capabilities;
  std::vector<uint32_t> segments;
  // Keys view the strings of GrantSet::grants, which never change after compiling.
  absl::flat_hash_map<absl::string_view, uint32_t> namespace_ids;
  absl::flat_hash_map<absl::string_view, uint32_t> action_ids;
  absl::flat_hash_map<absl::string_view, uint32_t> segment_ids;
  // (namespace id << 32 | action id) → capabilities listing that action but not "*",
  // ascending (that is, in grant order, then capability order).
  absl::flat_hash_map<uint64_t, std::vector<uint32_t>> by_action;
  // namespace id → capabilities listing "*", ascending.
  absl::flat_hash_map<uint32_t, std::vector<uint32_t>> wildcard;
};

// A resolved grant set: the grants as validated with what is computed from them alone (and the
// owner, for the index). Immutable once built; kept process-wide (resolved_authority.cc) and
// shared by the authorities resolved from the same grants for the same owner.
struct GrantSet {
  // Keep alive the memo entries this set was built from: a set is found again by their
  // identity, which therefore cannot be reused while the set exists.
  std::vector<std::shared_ptr<const void>> pins;
  // In the order the grant source returned them, as validated (trimmed).
  std::vector<protocol::v1::CapabilityGrant> grants;
  // semantics §10.3 authorityHash, and the grant ids sorted by UTF-16 code unit.
  std::string hash;
  std::vector<std::string> sorted_ids;
  CompiledIndex index;
};

struct CompiledAuthority {
  // False when context.now is unparsable or purpose or traceId is empty (invalid_context).
  bool context_usable = false;
  int64_t admitted_ms = 0;
  std::vector<CompiledGrant> grants;
  // The grant set's index (owned by the authority's GrantSet).
  const CompiledIndex* index = nullptr;
  // Rules of the loaded policy that apply to the context's actor and purpose, in order.
  std::vector<const HostPolicyRule*> rules;
};

// The process-wide memo of grants already checked and rendered, and of grant sets already
// resolved (resolved_authority.cc): their sizes, and emptying both (benches measuring the first
// resolution of a grant set).
size_t GrantMemoSizeForTesting();
size_t GrantSetCacheSizeForTesting();
void ClearGrantMemoForTesting();

}  // namespace internal

// A turn's resolved authority. Immutable, so thread-safe to share (hold it by shared_ptr).
class ResolvedAuthority {
 public:
  ResolvedAuthority(const ResolvedAuthority&) = delete;
  ResolvedAuthority& operator=(const ResolvedAuthority&) = delete;

  // The admission context, as validated (trimmed).
  const protocol::v1::AccessContext& context() const { return context_; }
  // In the order the grant source returned them, as validated (trimmed).
  const std::vector<protocol::v1::CapabilityGrant>& grants() const { return set_->grants; }
  const AuthoritySnapshot& snapshot() const { return snapshot_; }
  const HostPolicyState& host_policy() const { return host_policy_; }

  // For the authorizer only (and tests: authorities of the same grants and owner share one set).
  const internal::CompiledAuthority& compiled() const { return compiled_; }
  const internal::GrantSet& grant_set() const { return *set_; }

 private:
  friend class AuthorityResolution;
  ResolvedAuthority() = default;

  protocol::v1::AccessContext context_;
  std::shared_ptr<const internal::GrantSet> set_;
  AuthoritySnapshot snapshot_;
  HostPolicyState host_policy_ = HostPolicyState::Absent();
  internal::CompiledAuthority compiled_;
};

// The outcome of resolving a turn's authority: resolved, or unavailable with an internal code
// that callers see as authority_unavailable (fail closed).
class AuthorityResolution {
 public:
  // Resolves `grants` (what the grant source returned for `context`) with the turn's host
  // policy. In order: more than 256 grants → grant_limit_exceeded; any grant failing strict
  // validation → invalid_grant_material; any grant of another namespace, subject or issuer →
  // grant_scope_mismatch (a superset answer fails closed; it is never filtered).
  // Computes the snapshot (authorityHash over the validated grants, sorted ids, count,
  // loadedAt = context.now) and the precompiled form. The context itself is not judged here:
  // decisions over an unusable context answer invalid_context.
  static AuthorityResolution Resolve(const protocol::v1::AccessContext& context,
                                     std::vector<protocol::v1::CapabilityGrant> grants,
                                     HostPolicyState host_policy);

  // The grant source could not be read (grant_source_failed) or another failure the caller
  // established; `detail` is for operators, never for agents.
  static AuthorityResolution Unavailable(capability::AuthorityCode code, std::string detail);

  bool resolved() const { return authority_ != nullptr; }
  // Set when resolved.
  const std::shared_ptr<const ResolvedAuthority>& authority() const { return authority_; }
  // Meaningful when not resolved.
  capability::AuthorityCode code() const { return code_; }
  const std::string& detail() const { return detail_; }

 private:
  AuthorityResolution() = default;

  std::shared_ptr<const ResolvedAuthority> authority_;
  capability::AuthorityCode code_ = capability::AuthorityCode::kGrantSourceFailed;
  std::string detail_;
};

}  // namespace sharedos::authorizer::core

#endif  // SHAREDOS_AUTHORIZER_SVC_CORE_RESOLVED_AUTHORITY_H_
