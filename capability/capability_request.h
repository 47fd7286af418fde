// Minting capability requests (ADR 0019, semantics §10.2): descriptions of wanted authority,
// never authority. The kernel mints id, namespaceId, requester, owner and requestedAt from the
// trusted context; the caller supplies only the ask. Stateless; thread-safe.

#ifndef SHAREDOS_CAPABILITY_CAPABILITY_REQUEST_H_
#define SHAREDOS_CAPABILITY_CAPABILITY_REQUEST_H_

#include "absl/status/statusor.h"
#include "sharedos/protocol/v1/common.pb.h"
#include "sharedos/protocol/v1/context.pb.h"
#include "sharedos/protocol/v1/grant.pb.h"

namespace sharedos::capability {

// `mintCapabilityRequest(context, ask)`: reads only capabilities, purpose, constraints (when
// set) and metadata (when set) from `ask`, discarding any identity fields it carries, and
// returns {id, namespaceId = context.namespaceId, requester = context.actor, owner =
// context.owner, capabilities, purpose, constraints?, requestedAt = context.now, metadata?},
// validated strictly (string fields trimmed). id = "capreq-" + sha256 of the canonical
// identity fields, so the same ask has the same id in every turn whatever its requestedAt or
// metadata.
// Errors: INVALID_ARGUMENT when the result is not a valid CapabilityRequest (a bad ask, or a
// context lacking one of the minted fields).
absl::StatusOr<protocol::v1::CapabilityRequest> MintCapabilityRequest(
    const protocol::v1::AccessContext& context, const protocol::v1::CapabilityRequest& ask);

// `describeRequiredAuthority`: the request an invocation no_matching_grant denial carries —
// exactly one exact capability {namespace, path, owner only if the requirement named one} with
// the one action, and purpose = context.purpose. Built from the requirement and the context
// alone, never from what exists, so it is no existence oracle.
// Errors: as MintCapabilityRequest.
absl::StatusOr<protocol::v1::CapabilityRequest> DescribeRequiredAuthority(
    const protocol::v1::AccessContext& context,
    const protocol::v1::CapabilityRequirement& requirement);

}  // namespace sharedos::capability

#endif  // SHAREDOS_CAPABILITY_CAPABILITY_REQUEST_H_
