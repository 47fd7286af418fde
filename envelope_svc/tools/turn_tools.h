// The tools of one turn (semantics §3.9 step 3): the registry resolved once against the
// attached providers — host providers asked ListTools once — then held unchanged for the turn,
// so a provider that changes its tools mid-turn does not change what the turn published.
// Also the provider call of step 12. Immutable after Resolve; thread-safe.

#ifndef SHAREDOS_ENVELOPE_SVC_TOOLS_TURN_TOOLS_H_
#define SHAREDOS_ENVELOPE_SVC_TOOLS_TURN_TOOLS_H_

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "envelope_svc/tools/tool.h"
#include "envelope_svc/tools/tool_provider.h"
#include "envelope_svc/tools/tool_registry.h"
#include "sharedos/envelope/v1/envelope.pb.h"
#include "sharedos/protocol/v1/common.pb.h"
#include "sharedos/protocol/v1/tool.pb.h"

namespace sharedos::envelope::tools {

// The providers attached to this envelope (borrowed; they outlive every turn). A registered
// tool whose provider is not attached is absent from every turn (not registered).
struct AttachedProviders {
  // The built-in files provider (ProviderBinding.files); null when not configured.
  ToolProviderInterface* files = nullptr;
  // Host providers by provider id (ProviderBinding.grpc.provider_id).
  absl::flat_hash_map<std::string, ToolProviderInterface*> hosts;
  // A message transport is attached: every turn has the kernel-supplied messages.request
  // (envelope_svc/messaging/messages_tool.h), run by the kernel's messaging, never by Invoke.
  bool messages_request = false;
};

class TurnTools {
 public:
  // The turn's tools:
  //   - files-bound tools, when the files provider is attached, as registered;
  //   - providerless tools (sharedos.escalate), always;
  //   - messages.request, when `providers.messages_request`;
  //   - host-bound tools, when their provider is attached and lists them for `context`: each
  //     provider is asked once, and the listed definition (the turn keeps it) replaces the
  //     registered one (ToolRegistry::ToolForListedDefinition). Listed tools that are not
  //     registered to that provider are ignored.
  // Errors: a tool_catalog_unavailable refusal — never a partial set — when a provider's
  // ListTools fails, lists a name twice, or lists an invalid definition for a registered tool.
  static absl::StatusOr<TurnTools> Resolve(const ToolRegistry& registry,
                                           const AttachedProviders& providers,
                                           const v1::ProviderContext& context, absl::Time deadline);

  // The turn's tool of that name; null when not registered for this turn (tool_unavailable,
  // cause not_registered).
  const Tool* Find(absl::string_view name) const;

  // Every tool of the turn, sorted by name (code-unit order).
  const std::vector<std::shared_ptr<const Tool>>& tools() const {
    return host_.empty() ? builtin_->tools : merged_;
  }

  // Step 12: runs `call` (already authorized for `requirement`) on `tool`'s provider and
  // checks the answer (Tool::ValidateResult). The provider receives the call's arguments,
  // the requirement's resource with the owner defaulted to `context.owner`, and its action.
  // Errors (refusals): escalation_not_terminated for sharedos.escalate and tool_execution_failed
  // for any other providerless tool; tool_execution_failed when the tool is not this turn's or
  // the provider answers an error (no provider text is kept, only its status code in the
  // detail); invalid_tool_result when its result is not a valid result for the call;
  // tool_execution_failed with cause result_too_large (details limitBytes) when the result would
  // exceed the call's cap — the tool's max_result_bytes, else `max_result_bytes` (the
  // envelope's; 0: none), never above the envelope's — told to the provider in the request and
  // checked on the answer.
  // `tool` is the turn's tool the call names (Find, once per call); `arguments`, when given, the
  // call's arguments as the mediator parsed them (handed to the provider: ToolProviderInterface::
  // InvokeParsed).
  absl::StatusOr<protocol::v1::ToolResult> Invoke(
      const Tool& tool, const protocol::v1::ToolCall& call,
      const protocol::v1::CapabilityRequirement& requirement, const v1::ProviderContext& context,
      absl::Time deadline, uint64_t max_result_bytes = 0,
      const nlohmann::json* arguments = nullptr) const;

 private:
  struct HostEntry {
    std::shared_ptr<const Tool> tool;
    ToolProviderInterface* provider = nullptr;
  };

  TurnTools() = default;

  // Providerless and files-bound tools: shared with every turn of the same attachment.
  std::shared_ptr<const ToolSet> builtin_;
  ToolProviderInterface* files_ = nullptr;
  // Host-listed tools of this turn; keys view the names of the tools the entries own.
  absl::flat_hash_map<absl::string_view, HostEntry> host_;
  // builtin_ and host_ merged by name; empty when host_ is.
  std::vector<std::shared_ptr<const Tool>> merged_;
};

}  // namespace sharedos::envelope::tools

#endif  // SHAREDOS_ENVELOPE_SVC_TOOLS_TURN_TOOLS_H_
