// Issue-time derivation of a delegated grant (`deriveGrant`, semantics §3.7). Pure: it refuses
// with the first failing reason and never clamps a request into shape.

#ifndef SHAREDOS_CAPABILITY_DERIVE_GRANT_H_
#define SHAREDOS_CAPABILITY_DERIVE_GRANT_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "capability/reason_codes.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/timestamp.pb.h"
#include "sharedos/protocol/v1/common.pb.h"
#include "sharedos/protocol/v1/grant.pb.h"

namespace sharedos::capability {

// What a delegator asks for. The issuer is implied (the parent's subject) and the namespace
// is the parent's.
struct DeriveRequest {
  std::string id;
  protocol::v1::Address subject;
  std::vector<protocol::v1::Capability> capabilities;
  // Omitted purposes, notBefore and expiresAt are inherited from the parent; an omitted
  // delegationDepth becomes the parent's depth − 1.
  std::optional<protocol::v1::CapabilityConstraints> constraints;
  google::protobuf::Timestamp issued_at;
  std::optional<google::protobuf::Struct> metadata;
};

// A derived grant, or the refusal.
struct DeriveResult {
  std::optional<DeriveRefusal> refusal;
  // Set when not refused.
  protocol::v1::CapabilityGrant grant;

  bool ok() const { return !refusal.has_value(); }
};

// Derives a child of `parent`. Refusals, in order: empty_capabilities,
// id_collides_with_parent, bounded_parent_not_delegable, parent_not_delegable (depth absent
// or ≤ 0), depth_exhausted (requested > parent − 1), capability_not_within_parent (each child
// capability within one parent capability in every context), purpose_not_within_parent,
// window_not_within_parent (notBefore earlier or expiresAt later than the parent's, or the
// window left empty after inheritance), issued_before_parent.
// Errors: INVALID_ARGUMENT when `parent` is not a valid grant, a request field is malformed
// (id, subject, a capability, constraints, issued_at, metadata), or the result would not be a
// valid grant. Thread-safe.
absl::StatusOr<DeriveResult> DeriveGrant(const protocol::v1::CapabilityGrant& parent,
                                         const DeriveRequest& request);

}  // namespace sharedos::capability

#endif  // SHAREDOS_CAPABILITY_DERIVE_GRANT_H_
