// The kernel's resource plane (semantics §1.13, §3.9 `invokeResource`, §5.2 `resource.invoked`,
// §6.3), over a turn's trusted context and its authority lease — Envelope.InvokeResource, a host
// invoking a resource operation for a turn's actor. The checks in order:
//   the operation is valid                           (the caller: INVALID_ARGUMENT)
//   the resource's owner, when absent, is the context's owner
//   Authorize resource / action, consuming:
//              the authorizer does not answer         denied authority_unavailable (fail closed)
//              denied                                 denied <its code> (e.g. no_matching_grant)
//   no provider serves the resource's namespace       failed resource_provider_not_found
//   the provider errs                                 failed resource_execution_failed
//   its result is malformed (no status, another operation id, a refusal without a code, an
//   output that is not a JSON value)                  failed invalid_resource_result
//   otherwise the provider's result.
// Every outcome is audited once as resource.invoked (post-effect, source kernel): operationId,
// resource, action, grantId, reason, failClosed — never the input or the output. The decision's
// own authorization.checked is the authorizer's (pre-effect). Thread-safe.

#ifndef SHAREDOS_ENVELOPE_SVC_CORE_RESOURCES_H_
#define SHAREDOS_ENVELOPE_SVC_CORE_RESOURCES_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "audit_svc/client/audit_writer.h"
#include "authorizer_svc/client/authorizer_client.h"
#include "common/time/clock.h"
#include "envelope_svc/resources/resource_provider.h"
#include "sharedos/envelope/v1/resources.pb.h"
#include "sharedos/protocol/v1/audit.pb.h"
#include "sharedos/protocol/v1/common.pb.h"
#include "sharedos/protocol/v1/context.pb.h"

namespace sharedos::envelope::core {

// The trusted view of the invoking turn.
struct ResourceScope {
  const protocol::v1::AccessContext* context = nullptr;
  std::string lease_id;
  // Provider calls never outlast the turn (on the turn's clock).
  absl::Time turn_deadline = absl::InfiniteFuture();
};

// What one resource.invoked record states.
struct ResourceInvokedFacts {
  std::string operation_id;
  protocol::v1::ResourceRef resource;
  std::string action;
  protocol::v1::AuditOutcome outcome = protocol::v1::AUDIT_OUTCOME_SUCCEEDED;
  std::string reason;
  bool fail_closed = false;
  std::string grant_id;
};

// resource.invoked (post-effect, source kernel), stamped from `context` at `at`.
protocol::v1::AuditEvent ResourceInvokedEvent(const protocol::v1::AccessContext& context,
                                              absl::Time at, const ResourceInvokedFacts& facts);

class ResourceInvoker {
 public:
  struct Options {
    absl::Duration authorizer_timeout = absl::Seconds(2);
    // Per provider call (never past the turn's deadline).
    absl::Duration provider_timeout = absl::Seconds(30);
    // Provider deadlines are wall-clock time.
    const common::Clock* deadline_clock = &common::RealClock();
  };

  // `providers` by resource namespace (pointers borrowed); borrows all.
  ResourceInvoker(authorizer::client::AuthorizerClient& authorizer,
                  audit::client::AuditWriter& audit, resources::ResourceProviders providers,
                  const common::Clock& clock, Options options);

  // invokeResource of a valid `operation` (operation_id an Identifier, resource and action
  // normalised, input a JSON value) at the operation instant `now`. Answers the result; never
  // an error.
  v1::ResourceResult Invoke(const ResourceScope& scope, const v1::InvokeResourceRequest& operation,
                            absl::Time now);

 private:
  // The provider's result for the authorized operation, checked; a kernel failure otherwise.
  v1::ResourceResult Run(const ResourceScope& scope, const v1::InvokeResourceRequest& operation,
                         absl::Time now);

  authorizer::client::AuthorizerClient& authorizer_;
  audit::client::AuditWriter& audit_;
  const resources::ResourceProviders providers_;
  const common::Clock& clock_;
  const Options options_;
};

// Checks and normalises an InvokeResourceRequest's operation (turn_id is the caller's): the
// operation_id an Identifier, the resource a ResourceRef, the action an Action, input a JSON
// value and metadata a JSON object when present.
// Errors: INVALID_ARGUMENT naming the field (e.g. "request.resource.namespace: ...").
absl::Status ValidateResourceOperation(v1::InvokeResourceRequest* operation);

// A kernel-built result: `status` with ProtocolError{code, fixed message, retryable false}.
v1::ResourceResult KernelResourceResult(absl::string_view operation_id,
                                        v1::ResourceResultStatus status, absl::string_view code,
                                        absl::Time at);

}  // namespace sharedos::envelope::core

#endif  // SHAREDOS_ENVELOPE_SVC_CORE_RESOURCES_H_
