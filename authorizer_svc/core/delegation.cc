#include "authorizer_svc/core/delegation.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "capability/address.h"
#include "capability/matching.h"
#include "capability/reason_codes.h"
#include "common/validation/protocol.h"

namespace sharedos::authorizer::core {
namespace {

using ::sharedos::protocol::v1::AccessContext;
using ::sharedos::protocol::v1::Capability;
using ::sharedos::protocol::v1::CapabilityGrant;

bool IsSubset(const capability::PathSegments& subset, const capability::PathSegments& superset) {
  return std::all_of(subset.begin(), subset.end(), [&](const std::string& item) {
    return std::find(superset.begin(), superset.end(), item) != superset.end();
  });
}

// Rule 8: the child's constraints lie within the parent's; an omitted one widens.
bool ConstraintsWithin(const CapabilityGrant& child, const CapabilityGrant& parent) {
  const std::optional<int64_t> child_issued =
      child.has_issued_at() ? capability::TimestampMillis(child.issued_at()) : std::nullopt;
  const std::optional<int64_t> parent_issued =
      parent.has_issued_at() ? capability::TimestampMillis(parent.issued_at()) : std::nullopt;
  if (!child_issued || !parent_issued || *child_issued < *parent_issued) return false;

  const auto& c = child.constraints();
  const auto& p = parent.constraints();
  if (p.has_expires_at()) {
    if (!c.has_expires_at()) return false;
    const std::optional<int64_t> child_expires = capability::TimestampMillis(c.expires_at());
    const std::optional<int64_t> parent_expires = capability::TimestampMillis(p.expires_at());
    if (!child_expires || !parent_expires || *child_expires > *parent_expires) return false;
  }
  if (p.has_not_before()) {
    const std::optional<int64_t> child_start =
        c.has_not_before() ? capability::TimestampMillis(c.not_before()) : child_issued;
    const std::optional<int64_t> parent_start = capability::TimestampMillis(p.not_before());
    if (!child_start || !parent_start || *child_start < *parent_start) return false;
  }
  if (!p.purposes().empty()) {
    if (c.purposes().empty() || !IsSubset(c.purposes(), p.purposes())) return false;
  }
  return true;
}

// Rules 1–8 for one link; nullopt when the link holds.
std::optional<capability::DelegationCode> CheckLink(const CapabilityGrant& child,
                                                    const CapabilityGrant& parent,
                                                    const AccessContext& context,
                                                    const capability::DecisionInstants& instants) {
  if (parent.namespace_id() != child.namespace_id()) {
    return capability::DelegationCode::kNamespaceMismatch;
  }
  if (!capability::AddressEquals(child.issuer(), parent.subject())) {
    return capability::DelegationCode::kIssuerNotParentSubject;
  }
  if (capability::InactiveReason(parent, context.purpose(), instants).has_value()) {
    return capability::DelegationCode::kParentInactive;
  }
  const auto& parent_constraints = parent.constraints();
  if (!parent_constraints.has_delegation_depth() || parent_constraints.delegation_depth() < 1) {
    return capability::DelegationCode::kDelegationNotPermitted;
  }
  const int64_t child_depth =
      child.constraints().has_delegation_depth() ? child.constraints().delegation_depth() : 0;
  if (child_depth > int64_t{parent_constraints.delegation_depth()} - 1) {
    return capability::DelegationCode::kDelegationDepthExceeded;
  }
  if (parent_constraints.has_max_uses())
    return capability::DelegationCode::kBoundedParentNotDelegable;
  for (const Capability& capability : child.capabilities()) {
    const bool within =
        std::any_of(parent.capabilities().begin(), parent.capabilities().end(),
                    [&](const Capability& candidate) {
                      return capability::CapabilityWithin(capability, candidate, context.owner());
                    });
    if (!within) return capability::DelegationCode::kCapabilityWidened;
  }
  if (!ConstraintsWithin(child, parent)) return capability::DelegationCode::kConstraintsWidened;
  return std::nullopt;
}

ChainVerdict Fail(ChainVerdict verdict, capability::DelegationCode code,
                  const std::string& grant_id) {
  verdict.status =
      capability::IsUnverified(code) ? ChainStatus::kUnverified : ChainStatus::kInvalid;
  verdict.code = code;
  verdict.grant_id = grant_id;
  return verdict;
}

}  // namespace

ChainVerdict ValidateDelegationChain(const CapabilityGrant& leaf, const AccessContext& context,
                                     const capability::DecisionInstants& instants,
                                     DelegationResolver* resolver, int max_chain_length) {
  ChainVerdict verdict;
  if (leaf.parent_grant_id().empty()) return verdict;

  absl::flat_hash_set<std::string> seen = {leaf.id()};
  CapabilityGrant child = leaf;
  int chain_length = 1;
  while (!child.parent_grant_id().empty()) {
    if (resolver == nullptr) {
      return Fail(std::move(verdict), capability::DelegationCode::kResolverUnavailable, child.id());
    }
    if (chain_length >= max_chain_length) {
      return Fail(std::move(verdict), capability::DelegationCode::kChainTooLong, child.id());
    }
    absl::StatusOr<std::optional<CapabilityGrant>> resolved =
        resolver->Resolve(child.namespace_id(), child.parent_grant_id());
    if (!resolved.ok()) {
      return Fail(std::move(verdict), capability::DelegationCode::kResolverFailed, child.id());
    }
    if (!resolved->has_value()) {
      return Fail(std::move(verdict), capability::DelegationCode::kParentNotFound, child.id());
    }
    CapabilityGrant parent = std::move(**resolved);
    // An answer that is not a grant, or not the one asked for, is a failed lookup.
    if (!common::validation::ValidateCapabilityGrant(&parent, "parent").ok() ||
        parent.id() != child.parent_grant_id()) {
      return Fail(std::move(verdict), capability::DelegationCode::kResolverFailed, child.id());
    }
    if (!seen.insert(parent.id()).second) {
      return Fail(std::move(verdict), capability::DelegationCode::kChainCycle, child.id());
    }
    if (std::optional<capability::DelegationCode> code =
            CheckLink(child, parent, context, instants)) {
      return Fail(std::move(verdict), *code, child.id());
    }
    verdict.ancestor_ids.push_back(parent.id());
    child = std::move(parent);
    ++chain_length;
  }
  return verdict;
}

}  // namespace sharedos::authorizer::core
