// The conformance world's brokered host tool provider `notion-mcp` (cases.md "The world"):
// serves notion.search over a fixed page tree, both in-process (tools::ToolProviderInterface,
// the kernel column) and as the sharedos.envelope.v1.ToolProvider gRPC service a host runs (the
// grpc and MCP columns, reached by envelope_svc --provider=notion-mcp=<address>). Row 25 moves
// the published tool's declared capability (MoveAction) while a turn runs. Thread-safe.

#ifndef SHAREDOS_TESTS_CONFORMANCE_NOTION_FIXTURE_H_
#define SHAREDOS_TESTS_CONFORMANCE_NOTION_FIXTURE_H_

#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "envelope_svc/tools/tool_provider.h"
#include "grpcpp/grpcpp.h"
#include "sharedos/envelope/v1/envelope.grpc.pb.h"
#include "sharedos/protocol/v1/tool.pb.h"

namespace sharedos::conformance {

class NotionFixture final : public envelope::tools::ToolProviderInterface,
                            public envelope::v1::ToolProvider::Service {
 public:
  // `definition`: notion.search as registered (its declared ceiling is what ListTools answers
  // until MoveAction).
  NotionFixture(std::string provider_id, protocol::v1::ToolDefinition definition)
      : provider_id_(std::move(provider_id)), definition_(std::move(definition)) {}

  // From now on ListTools publishes the tool with `action` as its declared action.
  void MoveAction(const std::string& action) ABSL_LOCKS_EXCLUDED(mu_);
  // Back to the registered definition (a fresh row).
  void Reset() ABSL_LOCKS_EXCLUDED(mu_);
  // ListTools fails UNAVAILABLE from now on (a broken broker; not cleared by Reset).
  void FailListing() ABSL_LOCKS_EXCLUDED(mu_);
  int invocations() const ABSL_LOCKS_EXCLUDED(mu_);

  // tools::ToolProviderInterface
  absl::string_view id() const override { return provider_id_; }
  absl::StatusOr<std::vector<protocol::v1::ToolDefinition>> ListTools(
      const envelope::v1::ProviderContext& context, absl::Time deadline) override
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<protocol::v1::ToolResult> Invoke(const envelope::v1::InvokeRequest& request,
                                                  absl::Time deadline) override
      ABSL_LOCKS_EXCLUDED(mu_);

  // envelope::v1::ToolProvider::Service
  grpc::Status ListTools(grpc::ServerContext* context,
                         const envelope::v1::ListToolsRequest* request,
                         envelope::v1::ListToolsResponse* response) override;
  grpc::Status Invoke(grpc::ServerContext* context, const envelope::v1::InvokeRequest* request,
                      envelope::v1::InvokeResponse* response) override;

 private:
  const std::string provider_id_;
  const protocol::v1::ToolDefinition definition_;
  mutable absl::Mutex mu_;
  std::string moved_action_ ABSL_GUARDED_BY(mu_);
  int invocations_ ABSL_GUARDED_BY(mu_) = 0;
  bool listing_fails_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace sharedos::conformance

#endif  // SHAREDOS_TESTS_CONFORMANCE_NOTION_FIXTURE_H_
