// authorizer_svc's named errors (the gRPC errors of authorizer.proto), so tests match on code +
// substring and messages stay the same everywhere. Denials are never errors: they are
// decisions. Stateless; thread-safe.

#ifndef SHAREDOS_AUTHORIZER_SVC_SERVICE_ERRORS_H_
#define SHAREDOS_AUTHORIZER_SVC_SERVICE_ERRORS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace sharedos::authorizer::service::errors {

// INVALID_ARGUMENT "lease_id: malformed (<why>)": not a lease this service issued.
absl::Status LeaseMalformed(absl::string_view why);
// INVALID_ARGUMENT "lease_id: integrity check failed": a lease id whose MAC does not verify
// (altered, forged, or issued under another deployment's secret).
absl::Status LeaseTampered();
// NOT_FOUND "lease expired": past the expiry the lease was opened with.
absl::Status LeaseExpired();
// NOT_FOUND "lease closed": closed on this replica.
absl::Status LeaseClosed();
// INVALID_ARGUMENT "subject: neither lease_id nor context is set".
absl::Status NoSubject();
// INVALID_ARGUMENT "timeout: <problem>".
absl::Status BadTimeout(absl::string_view problem);
// INVALID_ARGUMENT "tools: <problem>" / "tools[i].name: duplicate".
absl::Status BadTools(absl::string_view path, absl::string_view problem);
// INVALID_ARGUMENT "requested_authority_ask: <problem>": the ask does not make a valid
// CapabilityRequest once minted.
absl::Status BadAsk(absl::string_view problem);
// UNAVAILABLE "escalation not stored: grantstore_svc answered <code>" (RecordEscalation only).
absl::Status EscalationNotStored(absl::StatusCode store_code);

}  // namespace sharedos::authorizer::service::errors

#endif  // SHAREDOS_AUTHORIZER_SVC_SERVICE_ERRORS_H_
