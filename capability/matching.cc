#include "capability/matching.h"

#include <algorithm>

#include "capability/address.h"

namespace sharedos::capability {
namespace {

using ::sharedos::protocol::v1::Address;
using ::sharedos::protocol::v1::Capability;
using ::sharedos::protocol::v1::CapabilityRequirement;
using ::sharedos::protocol::v1::SCOPE_DESCENDANTS;
using ::sharedos::protocol::v1::SCOPE_EXACT;

bool SegmentsEqual(const PathSegments& a, const PathSegments& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

// Actions and path of `child` within `parent` (the part shared by both containment rules).
bool ActionsAndPathWithin(const Capability& child, const Capability& parent) {
  if (child.resource().namespace_() != parent.resource().namespace_()) return false;
  if (!ActionsCover(parent.actions(), kWildcardAction)) {
    for (const std::string& action : child.actions()) {
      if (std::find(parent.actions().begin(), parent.actions().end(), action) ==
          parent.actions().end()) {
        return false;
      }
    }
  }
  switch (parent.scope()) {
    case SCOPE_EXACT:
      return child.scope() == SCOPE_EXACT &&
             SegmentsEqual(child.resource().path(), parent.resource().path());
    case SCOPE_DESCENDANTS:
      return (child.scope() == SCOPE_EXACT || child.scope() == SCOPE_DESCENDANTS) &&
             IsSegmentPrefix(parent.resource().path(), child.resource().path());
    default:
      return false;
  }
}

}  // namespace

bool IsSegmentPrefix(const PathSegments& prefix, const PathSegments& path) {
  return prefix.size() <= path.size() && std::equal(prefix.begin(), prefix.end(), path.begin());
}

bool ActionsCover(const PathSegments& actions, absl::string_view action) {
  for (const std::string& listed : actions) {
    if (listed == action || listed == kWildcardAction) return true;
  }
  return false;
}

bool CapabilityMatches(const Capability& capability, const CapabilityRequirement& requirement,
                       const Address& context_owner) {
  const auto& resource = capability.resource();
  if (resource.namespace_() != requirement.resource().namespace_()) return false;
  if (!ActionsCover(capability.actions(), requirement.action())) return false;
  if (!AddressEquals(OwnerOrDefault(resource, context_owner),
                     OwnerOrDefault(requirement.resource(), context_owner))) {
    return false;
  }
  switch (capability.scope()) {
    case SCOPE_EXACT:
      return SegmentsEqual(resource.path(), requirement.resource().path());
    case SCOPE_DESCENDANTS:
      return IsSegmentPrefix(resource.path(), requirement.resource().path());
    default:
      return false;
  }
}

bool CapabilityIntersectsCeiling(const Capability& capability, const CapabilityRequirement& ceiling,
                                 const Address& context_owner) {
  const auto& resource = capability.resource();
  if (resource.namespace_() != ceiling.resource().namespace_()) return false;
  if (!ActionsCover(capability.actions(), ceiling.action())) return false;
  if (!AddressEquals(OwnerOrDefault(resource, context_owner),
                     OwnerOrDefault(ceiling.resource(), context_owner))) {
    return false;
  }
  switch (capability.scope()) {
    case SCOPE_EXACT:
      return IsSegmentPrefix(ceiling.resource().path(), resource.path());
    case SCOPE_DESCENDANTS:
      return IsSegmentPrefix(ceiling.resource().path(), resource.path()) ||
             IsSegmentPrefix(resource.path(), ceiling.resource().path());
    default:
      return false;
  }
}

bool CapabilityWithin(const Capability& child, const Capability& parent,
                      const Address& context_owner) {
  return AddressEquals(OwnerOrDefault(child.resource(), context_owner),
                       OwnerOrDefault(parent.resource(), context_owner)) &&
         ActionsAndPathWithin(child, parent);
}

bool CapabilityWithinInEveryContext(const Capability& child, const Capability& parent) {
  const bool owners_agree =
      parent.resource().has_owner()
          ? child.resource().has_owner() &&
                AddressEquals(child.resource().owner(), parent.resource().owner())
          : !child.resource().has_owner();
  return owners_agree && ActionsAndPathWithin(child, parent);
}

}  // namespace sharedos::capability
