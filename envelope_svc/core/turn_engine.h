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
// The engine is a facade over its parts, each its own target: the turn table (turn_table.h),
// admission (admission.h: OpenTurn), invocation (invocation.h: InvokeTool, then mediation.h) and
// settlement (settlement.h: FinishTurn, CancelTurn, deadlines, every ending).
//
// Thread-safe: the table's mutex guards the turn index; each turn has its own mutex; no lock is
// held across an authorizer, provider or audit call.

#ifndef SHAREDOS_ENVELOPE_SVC_CORE_TURN_ENGINE_H_
#define SHAREDOS_ENVELOPE_SVC_CORE_TURN_ENGINE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "audit_svc/client/audit_writer.h"
#include "authorizer_svc/client/authorizer_client.h"
#include "common/server/auth.h"
#include "common/time/clock.h"
#include "envelope_svc/core/admission.h"
#include "envelope_svc/core/invocation.h"
#include "envelope_svc/core/mediator.h"
#include "envelope_svc/core/messaging.h"
#include "envelope_svc/core/resources.h"
#include "envelope_svc/core/settlement.h"
#include "envelope_svc/core/turn.h"
#include "envelope_svc/core/turn_journal.h"
#include "envelope_svc/core/turn_table.h"
#include "envelope_svc/mcp/execution_token.h"
#include "envelope_svc/messaging/message_transport.h"
#include "envelope_svc/resources/resource_provider.h"
#include "envelope_svc/tools/tool_registry.h"
#include "envelope_svc/tools/turn_tools.h"
#include "sharedos/envelope/v1/envelope.pb.h"
#include "sharedos/protocol/v1/execution.pb.h"
#include "sharedos/protocol/v1/tool.pb.h"

namespace sharedos::envelope::core {

// The message and audit cause of an MCP escalation ask whose requirement names no authority the
// kernel described to the turn (StepEscalationLatch).
inline constexpr absl::string_view kUndescribedRequirementMessage =
    "The requirement names no authority a refusal of this turn described; name the capreq- id a "
    "refusal gave, or none.";
inline constexpr absl::string_view kCauseRequirementNotDescribed = "requirement_not_described";

// The turn engine: the Envelope service's turns over its parts. Thread-safe.
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
    // Turns held at once (open and retained; retained ones give way to new turns); OpenTurn
    // answers RESOURCE_EXHAUSTED when open turns fill it.
    size_t max_turns = 100000;
    // Open turns per namespace and per host credential, and turns ended at admission retained
    // (turn_table.h; docs/reliability.md).
    size_t max_open_turns_per_namespace = 1000;
    size_t max_open_turns_per_host = 1000;
    size_t max_admission_ended = 1024;
    // Refusals recorded past a turn's budget before the turn is ended (invocation.h, ADR 0016).
    int32_t max_refusals_past_budget = 32;
    // The largest tool result (its output, serialized) any tool may answer; a tool's registry
    // max_result_bytes may lower it (turn_tools.h). 0: none.
    uint64_t max_tool_result_bytes = 2 << 20;
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
    // Turns open, turns by terminal status, budget refusals (common/metrics/sinks.h); null:
    // none. Borrowed.
    common::metrics::Metrics* metrics = nullptr;
    // The journal of open turns (ADR 0009): every running turn has a row until its turn.ended is
    // written; RecoverInterrupted ends the turns a crash left in it. Borrowed; nullptr: none
    // (a crash then loses the open turns' endings).
    TurnJournal* journal = nullptr;
    // The message transport (envelope_svc/messaging): with one, every turn has
    // messages.request and SendMessage dispatches through it; without, SendMessage fails
    // message_transport_not_configured after its decision. Borrowed.
    messaging::MessageTransportInterface* message_transport = nullptr;
    // Per transport call (Send, AwaitReply), never past the turn's deadline.
    absl::Duration transport_timeout = absl::Seconds(30);
    // Mints messages.request's message ids (default: a random UUID).
    std::function<std::string()> mint_message_id;
    // The resource providers (envelope_svc/resources), by the resource namespace each serves:
    // InvokeResource runs an authorized operation through its namespace's provider, and fails
    // resource_provider_not_found after its decision without one. Borrowed.
    resources::ResourceProviders resource_providers;
    // This envelope's replica name (ADR 0011: [a-z0-9-], at most 32; envelope_svc/server checks
    // it). Set, every turn id names it — "turn-<name>.<uuid>" — so any replica can tell the
    // turn's owner; empty (one replica): "turn-<uuid>".
    std::string replica_name;
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
  // unspecified); PERMISSION_DENIED (namespace, owner or authority outside `scope`);
  // FAILED_PRECONDITION (execution_id already used by a held turn; RUNTIME_MCP not configured);
  // RESOURCE_EXHAUSTED naming the quota reached and the flag that raises it (open turns in the
  // namespace, of the host credential `host`, or filling the table: turn_table.h); UNAVAILABLE
  // "envelope draining" (after StopAdmitting).
  absl::StatusOr<v1::OpenTurnResponse> OpenTurn(const v1::OpenTurnRequest& request,
                                                const common::server::HostScope& scope,
                                                absl::string_view host = "");

  // One tool call of an open turn: the turn layer's checks (draining, step budget for a
  // declared step, call budget, offered this turn), then kernel mediation. Every refusal is a
  // ToolResult; events tool.requested and tool.completed.
  // Errors: INVALID_ARGUMENT (unknown fields, empty turn_id, malformed call, negative step);
  // NOT_FOUND (unknown turn, or one outside `scope`); FAILED_PRECONDITION (the
  // turn has ended, its deadline included).
  absl::StatusOr<v1::InvokeToolResponse> InvokeTool(const v1::InvokeToolRequest& request,
                                                    const common::server::HostScope& scope);

  // Settles complete / fail / escalate / harness_exited (see envelope.proto) and answers the
  // ExecutionResult. escalate records the escalation at the authorizer (escalation.requested)
  // only when the turn's catalogue offers sharedos.escalate; otherwise the turn fails
  // tool_unavailable and nothing is recorded but turn.ended. A requested authority's identity
  // fields are discarded (the authorizer mints them from the turn's context). Any ending of a
  // turn whose MCP latch engaged (StepEscalationLatch) — harness_exited, complete, fail —
  // records the ask the same way and ends escalated, with the harness's outcome
  // (harnessOutcome), callsAfterEscalation and escalationAsked in the result's metadata. An
  // escalated response carries the stored escalation's id.
  // Errors: INVALID_ARGUMENT (no outcome; malformed outcome or metadata); NOT_FOUND (also
  // outside `scope`); FAILED_PRECONDITION (already ended or ending; harness_exited on a driver
  // turn); UNAVAILABLE (the authorizer did not record the escalation — the turn stays open).
  absl::StatusOr<v1::FinishTurnResponse> FinishTurn(const v1::FinishTurnRequest& request,
                                                    const common::server::HostScope& scope);

  // Ends a running turn cancelled (turn_cancelled) — escalated when its MCP latch engaged
  // (harnessOutcome "cancelled"); an ended turn answers its result unchanged.
  // Errors: INVALID_ARGUMENT (empty turn_id); NOT_FOUND (also outside `scope`); UNAVAILABLE (a
  // latched turn's escalation was not recorded; the turn stays open).
  absl::StatusOr<v1::CancelTurnResponse> CancelTurn(const v1::CancelTurnRequest& request,
                                                    const common::server::HostScope& scope);

  // The result so far (status UNSPECIFIED and no completed_at while running).
  // Errors: INVALID_ARGUMENT (empty turn_id); NOT_FOUND (also outside `scope`).
  absl::StatusOr<v1::GetTurnResponse> GetTurn(const v1::GetTurnRequest& request,
                                              const common::server::HostScope& scope);

  // Delivers the turn's events from `from_sequence` on through `write` (which answers false
  // when the reader is gone), then new ones as they happen; returns OK after the turn's last
  // event, or CANCELLED when `write` fails or `cancelled()` turns true (polled while waiting).
  // Errors: INVALID_ARGUMENT (empty turn_id, negative from_sequence); NOT_FOUND (also outside
  // `scope`).
  absl::Status WatchTurn(const v1::WatchTurnRequest& request,
                         const common::server::HostScope& scope,
                         const std::function<bool(const protocol::v1::ExecutionEvent&)>& write,
                         const std::function<bool()>& cancelled);

  // Sends a message for an open turn's actor (Envelope.SendMessage; messaging.h Send): every
  // outcome is a receipt, audited as message.sent.
  // Errors: INVALID_ARGUMENT naming the field (unknown fields, empty turn_id, a malformed
  // message); NOT_FOUND (unknown turn, or one outside `scope`);
  // FAILED_PRECONDITION (the turn has ended or is ending).
  absl::StatusOr<v1::SendMessageResponse> SendMessage(const v1::SendMessageRequest& request,
                                                      const common::server::HostScope& scope);

  // Invokes a resource operation for an open turn's actor (Envelope.InvokeResource;
  // resources.h): every outcome is a ResourceResult, audited as resource.invoked.
  // Errors: INVALID_ARGUMENT naming the field (unknown fields, empty turn_id, operation_id not
  // an Identifier, a malformed resource or action, input not a JSON value); NOT_FOUND (unknown
  // turn, or outside `scope`); FAILED_PRECONDITION (the turn has ended or is
  // ending).
  absl::StatusOr<v1::InvokeResourceResponse> InvokeResource(
      const v1::InvokeResourceRequest& request, const common::server::HostScope& scope);

  // The turn's tool namespaces, and an update of them (tool_namespaces.h).
  // Errors: INVALID_ARGUMENT naming the field; NOT_FOUND (also outside `scope`);
  // FAILED_PRECONDITION (the turn has ended).
  absl::StatusOr<v1::ListToolNamespacesResponse> ListToolNamespaces(
      const v1::ListToolNamespacesRequest& request, const common::server::HostScope& scope);
  absl::StatusOr<v1::UpdateToolNamespacesResponse> UpdateToolNamespaces(
      const v1::UpdateToolNamespacesRequest& request, const common::server::HostScope& scope);

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
  absl::StatusOr<McpTurn> FindMcpTurn(const mcp::ExecutionTokenClaims& claims) const;

  // One step of a turn's escalation latch (seed ADR 0018), atomic per turn. Once the turn has
  // asked, every call is kPending and counted in callsAfterEscalation. Otherwise `ask` (a call
  // naming sharedos.escalate on a turn that offers it) latches a running turn (kAsked: the first
  // ask wins; nothing is recorded at the authorizer until the turn ends, but the latch is in the
  // journal, fsynced, before kAsked is answered — Settler::JournalLatch, ADR 0009 — so a turn
  // latched at a crash ends escalated on restart); anything else is kPassThrough — so is an ask
  // on a turn already ending or ended (InvokeTool then refuses it).
  // The escalation names the authority the ask's `requirement` names, which must be one the
  // kernel described to this turn (a no_matching_grant denial's required_authority, docs/adr/
  // 0018); an ask naming none names the one authority described, when exactly one was, else
  // none. An ask naming an id the turn was never described is kUnknownRequirement: not latched,
  // `call` recorded refused (tool.invoked, source envelope, failed invalid_tool_arguments, cause
  // requirement_not_described); the harness may ask again.
  // Every ending of a latched turn (FinishTurn, CancelTurn, the deadline) ends it escalated.
  // Errors: NOT_FOUND (unknown turn).
  enum class LatchStep { kPassThrough, kAsked, kPending, kUnknownRequirement };
  struct LatchAsk {
    std::string reason;
    // A capreq- id, as the harness sent it (trimmed); absent when it named none.
    std::optional<std::string> requirement;
  };
  absl::StatusOr<LatchStep> StepEscalationLatch(const std::string& turn_id,
                                                const std::optional<LatchAsk>& ask,
                                                const protocol::v1::ToolCall& call);

  // Ends every running turn whose deadline has passed (cancelled, turn_cancelled; escalated with
  // harnessOutcome "timed_out" when its MCP latch engaged) and forgets ended turns past their
  // retention. Returns how many turns it ended.
  int CancelExpired();

  // Ends every turn the journal holds — turns open when this envelope's process last stopped —
  // failed operation_aborted (fail closed; turn.ended outcome interrupted, written once under the
  // id minted when the turn opened), or escalated when its MCP latch had engaged (the ask
  // recorded at the authorizer once; Settler::RecoverInterrupted), their leases closed when the
  // authorizer answers; GetTurn answers them for the ended-turn retention. Call before serving.
  // Returns how many it ended.
  // Errors: those of the journal (do not serve then: fail closed).
  absl::StatusOr<int> RecoverInterrupted();

  // Cumulative costs of OpenTurn's steps on this engine (see AdmissionStats).
  using Stats = AdmissionStats;
  Stats stats() const;

  // Turns held (running and retained), and running ones.
  size_t held_turns() const;
  size_t running_turns() const;
  // Waits until no turn is running or `timeout` of the engine's clock has passed; returns how
  // many still run.
  size_t AwaitNoneRunning(absl::Duration timeout) const;
  // A draining replica (ADR 0011): from now on OpenTurn answers UNAVAILABLE "envelope
  // draining"; the open turns are served until they end. Idempotent.
  void StopAdmitting();

 private:
  // Records an ask refused kUnknownRequirement (StepEscalationLatch).
  void RefuseUndescribed(const Turn& turn, const protocol::v1::ToolCall& call);

  const common::Clock& clock_;
  audit::client::AuditWriter& audit_;
  const tools::AttachedProviders providers_;
  const RuntimeManifest runtime_;
  Messenger messenger_;
  ResourceInvoker resources_;
  Mediator mediator_;
  TurnTable table_;
  Settler settler_;
  Admission admission_;
  Invocation invocation_;
};

}  // namespace sharedos::envelope::core

#endif  // SHAREDOS_ENVELOPE_SVC_CORE_TURN_ENGINE_H_
