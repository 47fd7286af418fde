// Capability matching on protocol messages (semantics §2.3, §2.4, and the "within" relations
// of §3.6 rule 7 and §3.7). These are the definitions; the precompiled decision path in
// authorizer.cc applies the same rules to interned data and is tested against these.
// Stateless; thread-safe.

#ifndef SHAREDOS_CAPABILITY_MATCHING_H_
#define SHAREDOS_CAPABILITY_MATCHING_H_

#include <string>

#include "absl/strings/string_view.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "sharedos/protocol/v1/common.pb.h"

namespace sharedos::capability {

using PathSegments = google::protobuf::RepeatedPtrField<std::string>;

// The literal wildcard action. "snapshot:*" is an ordinary string.
inline constexpr absl::string_view kWildcardAction = "*";

// True when `prefix` is a segment prefix of `path` (equal or shorter): "cell-3" never covers
// "cell-30".
bool IsSegmentPrefix(const PathSegments& prefix, const PathSegments& path);

// True when `action` is listed, or the literal "*" is. A request action "*" therefore only
// matches a capability that lists "*".
bool ActionsCover(const PathSegments& actions, absl::string_view action);

// Invocation matching (`capabilityMatches`, §2.3): same namespace, action covered, owners equal
// after defaulting to `context_owner`, and the path equal (exact) or under the capability's
// path (descendants). An unspecified scope matches nothing.
bool CapabilityMatches(const protocol::v1::Capability& capability,
                       const protocol::v1::CapabilityRequirement& requirement,
                       const protocol::v1::Address& context_owner);

// Discovery matching (`capabilityIntersectsCeiling`, §2.4) against a tool's declared ceiling:
// as CapabilityMatches, but an exact capability must lie inside the ceiling's path and a
// descendants capability must overlap it (either path a prefix of the other).
bool CapabilityIntersectsCeiling(const protocol::v1::Capability& capability,
                                 const protocol::v1::CapabilityRequirement& ceiling,
                                 const protocol::v1::Address& context_owner);

// Use-time containment (§3.6 rule 7): same namespace; owners equal after defaulting to
// `context_owner`; child actions a subset of the parent's unless the parent lists "*"; an
// exact parent admits only the same exact path; a descendants parent admits any path under it.
bool CapabilityWithin(const protocol::v1::Capability& child, const protocol::v1::Capability& parent,
                      const protocol::v1::Address& context_owner);

// Issue-time containment (§3.7): as CapabilityWithin but true in every context, so an unowned
// parent admits only an unowned child and an owned parent only the same owner.
bool CapabilityWithinInEveryContext(const protocol::v1::Capability& child,
                                    const protocol::v1::Capability& parent);

}  // namespace sharedos::capability

#endif  // SHAREDOS_CAPABILITY_MATCHING_H_
