#include "envelope_svc/core/turn_engine.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "capability/address.h"
#include "capability/errors.h"
#include "capability/reason_codes.h"
#include "common/status/status_macros.h"
#include "common/validation/protocol.h"
#include "common/validation/unknown_fields.h"
#include "envelope_svc/core/tool_namespaces.h"
#include "envelope_svc/tools/escalation_tool.h"

namespace sharedos::envelope::core {
namespace {

namespace pb = ::sharedos::protocol::v1;
namespace validation = ::sharedos::common::validation;

// How often a watcher waiting for events looks at whether its reader is gone.
constexpr absl::Duration kWatchPoll = absl::Milliseconds(100);

Admission::Options AdmissionOptions(const TurnEngine::Options& options) {
  Admission::Options admission;
  admission.default_max_steps = options.default_max_steps;
  admission.default_max_tool_calls = options.default_max_tool_calls;
  admission.default_timeout_ms = options.default_timeout_ms;
  admission.drain_grace = options.drain_grace;
  admission.lease_grace = options.lease_grace;
  admission.authorizer_timeout = options.authorizer_timeout;
  admission.catalog_timeout = options.catalog_timeout;
  admission.deadline_clock = options.deadline_clock;
  admission.mcp_url = options.mcp_url;
  admission.mcp_tokens = options.mcp_tokens;
  admission.journal = options.journal;
  admission.replica_name = options.replica_name;
  return admission;
}

TurnTable::Options TableOptions(const TurnEngine::Options& options) {
  TurnTable::Options table;
  table.max_turns = options.max_turns;
  table.ended_turn_retention = options.ended_turn_retention;
  table.metrics = options.metrics;
  table.max_open_turns_per_namespace = options.max_open_turns_per_namespace;
  table.max_open_turns_per_host = options.max_open_turns_per_host;
  table.max_admission_ended = options.max_admission_ended;
  return table;
}

Settler::Options SettlerOptions(const TurnEngine::Options& options) {
  Settler::Options settler;
  settler.authorizer_timeout = options.authorizer_timeout;
  settler.finish_wait = options.finish_wait;
  settler.journal = options.journal;
  return settler;
}

Messenger::Options MessengerOptions(const TurnEngine::Options& options) {
  Messenger::Options messenger;
  messenger.authorizer_timeout = options.authorizer_timeout;
  messenger.transport_timeout = options.transport_timeout;
  messenger.deadline_clock = options.deadline_clock;
  messenger.mint_message_id = options.mint_message_id;
  return messenger;
}

ResourceInvoker::Options ResourceOptions(const TurnEngine::Options& options) {
  ResourceInvoker::Options resources;
  resources.authorizer_timeout = options.authorizer_timeout;
  resources.provider_timeout = options.provider_timeout;
  resources.deadline_clock = options.deadline_clock;
  return resources;
}

tools::AttachedProviders WithMessaging(tools::AttachedProviders providers,
                                       const TurnEngine::Options& options) {
  providers.messages_request = options.message_transport != nullptr;
  return providers;
}

}  // namespace

TurnEngine::TurnEngine(authorizer::client::AuthorizerClient& authorizer,
                       const tools::ToolRegistry& registry, tools::AttachedProviders providers,
                       audit::client::AuditWriter& audit, const common::Clock& clock,
                       Options options)
    : clock_(clock),
      audit_(audit),
      providers_(WithMessaging(std::move(providers), options)),
      runtime_{options.runtime_id, options.mcp_runtime_id, options.runtime_version},
      messenger_(authorizer, audit, options.message_transport, clock, MessengerOptions(options)),
      resources_(authorizer, audit, options.resource_providers, clock, ResourceOptions(options)),
      mediator_(
          authorizer, audit, clock,
          Mediator::Options{options.authorizer_timeout, options.provider_timeout,
                            options.deadline_clock, &messenger_, options.max_tool_result_bytes}),
      table_(TableOptions(options)),
      settler_(authorizer, audit, clock, table_, runtime_, SettlerOptions(options)),
      admission_(authorizer, registry, providers_, audit, clock, table_, settler_, runtime_,
                 AdmissionOptions(options)),
      invocation_(table_, settler_, mediator_, audit, clock,
                  Invocation::Options{options.max_refusals_past_budget}) {}

absl::StatusOr<int> TurnEngine::RecoverInterrupted() { return settler_.RecoverInterrupted(); }

absl::StatusOr<v1::OpenTurnResponse> TurnEngine::OpenTurn(const v1::OpenTurnRequest& request,
                                                          const common::server::HostScope& scope,
                                                          absl::string_view host) {
  return admission_.OpenTurn(request, scope, host);
}

absl::StatusOr<v1::InvokeToolResponse> TurnEngine::InvokeTool(
    const v1::InvokeToolRequest& request, const common::server::HostScope& scope) {
  return invocation_.InvokeTool(request, scope);
}

absl::StatusOr<v1::SendMessageResponse> TurnEngine::SendMessage(
    const v1::SendMessageRequest& request, const common::server::HostScope& scope) {
  RETURN_IF_ERROR(validation::RejectUnknownFields(request, "request"));
  RETURN_IF_ERROR(CheckTurnId(request.turn_id()));
  pb::MessageEnvelope message = request.message();
  RETURN_IF_ERROR(
      validation::ValidateMessageEnvelope(request.has_message() ? &message : nullptr, "message"));
  ASSIGN_OR_RETURN(const std::shared_ptr<Turn> turn, table_.Find(request.turn_id(), scope));
  settler_.EnforceDeadline(*turn);
  {
    absl::MutexLock lock(&turn->mu);
    if (turn->phase != Phase::kRunning) {
      return capability::errors::TurnEnded();
    }
  }
  MessagingScope messaging;
  messaging.context = &turn->context;
  messaging.lease_id = turn->lease_id;
  messaging.authority_hash = turn->authority_hash;
  messaging.turn_deadline = turn->deadline;
  v1::SendMessageResponse response;
  *response.mutable_receipt() = messenger_.Send(messaging, message, clock_.Now());
  return response;
}

absl::StatusOr<v1::InvokeResourceResponse> TurnEngine::InvokeResource(
    const v1::InvokeResourceRequest& request, const common::server::HostScope& scope) {
  RETURN_IF_ERROR(validation::RejectUnknownFields(request, "request"));
  RETURN_IF_ERROR(CheckTurnId(request.turn_id()));
  v1::InvokeResourceRequest operation = request;
  RETURN_IF_ERROR(ValidateResourceOperation(&operation));
  ASSIGN_OR_RETURN(const std::shared_ptr<Turn> turn, table_.Find(request.turn_id(), scope));
  settler_.EnforceDeadline(*turn);
  {
    absl::MutexLock lock(&turn->mu);
    if (turn->phase != Phase::kRunning) {
      return capability::errors::TurnEnded();
    }
  }
  ResourceScope resource_scope;
  resource_scope.context = &turn->context;
  resource_scope.lease_id = turn->lease_id;
  resource_scope.turn_deadline = turn->deadline;
  v1::InvokeResourceResponse response;
  *response.mutable_result() = resources_.Invoke(resource_scope, operation, clock_.Now());
  return response;
}

absl::StatusOr<v1::ListToolNamespacesResponse> TurnEngine::ListToolNamespaces(
    const v1::ListToolNamespacesRequest& request, const common::server::HostScope& scope) {
  RETURN_IF_ERROR(validation::RejectUnknownFields(request, "request"));
  RETURN_IF_ERROR(CheckTurnId(request.turn_id()));
  ASSIGN_OR_RETURN(const std::shared_ptr<Turn> turn, table_.Find(request.turn_id(), scope));
  settler_.EnforceDeadline(*turn);
  return core::ListToolNamespaces(*turn, audit_, clock_.Now());
}

absl::StatusOr<v1::UpdateToolNamespacesResponse> TurnEngine::UpdateToolNamespaces(
    const v1::UpdateToolNamespacesRequest& request, const common::server::HostScope& scope) {
  RETURN_IF_ERROR(validation::RejectUnknownFields(request, "request"));
  RETURN_IF_ERROR(CheckTurnId(request.turn_id()));
  RETURN_IF_ERROR(ValidateToolNamespaceUpdate(request));
  ASSIGN_OR_RETURN(const std::shared_ptr<Turn> turn, table_.Find(request.turn_id(), scope));
  settler_.EnforceDeadline(*turn);
  return core::UpdateToolNamespaces(*turn, request, audit_, clock_.Now());
}

absl::StatusOr<v1::FinishTurnResponse> TurnEngine::FinishTurn(
    const v1::FinishTurnRequest& request, const common::server::HostScope& scope) {
  return settler_.FinishTurn(request, scope);
}

absl::StatusOr<v1::CancelTurnResponse> TurnEngine::CancelTurn(
    const v1::CancelTurnRequest& request, const common::server::HostScope& scope) {
  return settler_.CancelTurn(request, scope);
}

int TurnEngine::CancelExpired() { return settler_.CancelExpired(); }

TurnEngine::Stats TurnEngine::stats() const { return admission_.stats(); }

size_t TurnEngine::held_turns() const { return table_.held(); }

size_t TurnEngine::running_turns() const { return table_.running(); }

size_t TurnEngine::AwaitNoneRunning(absl::Duration timeout) const {
  return table_.AwaitNoneRunning(clock_, timeout);
}

void TurnEngine::StopAdmitting() { admission_.StopAdmitting(); }

// ---------------------------------------------------------------------------------------------
// GetTurn, WatchTurn: reading a turn

absl::StatusOr<v1::GetTurnResponse> TurnEngine::GetTurn(const v1::GetTurnRequest& request,
                                                        const common::server::HostScope& scope) {
  RETURN_IF_ERROR(validation::RejectUnknownFields(request, "request"));
  RETURN_IF_ERROR(CheckTurnId(request.turn_id()));
  ASSIGN_OR_RETURN(const std::shared_ptr<Turn> turn, table_.Find(request.turn_id(), scope));
  settler_.EnforceDeadline(*turn);
  v1::GetTurnResponse response;
  absl::MutexLock lock(&turn->mu);
  *response.mutable_described_authorities() = {turn->described.begin(), turn->described.end()};
  if (turn->phase == Phase::kEnded) {
    *response.mutable_result() = turn->result;
    response.set_state(v1::TURN_STATE_ENDED);
    response.set_escalation_id(turn->escalation_id);
    return response;
  }
  pb::ExecutionResult* result = response.mutable_result();
  result->set_version("1");
  result->set_execution_id(turn->request.execution_id());
  result->set_trace_id(turn->context.trace_id());
  *result->mutable_events() = {turn->events.begin(), turn->events.end()};
  *result->mutable_started_at() = values::TimestampOf(turn->started_at);
  response.set_state(v1::TURN_STATE_RUNNING);
  return response;
}

absl::Status TurnEngine::WatchTurn(const v1::WatchTurnRequest& request,
                                   const common::server::HostScope& scope,
                                   const std::function<bool(const pb::ExecutionEvent&)>& write,
                                   const std::function<bool()>& cancelled) {
  RETURN_IF_ERROR(validation::RejectUnknownFields(request, "request"));
  RETURN_IF_ERROR(CheckTurnId(request.turn_id()));
  if (request.from_sequence() < 0) return absl::InvalidArgumentError("from_sequence: negative");
  ASSIGN_OR_RETURN(const std::shared_ptr<Turn> turn, table_.Find(request.turn_id(), scope));
  settler_.EnforceDeadline(*turn);
  size_t next = static_cast<size_t>(request.from_sequence());
  while (true) {
    std::vector<pb::ExecutionEvent> batch;
    bool ended = false;
    {
      absl::MutexLock lock(&turn->mu);
      if (turn->events.size() <= next && turn->phase != Phase::kEnded) {
        turn->changed.WaitWithTimeout(&turn->mu, kWatchPoll);
      }
      if (turn->events.size() > next) {
        batch.assign(turn->events.begin() + static_cast<ptrdiff_t>(next), turn->events.end());
      }
      ended = turn->phase == Phase::kEnded;
    }
    for (const pb::ExecutionEvent& event : batch) {
      if (!write(event)) return absl::CancelledError("the reader is gone");
      ++next;
    }
    // Events never follow the terminal one, so the batch taken with `ended` was the last.
    if (ended) return absl::OkStatus();
    if (cancelled()) return absl::CancelledError("the reader is gone");
  }
}

// ---------------------------------------------------------------------------------------------
// The MCP seat

absl::StatusOr<TurnEngine::McpTurn> TurnEngine::FindMcpTurn(
    const mcp::ExecutionTokenClaims& claims) const {
  const std::shared_ptr<Turn> turn = table_.Lookup(claims.turn_id);
  // Fields read here are immutable once the turn is in the table.
  if (turn == nullptr || !turn->mcp_claims.has_value() ||
      turn->mcp_claims->execution_id != claims.execution_id ||
      turn->mcp_claims->namespace_id != claims.namespace_id ||
      turn->mcp_claims->actor != claims.actor ||
      turn->mcp_claims->catalog_hash != claims.catalog_hash) {
    return absl::UnauthenticatedError("execution token: no such turn");
  }
  McpTurn view;
  view.turn_id = turn->id;
  view.execution_id = turn->request.execution_id();
  view.trace_id = turn->context.trace_id();
  view.catalog_hash = turn->catalog_hash;
  view.catalog = turn->mcp_catalog;
  {
    absl::MutexLock lock(&turn->mu);
    view.offers_escalation = turn->Offers(tools::kEscalationToolName);
  }
  // The execution token reaches its own turn: exactly its namespace, owner and authority.
  view.scope.namespaces = {turn->context.namespace_id()};
  view.scope.owners = {capability::AddressKey(turn->context.owner())};
  view.scope.authorities = {capability::AddressKey(turn->context.authority())};
  return view;
}

absl::StatusOr<TurnEngine::LatchStep> TurnEngine::StepEscalationLatch(
    const std::string& turn_id, const std::optional<LatchAsk>& ask, const pb::ToolCall& call) {
  const std::shared_ptr<Turn> turn = table_.Lookup(turn_id);
  if (turn == nullptr) {
    return absl::NotFoundError(absl::StrCat("turn \"", turn_id, "\" not found"));
  }
  std::vector<pb::CapabilityRequest> described;
  std::string requirement_id;
  {
    absl::ReleasableMutexLock lock(&turn->mu);
    if (turn->escalation_asked.has_value()) {
      ++turn->calls_after_escalation;
      return LatchStep::kPending;
    }
    if (!ask.has_value() || turn->phase != Phase::kRunning) return LatchStep::kPassThrough;
    const pb::CapabilityRequest* named = nullptr;
    if (ask->requirement.has_value()) {
      named = turn->Described(*ask->requirement);
      if (named == nullptr) {
        lock.Release();
        RefuseUndescribed(*turn, call);
        return LatchStep::kUnknownRequirement;
      }
    } else if (turn->described.size() == 1) {
      named = &turn->described.front();
    }
    if (named != nullptr) {
      turn->escalation_requirement = *named;
      requirement_id = named->id();
    }
    turn->escalation_asked = ask->reason;
    described = turn->described;
  }
  // Durable before the ask is answered (ADR 0009): a crash from here on ends the turn escalated,
  // naming the requirement the ask named (docs/adr/0018). Outside the turn's lock: later calls
  // are answered pending meanwhile, and an ending that removed the row first makes this write
  // nothing.
  settler_.JournalLatch(*turn, ask->reason, clock_.Now(), std::move(described),
                        std::move(requirement_id));
  return LatchStep::kAsked;
}

void TurnEngine::RefuseUndescribed(const Turn& turn, const pb::ToolCall& call) {
  pb::ToolResult refused;
  refused.set_call_id(call.id());
  refused.set_tool(call.tool());
  refused.set_status(pb::TOOL_RESULT_STATUS_FAILED);
  refused.mutable_error()->set_code(std::string(capability::kInvalidToolArguments));
  refused.mutable_error()->set_message(std::string(kUndescribedRequirementMessage));
  refused.mutable_error()->set_retryable(false);
  invocation_.RecordEnvelopeRefusal(turn, call, clock_.Now(), refused,
                                    kCauseRequirementNotDescribed);
}

}  // namespace sharedos::envelope::core
