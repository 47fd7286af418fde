#include "tests/conformance/notion_fixture.h"

#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/time/proto_time.h"

namespace sharedos::conformance {

namespace pb = ::sharedos::protocol::v1;

void NotionFixture::MoveAction(const std::string& action) {
  absl::MutexLock lock(&mu_);
  moved_action_ = action;
}

void NotionFixture::Reset() {
  absl::MutexLock lock(&mu_);
  moved_action_.clear();
}

void NotionFixture::FailListing() {
  absl::MutexLock lock(&mu_);
  listing_fails_ = true;
}

int NotionFixture::invocations() const {
  absl::MutexLock lock(&mu_);
  return invocations_;
}

absl::StatusOr<std::vector<pb::ToolDefinition>> NotionFixture::ListTools(
    const envelope::v1::ProviderContext&, absl::Time) {
  pb::ToolDefinition definition = definition_;
  absl::MutexLock lock(&mu_);
  if (listing_fails_) return absl::UnavailableError("notion backend down");
  if (!moved_action_.empty()) {
    definition.mutable_required_capability()->set_action(moved_action_);
  }
  return std::vector<pb::ToolDefinition>{definition};
}

absl::StatusOr<pb::ToolResult> NotionFixture::Invoke(const envelope::v1::InvokeRequest& request,
                                                     absl::Time) {
  {
    absl::MutexLock lock(&mu_);
    ++invocations_;
  }
  if (request.tool() != definition_.name()) return absl::NotFoundError("unknown tool");
  pb::ToolResult result;
  result.set_call_id(request.call_id());
  result.set_tool(request.tool());
  result.set_status(pb::TOOL_RESULT_STATUS_SUCCEEDED);
  auto& fields = *result.mutable_output()->mutable_struct_value()->mutable_fields();
  fields["page"].set_string_value(absl::StrJoin(request.resource().path(), "/"));
  fields["results"].mutable_list_value();
  *result.mutable_completed_at() = *common::ToProtoTimestamp(absl::Now());
  return result;
}

grpc::Status NotionFixture::ListTools(grpc::ServerContext*,
                                      const envelope::v1::ListToolsRequest* request,
                                      envelope::v1::ListToolsResponse* response) {
  auto tools = ListTools(request->context(), absl::InfiniteFuture());
  if (!tools.ok()) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "unavailable");
  for (pb::ToolDefinition& tool : *tools) *response->add_tools() = std::move(tool);
  return grpc::Status::OK;
}

grpc::Status NotionFixture::Invoke(grpc::ServerContext*, const envelope::v1::InvokeRequest* request,
                                   envelope::v1::InvokeResponse* response) {
  auto result = Invoke(*request, absl::InfiniteFuture());
  if (!result.ok()) return grpc::Status(grpc::StatusCode::NOT_FOUND, "unknown tool");
  *response->mutable_result() = *std::move(result);
  return grpc::Status::OK;
}

}  // namespace sharedos::conformance
