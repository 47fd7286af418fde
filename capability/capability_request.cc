#include "capability/capability_request.h"

#include <utility>

#include "common/json/hashes.h"
#include "common/status/status_macros.h"
#include "common/validation/protocol.h"

namespace sharedos::capability {

using ::sharedos::protocol::v1::AccessContext;
using ::sharedos::protocol::v1::CapabilityRequest;

absl::StatusOr<CapabilityRequest> MintCapabilityRequest(const AccessContext& context,
                                                        const CapabilityRequest& ask) {
  CapabilityRequest request;
  request.set_namespace_id(context.namespace_id());
  *request.mutable_requester() = context.actor();
  *request.mutable_owner() = context.owner();
  *request.mutable_capabilities() = ask.capabilities();
  request.set_purpose(ask.purpose());
  if (ask.has_constraints()) *request.mutable_constraints() = ask.constraints();
  *request.mutable_requested_at() = context.now();
  if (ask.has_metadata()) *request.mutable_metadata() = ask.metadata();
  // Validation requires an id; the real one is derived from the normalised fields below.
  request.set_id(std::string(common::kCapabilityRequestIdPrefix));
  RETURN_IF_ERROR(common::validation::ValidateCapabilityRequest(&request, "request"));
  ASSIGN_OR_RETURN(*request.mutable_id(), common::CapabilityRequestId(request));
  return request;
}

absl::StatusOr<CapabilityRequest> DescribeRequiredAuthority(
    const AccessContext& context, const protocol::v1::CapabilityRequirement& requirement) {
  CapabilityRequest ask;
  protocol::v1::Capability* capability = ask.add_capabilities();
  *capability->mutable_resource() = requirement.resource();
  capability->add_actions(requirement.action());
  capability->set_scope(protocol::v1::SCOPE_EXACT);
  ask.set_purpose(context.purpose());
  return MintCapabilityRequest(context, ask);
}

}  // namespace sharedos::capability
