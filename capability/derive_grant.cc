#include "capability/derive_grant.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "capability/eligibility.h"
#include "capability/matching.h"
#include "common/status/status_macros.h"
#include "common/validation/bounds.h"
#include "common/validation/protocol.h"

namespace sharedos::capability {
namespace {

namespace validation = ::sharedos::common::validation;
using ::sharedos::protocol::v1::Address;
using ::sharedos::protocol::v1::Capability;
using ::sharedos::protocol::v1::CapabilityConstraints;
using ::sharedos::protocol::v1::CapabilityGrant;

// The request's own fields, normalised (trimmed) and checked one by one.
struct NormalisedRequest {
  std::string id;
  Address subject;
  std::vector<Capability> capabilities;
  CapabilityConstraints constraints;
  int64_t issued_at_ms = 0;
};

absl::StatusOr<NormalisedRequest> Normalise(const DeriveRequest& request) {
  NormalisedRequest normalised{request.id, request.subject, request.capabilities,
                               request.constraints.value_or(CapabilityConstraints()), 0};
  RETURN_IF_ERROR(validation::CheckIdentifier(&normalised.id, "request.id"));
  RETURN_IF_ERROR(validation::ValidateAddress(&normalised.subject, "request.subject"));
  for (size_t i = 0; i < normalised.capabilities.size(); ++i) {
    RETURN_IF_ERROR(validation::ValidateCapability(
        &normalised.capabilities[i], validation::IndexPath("request.capabilities", i)));
  }
  RETURN_IF_ERROR(
      validation::ValidateCapabilityConstraints(&normalised.constraints, "request.constraints"));
  const std::optional<int64_t> issued = TimestampMillis(request.issued_at);
  if (!issued.has_value()) {
    return validation::InvalidArgumentAt("request.issued_at", "invalid timestamp");
  }
  normalised.issued_at_ms = *issued;
  return normalised;
}

bool WithinOneParentCapability(const Capability& child, const CapabilityGrant& parent) {
  return std::any_of(parent.capabilities().begin(), parent.capabilities().end(),
                     [&](const Capability& candidate) {
                       return CapabilityWithinInEveryContext(child, candidate);
                     });
}

// notBefore/expiresAt of the child within the parent's, and non-empty once inherited. (All
// timestamps were validated; an absent bound is the widest instant.)
bool WindowWithinParent(const CapabilityConstraints& child, const CapabilityConstraints& parent) {
  constexpr int64_t kEarliest = std::numeric_limits<int64_t>::min();
  constexpr int64_t kLatest = std::numeric_limits<int64_t>::max();
  const auto millis = [](bool present, const google::protobuf::Timestamp& timestamp,
                         int64_t absent) {
    return present ? TimestampMillis(timestamp).value_or(absent) : absent;
  };
  const int64_t parent_not_before = millis(parent.has_not_before(), parent.not_before(), kEarliest);
  const int64_t parent_expires_at = millis(parent.has_expires_at(), parent.expires_at(), kLatest);
  const int64_t not_before = millis(child.has_not_before(), child.not_before(), parent_not_before);
  const int64_t expires_at = millis(child.has_expires_at(), child.expires_at(), parent_expires_at);
  return not_before >= parent_not_before && expires_at <= parent_expires_at &&
         not_before <= expires_at;
}

DeriveResult Refuse(DeriveRefusal refusal) {
  DeriveResult result;
  result.refusal = refusal;
  return result;
}

}  // namespace

absl::StatusOr<DeriveResult> DeriveGrant(const CapabilityGrant& parent,
                                         const DeriveRequest& request) {
  if (request.capabilities.empty()) return Refuse(DeriveRefusal::kEmptyCapabilities);
  CapabilityGrant checked_parent = parent;
  RETURN_IF_ERROR(validation::ValidateCapabilityGrant(&checked_parent, "parent"));
  ASSIGN_OR_RETURN(NormalisedRequest child, Normalise(request));
  const CapabilityConstraints& p = checked_parent.constraints();
  CapabilityConstraints& c = child.constraints;

  if (child.id == checked_parent.id()) return Refuse(DeriveRefusal::kIdCollidesWithParent);
  if (p.has_max_uses()) return Refuse(DeriveRefusal::kBoundedParentNotDelegable);
  if (!p.has_delegation_depth() || p.delegation_depth() <= 0) {
    return Refuse(DeriveRefusal::kParentNotDelegable);
  }
  if (c.has_delegation_depth() && c.delegation_depth() > p.delegation_depth() - 1) {
    return Refuse(DeriveRefusal::kDepthExhausted);
  }
  for (const Capability& capability : child.capabilities) {
    if (!WithinOneParentCapability(capability, checked_parent)) {
      return Refuse(DeriveRefusal::kCapabilityNotWithinParent);
    }
  }
  if (!p.purposes().empty() && !c.purposes().empty()) {
    for (const std::string& purpose : c.purposes()) {
      if (std::find(p.purposes().begin(), p.purposes().end(), purpose) == p.purposes().end()) {
        return Refuse(DeriveRefusal::kPurposeNotWithinParent);
      }
    }
  }
  if (!WindowWithinParent(c, p)) return Refuse(DeriveRefusal::kWindowNotWithinParent);
  if (child.issued_at_ms < *TimestampMillis(checked_parent.issued_at())) {
    return Refuse(DeriveRefusal::kIssuedBeforeParent);
  }

  // Inherit what the request omitted, so the child states its own limits.
  if (c.purposes().empty()) *c.mutable_purposes() = p.purposes();
  if (!c.has_not_before() && p.has_not_before()) *c.mutable_not_before() = p.not_before();
  if (!c.has_expires_at() && p.has_expires_at()) *c.mutable_expires_at() = p.expires_at();
  if (!c.has_delegation_depth()) c.set_delegation_depth(p.delegation_depth() - 1);

  DeriveResult result;
  CapabilityGrant& grant = result.grant;
  grant.set_id(std::move(child.id));
  grant.set_namespace_id(checked_parent.namespace_id());
  *grant.mutable_subject() = std::move(child.subject);
  *grant.mutable_issuer() = checked_parent.subject();
  for (Capability& capability : child.capabilities) {
    *grant.add_capabilities() = std::move(capability);
  }
  *grant.mutable_constraints() = std::move(c);
  *grant.mutable_issued_at() = request.issued_at;
  grant.set_parent_grant_id(checked_parent.id());
  if (request.metadata.has_value()) *grant.mutable_metadata() = *request.metadata;
  RETURN_IF_ERROR(validation::ValidateCapabilityGrant(&grant, "grant"));
  return result;
}

}  // namespace sharedos::capability
