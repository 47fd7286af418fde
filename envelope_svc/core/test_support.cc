#include "envelope_svc/core/test_support.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "capability/address.h"
#include "capability/capability_request.h"
#include "common/time/proto_time.h"
#include "google/protobuf/text_format.h"

namespace sharedos::envelope::core::testing {
namespace {

namespace pb = ::sharedos::protocol::v1;

constexpr char kPathSchema[] = R"json({
  "type": "object",
  "properties": {"path": {"type": "string", "maxLength": 1024}},
  "required": ["path"],
  "additionalProperties": false
})json";

constexpr char kPeekSchema[] = R"json({
  "type": "object",
  "properties": {"path": {"type": "string"}, "owner": {"type": "object"}},
  "required": ["path", "owner"],
  "additionalProperties": false
})json";

constexpr char kEmptySchema[] = R"json({"type": "object", "additionalProperties": false})json";

std::string Quoted(absl::string_view json) {
  std::string out = "'";
  for (char c : json) {
    if (c == '\n') continue;
    if (c == '\'')
      out += "\\'";
    else
      out.push_back(c);
  }
  return out + "'";
}

std::string ToolText(absl::string_view name, absl::string_view tool_namespace,
                     absl::string_view read_write, absl::string_view ceiling,
                     absl::string_view requirement, absl::string_view provider,
                     absl::string_view schema, absl::string_view annotations = "") {
  return absl::StrCat("tools {\n  definition {\n    name: '", name,
                      "'\n    description: 'Test tool ", name, ".'\n    namespace: '",
                      tool_namespace, "'\n    source: 'sharedos'\n    read_write: ", read_write,
                      "\n    ", annotations, "\n    required_capability { ", ceiling, " }\n  }\n  ",
                      "requirement { ", requirement, " }\n  provider { ", provider,
                      " }\n  input_schema_json: ", Quoted(schema), "\n}\n");
}

}  // namespace

// ---- FakeToolProvider ----

void FakeToolProvider::SetBehavior(const std::string& tool, Behavior behavior) {
  absl::MutexLock lock(&mu_);
  behaviors_[tool] = behavior;
}

void FakeToolProvider::FailListTools(absl::Status status) {
  absl::MutexLock lock(&mu_);
  list_status_ = std::move(status);
}

std::vector<v1::InvokeRequest> FakeToolProvider::invocations() const {
  absl::MutexLock lock(&mu_);
  return invocations_;
}

absl::StatusOr<std::vector<pb::ToolDefinition>> FakeToolProvider::ListTools(
    const v1::ProviderContext&, absl::Time) {
  absl::MutexLock lock(&mu_);
  if (!list_status_.ok()) return list_status_;
  return listed_;
}

absl::StatusOr<pb::ToolResult> FakeToolProvider::Invoke(const v1::InvokeRequest& request,
                                                        absl::Time) {
  Behavior behavior = Behavior::kSucceed;
  {
    absl::MutexLock lock(&mu_);
    invocations_.push_back(request);
    if (auto it = behaviors_.find(request.tool()); it != behaviors_.end()) behavior = it->second;
  }
  if (behavior == Behavior::kError) return absl::UnavailableError("backend down");
  if (behavior == Behavior::kBlock) {
    entered_.Notify();
    release_.WaitForNotification();
  }
  pb::ToolResult result;
  result.set_call_id(behavior == Behavior::kWrongCallId ? "another-call" : request.call_id());
  result.set_tool(request.tool());
  result.set_status(pb::TOOL_RESULT_STATUS_SUCCEEDED);
  (*result.mutable_output()->mutable_struct_value()->mutable_fields())["ok"].set_bool_value(true);
  *result.mutable_completed_at() = *common::ToProtoTimestamp(absl::UnixEpoch());
  return result;
}

// ---- Registry ----

std::unique_ptr<tools::ToolRegistry> TestRegistry(int extra_tools) {
  constexpr absl::string_view kAppend =
      "path_from_arguments { path_argument: 'path' mode: PATH_MODE_APPEND }";
  std::string text;
  text += ToolText("files.read", "files", "READ_WRITE_READ",
                   "resource { namespace: 'files' } action: 'read'", kAppend, "files {}",
                   kPathSchema, "annotations { read_only: true idempotent: true }");
  text += ToolText("files.create", "files", "READ_WRITE_WRITE",
                   "resource { namespace: 'files' } action: 'create'", kAppend, "files {}",
                   kPathSchema);
  text += ToolText("files.peek", "files", "READ_WRITE_READ",
                   "resource { namespace: 'files' } action: 'read'",
                   "path_from_arguments { path_argument: 'path' mode: PATH_MODE_APPEND "
                   "owner_argument: 'owner' }",
                   "files {}", kPeekSchema);
  text += ToolText("files.fixed", "files", "READ_WRITE_READ",
                   "resource { namespace: 'files' path: 'Docs' } action: 'read'",
                   "fixed { resource { namespace: 'files' path: 'Other' } action: 'read' }",
                   "files {}", kEmptySchema);
  text += ToolText("host.echo", "files", "READ_WRITE_READ",
                   "resource { namespace: 'files' } action: 'read'", "ceiling {}",
                   "grpc { provider_id: 'host-1' }", kEmptySchema);
  text += ToolText("notes.get", "notes", "READ_WRITE_READ",
                   "resource { namespace: 'notes' } action: 'read'", "ceiling {}", "files {}",
                   kEmptySchema);
  for (int i = 0; i < extra_tools; ++i) {
    text += ToolText(absl::StrCat("bulk.tool.", i), "files", "READ_WRITE_READ",
                     absl::StrCat("resource { namespace: 'files' path: 'Bulk' path: 'p", i,
                                  "' } action: 'read'"),
                     "ceiling {}", "files {}", kPathSchema);
  }
  text += R"pb(
    tools {
      definition {
        name: 'sharedos.escalate'
        description: 'Ask a human for authority this turn lacks. Give the reason, and as requirement the capreq- id a refusal of this turn named; the turn ends escalated and a reviewer decides on exactly that authority.'
        namespace: 'sharedos'
        source: 'sharedos'
        read_write: READ_WRITE_READ
        annotations { read_only: true }
        required_capability {
          resource { namespace: 'sharedos' path: 'escalation' }
          action: 'request'
        }
      }
      requirement { ceiling {} }
      provider { none {} }
      input_schema_json: '{"type": "object", "properties": {"reason": {"type": "string", "minLength": 1, "maxLength": 512}, "requirement": {"type": "string", "pattern": "^capreq-[0-9a-f]{64}$"}}, "required": ["reason"], "additionalProperties": false}'
    }
  )pb";
  absl::StatusOr<v1::ToolRegistryConfig> config =
      tools::ToolRegistry::ParseConfig(text, "test_registry");
  if (!config.ok()) {
    fprintf(stderr, "TestRegistry: %s\n", config.status().ToString().c_str());
    abort();
  }
  absl::StatusOr<std::unique_ptr<tools::ToolRegistry>> registry =
      tools::ToolRegistry::Create({*config});
  if (!registry.ok()) {
    fprintf(stderr, "TestRegistry: %s\n", registry.status().ToString().c_str());
    abort();
  }
  return *std::move(registry);
}

// ---- Execution request ----

pb::ExecutionRequest TestExecutionRequest(std::initializer_list<absl::string_view> tools) {
  constexpr char kText[] = R"pb(
    version: "1"
    execution_id: "exec-1"
    agent { agent_id: "agent-assistant" }
    context {
      namespace_id: "world-1"
      actor { agent_id: "agent-assistant" }
      authority { human_user_id: "user-alice" }
      owner { human_user_id: "user-alice" }
      purpose: "project work"
      trace_id: "trace-1"
      enabled_tool_namespaces: "files"
      enabled_tool_namespaces: "sharedos"
      now { seconds: 1786438800 }
    }
    message {
      version: "1"
      id: "msg-1"
      sender { human_user_id: "user-alice" }
      receiver { agent_id: "agent-assistant" }
      purpose: "project work"
      payload { string_value: "tidy my notes" }
      trace_id: "trace-1"
      created_at { seconds: 1786438800 }
    }
  )pb";
  pb::ExecutionRequest request;
  if (!google::protobuf::TextFormat::ParseFromString(kText, &request)) {
    fprintf(stderr, "TestExecutionRequest: the text does not parse\n");
    abort();
  }
  for (absl::string_view tool : tools) request.add_tools(std::string(tool));
  return request;
}

}  // namespace sharedos::envelope::core::testing
