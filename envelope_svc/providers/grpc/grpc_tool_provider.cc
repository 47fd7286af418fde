#include "envelope_svc/providers/grpc/grpc_tool_provider.h"

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status/grpc_status.h"
#include "common/validation/unknown_fields.h"

namespace sharedos::envelope::providers {
namespace {

// The failed RPC's code only: the provider's message is never copied.
absl::Status RpcFailed(absl::string_view method, const grpc::Status& status) {
  const absl::Status converted = common::FromGrpcStatus(status);
  const std::string message = absl::StrCat("ToolProvider.", method,
                                           " failed: ", absl::StatusCodeToString(converted.code()));
  if (converted.code() == absl::StatusCode::kDeadlineExceeded) {
    return absl::DeadlineExceededError(message);
  }
  return absl::UnavailableError(message);
}

}  // namespace

GrpcToolProvider::GrpcToolProvider(std::string provider_id,
                                   std::unique_ptr<v1::ToolProvider::StubInterface> stub,
                                   Options options)
    : provider_id_(std::move(provider_id)), stub_(std::move(stub)), options_(std::move(options)) {}

void GrpcToolProvider::Prepare(grpc::ClientContext& context, absl::Time deadline) const {
  if (deadline != absl::InfiniteFuture()) context.set_deadline(absl::ToChronoTime(deadline));
  if (options_.prepare_context) options_.prepare_context(context);
}

absl::StatusOr<std::vector<protocol::v1::ToolDefinition>> GrpcToolProvider::ListTools(
    const v1::ProviderContext& provider_context, absl::Time deadline) {
  grpc::ClientContext context;
  Prepare(context, deadline);
  v1::ListToolsRequest request;
  *request.mutable_context() = provider_context;
  v1::ListToolsResponse response;
  grpc::Status status = stub_->ListTools(&context, request, &response);
  if (!status.ok()) return RpcFailed("ListTools", status);
  if (!common::validation::RejectUnknownFields(response, "response").ok()) {
    return absl::InvalidArgumentError("ToolProvider.ListTools: response carries unknown fields");
  }
  return std::vector<protocol::v1::ToolDefinition>(response.tools().begin(),
                                                   response.tools().end());
}

absl::StatusOr<protocol::v1::ToolResult> GrpcToolProvider::Invoke(const v1::InvokeRequest& request,
                                                                  absl::Time deadline) {
  grpc::ClientContext context;
  Prepare(context, deadline);
  v1::InvokeResponse response;
  grpc::Status status = stub_->Invoke(&context, request, &response);
  if (!status.ok()) return RpcFailed("Invoke", status);
  return response.result();
}

}  // namespace sharedos::envelope::providers
