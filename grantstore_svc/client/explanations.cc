#include "grantstore_svc/client/explanations.h"

#include <iterator>

namespace sharedos::grantstore::client {
namespace {

constexpr char kStatus[] =
    "Nothing was allowed (fail closed). Check `sharedosctl status` for the dependency that is "
    "down or unready, bring it back, then retry the turn.";

// Every code of capability/reason_codes.h (string constants and the Name() of its enums).
constexpr CodeExplanation kCodes[] = {
    // ---- Decisions (semantics §6.1) ----
    {"allowed", "A grant authorized the operation.", "Nothing to do."},
    {"no_matching_grant",
     "No grant the turn's authority holds covers this resource, action, owner and purpose.",
     "Issue a grant for the required authority (`sharedosctl grants issue`), or let the turn "
     "escalate with it so the owner approves (`sharedosctl escalations approve --id=<escalation>` "
     "with the reviewer's credential)."},
    {"grant_exhausted", "The grant that matched has spent all its uses (max_uses).",
     "Issue a new grant, or approve a new escalation (optionally with --max_uses)."},
    {"invalid_context",
     "The access context is not usable (actor, authority, owner or purpose do not fit the turn).",
     "Fix the host's OpenTurn context: the actor must be the turn's agent, the authority and owner "
     "within the host credential's scope."},
    {"invalid_request", "The request names a resource of another owner or world.",
     "Make the tool call address the turn owner's own resources in the turn's namespace."},
    {"authority_unavailable",
     "The turn's authority could not be resolved: the grant store (or the authorizer) did not "
     "answer, or answered grants that cannot be used.",
     kStatus},
    {"usage_store_unavailable", "A bounded grant's use could not be counted.", kStatus},
    {"delegation_chain_unverified",
     "A derived grant's chain to its root could not be verified (a parent not found, the "
     "resolver down).",
     "Check that the parent grants exist and are live (`sharedosctl grants show`), and "
     "`sharedosctl status`; then retry."},
    {"delegation_chain_invalid",
     "A derived grant's chain is invalid: a parent revoked, widened, or delegation not permitted.",
     "Re-derive the grant from a live parent within its limits, or issue a root grant."},
    {"host_policy_denied", "The host policy of the namespace denies this operation.",
     "Read the rule with `sharedosctl policy get --namespace=<namespace>`; change it with "
     "`sharedosctl policy put` if the operation should be allowed."},
    {"host_policy_unavailable", "The host policy could not be loaded or evaluated.", kStatus},
    // ---- Tool calls (semantics §6.2) ----
    {"tool_unavailable", "The tool is not available to this turn (see the cause).",
     "Follow the cause: offer the tool in the turn, enable its tool namespace, or register it."},
    {"trace_mismatch", "The tool call's trace id is not the turn's.",
     "Send tool calls with the trace id the turn was opened with."},
    {"step_limit_exceeded", "The turn's step budget is spent.",
     "Raise the budget (ExecutionRequest options: max steps) or split the work across turns."},
    {"tool_call_limit_exceeded", "The turn's tool call budget is spent.",
     "Raise the budget (ExecutionRequest options: max tool calls) or split the work."},
    {"turn_draining", "The turn is ending (its deadline is near, or it ended); no new calls.",
     "Open a new turn; raise the turn's timeout or lower --drain_grace if turns end too early."},
    {"invalid_tool_arguments", "The tool arguments do not satisfy the tool's input schema.",
     "Fix the agent's arguments to match the tool's schema (the catalogue lists it)."},
    {"tool_requirement_resolution_failed",
     "The tool's requirement (resource, action) could not be derived from its arguments.",
     "Fix the arguments that name the resource (e.g. a path), or the tool's registry entry."},
    {"invalid_tool_requirement",
     "The resolved requirement lies outside the capability the tool declares.",
     "Fix the tool's registry entry or the arguments: a tool may only touch what it declares."},
    {"tool_catalog_unavailable", "A tool provider could not list its tools.",
     "Check the provider (envelope_svc --provider) is up and answers ListTools; then retry."},
    {"tool_execution_failed", "The tool provider failed to run the call.",
     "Check the provider's own logs; SharedOS authorized the call, the provider failed."},
    {"invalid_tool_result", "The tool provider returned a malformed result.",
     "Fix the provider: its result must carry the call id and a status."},
    {"escalation_pending",
     "The turn already asked for a human (over MCP); further calls wait for that decision.",
     "Have the reviewer decide the pending escalation; then run a new turn."},
    {"escalation_not_terminated",
     "sharedos.escalate ends the turn; it is never executed as a tool.",
     "Have the host end the turn escalated (FinishTurn escalate) instead of calling the tool."},
    // ---- Causes behind tool_unavailable (seed ADR 0023) ----
    {"not_registered", "No provider registers this tool.",
     "Register it in the envelope's tool registry (--registry) or attach its provider."},
    {"namespace_disabled", "The tool's namespace is not enabled in this turn.",
     "Enable it: context.enabled_tool_namespaces at OpenTurn, or Envelope.UpdateToolNamespaces."},
    {"not_offered", "The host did not offer this tool in the turn.",
     "Add it to the turn's ExecutionRequest.tools if the agent should have it."},
    {"not_discoverable", "The turn's authority does not reach this tool's namespace.",
     "Issue a grant that reaches the tool's resources, or stop offering the tool."},
    {"turn_ended", "The call named a turn that had already ended.",
     "Open a new turn for further calls."},
    {"refusals_exhausted",
     "The turn kept calling past its budget; the envelope ended it after a bounded number of "
     "refusals (ADR 0016).",
     "Raise the turn's budget (max_tool_calls) if the work needs more calls, or find why the "
     "agent kept calling."},
    {"result_too_large", "The tool's result would have exceeded its cap; nothing was returned.",
     "Ask for less (a narrower path or pattern), or raise the tool's max_result_bytes or "
     "--max_tool_result_bytes."},
    // ---- Messages (semantics §6.4) ----
    {"message_transport_not_configured", "No message transport is configured.",
     "Configure one (envelope_svc --message_transport) or use sharedosd's built-in transport."},
    {"message_requirement_resolution_failed",
     "The message's receiver could not be resolved to a resource.",
     "Address the message to a valid principal (kind:id)."},
    {"message_delivery_failed", "The message transport failed.",
     "Check the transport is up (`sharedosctl status`), then resend."},
    {"invalid_message_receipt", "The message transport answered a malformed receipt.",
     "Fix the host's MessageTransport: its receipt must name the message."},
    {"message_request_not_prepared", "The message request was not prepared.",
     "Resend the request from a turn that prepared it."},
    {"message_request_not_accepted", "The message transport did not accept the request.",
     "Read the cause (the transport's own code, e.g. route_lease_revoked) and fix the route."},
    {"message_reply_resolution_failed", "The reply to the message could not be resolved.",
     "Check the replying agent's turn: the reply must answer the request it names."},
    {"invalid_message_reply", "The reply does not answer the message.",
     "The reply must name the request (reply_to) with sender and receiver swapped."},
    // ---- Resources (semantics §6.3) ----
    {"resource_provider_not_found", "No resource provider serves the resource's namespace.",
     "Attach one (envelope_svc --resource_provider=<namespace>=<host:port>)."},
    {"resource_execution_failed", "The resource provider failed.",
     "Check the provider's own logs; SharedOS authorized the operation."},
    {"invalid_resource_result", "The resource provider answered a malformed result.",
     "Fix the provider: the result must carry the operation id and a status."},
    // ---- Turns (semantics §6.5) and infrastructure (§3.5) ----
    {"actor_mismatch", "The context's actor is not the turn's agent.",
     "Open the turn with the same agent as actor and as ExecutionRequest.agent."},
    {"receiver_mismatch", "The message's receiver is not the turn's agent.",
     "Address the turn's starting message to the turn's agent."},
    {"message_context_mismatch",
     "The message's sender, trace or purpose does not match the context.",
     "Send messages with the turn's own trace and purpose, from its actor."},
    {"audit_unavailable",
     "The audit log could not record the operation, so it was refused (nothing happens "
     "unrecorded).",
     kStatus},
    {"turn_cancelled", "The turn was cancelled by its host.", "Nothing to do, or run it again."},
    {"escalation_requested", "The turn ended asking a human for authority.",
     "The reviewer decides it: `sharedosctl escalations show --id=<escalation>`, then approve or "
     "deny with the reviewer's credential (or the console's queue)."},
    {"harness_exited_without_outcome", "The harness exited without reporting an outcome.",
     "Check the harness (agent CLI) logs; the turn ended failed."},
    {"operation_aborted", "The turn was stopped by a restart of its envelope (ADR 0009).",
     "Open a new turn with a new execution id; find why the envelope restarted."},
    // ---- Turn endings a runtime or harness reports (semantics §6.5, §6.6) ----
    {"driver_failed", "The driver that ran the turn failed.",
     "Check the host's driver logs; the turn ended failed. Open a new turn once it is fixed."},
    {"invalid_driver_decision", "The turn's driver made a malformed decision.",
     "Fix the host's driver so it reports one of the outcomes FinishTurn accepts."},
    {"runtime_failed", "The agent runtime that ran the turn failed.",
     "Check the runtime's logs; the turn ended failed."},
    {"invalid_runtime_outcome", "The turn's runtime reported a malformed outcome.",
     "Fix the runtime so it reports complete, fail or escalate."},
    {"harness_not_started", "The harness (agent CLI) could not be started.",
     "Check the host's command line and installation of the harness, then open a new turn."},
    {"harness_ended_without_outcome", "The harness (agent CLI) ended without an outcome.",
     "Check the harness's logs; the turn ended failed."},
    {"harness_frame_limit_exceeded", "The harness sent too many frames that could not be used.",
     "Check the harness's version against the host's and its logs; the turn ended failed."},
    {"harness_arguments_unparseable", "The harness sent tool arguments that could not be parsed.",
     "Check the harness and its model's output; the call was never made."},
    {"harness_command_rejected", "The harness refused the command it was given.",
     "Check the host's command line for the harness against the harness's version."},
    {"harness_failed", "The harness (agent CLI) failed, or was stopped at its limit.",
     "Check the harness's logs and the host's time and step limits."},
    {"model_call_failed", "The model the harness called did not answer.",
     "Check the model provider's status and the host's credentials for it, then run the turn "
     "again."},
    {"model_output_truncated", "The model's answer was cut off at its output limit.",
     "Raise the model's output limit or shorten the task, then run the turn again."},
    {"model_malformed_call_limit_exceeded",
     "The model made too many malformed tool calls in the turn.",
     "Check the tools' schemas against the model; run the turn again with a model that follows "
     "them."},
    // ---- AuthorizationExplanation.missingDependency ----
    {"usageStore", "The grant usage store did not answer.", kStatus},
    {"delegationResolver", "The resolver of delegation chains did not answer.", kStatus},
    // ---- Delegation chain codes (semantics §3.6, §6.8) ----
    {"resolver_unavailable", "The delegation resolver did not answer.", kStatus},
    {"parent_not_found", "A parent grant of the chain does not exist.",
     "Re-derive the grant from an existing parent, or issue a root grant."},
    {"resolver_failed", "The delegation resolver failed.", kStatus},
    {"chain_too_long", "The delegation chain is longer than allowed.",
     "Derive from a grant closer to the root."},
    {"chain_cycle", "The delegation chain loops.", "Revoke the grants of the cycle; re-issue."},
    {"namespace_mismatch", "A parent grant is in another namespace.",
     "Derive within one namespace."},
    {"issuer_not_parent_subject", "A derived grant's issuer is not its parent's subject.",
     "Only a parent's subject may derive from it."},
    {"parent_inactive", "A parent grant is revoked, expired or not yet valid.",
     "Re-derive from a live parent, or issue a root grant."},
    {"delegation_not_permitted", "A parent grant does not permit delegation.",
     "Issue the parent with delegation allowed, or issue a root grant."},
    {"delegation_depth_exceeded", "The chain is deeper than a parent's delegation_depth.",
     "Derive from a grant higher in the chain."},
    {"bounded_parent_not_delegable", "A parent with a use limit cannot be delegated.",
     "Derive from an unbounded parent, or issue a root grant."},
    {"capability_widened", "A derived grant reaches beyond its parent's capabilities.",
     "Derive only what the parent holds."},
    {"constraints_widened", "A derived grant loosens its parent's constraints.",
     "Keep the child's purposes, window and uses within the parent's."},
    // ---- DeriveGrant refusals (semantics §3.7) ----
    {"empty_capabilities", "The derivation names no capability.", "Name at least one."},
    {"id_collides_with_parent", "The child grant's id is its parent's.", "Give it its own id."},
    {"parent_not_delegable", "The parent grant does not permit delegation.",
     "Ask its issuer for a delegable grant."},
    {"depth_exhausted", "The parent's delegation depth is used up.",
     "Derive from a grant higher in the chain."},
    {"capability_not_within_parent", "The child reaches beyond the parent's capabilities.",
     "Narrow the child's capabilities."},
    {"purpose_not_within_parent", "The child's purposes are not within the parent's.",
     "Narrow the child's purposes."},
    {"window_not_within_parent", "The child's validity window exceeds the parent's.",
     "Narrow the child's not_before / expires_at."},
    {"issued_before_parent", "The child would be issued before its parent.",
     "Issue the child after the parent."},
    // ---- Authority resolution (semantics §3.2; callers see authority_unavailable) ----
    {"grant_source_failed", "The grant store did not answer the authority load.", kStatus},
    {"invalid_grant_material", "The grant store answered grants that do not validate.",
     "Find the malformed grant (`sharedosctl grants list`), revoke it and re-issue it."},
    {"grant_scope_mismatch", "The grant store answered grants of another scope.",
     "Check the deployment: the authorizer must read the namespace's own grants."},
    {"grant_limit_exceeded", "The authority holds more grants than a turn may load.",
     "Revoke grants the subject no longer needs, or consolidate them."},
    {"revocation_unavailable", "The live revocation source failed or answered malformed.", kStatus},
};

// Why a grant did not serve a request (capability::RejectionReason).
constexpr CodeExplanation kRejections[] = {
    {"issuer", "its issuer is not the turn's authority (nor a chain rooted in it)",
     "issue the grant from the turn's authority"},
    {"subject", "its subject is not the turn's actor", "issue it to the acting agent"},
    {"namespace", "it belongs to another namespace", "issue it in the turn's namespace"},
    {"window", "it is not valid now (not yet valid, or expired)", "issue one valid now"},
    {"purpose", "its purposes do not include the turn's purpose", "add the turn's purpose"},
    {"verifier", "a verifier it names did not accept the request", "check the verifier"},
    {"capability", "none of its capabilities covers this resource and action",
     "add a capability for the resource and action (see the required authority)"},
    {"delegation", "its delegation chain does not verify", "re-derive it from a live parent"},
    {"exhausted", "its uses are spent (max_uses)", "issue a new grant or approve a new escalation"},
};

const CodeExplanation* Find(const CodeExplanation* begin, const CodeExplanation* end,
                            absl::string_view code) {
  for (const CodeExplanation* entry = begin; entry != end; ++entry) {
    if (entry->code == code) return entry;
  }
  return nullptr;
}

}  // namespace

const CodeExplanation* ExplainCode(absl::string_view code) {
  if (const CodeExplanation* found = Find(std::begin(kCodes), std::end(kCodes), code)) {
    return found;
  }
  return Find(std::begin(kRejections), std::end(kRejections), code);
}

const CodeExplanation* ExplainRejection(absl::string_view reason) {
  return Find(std::begin(kRejections), std::end(kRejections), reason);
}

}  // namespace sharedos::grantstore::client
