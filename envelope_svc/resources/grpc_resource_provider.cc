#include "envelope_svc/resources/grpc_resource_provider.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "common/status/grpc_status.h"
#include "common/validation/unknown_fields.h"

namespace sharedos::envelope::resources {

absl::StatusOr<v1::ResourceResult> GrpcResourceProvider::Invoke(
    const v1::ResourceInvokeRequest& request, absl::Time deadline) {
  grpc::ClientContext context;
  if (deadline != absl::InfiniteFuture()) context.set_deadline(absl::ToChronoTime(deadline));
  if (options_.prepare_context) options_.prepare_context(context);
  v1::ResourceInvokeResponse response;
  const grpc::Status status = stub_->Invoke(&context, request, &response);
  if (!status.ok()) {
    // The failed RPC's code only: the provider's message is never copied.
    const absl::Status converted = common::FromGrpcStatus(status);
    const std::string message = absl::StrCat("ResourceProvider.Invoke failed: ",
                                             absl::StatusCodeToString(converted.code()));
    if (converted.code() == absl::StatusCode::kDeadlineExceeded) {
      return absl::DeadlineExceededError(message);
    }
    return absl::UnavailableError(message);
  }
  if (!common::validation::RejectUnknownFields(response, "response").ok()) {
    return absl::InvalidArgumentError("ResourceProvider.Invoke: response carries unknown fields");
  }
  return response.result();
}

}  // namespace sharedos::envelope::resources
