#include "envelope_svc/tools/turn_tools.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "capability/reason_codes.h"
#include "common/status/status_macros.h"
#include "envelope_svc/messaging/messages_tool.h"
#include "envelope_svc/tools/escalation_tool.h"
#include "envelope_svc/tools/requirement.h"
#include "envelope_svc/tools/tool_refusal.h"

namespace sharedos::envelope::tools {
namespace {

std::string ProviderFailure(absl::string_view provider_id, absl::string_view what,
                            const absl::Status& status) {
  return absl::StrCat("provider \"", provider_id, "\": ", what, ": ",
                      absl::StatusCodeToString(status.code()));
}

// A call's result cap: the tool's, else the envelope's, never above the envelope's (0: none).
uint64_t ResultCap(const Tool& tool, uint64_t envelope_cap) {
  const uint64_t own = tool.provider_binding().max_result_bytes();
  if (own == 0) return envelope_cap;
  return envelope_cap == 0 ? own : std::min(own, envelope_cap);
}

absl::Status ResultTooLarge(absl::string_view provider_id, uint64_t cap) {
  google::protobuf::Struct facts;
  (*facts.mutable_fields())["limitBytes"].set_number_value(static_cast<double>(cap));
  (*facts.mutable_fields())["limit"].set_string_value(
      "the tool's max_result_bytes, else --max_tool_result_bytes");
  return ToolRefusalWithCause(
      capability::kToolExecutionFailed, capability::kCauseResultTooLarge, facts,
      absl::StrCat("provider \"", provider_id, "\": result over ", cap, " bytes"));
}

}  // namespace

absl::StatusOr<TurnTools> TurnTools::Resolve(const ToolRegistry& registry,
                                             const AttachedProviders& providers,
                                             const v1::ProviderContext& context,
                                             absl::Time deadline) {
  TurnTools turn;
  turn.files_ = providers.files;
  turn.builtin_ = registry.BuiltinTools(providers.files != nullptr);
  for (const auto& [provider_id, registered] : registry.HostTools()) {
    auto attached = providers.hosts.find(provider_id);
    if (attached == providers.hosts.end() || attached->second == nullptr) continue;
    ToolProviderInterface* provider = attached->second;
    absl::StatusOr<std::vector<protocol::v1::ToolDefinition>> listed =
        provider->ListTools(context, deadline);
    if (!listed.ok()) {
      return ToolRefusal(capability::kToolCatalogUnavailable,
                         ProviderFailure(provider_id, "ListTools failed", listed.status()));
    }
    absl::flat_hash_map<absl::string_view, const protocol::v1::ToolDefinition*> listed_by_name;
    for (const protocol::v1::ToolDefinition& definition : *listed) {
      if (!listed_by_name.emplace(definition.name(), &definition).second) {
        return ToolRefusal(capability::kToolCatalogUnavailable,
                           absl::StrCat("provider \"", provider_id, "\": lists \"",
                                        definition.name(), "\" twice"));
      }
    }
    for (const std::shared_ptr<const Tool>& tool : registered) {
      auto definition = listed_by_name.find(tool->name());
      if (definition == listed_by_name.end()) continue;
      absl::StatusOr<std::shared_ptr<const Tool>> turn_tool =
          registry.ToolForListedDefinition(tool, *definition->second);
      if (!turn_tool.ok()) {
        return ToolRefusal(
            capability::kToolCatalogUnavailable,
            absl::StrCat("provider \"", provider_id, "\": ", turn_tool.status().message()));
      }
      std::shared_ptr<const Tool> listed_tool = *std::move(turn_tool);
      const absl::string_view name = listed_tool->name();
      turn.host_.emplace(name, HostEntry{std::move(listed_tool), provider});
    }
  }
  if (providers.messages_request) {
    std::shared_ptr<const Tool> tool = messaging::MessagesRequestTool();
    const absl::string_view name = tool->name();
    turn.host_.emplace(name, HostEntry{std::move(tool), nullptr});
  }
  if (!turn.host_.empty()) {
    turn.merged_ = turn.builtin_->tools;
    for (const auto& [name, entry] : turn.host_) turn.merged_.push_back(entry.tool);
    std::sort(turn.merged_.begin(), turn.merged_.end(),
              [](const auto& a, const auto& b) { return a->name() < b->name(); });
  }
  return turn;
}

const Tool* TurnTools::Find(absl::string_view name) const {
  auto host = host_.find(name);
  if (host != host_.end()) return host->second.tool.get();
  auto builtin = builtin_->by_name.find(name);
  return builtin == builtin_->by_name.end() ? nullptr : builtin->second;
}

absl::StatusOr<protocol::v1::ToolResult> TurnTools::Invoke(
    const Tool& tool, const protocol::v1::ToolCall& call,
    const protocol::v1::CapabilityRequirement& requirement, const v1::ProviderContext& context,
    absl::Time deadline, uint64_t max_result_bytes, const nlohmann::json* arguments) const {
  if (tool.name() != call.tool()) {
    return ToolRefusal(capability::kToolExecutionFailed, "the call names another tool");
  }
  // Files-bound and providerless tools are the turn's built-ins; a host tool's provider is the
  // one that listed it to this turn.
  ToolProviderInterface* provider = nullptr;
  if (tool.provider_binding().has_files()) {
    provider = files_;
  } else if (auto host = host_.find(tool.name()); host != host_.end()) {
    if (host->second.tool.get() != &tool) {
      return ToolRefusal(capability::kToolExecutionFailed,
                         "the tool is not one of this turn's tools");
    }
    provider = host->second.provider;
  }
  if (provider == nullptr) {
    if (tool.name() == kEscalationToolName) {
      return ToolRefusal(capability::kEscalationNotTerminated, "sharedos.escalate was forwarded");
    }
    return ToolRefusal(capability::kToolExecutionFailed, "the tool has no provider");
  }
  v1::InvokeRequest request;
  request.set_call_id(call.id());
  request.set_tool(call.tool());
  *request.mutable_arguments() = call.arguments();
  protocol::v1::CapabilityRequirement authorized = WithDefaultOwner(requirement, context.owner());
  *request.mutable_resource() = std::move(*authorized.mutable_resource());
  request.set_action(authorized.action());
  *request.mutable_context() = context;
  const uint64_t cap = ResultCap(tool, max_result_bytes);
  request.set_max_result_bytes(cap);
  absl::StatusOr<protocol::v1::ToolResult> result =
      arguments != nullptr ? provider->InvokeParsed(request, *arguments, deadline)
                           : provider->Invoke(request, deadline);
  if ((!result.ok() && result.status().code() == absl::StatusCode::kResourceExhausted) ||
      (result.ok() && cap > 0 && result->output().ByteSizeLong() > cap)) {
    return ResultTooLarge(provider->id(), cap);
  }
  if (!result.ok()) {
    return ToolRefusal(capability::kToolExecutionFailed,
                       ProviderFailure(provider->id(), "Invoke failed", result.status()));
  }
  return tool.ValidateResult(*result, call);
}

}  // namespace sharedos::envelope::tools
