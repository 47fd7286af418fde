// One turn of the envelope (semantics §4.2) and the small values every part of the turn engine
// builds from it: the runtime manifest a turn reports, its tool namespace selection and the one
// answer to "does this turn offer that tool?" (values.h: event data, refusal errors, timestamps).
// The parts are turn_table.h (the turns held), admission.h (OpenTurn), invocation.h
// (InvokeTool) and settlement.h (every ending); turn_engine.h composes them.

#ifndef SHAREDOS_ENVELOPE_SVC_CORE_TURN_H_
#define SHAREDOS_ENVELOPE_SVC_CORE_TURN_H_

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "envelope_svc/core/values.h"
#include "envelope_svc/mcp/execution_token.h"
#include "envelope_svc/tools/turn_tools.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/timestamp.pb.h"
#include "sharedos/envelope/v1/envelope.pb.h"
#include "sharedos/protocol/v1/common.pb.h"
#include "sharedos/protocol/v1/execution.pb.h"
#include "sharedos/protocol/v1/tool.pb.h"

namespace sharedos::envelope::core {

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

// The tool namespaces a turn enables (semantics §1.14, the availability plane): the context's
// enabled_tool_namespaces at admission, then as UpdateToolNamespaces left it — the one selection
// every check of the turn reads (Turn::Offer, admission's discovery, ListToolNamespaces).
// Not thread-safe on its own: the turn holds it under its mutex.
class NamespaceSelection {
 public:
  NamespaceSelection() = default;
  template <typename Names>
  explicit NamespaceSelection(const Names& names) : enabled_(names.begin(), names.end()) {}

  bool Enables(absl::string_view tool_namespace) const { return enabled_.contains(tool_namespace); }
  // Turns `enable` on and `disable` off (an update already valid: no name in both).
  template <typename Names>
  void Update(const Names& enable, const Names& disable) {
    for (const std::string& name : enable) enabled_.insert(name);
    for (const std::string& name : disable) enabled_.erase(name);
  }
  // The enabled namespaces, in code-unit order.
  const absl::btree_set<std::string, std::less<>>& names() const { return enabled_; }

 private:
  absl::btree_set<std::string, std::less<>> enabled_;
};

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

  // The one answer to "does this turn offer the tool `name`?" (semantics §3.9 steps 4–6 as the
  // turn resolved them at OpenTurn, §4.3 step 7), under the selection in force: every call
  // (Invocation), the escalation affordance (Settler, the MCP seat) and nothing else decide it.
  struct Offer {
    // The turn's tool of that name; null when it is not registered for this turn.
    const tools::Tool* tool = nullptr;
    // Empty: offered. Otherwise why the call is refused tool_unavailable (metadata.cause, seed
    // ADR 0023), first that applies: not_registered, namespace_disabled (its tool namespace is
    // not in `namespaces`), discovery's reason code (requested and withheld at discovery:
    // no_matching_grant, host_policy_denied, a fail-closed code, …) or not_offered (not requested,
    // or its namespace was enabled after OpenTurn: enabling grants nothing).
    absl::string_view cause;
    // Withheld at discovery: its verdict (the refusal follows its authorization.checked).
    const Withheld* withheld = nullptr;

    bool offered() const { return cause.empty(); }
  };
  Offer OfferOf(absl::string_view name) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  bool Offers(absl::string_view name) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return OfferOf(name).offered();
  }

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
  // The tool namespaces enabled now: context.enabled_tool_namespaces at admission, then as
  // UpdateToolNamespaces left it (tool_namespaces.h).
  NamespaceSelection namespaces ABSL_GUARDED_BY(mu);

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
