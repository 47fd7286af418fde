// Request builders of sharedosctl commands: flag values checked here and turned into the
// GrantStore and AuditLog requests. The audit filter and the escalation resolution are the
// reviewer console's too: their flags are handed to grantstore_svc/client/operator_requests.h.
// Pure.
#ifndef SHAREDOS_TOOLS_SHAREDOSCTL_REQUESTS_H_
#define SHAREDOS_TOOLS_SHAREDOSCTL_REQUESTS_H_

#include "absl/status/statusor.h"
#include "sharedos/audit/v1/audit.pb.h"
#include "sharedos/grantstore/v1/grantstore.pb.h"
#include "tools/sharedosctl/cli.h"

namespace sharedos::sharedosctl {

// Errors: INVALID_ARGUMENT naming the flag.
absl::StatusOr<grantstore::v1::ListGrantsRequest> BuildListGrants(const Invocation& invocation);
absl::StatusOr<audit::v1::AuditFilter> BuildAuditFilter(const Invocation& invocation);
absl::StatusOr<grantstore::v1::ResolveEscalationRequest> BuildResolveEscalation(
    const Invocation& invocation, grantstore::v1::EscalationDecision decision);
absl::StatusOr<audit::v1::VerifyRequest> BuildVerify(const Invocation& invocation);

}  // namespace sharedos::sharedosctl

#endif  // SHAREDOS_TOOLS_SHAREDOSCTL_REQUESTS_H_
