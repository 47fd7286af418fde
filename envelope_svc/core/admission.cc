#include "envelope_svc/core/admission.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "capability/address.h"
#include "capability/reason_codes.h"
#include "common/crypto/random.h"
#include "common/json/protocol_json.h"
#include "common/logging/log.h"
#include "common/status/status_macros.h"
#include "common/time/proto_time.h"
#include "common/validation/protocol.h"
#include "common/validation/unknown_fields.h"
#include "envelope_svc/tools/portable_names.h"
#include "envelope_svc/tools/tool_provider.h"
#include "envelope_svc/tools/tool_refusal.h"

namespace sharedos::envelope::core {
namespace {

namespace az = ::sharedos::authorizer::v1;
namespace pb = ::sharedos::protocol::v1;
namespace validation = ::sharedos::common::validation;
using ::google::protobuf::Value;
using values::CodeError;
using values::FromJson;
using values::Object;
using values::TimestampOf;

// Leases live at most the turn bound (600 s) plus the authorizer's grace.
constexpr absl::Duration kMaxLeaseTimeout = absl::Seconds(630);

Settlement FailedByEnvelope(pb::ProtocolError error) {
  return Settlement::Failed(std::move(error), pb::ENDED_BY_ENVELOPE);
}

// A turn denied authority_unavailable because the authorizer did not answer: the record says
// only the code, so the operator's log says why (a deadline passed, the authorizer unreachable).
// The status's message is the transport's or the authorizer's own, never the request's content.
void LogAuthorizerFailure(absl::string_view rpc, const Turn& turn, const absl::Status& status) {
  common::logging::Log(common::logging::Level::kWarning, "turn.authorizer_unavailable",
                       turn.context.trace_id(),
                       {{"turn_id", turn.id},
                        {"rpc", rpc},
                        {"code", absl::StatusCodeToString(status.code())},
                        {"message", status.message().substr(0, 200)}});
}

}  // namespace

struct Admission::Admitting {
  explicit Admitting(Turn& turn) : turn(turn) {}

  Turn& turn;
  // What tool.catalog.listed states, filled in as the steps learn it.
  CatalogListedFacts listing;
  // Discover's answer (the sets below view its names).
  az::DiscoverResponse discovered;
  absl::flat_hash_set<absl::string_view> discoverable;
  // The tools discovery was asked about (their namespace enabled at admission).
  absl::flat_hash_set<absl::string_view> discovering;
  // The tools discovery withheld, with its verdict (the reason code; fail-closed or not).
  absl::flat_hash_map<absl::string_view, Turn::Withheld> withheld;
  // The effective catalogue, in name order, and its tools' resource namespaces.
  std::vector<std::shared_ptr<const tools::Tool>> effective;
  absl::flat_hash_set<std::string> resource_namespaces;
  // The stopwatch (AdmissionStats).
  absl::Time effective_start;
  absl::Duration catalog_time;
  absl::Duration discover_time;
  absl::Duration publish_time;
};

// ---------------------------------------------------------------------------------------------
// OpenTurn: new turn → reserved → admitted → MCP seat → published

absl::StatusOr<v1::OpenTurnResponse> Admission::OpenTurn(const v1::OpenTurnRequest& request,
                                                         const common::server::HostScope& scope,
                                                         absl::string_view host) {
  ASSIGN_OR_RETURN(std::shared_ptr<Turn> turn, NewTurn(request, scope));
  turn->host = std::string(host);
  RETURN_IF_ERROR(table_.Reserve(*turn));
  v1::OpenTurnResponse response;
  response.set_turn_id(turn->id);
  Admit(*turn, response);
  if (turn->runtime == v1::RUNTIME_MCP && !response.has_result()) SeatMcp(*turn, response);
  if (!response.has_result()) Journal(*turn, response);
  if (response.has_result()) {
    table_.PublishEnded(std::move(turn), clock_.Now());
  } else {
    common::logging::Log(common::logging::Level::kInfo, "turn.opened", turn->context.trace_id(),
                         {{"turn_id", turn->id}});
    table_.PublishRunning(std::move(turn));
  }
  return response;
}

absl::StatusOr<std::shared_ptr<Turn>> Admission::NewTurn(
    const v1::OpenTurnRequest& request, const common::server::HostScope& scope) const {
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
  if (request.runtime() == v1::RUNTIME_MCP) {
    // Every tool must stay reachable under every agent CLI's naming (issue 35).
    RETURN_IF_ERROR(tools::CheckPortableNames(execution.tools(), "execution_request.tools"));
  }
  if (!ScopeCovers(scope, execution.context())) {
    return absl::PermissionDeniedError(
        "execution_request.context: namespace, owner or authority outside the caller's scope (a "
        "host names as a turn's authority only the owners — or authorities — its credential "
        "lists)");
  }

  if (admitting_closed_.load()) {
    return absl::UnavailableError("envelope draining: open the turn at another replica");
  }
  auto turn = std::make_shared<Turn>();
  turn->id = options_.replica_name.empty()
                 ? absl::StrCat("turn-", common::NewUuidV4())
                 : absl::StrCat("turn-", options_.replica_name, ".", common::NewUuidV4());
  turn->runtime = request.runtime();
  turn->started_at = clock_.Now();
  turn->context = execution.context();
  *turn->context.mutable_now() = TimestampOf(turn->started_at);
  {
    absl::MutexLock lock(&turn->mu);
    turn->namespaces = NamespaceSelection(turn->context.enabled_tool_namespaces());
  }
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
  return turn;
}

void Admission::Journal(Turn& turn, v1::OpenTurnResponse& response) {
  if (options_.journal == nullptr) return;
  TurnJournal::Entry entry;
  entry.turn_id = turn.id;
  entry.execution_id = turn.request.execution_id();
  entry.runtime = turn.runtime;
  entry.context = turn.context;
  entry.lease_id = turn.lease_id;
  entry.started_at = turn.started_at;
  entry.ended_event_id = common::NewUuidV4();
  if (options_.journal->Put(entry).ok()) {
    turn.ended_event_id = std::move(entry.ended_event_id);
    return;
  }
  // A turn a crash could leave open without a trace is not run: fail closed.
  response.clear_mcp();
  settler_.Finalize(turn, Settlement::FailedOn(values::Refusal::AuditUnavailable()));
  absl::MutexLock lock(&turn.mu);
  *response.mutable_result() = turn.result;
}

void Admission::SeatMcp(Turn& turn, v1::OpenTurnResponse& response) const {
  // The harness's seat: the catalogue it lists and a token bound to this turn only.
  turn.mcp_catalog = std::make_shared<const pb::ToolCatalog>(response.catalog());
  mcp::ExecutionTokenClaims& claims = turn.mcp_claims.emplace();
  claims.execution_id = turn.request.execution_id();
  claims.turn_id = turn.id;
  claims.namespace_id = turn.context.namespace_id();
  claims.actor = capability::AddressKey(turn.context.actor());
  claims.catalog_hash = turn.catalog_hash;
  claims.expires_at = turn.deadline;
  v1::McpEndpoint* endpoint = response.mutable_mcp();
  endpoint->set_url(options_.mcp_url);
  endpoint->set_token(options_.mcp_tokens->Mint(claims));
  *endpoint->mutable_expires_at() = TimestampOf(claims.expires_at);
}

// ---------------------------------------------------------------------------------------------
// Admit: the steps, in the order they run

void Admission::Admit(Turn& turn, v1::OpenTurnResponse& response) {
  std::optional<Settlement> ending = RunSteps(turn, response);
  if (!ending.has_value()) return;
  settler_.Finalize(turn, *std::move(ending));
  absl::MutexLock lock(&turn.mu);
  *response.mutable_result() = turn.result;
}

std::optional<Settlement> Admission::RunSteps(Turn& turn, v1::OpenTurnResponse& response) {
  if (std::optional<Settlement> ending = CheckContext(turn)) return ending;
  Admitting admitting(turn);
  if (std::optional<Settlement> ending = OpenLease(admitting)) return ending;
  if (std::optional<Settlement> ending = AdmitAgent(admitting)) return ending;
  if (std::optional<Settlement> ending = ResolveTools(admitting)) return ending;
  Discover(admitting);
  if (std::optional<Settlement> ending = SelectEffective(admitting)) return ending;
  pb::ToolCatalog catalog = Publish(admitting);
  if (std::optional<Settlement> ending = RecordListing(admitting)) return ending;
  *response.mutable_reach() = Reach(admitting);
  *response.mutable_catalog() = std::move(catalog);
  *response.mutable_limits() = turn.limits;
  Start(turn, admitting);
  return std::nullopt;
}

std::optional<Settlement> Admission::CheckContext(const Turn& turn) {
  const pb::ExecutionRequest& request = turn.request;
  if (!capability::AddressEquals(request.context().actor(), request.agent())) {
    return Settlement::Denied(values::Refusal::Of(capability::kActorMismatch));
  }
  if (!capability::AddressEquals(request.message().receiver(), request.agent())) {
    return Settlement::Denied(values::Refusal::Of(capability::kReceiverMismatch));
  }
  if (request.message().trace_id() != request.context().trace_id() ||
      request.message().purpose() != request.context().purpose()) {
    return Settlement::Denied(values::Refusal::Of(capability::kMessageContextMismatch));
  }
  return std::nullopt;
}

std::optional<Settlement> Admission::OpenLease(Admitting& admitting) {
  Turn& turn = admitting.turn;
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
  if (!lease.ok()) {
    LogAuthorizerFailure("OpenTurnAuthority", turn, lease.status());
    return Settlement::Denied(values::Refusal::AuthorityUnavailable());
  }
  // Known from here on, so the lease is closed whatever the turn's end.
  turn.lease_id = lease->lease_id();
  if (lease->status() != az::LEASE_STATUS_RESOLVED) {
    // An unresolved lease is fail-closed by definition (semantics §3.5).
    if (values::Refusal::FromAuthorizer(lease->code(), true).audit_outage) {
      return Settlement::FailedOn(values::Refusal::AuditUnavailable());
    }
    return Settlement::Denied(values::Refusal::AuthorityUnavailable());
  }
  turn.authority_hash = lease->authority_hash();
  admitting.listing.authority_hash = turn.authority_hash;
  if (lease->has_host_policy_version()) {
    admitting.listing.host_policy_version = lease->host_policy_version();
  }
  return std::nullopt;
}

std::optional<Settlement> Admission::AdmitAgent(Admitting& admitting) {
  az::AdmitTurnRequest admit;
  admit.set_lease_id(admitting.turn.lease_id);
  *admit.mutable_agent() = admitting.turn.request.agent();
  absl::StatusOr<az::AdmitTurnResponse> admitted =
      authorizer_.AdmitTurn(admit, options_.authorizer_timeout);
  if (!admitted.ok()) {
    LogAuthorizerFailure("AdmitTurn", admitting.turn, admitted.status());
    return Settlement::Denied(values::Refusal::AuthorityUnavailable());
  }
  if (admitted->decision().allowed()) return std::nullopt;
  const values::Refusal refusal =
      values::Refusal::FromAuthorizer(admitted->decision().reason_code(), admitted->fail_closed());
  if (refusal.audit_outage) return Settlement::FailedOn(values::Refusal::AuditUnavailable());
  return Settlement::Denied(refusal);
}

std::optional<Settlement> Admission::ResolveTools(Admitting& admitting) {
  Turn& turn = admitting.turn;
  const common::Clock& stopwatch = *options_.deadline_clock;
  const absl::Time resolve_start = stopwatch.Now();
  absl::StatusOr<tools::TurnTools> resolved =
      tools::TurnTools::Resolve(registry_, providers_, tools::ProviderContextOf(turn.context),
                                options_.deadline_clock->Now() + options_.catalog_timeout);
  if (!resolved.ok()) return FailedByEnvelope(tools::RefusalError(resolved.status()));
  turn.tools.emplace(*std::move(resolved));
  admitting.catalog_time = stopwatch.Now() - resolve_start;
  return std::nullopt;
}

void Admission::Discover(Admitting& admitting) {
  const common::Clock& stopwatch = *options_.deadline_clock;
  const absl::Time discover_start = stopwatch.Now();
  Turn& turn = admitting.turn;
  az::DiscoverRequest discover;
  discover.set_lease_id(turn.lease_id);
  {
    // Discovery of the tools whose namespace the turn's selection enables.
    absl::MutexLock lock(&turn.mu);
    for (const auto& tool : turn.tools->tools()) {
      if (!turn.namespaces.Enables(tool->tool_namespace())) continue;
      admitting.discovering.insert(tool->name());
      az::ToolRequirement* entry = discover.add_tools();
      entry->set_name(tool->name());
      *entry->mutable_requirement() = tool->ceiling();
    }
  }
  if (discover.tools_size() > 0) {
    absl::StatusOr<az::DiscoverResponse> discovered =
        authorizer_.Discover(discover, options_.authorizer_timeout);
    if (discovered.ok() && discovered->entries_size() == discover.tools_size()) {
      admitting.discovered = *std::move(discovered);
    } else {
      // The listing itself failed closed: an empty catalogue (semantics §5.2).
      admitting.listing.outcome = pb::AUDIT_OUTCOME_DENIED;
      admitting.listing.reason = std::string(capability::kAuthorityUnavailable);
      admitting.listing.fail_closed = true;
    }
  }
  admitting.discoverable.reserve(admitting.discovered.entries_size());
  for (const az::DiscoveryEntry& entry : admitting.discovered.entries()) {
    if (entry.discoverable()) {
      admitting.discoverable.insert(entry.name());
    } else {
      // The authorizer's verdict, as it flagged it.
      const bool fail_closed = entry.fail_closed();
      if (fail_closed) admitting.listing.fail_closed = true;
      admitting.withheld.emplace(entry.name(),
                                 Turn::Withheld{entry.reason_code().empty()
                                                    ? std::string(capability::kCauseNotDiscoverable)
                                                    : entry.reason_code(),
                                                fail_closed});
    }
  }
  admitting.effective_start = stopwatch.Now();
  admitting.discover_time = admitting.effective_start - discover_start;
}

std::optional<Settlement> Admission::SelectEffective(Admitting& admitting) {
  // Discoverable ∩ requested, in name order (the turn's tools are).
  Turn& turn = admitting.turn;
  const absl::flat_hash_set<absl::string_view> requested(turn.request.tools().begin(),
                                                         turn.request.tools().end());
  admitting.effective.reserve(std::min(requested.size(), admitting.discoverable.size()));
  turn.offered.reserve(admitting.effective.capacity());
  absl::string_view last_namespace;
  for (const auto& tool : turn.tools->tools()) {
    if (!requested.contains(tool->name())) continue;
    if (!admitting.discoverable.contains(tool->name())) {
      // A tool of a namespace off at admission was never discovered: Turn::OfferOf answers it
      // (namespace_disabled, or not_offered once its namespace is turned on — enabling grants
      // nothing).
      if (!admitting.discovering.contains(tool->name())) continue;
      // Withheld by discovery's verdict, or — when the listing itself failed closed — by that.
      auto verdict = admitting.withheld.find(tool->name());
      turn.withheld.emplace(
          tool.get(), verdict != admitting.withheld.end()
                          ? verdict->second
                          : Turn::Withheld{std::string(admitting.listing.fail_closed
                                                           ? capability::kAuthorityUnavailable
                                                           : capability::kCauseNotDiscoverable),
                                           admitting.listing.fail_closed});
      continue;
    }
    admitting.effective.push_back(tool);
    turn.offered.insert(tool.get());
    const std::string& resource_namespace = tool->ceiling().resource().namespace_();
    if (resource_namespace != last_namespace &&
        !admitting.resource_namespaces.contains(resource_namespace)) {
      admitting.resource_namespaces.insert(resource_namespace);
    }
    last_namespace = resource_namespace;
  }
  if (admitting.listing.outcome == pb::AUDIT_OUTCOME_SUCCEEDED) {
    admitting.listing.withheld_count =
        static_cast<int>(turn.tools->tools().size() - admitting.discoverable.size());
  }
  // Its catalogHash: a catalogue without one is never shown.
  absl::StatusOr<std::string> catalog_hash = catalog_hasher_.Hash(admitting.effective);
  if (!catalog_hash.ok()) return FailedByEnvelope(CodeError(capability::kToolCatalogUnavailable));
  turn.catalog_hash = *catalog_hash;
  admitting.listing.catalog_hash = turn.catalog_hash;
  return std::nullopt;
}

pb::ToolCatalog Admission::Publish(Admitting& admitting) {
  const common::Clock& stopwatch = *options_.deadline_clock;
  const absl::Time publish_start = stopwatch.Now();
  admitting.catalog_time += publish_start - admitting.effective_start;
  pb::ToolCatalog catalog = BuildCatalog(admitting.turn.request.execution_id(), admitting.effective,
                                         admitting.turn.catalog_hash);
  admitting.publish_time = stopwatch.Now() - publish_start;
  absl::MutexLock lock(&stats_mu_);
  ++stats_.turns_listed;
  stats_.catalog_resolution += admitting.catalog_time;
  stats_.catalog_publication += admitting.publish_time;
  stats_.discovery += admitting.discover_time;
  return catalog;
}

std::optional<Settlement> Admission::RecordListing(const Admitting& admitting) {
  // Pre-effect: a catalogue the audit log does not hold is never shown.
  const Turn& turn = admitting.turn;
  if (!audit_.RecordPreEffect(CatalogListedEvent(turn.context, turn.started_at, admitting.listing))
           .ok()) {
    return Settlement::FailedOn(values::Refusal::AuditUnavailable());
  }
  return std::nullopt;
}

pb::ReachResult Admission::Reach(const Admitting& admitting) {
  az::ReachRequest request;
  request.set_lease_id(admitting.turn.lease_id);
  absl::StatusOr<az::ReachResponse> reach = authorizer_.Reach(request, options_.authorizer_timeout);
  pb::ReachResult narrowed;
  if (reach.ok()) {
    narrowed = NarrowReach(reach->reach(), admitting.resource_namespaces);
  } else {
    narrowed.set_status(pb::REACH_STATUS_UNAVAILABLE);
    narrowed.set_reason_code(std::string(capability::kAuthorityUnavailable));
  }
  return narrowed;
}

void Admission::Start(Turn& turn, const Admitting& admitting) {
  nlohmann::json visible = nlohmann::json::array();
  for (const auto& tool : admitting.effective) visible.push_back(tool->name());
  Value started = Object({{"agent", FromJson(common::AddressToJson(turn.request.agent()))},
                          {"visibleTools", FromJson(visible)},
                          {"runtime", runtime_.ToValue(turn.runtime)}});
  turn.started = true;
  absl::MutexLock lock(&turn.mu);
  turn.Emit("turn.started", std::move(started), turn.started_at);
}

AdmissionStats Admission::stats() const {
  absl::MutexLock lock(&stats_mu_);
  return stats_;
}

}  // namespace sharedos::envelope::core
