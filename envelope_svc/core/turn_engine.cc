#include "envelope_svc/core/turn_engine.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "capability/address.h"
#include "capability/reason_codes.h"
#include "common/crypto/random.h"
#include "common/json/proto_json.h"
#include "common/json/protocol_json.h"
#include "common/status/status_macros.h"
#include "common/time/proto_time.h"
#include "common/validation/bounds.h"
#include "common/validation/limits.h"
#include "common/validation/protocol.h"
#include "common/validation/unknown_fields.h"
#include "envelope_svc/core/audit_records.h"
#include "envelope_svc/tools/escalation_tool.h"
#include "envelope_svc/tools/tool_refusal.h"

namespace sharedos::envelope::core {
namespace {

namespace az = ::sharedos::authorizer::v1;
namespace pb = ::sharedos::protocol::v1;
namespace validation = ::sharedos::common::validation;
using ::google::protobuf::Struct;
using ::google::protobuf::Value;

enum class Phase { kRunning, kEnding, kEnded };

// Leases live at most the turn bound (600 s) plus the authorizer's grace.
constexpr absl::Duration kMaxLeaseTimeout = absl::Seconds(630);
// How often a watcher waiting for events looks at whether its reader is gone.
constexpr absl::Duration kWatchPoll = absl::Milliseconds(100);

google::protobuf::Timestamp TimestampOf(absl::Time at) {
  absl::StatusOr<google::protobuf::Timestamp> timestamp = common::ToProtoTimestamp(at);
  return timestamp.ok() ? *timestamp : google::protobuf::Timestamp();
}

Value Str(absl::string_view text) {
  Value value;
  value.set_string_value(std::string(text));
  return value;
}

Value Num(double number) {
  Value value;
  value.set_number_value(number);
  return value;
}

Value FromJson(const nlohmann::json& json) {
  absl::StatusOr<Value> value = common::JsonToProtoValue(json);
  return value.ok() ? *std::move(value) : Value();
}

// {key: value, …} as a Value (an event's data).
Value Object(std::initializer_list<std::pair<const char*, Value>> fields) {
  Value value;
  Struct* object = value.mutable_struct_value();
  for (const auto& [key, field] : fields) (*object->mutable_fields())[key] = field;
  return value;
}

pb::ProtocolError Error(absl::string_view code, bool retryable = false) {
  pb::ProtocolError error;
  error.set_code(std::string(code));
  error.set_message(std::string(capability::CodeMessage(code)));
  error.set_retryable(retryable);
  return error;
}

v1::ProviderContext ProviderContextOf(const pb::AccessContext& context) {
  v1::ProviderContext provider;
  provider.set_namespace_id(context.namespace_id());
  *provider.mutable_actor() = context.actor();
  *provider.mutable_owner() = context.owner();
  provider.set_purpose(context.purpose());
  provider.set_trace_id(context.trace_id());
  return provider;
}

// A tool is repeatable when it reads or is declared idempotent (semantics §4.2).
bool Repeatable(const tools::Tool& tool) {
  return tool.definition().read_write() == pb::READ_WRITE_READ ||
         (tool.definition().annotations().has_idempotent() &&
          tool.definition().annotations().idempotent());
}

std::string ExecutionKey(const pb::ExecutionRequest& request) {
  return absl::StrCat(request.context().namespace_id(), std::string(1, '\0'),
                      request.execution_id());
}

absl::Status CheckTurnId(const std::string& turn_id) {
  if (turn_id.empty()) return absl::InvalidArgumentError("turn_id: empty");
  return absl::OkStatus();
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Turn state

struct TurnEngine::Turn {
  // Immutable once the turn is published in the table.
  std::string id;
  pb::ExecutionRequest request;
  // request.context with now = the admission instant.
  pb::AccessContext context;
  v1::Runtime runtime = v1::RUNTIME_DRIVER;
  v1::TurnLimits limits;
  absl::Time started_at;
  absl::Time deadline = absl::InfiniteFuture();
  absl::Time drain_at = absl::InfiniteFuture();
  std::string lease_id;
  std::string authority_hash;
  std::optional<tools::TurnTools> tools;
  // The effective catalogue: tools of `tools` (a call names a tool; Find, then this set).
  absl::flat_hash_set<const tools::Tool*> offered;

  // Requested tools the turn's discovery withheld (not discoverable when the turn opened), each
  // with the cause a call naming it is refused with (host_policy_denied or not_discoverable).
  absl::flat_hash_map<const tools::Tool*, absl::string_view> withheld;

  bool Offers(absl::string_view name) const {
    const tools::Tool* tool = tools.has_value() ? tools->Find(name) : nullptr;
    return tool != nullptr && offered.contains(tool);
  }
  // Why a tool the turn does not offer is refused (metadata.cause of tool_unavailable, seed
  // ADR 0023): not_registered, namespace_disabled, host_policy_denied (requested, withheld by
  // the host ceiling), not_discoverable (requested, withheld by discovery otherwise) or
  // not_offered (registered and discoverable, but not requested).
  absl::string_view NotOfferedCause(absl::string_view name) const {
    const tools::Tool* tool = tools.has_value() ? tools->Find(name) : nullptr;
    if (tool == nullptr) return capability::kCauseNotRegistered;
    const auto& enabled = context.enabled_tool_namespaces();
    if (std::find(enabled.begin(), enabled.end(), tool->tool_namespace()) == enabled.end()) {
      return capability::kCauseNamespaceDisabled;
    }
    if (auto it = withheld.find(tool); it != withheld.end()) return it->second;
    return capability::kCauseNotOffered;
  }
  std::string catalog_hash;
  // RUNTIME_MCP: the published catalogue (tools/list) and the execution token's claims.
  std::shared_ptr<const pb::ToolCatalog> mcp_catalog;
  std::optional<mcp::ExecutionTokenClaims> mcp_claims;
  // The runtime started (turn.started was emitted).
  bool started = false;
  // Guarded by TurnEngine::mu_: the turn is in deadlines_ and counted as running.
  bool registered_running = false;

  mutable absl::Mutex mu;
  absl::CondVar changed;
  Phase phase ABSL_GUARDED_BY(mu) = Phase::kRunning;
  // A pre-effect record could not be written: no new calls; the turn fails audit_unavailable.
  bool audit_outage ABSL_GUARDED_BY(mu) = false;
  absl::flat_hash_set<int64_t> steps_seen ABSL_GUARDED_BY(mu);
  int32_t tool_calls ABSL_GUARDED_BY(mu) = 0;
  int in_flight ABSL_GUARDED_BY(mu) = 0;
  int in_flight_unrepeatable ABSL_GUARDED_BY(mu) = 0;
  // A non-repeatable call reached its provider and was not refused there.
  bool unrepeatable_effect ABSL_GUARDED_BY(mu) = false;
  // The MCP escalation latch: the reason the harness asked with, and calls it made since.
  std::optional<std::string> escalation_asked ABSL_GUARDED_BY(mu);
  int32_t calls_after_escalation ABSL_GUARDED_BY(mu) = 0;
  std::vector<pb::ExecutionEvent> events ABSL_GUARDED_BY(mu);
  pb::ExecutionResult result ABSL_GUARDED_BY(mu);

  void Emit(absl::string_view type, Value data, absl::Time at) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    pb::ExecutionEvent& event = events.emplace_back();
    event.set_version("1");
    event.set_event_id(common::NewUuidV4());
    event.set_execution_id(request.execution_id());
    event.set_trace_id(context.trace_id());
    event.set_sequence(static_cast<int64_t>(events.size()) - 1);
    event.set_type(std::string(type));
    *event.mutable_data() = std::move(data);
    *event.mutable_occurred_at() = TimestampOf(at);
    changed.SignalAll();
  }

  // safeToRetry (semantics §4.2): no non-repeatable call may have had an effect, and none is
  // still with the kernel.
  bool SafeToRetry() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return !unrepeatable_effect && in_flight_unrepeatable == 0;
  }
};

// How a turn ends.
struct TurnEngine::Settlement {
  pb::ExecutionStatus status = pb::EXECUTION_STATUS_FAILED;
  std::optional<Value> output;
  std::optional<pb::ProtocolError> error;
  std::optional<pb::Escalation> escalation;
  std::optional<pb::EndedBy> ended_by;
  // The terminal event.
  std::string event_type;
  Value event_data;
  // The outcome's metadata (merged first).
  Struct metadata;

  // denied at admission: turn.denied {code}.
  static Settlement Denied(absl::string_view code) {
    Settlement settlement;
    settlement.status = pb::EXECUTION_STATUS_DENIED;
    settlement.error = Error(code);
    settlement.event_type = "turn.denied";
    settlement.event_data = Object({{"code", Str(code)}});
    return settlement;
  }
  // failed by `source`: turn.failed {code, source}.
  static Settlement Failed(pb::ProtocolError error, pb::EndedBy by) {
    Settlement settlement;
    settlement.status = pb::EXECUTION_STATUS_FAILED;
    settlement.ended_by = by;
    settlement.event_type = "turn.failed";
    settlement.event_data =
        Object({{"code", Str(error.code())},
                {"source", Str(by == pb::ENDED_BY_RUNTIME ? "runtime" : "envelope")}});
    settlement.error = std::move(error);
    return settlement;
  }
  static Settlement Cancelled() {
    Settlement settlement;
    settlement.status = pb::EXECUTION_STATUS_CANCELLED;
    settlement.error = Error(capability::kTurnCancelled);
    settlement.ended_by = pb::ENDED_BY_ENVELOPE;
    settlement.event_type = "turn.cancelled";
    settlement.event_data = Object({});
    return settlement;
  }
};

// ---------------------------------------------------------------------------------------------

bool ScopeCovers(const common::server::HostScope& scope, const pb::AccessContext& context) {
  if (std::find(scope.namespaces.begin(), scope.namespaces.end(), context.namespace_id()) ==
      scope.namespaces.end()) {
    return false;
  }
  const std::string owner = capability::AddressKey(context.owner());
  for (const std::string& allowed : scope.owners) {
    if (allowed == "*" || allowed == owner) return true;
  }
  return false;
}

HarnessSettlement SettleHarnessExit(const v1::HarnessExitedOutcome& exited,
                                    bool escalation_latched) {
  HarnessSettlement settlement;
  auto& fields = *settlement.metadata.mutable_fields();
  if (!exited.outcome_status().empty()) fields["harnessOutcome"] = Str(exited.outcome_status());
  if (!exited.error_code().empty()) fields["harnessErrorCode"] = Str(exited.error_code());
  if (exited.has_exit_code()) fields["harnessExitCode"] = Num(exited.exit_code());
  if (escalation_latched) {
    settlement.status = pb::EXECUTION_STATUS_ESCALATED;
    return settlement;
  }
  if (exited.has_output() && exited.error_code().empty() &&
      (exited.outcome_status().empty() || exited.outcome_status() == "completed")) {
    settlement.status = pb::EXECUTION_STATUS_SUCCEEDED;
    settlement.output = exited.output();
    return settlement;
  }
  settlement.status = pb::EXECUTION_STATUS_FAILED;
  settlement.error = Error(exited.error_code().empty() ? capability::kHarnessExitedWithoutOutcome
                                                       : absl::string_view(exited.error_code()));
  return settlement;
}

TurnEngine::TurnEngine(authorizer::client::AuthorizerClient& authorizer,
                       const tools::ToolRegistry& registry, tools::AttachedProviders providers,
                       audit::client::AuditWriter& audit, const common::Clock& clock,
                       Options options)
    : authorizer_(authorizer),
      registry_(registry),
      providers_(std::move(providers)),
      audit_(audit),
      clock_(clock),
      options_(std::move(options)),
      mediator_(authorizer, audit, clock,
                Mediator::Options{options_.authorizer_timeout, options_.provider_timeout,
                                  options_.deadline_clock}) {}

// ---------------------------------------------------------------------------------------------
// OpenTurn

absl::StatusOr<v1::OpenTurnResponse> TurnEngine::OpenTurn(const v1::OpenTurnRequest& request,
                                                          const common::server::HostScope& scope) {
  RETURN_IF_ERROR(validation::RejectUnknownFields(request, "request"));
  if (request.runtime() == v1::RUNTIME_UNSPECIFIED) {
    return absl::InvalidArgumentError("runtime: unspecified");
  }
  if (request.runtime() != v1::RUNTIME_DRIVER && request.runtime() != v1::RUNTIME_MCP) {
    return absl::InvalidArgumentError(absl::StrCat("runtime: unknown value ", request.runtime()));
  }
  pb::ExecutionRequest execution = request.execution_request();
  RETURN_IF_ERROR(validation::ValidateExecutionRequest(
      request.has_execution_request() ? &execution : nullptr, "execution_request"));
  if (request.runtime() == v1::RUNTIME_MCP && options_.mcp_tokens == nullptr) {
    return absl::FailedPreconditionError("runtime: RUNTIME_MCP is not configured on this envelope");
  }
  if (!ScopeCovers(scope, execution.context())) {
    return absl::PermissionDeniedError(
        "execution_request.context: namespace or owner outside the caller's scope");
  }

  auto turn = std::make_shared<Turn>();
  turn->id = absl::StrCat("turn-", common::NewUuidV4());
  turn->runtime = request.runtime();
  turn->started_at = clock_.Now();
  turn->context = execution.context();
  *turn->context.mutable_now() = TimestampOf(turn->started_at);
  const pb::ExecutionOptions& limits = execution.options();
  turn->limits.set_max_steps(limits.has_max_steps() ? limits.max_steps()
                                                    : options_.default_max_steps);
  turn->limits.set_max_tool_calls(
      limits.has_max_tool_calls()
          ? limits.max_tool_calls()
          : options_.default_max_tool_calls.value_or(turn->limits.max_steps()));
  turn->limits.set_timeout_ms(limits.has_timeout_ms() ? limits.timeout_ms()
                                                      : options_.default_timeout_ms);
  turn->deadline = turn->started_at + absl::Milliseconds(turn->limits.timeout_ms());
  turn->drain_at = turn->deadline - options_.drain_grace;
  turn->request = std::move(execution);

  const std::string execution_key = ExecutionKey(turn->request);
  {
    absl::MutexLock lock(&mu_);
    if (by_execution_.size() >= options_.max_turns) {
      return absl::ResourceExhaustedError("too many turns held by this envelope");
    }
    if (!by_execution_.emplace(execution_key, turn->id).second) {
      return absl::FailedPreconditionError(absl::StrCat("execution_request.execution_id: \"",
                                                        turn->request.execution_id(),
                                                        "\" is already used by another turn"));
    }
  }

  v1::OpenTurnResponse response;
  response.set_turn_id(turn->id);
  Admit(*turn, response);
  if (turn->runtime == v1::RUNTIME_MCP && !response.has_result()) {
    // The harness's seat: the catalogue it lists and a token bound to this turn only.
    turn->mcp_catalog = std::make_shared<const pb::ToolCatalog>(response.catalog());
    mcp::ExecutionTokenClaims& claims = turn->mcp_claims.emplace();
    claims.execution_id = turn->request.execution_id();
    claims.turn_id = turn->id;
    claims.namespace_id = turn->context.namespace_id();
    claims.actor = capability::AddressKey(turn->context.actor());
    claims.catalog_hash = turn->catalog_hash;
    claims.expires_at = turn->deadline;
    v1::McpEndpoint* endpoint = response.mutable_mcp();
    endpoint->set_url(options_.mcp_url);
    endpoint->set_token(options_.mcp_tokens->Mint(claims));
    *endpoint->mutable_expires_at() = TimestampOf(claims.expires_at);
  }

  absl::MutexLock lock(&mu_);
  turns_.emplace(turn->id, turn);
  if (response.has_result()) {
    retention_.emplace(clock_.Now() + options_.ended_turn_retention, turn->id);
  } else {
    deadlines_.emplace(turn->deadline, turn->id);
    turn->registered_running = true;
    ++running_;
  }
  return response;
}

void TurnEngine::Admit(Turn& turn, v1::OpenTurnResponse& response) {
  const pb::ExecutionRequest& request = turn.request;
  auto end = [&](Settlement settlement) {
    Finalize(turn, std::move(settlement));
    absl::MutexLock lock(&turn.mu);
    *response.mutable_result() = turn.result;
  };

  // The context (no authorizer call).
  if (!capability::AddressEquals(request.context().actor(), request.agent())) {
    return end(Settlement::Denied(capability::kActorMismatch));
  }
  if (!capability::AddressEquals(request.message().receiver(), request.agent())) {
    return end(Settlement::Denied(capability::kReceiverMismatch));
  }
  if (request.message().trace_id() != request.context().trace_id() ||
      request.message().purpose() != request.context().purpose()) {
    return end(Settlement::Denied(capability::kMessageContextMismatch));
  }

  // The authority lease: grants and policy loaded once (authority.resolved at the authorizer).
  az::OpenTurnAuthorityRequest open;
  *open.mutable_context() = turn.context;
  open.set_turn_id(turn.id);
  if (absl::StatusOr<google::protobuf::Duration> timeout = common::ToProtoDuration(std::min(
          absl::Milliseconds(turn.limits.timeout_ms()) + options_.lease_grace, kMaxLeaseTimeout));
      timeout.ok()) {
    *open.mutable_timeout() = *timeout;
  }
  absl::StatusOr<az::OpenTurnAuthorityResponse> lease =
      authorizer_.OpenTurnAuthority(open, options_.authorizer_timeout);
  if (!lease.ok()) return end(Settlement::Denied(capability::kAuthorityUnavailable));
  turn.lease_id = lease->lease_id();
  if (lease->status() != az::LEASE_STATUS_RESOLVED) {
    if (lease->code() == capability::kAuditUnavailable) {
      return end(Settlement::Failed(Error(capability::kAuditUnavailable), pb::ENDED_BY_ENVELOPE));
    }
    return end(Settlement::Denied(capability::kAuthorityUnavailable));
  }
  turn.authority_hash = lease->authority_hash();

  // Admission: sharedos.execution / the agent / invoke, consuming.
  az::AdmitTurnRequest admit;
  admit.set_lease_id(turn.lease_id);
  *admit.mutable_agent() = request.agent();
  absl::StatusOr<az::AdmitTurnResponse> admitted =
      authorizer_.AdmitTurn(admit, options_.authorizer_timeout);
  if (!admitted.ok()) return end(Settlement::Denied(capability::kAuthorityUnavailable));
  if (!admitted->decision().allowed()) {
    const std::string& code = admitted->decision().reason_code();
    if (code == capability::kAuditUnavailable) {
      return end(Settlement::Failed(Error(capability::kAuditUnavailable), pb::ENDED_BY_ENVELOPE));
    }
    return end(
        Settlement::Denied(code.empty() ? capability::kNoMatchingGrant : absl::string_view(code)));
  }

  // The registry, resolved once against the attached providers.
  const common::Clock& stopwatch = *options_.deadline_clock;
  const absl::Time resolve_start = stopwatch.Now();
  absl::StatusOr<tools::TurnTools> resolved =
      tools::TurnTools::Resolve(registry_, providers_, ProviderContextOf(turn.context),
                                options_.deadline_clock->Now() + options_.catalog_timeout);
  if (!resolved.ok()) {
    return end(Settlement::Failed(tools::RefusalError(resolved.status()), pb::ENDED_BY_ENVELOPE));
  }
  turn.tools.emplace(*std::move(resolved));
  absl::Duration catalog_time = stopwatch.Now() - resolve_start;

  // Discovery over the tools whose namespace the context enables.
  const absl::Time discover_start = stopwatch.Now();
  const auto& enabled = turn.context.enabled_tool_namespaces();
  const absl::flat_hash_set<absl::string_view> enabled_set(enabled.begin(), enabled.end());
  az::DiscoverRequest discover;
  discover.set_lease_id(turn.lease_id);
  for (const auto& tool : turn.tools->tools()) {
    if (!enabled_set.contains(tool->tool_namespace())) continue;
    az::ToolRequirement* entry = discover.add_tools();
    entry->set_name(tool->name());
    *entry->mutable_requirement() = tool->ceiling();
  }
  CatalogListedFacts listing;
  listing.authority_hash = turn.authority_hash;
  if (lease->has_host_policy_version()) listing.host_policy_version = lease->host_policy_version();
  absl::StatusOr<az::DiscoverResponse> discovered = az::DiscoverResponse();
  if (discover.tools_size() > 0) {
    discovered = authorizer_.Discover(discover, options_.authorizer_timeout);
    if (!discovered.ok() || discovered->entries_size() != discover.tools_size()) {
      // The listing itself failed closed: an empty catalogue (semantics §5.2).
      listing.outcome = pb::AUDIT_OUTCOME_DENIED;
      listing.reason = std::string(capability::kAuthorityUnavailable);
      listing.fail_closed = true;
      discovered = az::DiscoverResponse();
    }
  }
  absl::flat_hash_set<absl::string_view> discoverable;
  discoverable.reserve(discovered->entries_size());
  absl::flat_hash_set<absl::string_view> host_policy_withheld;
  for (const az::DiscoveryEntry& entry : discovered->entries()) {
    if (entry.discoverable()) {
      discoverable.insert(entry.name());
    } else {
      if (entry.fail_closed()) listing.fail_closed = true;
      if (entry.reason_code() == capability::kCauseHostPolicyDenied)
        host_policy_withheld.insert(entry.name());
    }
  }
  const absl::Time effective_start = stopwatch.Now();
  const absl::Duration discover_time = effective_start - discover_start;

  // The effective catalogue: discoverable ∩ requested, in name order (the turn's tools are).
  const absl::flat_hash_set<absl::string_view> requested(request.tools().begin(),
                                                         request.tools().end());
  std::vector<std::shared_ptr<const tools::Tool>> effective;
  effective.reserve(std::min(requested.size(), discoverable.size()));
  turn.offered.reserve(effective.capacity());
  absl::flat_hash_set<std::string> resource_namespaces;
  absl::string_view last_namespace;
  for (const auto& tool : turn.tools->tools()) {
    if (!requested.contains(tool->name())) continue;
    if (!discoverable.contains(tool->name())) {
      turn.withheld.emplace(tool.get(), host_policy_withheld.contains(tool->name())
                                            ? capability::kCauseHostPolicyDenied
                                            : capability::kCauseNotDiscoverable);
      continue;
    }
    effective.push_back(tool);
    turn.offered.insert(tool.get());
    const std::string& resource_namespace = tool->ceiling().resource().namespace_();
    if (resource_namespace != last_namespace && !resource_namespaces.contains(resource_namespace)) {
      resource_namespaces.insert(resource_namespace);
    }
    last_namespace = resource_namespace;
  }
  if (listing.outcome == pb::AUDIT_OUTCOME_SUCCEEDED) {
    listing.withheld_count = static_cast<int>(turn.tools->tools().size() - discoverable.size());
  }
  absl::StatusOr<std::string> catalog_hash = catalog_hasher_.Hash(effective);
  if (!catalog_hash.ok()) {
    return end(
        Settlement::Failed(Error(capability::kToolCatalogUnavailable), pb::ENDED_BY_ENVELOPE));
  }
  turn.catalog_hash = *catalog_hash;
  listing.catalog_hash = turn.catalog_hash;
  const absl::Time publish_start = stopwatch.Now();
  catalog_time += publish_start - effective_start;
  pb::ToolCatalog catalog = BuildCatalog(request.execution_id(), effective, turn.catalog_hash);
  const absl::Duration publish_time = stopwatch.Now() - publish_start;
  {
    absl::MutexLock lock(&stats_mu_);
    ++stats_.turns_listed;
    stats_.catalog_resolution += catalog_time;
    stats_.catalog_publication += publish_time;
    stats_.discovery += discover_time;
  }
  // Pre-effect: a catalogue the audit log does not hold is never shown.
  if (!audit_.RecordPreEffect(CatalogListedEvent(turn.context, turn.started_at, listing)).ok()) {
    return end(Settlement::Failed(Error(capability::kAuditUnavailable), pb::ENDED_BY_ENVELOPE));
  }

  az::ReachRequest reach_request;
  reach_request.set_lease_id(turn.lease_id);
  absl::StatusOr<az::ReachResponse> reach =
      authorizer_.Reach(reach_request, options_.authorizer_timeout);
  pb::ReachResult narrowed;
  if (reach.ok()) {
    narrowed = NarrowReach(reach->reach(), resource_namespaces);
  } else {
    narrowed.set_status(pb::REACH_STATUS_UNAVAILABLE);
    narrowed.set_reason_code(std::string(capability::kAuthorityUnavailable));
  }

  *response.mutable_catalog() = std::move(catalog);
  *response.mutable_reach() = std::move(narrowed);
  *response.mutable_limits() = turn.limits;

  nlohmann::json visible = nlohmann::json::array();
  for (const auto& tool : effective) visible.push_back(tool->name());
  Value started = Object({{"agent", FromJson(common::AddressToJson(request.agent()))},
                          {"visibleTools", FromJson(visible)},
                          {"runtime", Object({{"id", Str(RuntimeId(turn))},
                                              {"version", Str(options_.runtime_version)},
                                              {"protocolVersion", Str("1")}})}});
  turn.started = true;
  absl::MutexLock lock(&turn.mu);
  turn.Emit("turn.started", std::move(started), turn.started_at);
}

// ---------------------------------------------------------------------------------------------
// Lookup, deadlines, terminals

absl::StatusOr<std::shared_ptr<TurnEngine::Turn>> TurnEngine::Find(
    const std::string& turn_id, const common::server::HostScope& scope) const {
  std::shared_ptr<Turn> turn;
  {
    absl::MutexLock lock(&mu_);
    auto it = turns_.find(turn_id);
    if (it == turns_.end()) {
      return absl::NotFoundError(absl::StrCat("turn \"", turn_id, "\" not found"));
    }
    turn = it->second;
  }
  if (!ScopeCovers(scope, turn->context)) {
    return absl::PermissionDeniedError("turn: outside the caller's scope");
  }
  return turn;
}

void TurnEngine::Finalize(Turn& turn, Settlement settlement) {
  const absl::Time completed_at = clock_.Now();
  pb::ExecutionResult result;
  {
    absl::MutexLock lock(&turn.mu);
    if (turn.phase == Phase::kEnded) return;
    turn.Emit(settlement.event_type, std::move(settlement.event_data), completed_at);
    result.set_version("1");
    result.set_execution_id(turn.request.execution_id());
    result.set_trace_id(turn.context.trace_id());
    result.set_status(settlement.status);
    if (settlement.output.has_value()) *result.mutable_output() = *std::move(settlement.output);
    if (settlement.error.has_value()) *result.mutable_error() = *std::move(settlement.error);
    if (settlement.escalation.has_value()) {
      *result.mutable_escalation() = *std::move(settlement.escalation);
    }
    *result.mutable_events() = {turn.events.begin(), turn.events.end()};
    *result.mutable_started_at() = TimestampOf(turn.started_at);
    *result.mutable_completed_at() = TimestampOf(completed_at);
    Struct metadata = std::move(settlement.metadata);
    if (turn.started) {
      (*metadata.mutable_fields())["runtime"] = Object({{"id", Str(RuntimeId(turn))},
                                                        {"version", Str(options_.runtime_version)},
                                                        {"protocolVersion", Str("1")}});
    }
    if (!metadata.fields().empty()) *result.mutable_metadata() = std::move(metadata);
    turn.result = result;
    turn.phase = Phase::kEnded;
    turn.changed.SignalAll();
  }
  // Post-effect: recorded once, whatever the audit log's state; never changes the result.
  (void)audit_.RecordPostEffect(TurnEndedEvent(turn.context, result, settlement.ended_by));
  if (!turn.lease_id.empty()) {
    az::CloseTurnAuthorityRequest close;
    close.set_lease_id(turn.lease_id);
    // A lease that cannot be closed expires on its own.
    (void)authorizer_.CloseTurnAuthority(close, options_.authorizer_timeout);
  }
  absl::MutexLock lock(&mu_);
  if (turn.registered_running) {
    auto [first, last] = deadlines_.equal_range(turn.deadline);
    for (auto it = first; it != last; ++it) {
      if (it->second == turn.id) {
        deadlines_.erase(it);
        break;
      }
    }
    turn.registered_running = false;
    --running_;
    retention_.emplace(completed_at + options_.ended_turn_retention, turn.id);
  }
}

pb::ExecutionResult TurnEngine::Cancel(Turn& turn) {
  bool audit_outage = false;
  bool safe = true;
  {
    absl::MutexLock lock(&turn.mu);
    while (turn.phase == Phase::kEnding) turn.changed.Wait(&turn.mu);
    if (turn.phase == Phase::kEnded) return turn.result;
    turn.phase = Phase::kEnding;
    audit_outage = turn.audit_outage;
    safe = turn.SafeToRetry();
  }
  Finalize(turn, audit_outage ? Settlement::Failed(Error(capability::kAuditUnavailable, safe),
                                                   pb::ENDED_BY_ENVELOPE)
                              : Settlement::Cancelled());
  absl::MutexLock lock(&turn.mu);
  return turn.result;
}

void TurnEngine::EnforceDeadline(Turn& turn) {
  if (clock_.Now() < turn.deadline) return;
  {
    absl::MutexLock lock(&turn.mu);
    if (turn.phase == Phase::kEnded) return;
  }
  Cancel(turn);
}

int TurnEngine::CancelExpired() {
  const absl::Time now = clock_.Now();
  std::vector<std::shared_ptr<Turn>> due;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = deadlines_.begin(); it != deadlines_.end() && it->first <= now; ++it) {
      if (auto turn = turns_.find(it->second); turn != turns_.end()) due.push_back(turn->second);
    }
    while (!retention_.empty() && retention_.begin()->first <= now) {
      if (auto turn = turns_.find(retention_.begin()->second); turn != turns_.end()) {
        by_execution_.erase(ExecutionKey(turn->second->request));
        turns_.erase(turn);
      }
      retention_.erase(retention_.begin());
    }
  }
  int ended = 0;
  for (const std::shared_ptr<Turn>& turn : due) {
    {
      absl::MutexLock lock(&turn->mu);
      // A turn already settling ends by its own hand (and leaves deadlines_ then).
      if (turn->phase != Phase::kRunning) continue;
    }
    Cancel(*turn);
    ++ended;
  }
  return ended;
}

TurnEngine::Stats TurnEngine::stats() const {
  absl::MutexLock lock(&stats_mu_);
  return stats_;
}

size_t TurnEngine::held_turns() const {
  absl::MutexLock lock(&mu_);
  return turns_.size();
}

size_t TurnEngine::running_turns() const {
  absl::MutexLock lock(&mu_);
  return running_;
}

// ---------------------------------------------------------------------------------------------
// InvokeTool

void TurnEngine::RecordEnvelopeRefusal(const Turn& turn, const pb::ToolCall& call, absl::Time at,
                                       const pb::ToolResult& result, absl::string_view cause) {
  ToolInvokedFacts facts;
  facts.source = pb::AUDIT_SOURCE_ENVELOPE;
  facts.status = result.status();
  facts.reason = result.error().code();
  facts.cause = std::string(cause);
  facts.authority_hash = turn.authority_hash;
  facts.catalog_hash = turn.catalog_hash;
  // Post-effect (seed ADR 0023): the refusal stands whatever the audit log's state.
  (void)audit_.RecordPostEffect(ToolInvokedEvent(turn.context, at, call, facts));
}

absl::StatusOr<v1::InvokeToolResponse> TurnEngine::InvokeTool(
    const v1::InvokeToolRequest& request, const common::server::HostScope& scope) {
  RETURN_IF_ERROR(validation::RejectUnknownFields(request, "request"));
  RETURN_IF_ERROR(CheckTurnId(request.turn_id()));
  if (request.has_step() && request.step() < 0) {
    return absl::InvalidArgumentError("step: negative");
  }
  pb::ToolCall call = request.call();
  RETURN_IF_ERROR(validation::ValidateToolCall(request.has_call() ? &call : nullptr, "call"));
  ASSIGN_OR_RETURN(const std::shared_ptr<Turn> turn, Find(request.turn_id(), scope));
  EnforceDeadline(*turn);

  const absl::Time now = clock_.Now();
  auto call_data = [&](std::initializer_list<std::pair<const char*, Value>> extra) {
    Value data = Object({{"callId", Str(call.id())}, {"tool", Str(call.tool())}});
    auto& fields = *data.mutable_struct_value()->mutable_fields();
    if (request.has_step()) fields["step"] = Num(static_cast<double>(request.step()));
    for (const auto& [key, value] : extra) fields[key] = value;
    return data;
  };
  const tools::Tool* tool = nullptr;
  bool repeatable = true;
  std::string code;
  std::string cause;
  {
    absl::ReleasableMutexLock lock(&turn->mu);
    if (turn->phase == Phase::kEnded) {
      lock.Release();
      // An attempted operation all the same: recorded (tool.invoked, source envelope,
      // turn_draining — "no new calls" — with cause turn_ended); no event follows the terminal.
      pb::ToolResult refused;
      refused.set_call_id(call.id());
      refused.set_tool(call.tool());
      refused.set_status(pb::TOOL_RESULT_STATUS_DENIED);
      *refused.mutable_error() = Error(capability::kTurnDraining);
      RecordEnvelopeRefusal(*turn, call, now, refused, capability::kCauseTurnEnded);
      return absl::FailedPreconditionError("the turn has ended");
    }
    turn->Emit("tool.requested", call_data({}), now);
    if (turn->phase == Phase::kEnding || turn->audit_outage || now >= turn->drain_at) {
      code = std::string(capability::kTurnDraining);
    }
    if (code.empty() && request.has_step()) {
      // Declared steps are claims: bounded by max_steps and by the distinct steps seen.
      const int64_t step = request.step();
      const bool seen = turn->steps_seen.contains(step);
      if (step < turn->limits.max_steps() &&
          (seen || turn->steps_seen.size() < static_cast<size_t>(turn->limits.max_steps()))) {
        turn->steps_seen.insert(step);
      } else {
        code = std::string(capability::kStepLimitExceeded);
      }
    }
    if (code.empty()) {
      if (turn->tool_calls >= turn->limits.max_tool_calls()) {
        code = std::string(capability::kToolCallLimitExceeded);
      } else {
        ++turn->tool_calls;
      }
    }
    if (code.empty() && !turn->Offers(call.tool())) {
      code = std::string(capability::kToolUnavailable);
      cause = std::string(turn->NotOfferedCause(call.tool()));
    }
    if (code.empty()) {
      tool = turn->tools->Find(call.tool());
      repeatable = tool == nullptr || Repeatable(*tool);
      ++turn->in_flight;
      if (!repeatable) ++turn->in_flight_unrepeatable;
    } else {
      turn->Emit("tool.completed", call_data({{"status", Str("denied")}, {"code", Str(code)}}),
                 now);
    }
  }

  v1::InvokeToolResponse response;
  if (!code.empty()) {
    pb::ToolResult* result = response.mutable_result();
    result->set_call_id(call.id());
    result->set_tool(call.tool());
    result->set_status(pb::TOOL_RESULT_STATUS_DENIED);
    *result->mutable_error() = Error(code);
    *result->mutable_completed_at() = TimestampOf(now);
    RecordEnvelopeRefusal(*turn, call, now, *result, cause);
    return response;
  }

  MediationScope mediation;
  mediation.context = &turn->context;
  mediation.lease_id = turn->lease_id;
  mediation.authority_hash = turn->authority_hash;
  mediation.catalog_hash = turn->catalog_hash;
  mediation.tools = &*turn->tools;
  mediation.turn_deadline = turn->deadline;
  MediationResult mediated = mediator_.Invoke(mediation, call, now);

  {
    absl::MutexLock lock(&turn->mu);
    --turn->in_flight;
    if (!repeatable) {
      --turn->in_flight_unrepeatable;
      if (mediated.provider_entered && mediated.result.status() != pb::TOOL_RESULT_STATUS_DENIED) {
        turn->unrepeatable_effect = true;
      }
    }
    if (mediated.audit_unavailable) turn->audit_outage = true;
    if (turn->phase != Phase::kEnded) {
      Value data =
          call_data({{"status", Str(common::ToolResultStatusName(mediated.result.status()))}});
      if (mediated.result.has_error()) {
        (*data.mutable_struct_value()->mutable_fields())["code"] =
            Str(mediated.result.error().code());
      }
      turn->Emit("tool.completed", std::move(data), clock_.Now());
    }
    turn->changed.SignalAll();
  }
  *response.mutable_result() = std::move(mediated.result);
  return response;
}

// ---------------------------------------------------------------------------------------------
// FinishTurn, CancelTurn, GetTurn, WatchTurn

namespace {

// The ask of a requested authority (ADR 0019): capabilities, purpose, constraints, metadata;
// its identity fields are minted again by the authorizer and must not name another turn's.
absl::Status ValidateRequestedAuthority(pb::CapabilityRequest* request,
                                        const pb::AccessContext& context) {
  constexpr absl::string_view kPath = "escalate.requested_authority";
  if (!request->namespace_id().empty() && request->namespace_id() != context.namespace_id()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kPath, ".namespace_id: not the turn's namespace"));
  }
  if (request->has_requester() &&
      !capability::AddressEquals(request->requester(), context.actor())) {
    return absl::InvalidArgumentError(absl::StrCat(kPath, ".requester: not the turn's actor"));
  }
  if (request->has_owner() && !capability::AddressEquals(request->owner(), context.owner())) {
    return absl::InvalidArgumentError(absl::StrCat(kPath, ".owner: not the turn's owner"));
  }
  RETURN_IF_ERROR(validation::CheckCount(request->capabilities_size(), 1,
                                         validation::kMaxCapabilities,
                                         absl::StrCat(kPath, ".capabilities")));
  for (int i = 0; i < request->capabilities_size(); ++i) {
    RETURN_IF_ERROR(validation::ValidateCapability(
        request->mutable_capabilities(i),
        validation::IndexPath(absl::StrCat(kPath, ".capabilities"), i)));
  }
  if (!request->purpose().empty()) {
    RETURN_IF_ERROR(
        validation::CheckPurpose(request->mutable_purpose(), absl::StrCat(kPath, ".purpose")));
  }
  if (request->has_constraints()) {
    RETURN_IF_ERROR(validation::ValidateCapabilityConstraints(request->mutable_constraints(),
                                                              absl::StrCat(kPath, ".constraints")));
  }
  if (request->has_metadata()) {
    RETURN_IF_ERROR(
        validation::CheckJsonObject(request->metadata(), absl::StrCat(kPath, ".metadata")));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<v1::FinishTurnResponse> TurnEngine::FinishTurn(
    const v1::FinishTurnRequest& request, const common::server::HostScope& scope) {
  RETURN_IF_ERROR(validation::RejectUnknownFields(request, "request"));
  RETURN_IF_ERROR(CheckTurnId(request.turn_id()));
  if (request.has_metadata()) {
    RETURN_IF_ERROR(validation::CheckJsonObject(request.metadata(), "metadata"));
  }
  pb::ProtocolError failure;
  std::string reason;
  pb::CapabilityRequest requested;
  switch (request.outcome_case()) {
    case v1::FinishTurnRequest::kComplete:
      if (!request.complete().has_output()) {
        return absl::InvalidArgumentError("complete.output: required");
      }
      RETURN_IF_ERROR(validation::CheckJsonValue(request.complete().output(), "complete.output"));
      break;
    case v1::FinishTurnRequest::kFail:
      failure = request.fail().error();
      RETURN_IF_ERROR(validation::ValidateProtocolError(
          request.fail().has_error() ? &failure : nullptr, "fail.error"));
      break;
    case v1::FinishTurnRequest::kEscalate:
      reason = request.escalate().reason();
      RETURN_IF_ERROR(validation::CheckTrimmedString(
          &reason, validation::kMaxEscalationReasonLength, "escalate.reason"));
      break;
    case v1::FinishTurnRequest::kHarnessExited: {
      const v1::HarnessExitedOutcome& exited = request.harness_exited();
      std::string code = exited.error_code();
      RETURN_IF_ERROR(validation::CheckOptionalIdentifier(&code, "harness_exited.error_code"));
      if (exited.has_output()) {
        RETURN_IF_ERROR(validation::CheckJsonValue(exited.output(), "harness_exited.output"));
      }
      break;
    }
    case v1::FinishTurnRequest::OUTCOME_NOT_SET:
      return absl::InvalidArgumentError("outcome: required");
  }
  ASSIGN_OR_RETURN(const std::shared_ptr<Turn> turn, Find(request.turn_id(), scope));
  if (request.has_escalate() && request.escalate().has_requested_authority()) {
    requested = request.escalate().requested_authority();
    RETURN_IF_ERROR(ValidateRequestedAuthority(&requested, turn->context));
  }
  EnforceDeadline(*turn);
  if (request.has_harness_exited() && turn->runtime != v1::RUNTIME_MCP) {
    return absl::FailedPreconditionError("harness_exited: the turn runs RUNTIME_DRIVER");
  }

  bool audit_outage = false;
  bool safe = true;
  std::optional<std::string> escalation_asked;
  int32_t calls_after_escalation = 0;
  {
    absl::MutexLock lock(&turn->mu);
    if (turn->phase == Phase::kEnded) {
      return absl::FailedPreconditionError("the turn has already ended");
    }
    if (turn->phase == Phase::kEnding) {
      return absl::FailedPreconditionError("the turn is already ending");
    }
    turn->phase = Phase::kEnding;
    turn->changed.SignalAll();
    // Calls still with the kernel settle first (bounded; they are refused turn_draining anew).
    while (turn->in_flight > 0) {
      if (turn->changed.WaitWithTimeout(&turn->mu, options_.finish_wait)) break;
    }
    audit_outage = turn->audit_outage;
    safe = turn->SafeToRetry();
    escalation_asked = turn->escalation_asked;
    calls_after_escalation = turn->calls_after_escalation;
  }

  Settlement settlement;
  if (audit_outage) {
    settlement =
        Settlement::Failed(Error(capability::kAuditUnavailable, safe), pb::ENDED_BY_ENVELOPE);
  } else {
    switch (request.outcome_case()) {
      case v1::FinishTurnRequest::kComplete:
        settlement.status = pb::EXECUTION_STATUS_SUCCEEDED;
        settlement.output = request.complete().output();
        settlement.event_type = "turn.completed";
        settlement.event_data = Object({});
        break;
      case v1::FinishTurnRequest::kFail:
        // A runtime's retryable stands only when no non-repeatable call may have had an effect.
        if (failure.retryable() && !safe) failure.set_retryable(false);
        settlement = Settlement::Failed(std::move(failure), pb::ENDED_BY_RUNTIME);
        break;
      case v1::FinishTurnRequest::kEscalate: {
        if (!turn->Offers(tools::kEscalationToolName)) {
          // The affordance was not offered: nothing is recorded but the turn's end.
          settlement =
              Settlement::Failed(Error(capability::kToolUnavailable), pb::ENDED_BY_ENVELOPE);
          break;
        }
        absl::StatusOr<Settlement> escalated = RecordEscalation(
            *turn, reason, request.escalate().has_requested_authority() ? &requested : nullptr);
        if (!escalated.ok()) return escalated.status();
        settlement = *std::move(escalated);
        break;
      }
      case v1::FinishTurnRequest::kHarnessExited: {
        HarnessSettlement exited = SettleHarnessExit(
            request.harness_exited(), /*escalation_latched=*/escalation_asked.has_value());
        if (escalation_asked.has_value()) {
          // The latch engaged (seed ADR 0018): the ask is recorded now, the harness's own
          // outcome kept under metadata.
          absl::StatusOr<Settlement> escalated =
              RecordEscalation(*turn, *escalation_asked, nullptr);
          if (!escalated.ok()) return escalated.status();
          settlement = *std::move(escalated);
          auto& fields = *exited.metadata.mutable_fields();
          fields["escalationAsked"] = Object(
              {{"tool", Str(tools::kEscalationToolName)}, {"reason", Str(*escalation_asked)}});
          fields["callsAfterEscalation"] = Num(calls_after_escalation);
        } else {
          settlement.status = exited.status;
          settlement.output = std::move(exited.output);
          if (exited.error.has_value()) {
            settlement = Settlement::Failed(*std::move(exited.error), pb::ENDED_BY_RUNTIME);
          } else {
            settlement.event_type = "turn.completed";
            settlement.event_data = Object({});
          }
        }
        for (const auto& [key, value] : exited.metadata.fields()) {
          (*settlement.metadata.mutable_fields())[key] = value;
        }
        break;
      }
      case v1::FinishTurnRequest::OUTCOME_NOT_SET:
        break;
    }
  }
  // The outcome's metadata first; the envelope's keys win.
  Struct metadata = request.metadata();
  for (const auto& [key, value] : settlement.metadata.fields()) {
    (*metadata.mutable_fields())[key] = value;
  }
  settlement.metadata = std::move(metadata);
  Finalize(*turn, std::move(settlement));

  v1::FinishTurnResponse response;
  absl::MutexLock lock(&turn->mu);
  *response.mutable_result() = turn->result;
  return response;
}

absl::StatusOr<v1::CancelTurnResponse> TurnEngine::CancelTurn(
    const v1::CancelTurnRequest& request, const common::server::HostScope& scope) {
  RETURN_IF_ERROR(validation::RejectUnknownFields(request, "request"));
  RETURN_IF_ERROR(CheckTurnId(request.turn_id()));
  ASSIGN_OR_RETURN(const std::shared_ptr<Turn> turn, Find(request.turn_id(), scope));
  v1::CancelTurnResponse response;
  *response.mutable_result() = Cancel(*turn);
  return response;
}

absl::StatusOr<v1::GetTurnResponse> TurnEngine::GetTurn(const v1::GetTurnRequest& request,
                                                        const common::server::HostScope& scope) {
  RETURN_IF_ERROR(validation::RejectUnknownFields(request, "request"));
  RETURN_IF_ERROR(CheckTurnId(request.turn_id()));
  ASSIGN_OR_RETURN(const std::shared_ptr<Turn> turn, Find(request.turn_id(), scope));
  EnforceDeadline(*turn);
  v1::GetTurnResponse response;
  absl::MutexLock lock(&turn->mu);
  if (turn->phase == Phase::kEnded) {
    *response.mutable_result() = turn->result;
    response.set_state(v1::TURN_STATE_ENDED);
    return response;
  }
  pb::ExecutionResult* result = response.mutable_result();
  result->set_version("1");
  result->set_execution_id(turn->request.execution_id());
  result->set_trace_id(turn->context.trace_id());
  *result->mutable_events() = {turn->events.begin(), turn->events.end()};
  *result->mutable_started_at() = TimestampOf(turn->started_at);
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
  ASSIGN_OR_RETURN(const std::shared_ptr<Turn> turn, Find(request.turn_id(), scope));
  EnforceDeadline(*turn);
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
// Escalation recording, the MCP seat

absl::StatusOr<TurnEngine::Settlement> TurnEngine::RecordEscalation(
    Turn& turn, const std::string& reason, const pb::CapabilityRequest* requested) {
  az::RecordEscalationRequest record;
  record.set_lease_id(turn.lease_id);
  record.set_execution_id(turn.request.execution_id());
  record.set_reason(reason);
  *record.mutable_operation_instant() = TimestampOf(clock_.Now());
  if (requested != nullptr) {
    az::AuthorityAsk* ask = record.mutable_requested_authority_ask();
    *ask->mutable_capabilities() = requested->capabilities();
    ask->set_purpose(requested->purpose().empty() ? turn.context.purpose() : requested->purpose());
    if (requested->has_constraints()) *ask->mutable_constraints() = requested->constraints();
    if (requested->has_metadata()) *ask->mutable_metadata() = requested->metadata();
  }
  absl::StatusOr<az::RecordEscalationResponse> recorded =
      authorizer_.RecordEscalation(record, options_.authorizer_timeout);
  if (!recorded.ok()) {
    absl::MutexLock lock(&turn.mu);
    turn.phase = Phase::kRunning;
    turn.changed.SignalAll();
    return absl::UnavailableError(absl::StrCat("escalation not recorded: authorizer_svc answered ",
                                               absl::StatusCodeToString(recorded.status().code())));
  }
  Settlement settlement;
  settlement.status = pb::EXECUTION_STATUS_ESCALATED;
  settlement.event_type = "turn.escalated";
  settlement.event_data =
      Object({{"reason", Str(recorded->escalation().reason())},
              {"reviewer", FromJson(common::AddressToJson(recorded->escalation().reviewer()))}});
  settlement.escalation = recorded->escalation();
  return settlement;
}

const std::string& TurnEngine::RuntimeId(const Turn& turn) const {
  return turn.runtime == v1::RUNTIME_MCP ? options_.mcp_runtime_id : options_.runtime_id;
}

absl::StatusOr<TurnEngine::McpTurn> TurnEngine::FindMcpTurn(
    const mcp::ExecutionTokenClaims& claims) const {
  std::shared_ptr<Turn> turn;
  {
    absl::MutexLock lock(&mu_);
    auto it = turns_.find(claims.turn_id);
    if (it != turns_.end()) turn = it->second;
  }
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
  view.offers_escalation = turn->Offers(tools::kEscalationToolName);
  view.scope.namespaces = {turn->context.namespace_id()};
  view.scope.owners = {capability::AddressKey(turn->context.owner())};
  return view;
}

absl::StatusOr<TurnEngine::LatchStep> TurnEngine::StepEscalationLatch(
    const std::string& turn_id, const std::optional<std::string>& ask_reason) {
  std::shared_ptr<Turn> turn;
  {
    absl::MutexLock lock(&mu_);
    auto it = turns_.find(turn_id);
    if (it == turns_.end()) {
      return absl::NotFoundError(absl::StrCat("turn \"", turn_id, "\" not found"));
    }
    turn = it->second;
  }
  absl::MutexLock lock(&turn->mu);
  if (turn->escalation_asked.has_value()) {
    ++turn->calls_after_escalation;
    return LatchStep::kPending;
  }
  if (ask_reason.has_value() && turn->phase == Phase::kRunning) {
    turn->escalation_asked = *ask_reason;
    return LatchStep::kAsked;
  }
  return LatchStep::kPassThrough;
}

}  // namespace sharedos::envelope::core
