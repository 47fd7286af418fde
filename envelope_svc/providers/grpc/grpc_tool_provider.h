// A host's ToolProvider service (envelope.proto) as a ToolProviderInterface: ListTools asked
// once per turn, Invoke with the call's deadline. Provider error text never leaves this class:
// a failed RPC becomes UNAVAILABLE (or DEADLINE_EXCEEDED) "ToolProvider.<Method> failed: <grpc
// code name>", which the turn layer maps to tool_catalog_unavailable / tool_execution_failed.
// Thread-safe (the stub is).

#ifndef SHAREDOS_ENVELOPE_SVC_PROVIDERS_GRPC_GRPC_TOOL_PROVIDER_H_
#define SHAREDOS_ENVELOPE_SVC_PROVIDERS_GRPC_GRPC_TOOL_PROVIDER_H_

#include <grpcpp/client_context.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "envelope_svc/tools/tool_provider.h"
#include "sharedos/envelope/v1/envelope.grpc.pb.h"
#include "sharedos/envelope/v1/envelope.pb.h"
#include "sharedos/protocol/v1/tool.pb.h"

namespace sharedos::envelope::providers {

class GrpcToolProvider final : public tools::ToolProviderInterface {
 public:
  struct Options {
    // Adds per-call metadata (the envelope's service credential), wired in main.
    std::function<void(grpc::ClientContext&)> prepare_context;
  };

  // `provider_id` is the id registry entries name (`grpc { provider_id }`).
  GrpcToolProvider(std::string provider_id, std::unique_ptr<v1::ToolProvider::StubInterface> stub,
                   Options options);

  absl::string_view id() const override { return provider_id_; }

  // Errors: DEADLINE_EXCEEDED / UNAVAILABLE "ToolProvider.ListTools failed: <CODE>" for any
  // failed RPC; INVALID_ARGUMENT "ToolProvider.ListTools: response carries unknown fields".
  absl::StatusOr<std::vector<protocol::v1::ToolDefinition>> ListTools(
      const v1::ProviderContext& context, absl::Time deadline) override;

  // The provider's result as answered (an absent result is an empty ToolResult, which the
  // caller's result check refuses as invalid_tool_result).
  // Errors: DEADLINE_EXCEEDED / UNAVAILABLE "ToolProvider.Invoke failed: <CODE>".
  absl::StatusOr<protocol::v1::ToolResult> Invoke(const v1::InvokeRequest& request,
                                                  absl::Time deadline) override;

 private:
  void Prepare(grpc::ClientContext& context, absl::Time deadline) const;

  const std::string provider_id_;
  const std::unique_ptr<v1::ToolProvider::StubInterface> stub_;
  const Options options_;
};

}  // namespace sharedos::envelope::providers

#endif  // SHAREDOS_ENVELOPE_SVC_PROVIDERS_GRPC_GRPC_TOOL_PROVIDER_H_
