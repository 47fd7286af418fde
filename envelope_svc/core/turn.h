// One turn of the envelope (semantics §4.2) and the small values every part of the turn engine
// builds from it: event data, refusal errors, timestamps and the runtime manifest a turn reports.
// The parts are turn_table.h (the turns held), admission.h (OpenTurn), invocation.h
// (InvokeTool) and settlement.h (every ending); turn_engine.h composes them.

#ifndef SHAREDOS_ENVELOPE_SVC_CORE_TURN_H_
#define SHAREDOS_ENVELOPE_SVC_CORE_TURN_H_

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "envelope_svc/mcp/execution_token.h"
#include "envelope_svc/tools/turn_tools.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/timestamp.pb.h"
#include "sharedos/envelope/v1/envelope.pb.h"
#include "sharedos/protocol/v1/common.pb.h"
#include "sharedos/protocol/v1/execution.pb.h"
#include "sharedos/protocol/v1/tool.pb.h"

namespace sharedos::envelope::core {

// Values the turn's events and results are made of.
namespace values {

// `at` as a Timestamp (the epoch when it cannot be one).
google::protobuf::Timestamp TimestampOf(absl::Time at);
google::protobuf::Value Str(absl::string_view text);
google::protobuf::Value Num(double number);
// A JSON value as a Value (null when it cannot be one).
google::protobuf::Value FromJson(const nlohmann::json& json);
// {key: value, …} as a Value (an event's data).
google::protobuf::Value Object(
    std::initializer_list<std::pair<const char*, google::protobuf::Value>> fields);
// ProtocolError{code, the catalogue's fixed message, retryable}.
protocol::v1::ProtocolError CodeError(absl::string_view code, bool retryable = false);

}  // namespace values

// The runtime manifest turns report: turn.started's `runtime` and the result's
// metadata.runtime. Immutable; thread-safe.
struct RuntimeManifest {
  std::string driver_id = "sharedos.grpc-driver";
  std::string mcp_id = "sharedos.mcp-harness";
  std::string version = "1.0.0";

  const std::string& IdOf(v1::Runtime runtime) const {
    return runtime == v1::RUNTIME_MCP ? mcp_id : driver_id;
  }
  // {id, version, protocolVersion: "1"} of `runtime`.
  google::protobuf::Value ToValue(v1::Runtime runtime) const;
};

enum class Phase { kRunning, kEnding, kEnded };

// One turn. Its identity, request, context, limits, lease and tools are written while the turn
// is opened (admission.h) and only read once the turn table publishes it; its progress below
// `mu` is guarded by `mu`. Thread-safe in that sense; held by shared_ptr.
struct Turn {
  std::string id;
  // The host credential that opened the turn (its name; the per-host open-turn quota's key).
  std::string host;
  protocol::v1::ExecutionRequest request;
  // request.context with now = the admission instant.
  protocol::v1::AccessContext context;
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
  // with discovery's reason code (no_matching_grant, grant_exhausted, host_policy_denied, a
  // fail-closed code): a call naming one is refused tool_unavailable with that code as its cause,
  // after an authorization.checked (denied, that code) — semantics §5.2.
  struct Withheld {
    std::string code;
    bool fail_closed = false;
  };
  absl::flat_hash_map<const tools::Tool*, Withheld> withheld;
  std::string catalog_hash;
  // RUNTIME_MCP: the published catalogue (tools/list) and the execution token's claims.
  std::shared_ptr<const protocol::v1::ToolCatalog> mcp_catalog;
  std::optional<mcp::ExecutionTokenClaims> mcp_claims;
  // The runtime started (turn.started was emitted).
  bool started = false;
  // The id its turn.ended is written under (journaled turns, ADR 0009); empty: the writer's.
  std::string ended_event_id;

  // Whether the effective catalogue offers the tool `name`.
  bool Offers(absl::string_view name) const;
  // Why a tool the turn does not offer is refused (metadata.cause of tool_unavailable, seed
  // ADR 0023): not_registered, namespace_disabled, discovery's reason code (requested, withheld
  // at discovery: no_matching_grant, host_policy_denied, …) or not_offered (registered and
  // discoverable, but not requested).
  absl::string_view NotOfferedCause(absl::string_view name) const;
  // The discovery verdict of a requested tool withheld at discovery (nullptr for any other name,
  // a disabled tool namespace included).
  const Withheld* WithheldAtDiscovery(absl::string_view name) const;

  mutable absl::Mutex mu;
  absl::CondVar changed;
  Phase phase ABSL_GUARDED_BY(mu) = Phase::kRunning;
  // A pre-effect record could not be written: no new calls; the turn fails audit_unavailable.
  bool audit_outage ABSL_GUARDED_BY(mu) = false;
  absl::flat_hash_set<int64_t> steps_seen ABSL_GUARDED_BY(mu);
  int32_t tool_calls ABSL_GUARDED_BY(mu) = 0;
  // Calls refused past the turn's budget (draining, step and call limits, calls after its end):
  // bounded by Invocation::Options::max_refusals_past_budget (ADR 0016).
  int32_t refusals_past_budget ABSL_GUARDED_BY(mu) = 0;
  int in_flight ABSL_GUARDED_BY(mu) = 0;
  int in_flight_unrepeatable ABSL_GUARDED_BY(mu) = 0;
  // A non-repeatable call reached its provider and was not refused there.
  bool unrepeatable_effect ABSL_GUARDED_BY(mu) = false;
  // The MCP escalation latch: the reason the harness asked with, and calls it made since.
  std::optional<std::string> escalation_asked ABSL_GUARDED_BY(mu);
  int32_t calls_after_escalation ABSL_GUARDED_BY(mu) = 0;
  // The authorities the kernel described to this turn: each no_matching_grant denial's
  // required_authority (ADR 0019), once per id, oldest first, the newest kMaxDescribed kept.
  // An MCP escalation names one of them (docs/adr/0018) — never an authority the harness wrote.
  static constexpr size_t kMaxDescribed = 64;
  std::vector<protocol::v1::CapabilityRequest> described ABSL_GUARDED_BY(mu);
  // The described authority the latched ask names (requested_authority of its escalation).
  std::optional<protocol::v1::CapabilityRequest> escalation_requirement ABSL_GUARDED_BY(mu);
  std::vector<protocol::v1::ExecutionEvent> events ABSL_GUARDED_BY(mu);
  protocol::v1::ExecutionResult result ABSL_GUARDED_BY(mu);
  // Once ended escalated: the id the grant store stored the escalation under.
  std::string escalation_id ABSL_GUARDED_BY(mu);
  // Set once UpdateToolNamespaces changed the selection: the enabled tool namespaces that replace
  // context.enabled_tool_namespaces for every later call (tool_namespaces.h).
  std::optional<std::vector<std::string>> enabled_namespaces ABSL_GUARDED_BY(mu);

  // Keeps `request` among the described authorities (a repeated id moves to the newest).
  void Describe(const protocol::v1::CapabilityRequest& request) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // The described authority with `id`, or null.
  const protocol::v1::CapabilityRequest* Described(absl::string_view id) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // Appends the event `type` with `data` at `at` (sequence = its index) and wakes watchers.
  void Emit(absl::string_view type, google::protobuf::Value data, absl::Time at)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // safeToRetry (semantics §4.2): no non-repeatable call may have had an effect, and none is
  // still with the kernel.
  bool SafeToRetry() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return !unrepeatable_effect && in_flight_unrepeatable == 0;
  }
};

}  // namespace sharedos::envelope::core

#endif  // SHAREDOS_ENVELOPE_SVC_CORE_TURN_H_
