#include "envelope_svc/resources/files_resources.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "envelope_svc/providers/files/files_provider.h"

namespace sharedos::envelope::resources {

absl::StatusOr<v1::ResourceResult> FilesResourceProvider::Invoke(
    const v1::ResourceInvokeRequest& request, absl::Time deadline) {
  v1::ResourceResult result;
  result.set_operation_id(request.operation_id());
  if (request.has_input() && !request.input().has_struct_value()) {
    result.set_status(v1::RESOURCE_RESULT_STATUS_FAILED);
    result.mutable_error()->set_code(std::string(files::kInvalidArguments));
    result.mutable_error()->set_message("The resource input must be a JSON object.");
    result.mutable_error()->set_retryable(false);
    return result;
  }
  v1::InvokeRequest call;
  call.set_call_id(request.operation_id());
  // The tool of the same action (snapshot:create → files.snapshot.create); the files provider
  // runs by action and resource, never by name.
  call.set_tool(absl::StrCat("files.", absl::StrReplaceAll(request.action(), {{":", "."}})));
  if (request.has_input()) *call.mutable_arguments() = request.input().struct_value();
  *call.mutable_resource() = request.resource();
  call.set_action(request.action());
  *call.mutable_context() = request.context();
  absl::StatusOr<protocol::v1::ToolResult> ran = files_.Invoke(call, deadline);
  if (!ran.ok()) return ran.status();
  result.set_status(ran->status() == protocol::v1::TOOL_RESULT_STATUS_SUCCEEDED
                        ? v1::RESOURCE_RESULT_STATUS_SUCCEEDED
                        : v1::RESOURCE_RESULT_STATUS_FAILED);
  if (ran->has_output()) *result.mutable_output() = ran->output();
  if (ran->has_error()) *result.mutable_error() = ran->error();
  if (ran->has_completed_at()) *result.mutable_completed_at() = ran->completed_at();
  return result;
}

}  // namespace sharedos::envelope::resources
