// Test doubles for the turn layer (testonly): a scriptable tool provider, and the tool registry
// and execution request the turn tests share (the authorizer's fake is
// authorizer_svc/client/fake_authorizer_client.h). Thread-safe.

#ifndef SHAREDOS_ENVELOPE_SVC_CORE_TEST_SUPPORT_H_
#define SHAREDOS_ENVELOPE_SVC_CORE_TEST_SUPPORT_H_

#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "envelope_svc/tools/tool_provider.h"
#include "envelope_svc/tools/tool_registry.h"
#include "sharedos/protocol/v1/execution.pb.h"

namespace sharedos::envelope::core::testing {

// A tool provider for tests: lists the definitions it was given; Invoke answers SUCCEEDED with
// output {"ok": true} unless the tool is scripted to fail (an error status), to answer a
// result for another call (invalid), or to wait for Release() (to hold a call in flight).
class FakeToolProvider : public tools::ToolProviderInterface {
 public:
  enum class Behavior { kSucceed, kError, kWrongCallId, kBlock };

  explicit FakeToolProvider(std::string id, std::vector<protocol::v1::ToolDefinition> listed = {})
      : id_(std::move(id)), listed_(std::move(listed)) {}

  void SetBehavior(const std::string& tool, Behavior behavior) ABSL_LOCKS_EXCLUDED(mu_);
  void FailListTools(absl::Status status) ABSL_LOCKS_EXCLUDED(mu_);
  // Notified when a blocked call has entered Invoke; Release() lets it answer.
  absl::Notification& entered() { return entered_; }
  void Release() { release_.Notify(); }
  std::vector<v1::InvokeRequest> invocations() const ABSL_LOCKS_EXCLUDED(mu_);

  absl::string_view id() const override { return id_; }
  absl::StatusOr<std::vector<protocol::v1::ToolDefinition>> ListTools(
      const v1::ProviderContext& context, absl::Time deadline) override ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<protocol::v1::ToolResult> Invoke(const v1::InvokeRequest& request,
                                                  absl::Time deadline) override
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const std::string id_;
  const std::vector<protocol::v1::ToolDefinition> listed_;
  absl::Notification entered_;
  absl::Notification release_;
  mutable absl::Mutex mu_;
  absl::Status list_status_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, Behavior> behaviors_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::InvokeRequest> invocations_ ABSL_GUARDED_BY(mu_);
};

// The turn tests' registry (files-bound tools run by the attached files provider):
//   files.read     read,  ceiling files/[]/read,   path appended from "path"
//   files.create   write, ceiling files/[]/create, path appended from "path" (not repeatable)
//   files.peek     read,  ceiling files/[]/read,   path + owner from "owner" (foreign owners)
//   files.fixed    read,  ceiling files/Docs/read, fixed requirement files/Other/read (outside)
//   notes.get      read,  tool namespace "notes",  ceiling notes/[]/read
//   sharedos.escalate (provider none)
// plus `extra_tools` more read tools "bulk.tool.<i>" (namespace files), for load tests.
std::unique_ptr<tools::ToolRegistry> TestRegistry(int extra_tools = 0);

// The turn tests' execution request: agent-assistant, for and owned by user-alice, in world-1
// ("project work", trace-1, namespaces files and sharedos enabled, message msg-1 "tidy my
// notes" from user-alice, now = 2026-08-11T09:00:00Z), asking for `tools`; no options.
sharedos::protocol::v1::ExecutionRequest TestExecutionRequest(
    std::initializer_list<absl::string_view> tools);

}  // namespace sharedos::envelope::core::testing

#endif  // SHAREDOS_ENVELOPE_SVC_CORE_TEST_SUPPORT_H_
