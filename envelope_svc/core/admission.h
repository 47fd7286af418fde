// OpenTurn (semantics §4.2 steps 1–12): the request validated and the turn built and reserved in
// the table, then admitted in named steps, in the order they run —
//   context check (actor, receiver, message trace/purpose; no authorizer call)
//   → authority lease (grants and policy loaded once)
//   → admitTurn (sharedos.execution / the agent / invoke, consuming)
//   → the tools resolved once against the attached providers
//   → discovery of the tools whose namespace the context enables
//   → the effective catalogue (discoverable ∩ requested) and its catalogHash
//   → the listing recorded (tool.catalog.listed, pre-effect: a catalogue audit cannot hold is
//     never shown)
//   → reach, narrowed to the catalogue's resource namespaces
//   → turn.started
// — and, for a running RUNTIME_MCP turn, its MCP seat (catalogue and execution token). A turn
// that cannot run ends at the step that stops it, through the Settler, and is published ended.

#ifndef SHAREDOS_ENVELOPE_SVC_CORE_ADMISSION_H_
#define SHAREDOS_ENVELOPE_SVC_CORE_ADMISSION_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "audit_svc/client/audit_writer.h"
#include "authorizer_svc/client/authorizer_client.h"
#include "common/server/auth.h"
#include "common/time/clock.h"
#include "envelope_svc/core/audit_records.h"
#include "envelope_svc/core/catalog.h"
#include "envelope_svc/core/settlement.h"
#include "envelope_svc/core/turn.h"
#include "envelope_svc/core/turn_journal.h"
#include "envelope_svc/core/turn_table.h"
#include "envelope_svc/mcp/execution_token.h"
#include "envelope_svc/tools/tool_registry.h"
#include "envelope_svc/tools/turn_tools.h"
#include "sharedos/authorizer/v1/authorizer.pb.h"
#include "sharedos/envelope/v1/envelope.pb.h"

namespace sharedos::envelope::core {

// Cumulative costs of OpenTurn's steps (wall clock, for metrics and benches): catalogue
// resolution = the registry resolved against the providers, the effective set (discoverable ∩
// requested) and its catalogHash; publication = copying the effective tools' published
// definitions into the response; discovery = building the Discover request and its round trip to
// the authorizer.
struct AdmissionStats {
  int64_t turns_listed = 0;
  absl::Duration catalog_resolution;
  absl::Duration catalog_publication;
  absl::Duration discovery;
};

// Opens turns. Thread-safe: each turn is admitted by the thread that opens it, before the table
// publishes it; the stats are under their own mutex. Borrows every dependency.
class Admission {
 public:
  // TurnEngine::Options' admission part (see turn_engine.h).
  struct Options {
    int32_t default_max_steps = 16;
    std::optional<int32_t> default_max_tool_calls;
    int32_t default_timeout_ms = 120000;
    absl::Duration drain_grace = absl::ZeroDuration();
    absl::Duration lease_grace = absl::Seconds(30);
    absl::Duration authorizer_timeout = absl::Seconds(2);
    absl::Duration catalog_timeout = absl::Seconds(5);
    const common::Clock* deadline_clock = &common::RealClock();
    std::string mcp_url;
    const mcp::ExecutionTokenCodec* mcp_tokens = nullptr;
    // The journal of open turns (ADR 0009); borrowed; nullptr: none.
    TurnJournal* journal = nullptr;
    // This envelope's replica name (ADR 0011); set, every turn id is "turn-<name>.<uuid>".
    std::string replica_name;
  };

  Admission(authorizer::client::AuthorizerClient& authorizer, const tools::ToolRegistry& registry,
            const tools::AttachedProviders& providers, audit::client::AuditWriter& audit,
            const common::Clock& clock, TurnTable& table, Settler& settler,
            const RuntimeManifest& runtime, Options options)
      : authorizer_(authorizer),
        registry_(registry),
        providers_(providers),
        audit_(audit),
        clock_(clock),
        table_(table),
        settler_(settler),
        runtime_(runtime),
        options_(std::move(options)) {}
  Admission(const Admission&) = delete;
  Admission& operator=(const Admission&) = delete;

  // TurnEngine::OpenTurn (turn_engine.h), errors included.
  absl::StatusOr<v1::OpenTurnResponse> OpenTurn(const v1::OpenTurnRequest& request,
                                                const common::server::HostScope& scope,
                                                absl::string_view host);

  AdmissionStats stats() const ABSL_LOCKS_EXCLUDED(stats_mu_);
  // From now on OpenTurn answers UNAVAILABLE (a replica draining, ADR 0011); the turns already
  // open are served as before. Idempotent.
  void StopAdmitting() { admitting_closed_.store(true); }

 private:
  // The state one admission carries from step to step.
  struct Admitting;

  // Validates `request` against `scope` and builds its turn (id, context at the admission
  // instant, limits, deadlines). Errors: as OpenTurn's INVALID_ARGUMENT, PERMISSION_DENIED and
  // FAILED_PRECONDITION (RUNTIME_MCP not configured).
  absl::StatusOr<std::shared_ptr<Turn>> NewTurn(const v1::OpenTurnRequest& request,
                                                const common::server::HostScope& scope) const;
  // Admits `turn`; a turn that cannot run is ended and its result answered.
  void Admit(Turn& turn, v1::OpenTurnResponse& response);
  // The admission steps in the order they run; the Settlement the turn ends with when a step
  // stops it, nullopt when it runs (`response` then has its catalogue, reach and limits).
  std::optional<Settlement> RunSteps(Turn& turn, v1::OpenTurnResponse& response);
  static std::optional<Settlement> CheckContext(const Turn& turn);
  std::optional<Settlement> OpenLease(Admitting& admitting);
  std::optional<Settlement> AdmitAgent(Admitting& admitting);
  std::optional<Settlement> ResolveTools(Admitting& admitting);
  void Discover(Admitting& admitting);
  // The effective catalogue and its catalogHash (tool_catalog_unavailable when it has none).
  std::optional<Settlement> SelectEffective(Admitting& admitting);
  // The published catalogue; counts the steps' costs into the stats.
  protocol::v1::ToolCatalog Publish(Admitting& admitting) ABSL_LOCKS_EXCLUDED(stats_mu_);
  std::optional<Settlement> RecordListing(const Admitting& admitting);
  protocol::v1::ReachResult Reach(const Admitting& admitting);
  // turn.started: the runtime starts.
  void Start(Turn& turn, const Admitting& admitting);
  // The MCP seat of a running RUNTIME_MCP turn: its catalogue and an execution token bound to it.
  // Journals a running turn (ADR 0009); a turn that cannot be journaled ends failed
  // audit_unavailable (fail closed) and `response` answers its result.
  void Journal(Turn& turn, v1::OpenTurnResponse& response);
  void SeatMcp(Turn& turn, v1::OpenTurnResponse& response) const;

  authorizer::client::AuthorizerClient& authorizer_;
  const tools::ToolRegistry& registry_;
  const tools::AttachedProviders& providers_;
  audit::client::AuditWriter& audit_;
  const common::Clock& clock_;
  TurnTable& table_;
  Settler& settler_;
  const RuntimeManifest& runtime_;
  const Options options_;
  CatalogHasher catalog_hasher_;

  std::atomic<bool> admitting_closed_{false};
  mutable absl::Mutex stats_mu_;
  AdmissionStats stats_ ABSL_GUARDED_BY(stats_mu_);
};

}  // namespace sharedos::envelope::core

#endif  // SHAREDOS_ENVELOPE_SVC_CORE_ADMISSION_H_
