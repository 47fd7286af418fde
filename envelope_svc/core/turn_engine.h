// The turns of sharedos.envelope.v1.Envelope (semantics §4; architecture §3 "Run a turn over
// gRPC"): OpenTurn, InvokeTool, FinishTurn, CancelTurn, GetTurn and WatchTurn over the
// authorizer (AuthorizerClient), the tool layer (ToolRegistry + attached providers) and audit.
// No gRPC here: envelope_svc/server adapts it.
//
// A turn holds its validated request, the trusted context (now = the admission instant), its
// authority lease, its tools resolved once, its effective catalogue (discoverable ∩ requested,
// with its catalogHash), its limits and budgets, its events and — once ended — its result.
// Every terminal (complete, fail, escalate, cancel, deadline, and every ending at admission)
// writes turn.ended exactly once (post-effect), closes the lease and freezes the result.
// Refusals of the turn layer (turn_draining, step_limit_exceeded, tool_call_limit_exceeded,
// tool_unavailable/not_offered) are recorded as tool.invoked with source envelope; everything
// past them is kernel mediation (mediator.h, source kernel).
//
// Deadlines use the injected clock: every operation on a turn first ends it `cancelled`
// (turn_cancelled) when its deadline has passed, and CancelExpired() ends every such turn
// (main calls it from a timer; tests after advancing a SimulatedClock). Ended turns are kept
// for `ended_turn_retention` so GetTurn/CancelTurn answer their result, then forgotten.
//
// Thread-safe: a table mutex guards the turn index; each turn has its own mutex; no lock is
// held across an authorizer, provider or audit call.

#ifndef SHAREDOS_ENVELOPE_SVC_CORE_TURN_ENGINE_H_
#define SHAREDOS_ENVELOPE_SVC_CORE_TURN_ENGINE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "audit_svc/client/audit_writer.h"
#include "authorizer_svc/client/authorizer_client.h"
#include "common/server/auth.h"
#include "common/time/clock.h"
#include "envelope_svc/core/catalog.h"
#include "envelope_svc/core/mediator.h"
#include "envelope_svc/mcp/execution_token.h"
#include "envelope_svc/tools/tool_registry.h"
#include "envelope_svc/tools/turn_tools.h"
#include "sharedos/envelope/v1/envelope.pb.h"
#include "sharedos/protocol/v1/execution.pb.h"

namespace sharedos::envelope::core {

class TurnEngine {
 public:
  struct Options {
    // Limits applied when the request's options leave them out (semantics §4.1).
    int32_t default_max_steps = 16;
    // Absent: the turn's max_steps.
    std::optional<int32_t> default_max_tool_calls;
    int32_t default_timeout_ms = 120000;
    // New tool calls are refused turn_draining this long before the deadline (0: never early).
    absl::Duration drain_grace = absl::ZeroDuration();
    // A lease outlives its turn's timeout by this much (the authorizer caps leases at 630 s).
    absl::Duration lease_grace = absl::Seconds(30);
    // How long FinishTurn waits (real time) for calls still running before settling anyway.
    absl::Duration finish_wait = absl::Seconds(10);
    // How long an ended turn stays readable (GetTurn, CancelTurn, WatchTurn).
    absl::Duration ended_turn_retention = absl::Minutes(15);
    // Turns held at once (open and retained); OpenTurn answers RESOURCE_EXHAUSTED beyond.
    size_t max_turns = 100000;
    // Per authorizer RPC and per provider call (see Mediator::Options).
    absl::Duration authorizer_timeout = absl::Seconds(2);
    absl::Duration provider_timeout = absl::Seconds(30);
    // ListTools of host providers when a turn opens.
    absl::Duration catalog_timeout = absl::Seconds(5);
    // Provider deadlines are wall-clock time (tool_provider.h), whatever clock turns run on.
    const common::Clock* deadline_clock = &common::RealClock();
    // Runtime manifest of driver turns (turn.started, result metadata.runtime).
    std::string runtime_id = "sharedos.grpc-driver";
    std::string runtime_version = "1.0.0";
    // The MCP front door (envelope_svc/mcp). With a token codec, RUNTIME_MCP turns open: their
    // OpenTurnResponse.mcp carries `mcp_url` and a token minted by `mcp_tokens` that expires at
    // the turn's deadline. Without one, OpenTurn refuses RUNTIME_MCP (FAILED_PRECONDITION).
    std::string mcp_url;
    const mcp::ExecutionTokenCodec* mcp_tokens = nullptr;
    // Runtime manifest id of MCP turns.
    std::string mcp_runtime_id = "sharedos.mcp-harness";
  };

  // Borrows every dependency; each must outlive the engine. `providers` are the providers
  // attached to this envelope (their pointers are borrowed too).
  TurnEngine(authorizer::client::AuthorizerClient& authorizer, const tools::ToolRegistry& registry,
             tools::AttachedProviders providers, audit::client::AuditWriter& audit,
             const common::Clock& clock, Options options);
  TurnEngine(const TurnEngine&) = delete;
  TurnEngine& operator=(const TurnEngine&) = delete;

  // Validates, checks the caller's scope and the context, opens the lease, admits, resolves
  // the tools once, discovers, lists the catalogue (tool.catalog.listed, pre-effect) and
  // answers the catalogue, reach (narrowed to the catalogue's resource namespaces) and limits;
  // a running RUNTIME_MCP turn also answers `mcp` (Options::mcp_url and an execution token bound
  // to the turn, expiring at its deadline).
  // A turn that ends here (actor_mismatch, receiver_mismatch, message_context_mismatch,
  // authority_unavailable, an admission denial, tool_catalog_unavailable, audit_unavailable)
  // answers `result` and has written turn.ended.
  // Errors: INVALID_ARGUMENT naming the field (unknown fields, version ≠ "1", bounds, runtime
  // unspecified); PERMISSION_DENIED (namespace or owner outside `scope`); FAILED_PRECONDITION
  // (execution_id already used by a held turn; RUNTIME_MCP not configured); RESOURCE_EXHAUSTED
  // (max_turns held).
  absl::StatusOr<v1::OpenTurnResponse> OpenTurn(const v1::OpenTurnRequest& request,
                                                const common::server::HostScope& scope)
      ABSL_LOCKS_EXCLUDED(mu_);

  // One tool call of an open turn: the turn layer's checks (draining, step budget for a
  // declared step, call budget, offered this turn), then kernel mediation. Every refusal is a
  // ToolResult; events tool.requested and tool.completed.
  // Errors: INVALID_ARGUMENT (unknown fields, empty turn_id, malformed call, negative step);
  // NOT_FOUND (unknown turn); PERMISSION_DENIED (outside `scope`); FAILED_PRECONDITION (the
  // turn has ended, its deadline included).
  absl::StatusOr<v1::InvokeToolResponse> InvokeTool(const v1::InvokeToolRequest& request,
                                                    const common::server::HostScope& scope)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Settles complete / fail / escalate / harness_exited (see envelope.proto) and answers the
  // ExecutionResult. escalate records the escalation at the authorizer (escalation.requested)
  // only when the turn's catalogue offers sharedos.escalate; otherwise the turn fails
  // tool_unavailable and nothing is recorded but turn.ended. harness_exited on a turn whose MCP
  // latch engaged (StepEscalationLatch) records the ask the same way and ends escalated, with the
  // harness's outcome, callsAfterEscalation and escalationAsked in the result's metadata.
  // Errors: INVALID_ARGUMENT (no outcome; malformed outcome or metadata; a requested authority
  // naming another namespace, requester or owner); NOT_FOUND; PERMISSION_DENIED;
  // FAILED_PRECONDITION (already ended or ending; harness_exited on a driver turn);
  // UNAVAILABLE (the authorizer did not record the escalation — the turn stays open).
  absl::StatusOr<v1::FinishTurnResponse> FinishTurn(const v1::FinishTurnRequest& request,
                                                    const common::server::HostScope& scope)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Ends a running turn cancelled (turn_cancelled); an ended turn answers its result unchanged.
  // Errors: INVALID_ARGUMENT (empty turn_id); NOT_FOUND; PERMISSION_DENIED.
  absl::StatusOr<v1::CancelTurnResponse> CancelTurn(const v1::CancelTurnRequest& request,
                                                    const common::server::HostScope& scope)
      ABSL_LOCKS_EXCLUDED(mu_);

  // The result so far (status UNSPECIFIED and no completed_at while running).
  // Errors: INVALID_ARGUMENT (empty turn_id); NOT_FOUND; PERMISSION_DENIED.
  absl::StatusOr<v1::GetTurnResponse> GetTurn(const v1::GetTurnRequest& request,
                                              const common::server::HostScope& scope)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Delivers the turn's events from `from_sequence` on through `write` (which answers false
  // when the reader is gone), then new ones as they happen; returns OK after the turn's last
  // event, or CANCELLED when `write` fails or `cancelled()` turns true (polled while waiting).
  // Errors: INVALID_ARGUMENT (empty turn_id, negative from_sequence); NOT_FOUND;
  // PERMISSION_DENIED.
  absl::Status WatchTurn(const v1::WatchTurnRequest& request,
                         const common::server::HostScope& scope,
                         const std::function<bool(const protocol::v1::ExecutionEvent&)>& write,
                         const std::function<bool()>& cancelled) ABSL_LOCKS_EXCLUDED(mu_);

  // --- The MCP seat (envelope_svc/mcp) ---

  // A RUNTIME_MCP turn as the MCP server serves it.
  struct McpTurn {
    std::string turn_id;
    std::string execution_id;
    std::string trace_id;
    std::string catalog_hash;
    // The published catalogue (tools/list).
    std::shared_ptr<const protocol::v1::ToolCatalog> catalog;
    // Whether the effective catalogue offers sharedos.escalate (the latch engages only then).
    bool offers_escalation = false;
    // A host scope covering exactly this turn's context: InvokeTool's argument for MCP calls.
    common::server::HostScope scope;
  };
  // The held RUNTIME_MCP turn whose execution, turn, namespace, actor and catalogue all match a
  // verified token's claims (ended turns included while retained).
  // Errors: UNAUTHENTICATED (no such turn: forgotten, another turn's claims, a driver turn).
  absl::StatusOr<McpTurn> FindMcpTurn(const mcp::ExecutionTokenClaims& claims) const
      ABSL_LOCKS_EXCLUDED(mu_);

  // One step of a turn's escalation latch (seed ADR 0018), atomic per turn. Once the turn has
  // asked, every call is kPending and counted in callsAfterEscalation. Otherwise `ask_reason`
  // (a call naming sharedos.escalate on a turn that offers it) latches a running turn (kAsked:
  // the first ask wins; nothing is recorded until FinishTurn); anything else is kPassThrough —
  // so is an ask on a turn already ending or ended (InvokeTool then refuses it).
  // FinishTurn(harness_exited) of a latched turn ends it escalated.
  // Errors: NOT_FOUND (unknown turn).
  enum class LatchStep { kPassThrough, kAsked, kPending };
  absl::StatusOr<LatchStep> StepEscalationLatch(const std::string& turn_id,
                                                const std::optional<std::string>& ask_reason)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Ends every running turn whose deadline has passed (cancelled, turn_cancelled) and forgets
  // ended turns past their retention. Returns how many turns it ended.
  int CancelExpired() ABSL_LOCKS_EXCLUDED(mu_);

  // Cumulative costs of OpenTurn's steps on this engine (wall clock, for metrics and benches):
  // catalogue resolution = the registry resolved against the providers, the effective set
  // (discoverable ∩ requested) and its catalogHash; publication = copying the effective tools'
  // published definitions into the response; discovery = building the Discover request and its
  // round trip to the authorizer.
  struct Stats {
    int64_t turns_listed = 0;
    absl::Duration catalog_resolution;
    absl::Duration catalog_publication;
    absl::Duration discovery;
  };
  Stats stats() const ABSL_LOCKS_EXCLUDED(stats_mu_);

  // Turns held (running and retained), and running ones.
  size_t held_turns() const ABSL_LOCKS_EXCLUDED(mu_);
  size_t running_turns() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Turn;
  struct Settlement;

  absl::StatusOr<std::shared_ptr<Turn>> Find(const std::string& turn_id,
                                             const common::server::HostScope& scope) const
      ABSL_LOCKS_EXCLUDED(mu_);
  // Opens the admitted part of a turn (lease onwards); ends it when it cannot run.
  void Admit(Turn& turn, v1::OpenTurnResponse& response);
  // Ends `turn` with `settlement` once: result, events, turn.ended, lease closed.
  void Finalize(Turn& turn, Settlement settlement) ABSL_LOCKS_EXCLUDED(mu_);
  // Ends a running turn cancelled; answers its result (whoever ended it).
  protocol::v1::ExecutionResult Cancel(Turn& turn) ABSL_LOCKS_EXCLUDED(mu_);
  // Cancels `turn` if its deadline has passed.
  void EnforceDeadline(Turn& turn) ABSL_LOCKS_EXCLUDED(mu_);
  // Records the escalation at the authorizer and answers the escalated settlement.
  // Errors: UNAVAILABLE (the authorizer did not record it; `turn` is running again).
  absl::StatusOr<Settlement> RecordEscalation(Turn& turn, const std::string& reason,
                                              const protocol::v1::CapabilityRequest* requested);
  // The runtime manifest id of `turn`'s runtime.
  const std::string& RuntimeId(const Turn& turn) const;
  // Records an envelope refusal of `call` (tool.invoked, source envelope).
  void RecordEnvelopeRefusal(const Turn& turn, const protocol::v1::ToolCall& call, absl::Time at,
                             const protocol::v1::ToolResult& result, absl::string_view cause);

  authorizer::client::AuthorizerClient& authorizer_;
  const tools::ToolRegistry& registry_;
  const tools::AttachedProviders providers_;
  audit::client::AuditWriter& audit_;
  const common::Clock& clock_;
  const Options options_;
  Mediator mediator_;
  CatalogHasher catalog_hasher_;

  mutable absl::Mutex mu_;
  // turn id → turn (running and retained).
  absl::flat_hash_map<std::string, std::shared_ptr<Turn>> turns_ ABSL_GUARDED_BY(mu_);
  // namespace id + '\0' + execution id → turn id, for the turns held.
  absl::flat_hash_map<std::string, std::string> by_execution_ ABSL_GUARDED_BY(mu_);
  // deadline → turn id, for running turns.
  std::multimap<absl::Time, std::string> deadlines_ ABSL_GUARDED_BY(mu_);
  // forget-at → turn id, for ended turns.
  std::multimap<absl::Time, std::string> retention_ ABSL_GUARDED_BY(mu_);
  size_t running_ ABSL_GUARDED_BY(mu_) = 0;

  mutable absl::Mutex stats_mu_;
  Stats stats_ ABSL_GUARDED_BY(stats_mu_);
};

// The terminal outcome of an MCP harness that exited (envelope.proto HarnessExitedOutcome):
// with a latched escalation → escalated (the caller records it); output with outcome
// "completed" → succeeded; otherwise failed with error_code, or
// harness_exited_without_outcome. Exposed for tests.
struct HarnessSettlement {
  protocol::v1::ExecutionStatus status = protocol::v1::EXECUTION_STATUS_UNSPECIFIED;
  std::optional<google::protobuf::Value> output;
  std::optional<protocol::v1::ProtocolError> error;
  // metadata.harnessOutcome / harnessErrorCode.
  google::protobuf::Struct metadata;
};
HarnessSettlement SettleHarnessExit(const v1::HarnessExitedOutcome& exited,
                                    bool escalation_latched);

// Whether a host scope covers a context: its namespace listed, and its owner listed as
// "<kind>:<id>" or "*".
bool ScopeCovers(const common::server::HostScope& scope,
                 const protocol::v1::AccessContext& context);

}  // namespace sharedos::envelope::core

#endif  // SHAREDOS_ENVELOPE_SVC_CORE_TURN_ENGINE_H_
