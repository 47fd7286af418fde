// The seam between the envelope and whatever runs a tool: the built-in files provider, a host's
// ToolProvider over gRPC, or a test fake. Implementations must be thread-safe: one provider
// serves every turn. Deadlines are real (wall-clock) time, as gRPC deadlines are — never the
// simulated world clock.

#ifndef SHAREDOS_ENVELOPE_SVC_TOOLS_TOOL_PROVIDER_H_
#define SHAREDOS_ENVELOPE_SVC_TOOLS_TOOL_PROVIDER_H_

#include <nlohmann/json.hpp>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "sharedos/envelope/v1/envelope.pb.h"
#include "sharedos/protocol/v1/context.pb.h"
#include "sharedos/protocol/v1/tool.pb.h"

namespace sharedos::envelope::tools {

// The part of a trusted context a provider (tool or resource) may see: no authority, no enabled
// tool namespaces.
inline v1::ProviderContext ProviderContextOf(const protocol::v1::AccessContext& context) {
  v1::ProviderContext provider;
  provider.set_namespace_id(context.namespace_id());
  *provider.mutable_actor() = context.actor();
  *provider.mutable_owner() = context.owner();
  provider.set_purpose(context.purpose());
  provider.set_trace_id(context.trace_id());
  return provider;
}

class ToolProviderInterface {
 public:
  virtual ~ToolProviderInterface() = default;

  // The provider's id ("files" for the built-in; the host provider id otherwise).
  virtual absl::string_view id() const = 0;

  // The management definitions this provider offers for a context; asked once per turn.
  // Any error means the turn's catalogue is unavailable (tool_catalog_unavailable); its text
  // must not carry provider-supplied messages.
  virtual absl::StatusOr<std::vector<protocol::v1::ToolDefinition>> ListTools(
      const v1::ProviderContext& context, absl::Time deadline) = 0;

  // Runs one call the envelope has authorized: `request.resource`/`action` are the authorized
  // requirement (owner defaulted to the context owner), `request.arguments` valid against the
  // tool's input schema. Returns the provider's result, still to be checked by the caller
  // (same call_id and tool, output schema). Any error means tool_execution_failed; its text
  // must not carry provider-supplied messages.
  virtual absl::StatusOr<protocol::v1::ToolResult> Invoke(const v1::InvokeRequest& request,
                                                          absl::Time deadline) = 0;

  // Invoke, given also `arguments`: request.arguments as the mediator already parsed them (and
  // checked against the input schema), so that an in-process provider working on JSON (the
  // files provider) does not parse them a second time. The default ignores them.
  virtual absl::StatusOr<protocol::v1::ToolResult> InvokeParsed(const v1::InvokeRequest& request,
                                                                const nlohmann::json& arguments,
                                                                absl::Time deadline) {
    return Invoke(request, deadline);
  }
};

}  // namespace sharedos::envelope::tools

#endif  // SHAREDOS_ENVELOPE_SVC_TOOLS_TOOL_PROVIDER_H_
