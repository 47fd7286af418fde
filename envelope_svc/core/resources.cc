#include "envelope_svc/core/resources.h"

#include <algorithm>
#include <string>
#include <utility>

#include "capability/reason_codes.h"
#include "common/status/status_macros.h"
#include "common/validation/bounds.h"
#include "common/validation/protocol.h"
#include "envelope_svc/core/values.h"
#include "envelope_svc/tools/tool_provider.h"

namespace sharedos::envelope::core {
namespace {

namespace az = ::sharedos::authorizer::v1;
namespace pb = ::sharedos::protocol::v1;
namespace validation = ::sharedos::common::validation;
using values::TimestampOf;

pb::AuditOutcome OutcomeOf(v1::ResourceResultStatus status) {
  switch (status) {
    case v1::RESOURCE_RESULT_STATUS_SUCCEEDED:
      return pb::AUDIT_OUTCOME_SUCCEEDED;
    case v1::RESOURCE_RESULT_STATUS_DENIED:
      return pb::AUDIT_OUTCOME_DENIED;
    default:
      return pb::AUDIT_OUTCOME_FAILED;
  }
}

// A result is well formed: a status, the operation's id, a refusal's code an Identifier, an
// output that is a JSON value, metadata a JSON object.
bool ValidResult(const v1::ResourceResult& result, const std::string& operation_id) {
  if (result.operation_id() != operation_id) return false;
  if (result.has_metadata() && !validation::CheckJsonObject(result.metadata(), "metadata").ok()) {
    return false;
  }
  switch (result.status()) {
    case v1::RESOURCE_RESULT_STATUS_SUCCEEDED:
      return !result.has_output() || validation::CheckJsonValue(result.output(), "output").ok();
    case v1::RESOURCE_RESULT_STATUS_DENIED:
    case v1::RESOURCE_RESULT_STATUS_FAILED: {
      pb::ProtocolError error = result.error();
      return result.has_error() && validation::ValidateProtocolError(&error, "error").ok() &&
             error.code() == result.error().code();
    }
    default:
      return false;
  }
}

}  // namespace

absl::Status ValidateResourceOperation(v1::InvokeResourceRequest* operation) {
  RETURN_IF_ERROR(
      validation::CheckIdentifier(operation->mutable_operation_id(), "request.operation_id"));
  pb::CapabilityRequirement requirement;
  if (operation->has_resource()) *requirement.mutable_resource() = operation->resource();
  requirement.set_action(operation->action());
  RETURN_IF_ERROR(validation::ValidateCapabilityRequirement(&requirement, "request"));
  *operation->mutable_resource() = requirement.resource();
  operation->set_action(requirement.action());
  if (operation->has_input()) {
    RETURN_IF_ERROR(validation::CheckJsonValue(operation->input(), "request.input"));
  }
  if (operation->has_metadata()) {
    RETURN_IF_ERROR(validation::CheckJsonObject(operation->metadata(), "request.metadata"));
  }
  return absl::OkStatus();
}

pb::AuditEvent ResourceInvokedEvent(const pb::AccessContext& context, absl::Time at,
                                    const ResourceInvokedFacts& facts) {
  pb::AuditEvent event;
  event.set_version("1");
  event.set_type(pb::AUDIT_EVENT_TYPE_RESOURCE_INVOKED);
  event.set_outcome(facts.outcome);
  *event.mutable_at() = TimestampOf(at);
  event.set_trace_id(context.trace_id());
  event.set_namespace_id(context.namespace_id());
  *event.mutable_actor() = context.actor();
  *event.mutable_authority() = context.authority();
  *event.mutable_owner() = context.owner();
  event.set_purpose(context.purpose());
  event.set_source(pb::AUDIT_SOURCE_KERNEL);
  event.set_operation_id(facts.operation_id);
  *event.mutable_resource() = facts.resource;
  event.set_action(facts.action);
  if (!facts.reason.empty()) event.set_reason(facts.reason);
  if (facts.fail_closed) event.set_fail_closed(true);
  if (!facts.grant_id.empty()) event.set_grant_id(facts.grant_id);
  return event;
}

v1::ResourceResult KernelResourceResult(absl::string_view operation_id,
                                        v1::ResourceResultStatus status, absl::string_view code,
                                        absl::Time at) {
  v1::ResourceResult result;
  result.set_operation_id(std::string(operation_id));
  result.set_status(status);
  *result.mutable_completed_at() = TimestampOf(at);
  pb::ProtocolError* error = result.mutable_error();
  error->set_code(std::string(code));
  error->set_message(std::string(capability::CodeMessage(code)));
  error->set_retryable(false);
  return result;
}

ResourceInvoker::ResourceInvoker(authorizer::client::AuthorizerClient& authorizer,
                                 audit::client::AuditWriter& audit,
                                 resources::ResourceProviders providers, const common::Clock& clock,
                                 Options options)
    : authorizer_(authorizer),
      audit_(audit),
      providers_(std::move(providers)),
      clock_(clock),
      options_(std::move(options)) {}

v1::ResourceResult ResourceInvoker::Run(const ResourceScope& scope,
                                        const v1::InvokeResourceRequest& operation,
                                        absl::Time now) {
  auto provider = providers_.find(operation.resource().namespace_());
  if (provider == providers_.end() || provider->second == nullptr) {
    return KernelResourceResult(operation.operation_id(), v1::RESOURCE_RESULT_STATUS_FAILED,
                                capability::kResourceProviderNotFound, clock_.Now());
  }
  v1::ResourceInvokeRequest request;
  request.set_operation_id(operation.operation_id());
  *request.mutable_resource() = operation.resource();
  request.set_action(operation.action());
  if (operation.has_input()) *request.mutable_input() = operation.input();
  *request.mutable_context() = tools::ProviderContextOf(*scope.context);
  const absl::Time deadline = options_.deadline_clock->Now() +
                              std::max(absl::ZeroDuration(), std::min(options_.provider_timeout,
                                                                      scope.turn_deadline - now));
  absl::StatusOr<v1::ResourceResult> result = provider->second->Invoke(request, deadline);
  if (!result.ok()) {
    return KernelResourceResult(operation.operation_id(), v1::RESOURCE_RESULT_STATUS_FAILED,
                                capability::kResourceExecutionFailed, clock_.Now());
  }
  if (!ValidResult(*result, operation.operation_id())) {
    return KernelResourceResult(operation.operation_id(), v1::RESOURCE_RESULT_STATUS_FAILED,
                                capability::kInvalidResourceResult, clock_.Now());
  }
  if (!result->has_completed_at()) *result->mutable_completed_at() = TimestampOf(clock_.Now());
  return *std::move(result);
}

v1::ResourceResult ResourceInvoker::Invoke(const ResourceScope& scope,
                                           const v1::InvokeResourceRequest& request,
                                           absl::Time now) {
  const pb::AccessContext& context = *scope.context;
  v1::InvokeResourceRequest operation = request;
  if (!operation.resource().has_owner()) {
    *operation.mutable_resource()->mutable_owner() = context.owner();
  }
  ResourceInvokedFacts facts;
  facts.operation_id = operation.operation_id();
  facts.resource = operation.resource();
  facts.action = operation.action();
  auto record = [&](const v1::ResourceResult& result) {
    facts.outcome = OutcomeOf(result.status());
    if (result.status() != v1::RESOURCE_RESULT_STATUS_SUCCEEDED) {
      // failClosed as decided where the refusal was (the authorizer's flag, or the authorizer
      // found down); a provider's own refusal never is one.
      facts.reason = result.error().code();
    }
    // Post-effect: an outage delays the record (the writer's outbox), never the answer.
    (void)audit_.RecordPostEffect(ResourceInvokedEvent(context, now, facts));
    return result;
  };

  az::AuthorizeRequest authorize;
  authorize.set_lease_id(scope.lease_id);
  pb::CapabilityRequirement* requirement = authorize.mutable_requirement();
  *requirement->mutable_resource() = operation.resource();
  requirement->set_action(operation.action());
  authorize.set_consume(true);
  *authorize.mutable_operation_instant() = TimestampOf(now);
  authorize.set_operation_id(operation.operation_id());
  absl::StatusOr<az::AuthorizeResponse> decided =
      authorizer_.Authorize(authorize, options_.authorizer_timeout);
  if (!decided.ok()) {
    facts.fail_closed = true;
    return record(KernelResourceResult(operation.operation_id(), v1::RESOURCE_RESULT_STATUS_DENIED,
                                       capability::kAuthorityUnavailable, now));
  }
  facts.grant_id = decided->decision().matched_grant_id();
  if (!decided->decision().allowed()) {
    const std::string code = decided->decision().reason_code().empty()
                                 ? std::string(capability::kNoMatchingGrant)
                                 : decided->decision().reason_code();
    facts.fail_closed = decided->fail_closed();
    return record(KernelResourceResult(operation.operation_id(), v1::RESOURCE_RESULT_STATUS_DENIED,
                                       code, now));
  }
  return record(Run(scope, operation, now));
}

}  // namespace sharedos::envelope::core
