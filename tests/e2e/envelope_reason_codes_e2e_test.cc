// Every reason code of the turn surface (issue 7; semantics §3.9, §4, §6.2, §6.5) reached
// through Envelope gRPC calls by a host credential, against the four services as separate
// processes and against sharedosd, each answer checked and each read back from the one audit
// log: its type, outcome, reason, source, cause, failClosed, the turn's authority hash on every
// kernel record, and exactly one turn.ended per turn. The registry is the shipped
// standard_tools.textproto plus the conformance fixture tools (files.index →
// invalid_tool_requirement, files.describe → invalid_tool_result, files.fetch → another owner,
// files.purge in the never-enabled tool namespace files.admin).
//
// tool_unavailable is never the mediator's for a tool the turn does not offer: the turn's one
// offered check (semantics §3.9 steps 4–6 and §4.3 step 7, docs/adr/0024) refuses it in the
// envelope, its cause not_registered, namespace_disabled, a discovery code or not_offered; the
// kernel's tool_unavailable carries a discovery code only when discovery changes mid-turn (a
// single-use grant spent, below). turn_draining is
// reached three ways: the drain window (--drain_grace), an audit outage, and a call racing
// FinishTurn.
#include <google/protobuf/util/json_util.h>

#include <map>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "sharedos/audit/v1/audit.grpc.pb.h"
#include "sharedos/envelope/v1/envelope.grpc.pb.h"
#include "tests/e2e/e2e_deployment.h"
#include "tests/testing/demo_world.h"
#include "tests/testing/process.h"

namespace sharedos::envelope {
namespace {

namespace pb = ::sharedos::protocol::v1;
namespace demo = ::sharedos::testing::demo;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;

std::string ShippedAndConformanceRegistry() {
  return absl::StrCat(
      e2e::ReadFile(sharedos::testing::RunfilePath("envelope_svc/config/standard_tools.textproto")),
      "\n",
      e2e::ReadFile(
          sharedos::testing::RunfilePath("envelope_svc/config/conformance_tools.textproto")));
}

// The world's grants. agent-assistant: the demo grant (run, read the Workspace, create under
// Scratch, escalate) as "grant-assistant", which may also stat and list the Workspace.
// agent-once: one read of Workspace/notes.txt, nothing else that reads (so its second read is no
// longer discoverable). agent-counter: the same single read plus an unbounded read of Other
// (discovery still passes; the decision is grant_exhausted).
pb::CapabilityGrant AssistantGrant() {
  pb::CapabilityGrant grant = demo::Grant();
  grant.set_id("grant-assistant");
  pb::Capability* workspace = demo::FindCapability(grant, "files", {"Workspace"});
  workspace->add_actions("stat");
  workspace->add_actions("list");
  return grant;
}

constexpr const char* kOtherGrants[] = {
    R"pb(id: "grant-once-run"
         subject { agent_id: "agent-once" }
         capabilities {
           resource { namespace: "sharedos.execution" path: "agent" path: "agent-once" }
           actions: "invoke"
           scope: SCOPE_EXACT
         }
         constraints {})pb",
    R"pb(id: "grant-once-read"
         subject { agent_id: "agent-once" }
         capabilities {
           resource { namespace: "files" path: "Workspace" path: "notes.txt" }
           actions: "read"
           scope: SCOPE_EXACT
         }
         constraints { max_uses: 1 })pb",
    R"pb(id: "grant-counter-run"
         subject { agent_id: "agent-counter" }
         capabilities {
           resource { namespace: "sharedos.execution" path: "agent" path: "agent-counter" }
           actions: "invoke"
           scope: SCOPE_EXACT
         }
         constraints {})pb",
    R"pb(id: "grant-counter-read"
         subject { agent_id: "agent-counter" }
         capabilities {
           resource { namespace: "files" path: "Workspace" path: "notes.txt" }
           actions: "read"
           scope: SCOPE_EXACT
         }
         constraints { max_uses: 1 })pb",
    R"pb(id: "grant-counter-other"
         subject { agent_id: "agent-counter" }
         capabilities {
           resource { namespace: "files" path: "Other" }
           actions: "read"
           scope: SCOPE_DESCENDANTS
         }
         constraints {})pb",
};

// "<source>/<outcome>/<reason>/<cause>" of a tool.invoked record.
std::string Summary(const pb::AuditEvent& event) {
  return absl::StrCat(event.has_source() ? pb::AuditSource_Name(event.source()) : "NO_SOURCE", "/",
                      pb::AuditOutcome_Name(event.outcome()), "/", event.reason(), "/",
                      event.cause());
}

// The audit log of one test, indexed.
struct AuditIndex {
  explicit AuditIndex(std::vector<pb::AuditEvent> all) : events(std::move(all)) {
    for (const pb::AuditEvent& event : events) {
      switch (event.type()) {
        case pb::AUDIT_EVENT_TYPE_TOOL_INVOKED:
          invoked[event.operation_id()].push_back(event);
          break;
        case pb::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED:
          checked[event.operation_id()].push_back(event);
          break;
        case pb::AUDIT_EVENT_TYPE_TURN_ENDED:
          ended[event.operation_id()].push_back(event);
          break;
        case pb::AUDIT_EVENT_TYPE_AUTHORITY_RESOLVED:
          resolved[event.trace_id()].push_back(event);
          break;
        case pb::AUDIT_EVENT_TYPE_ESCALATION_REQUESTED:
          escalations.push_back(event);
          break;
        default:
          break;
      }
    }
  }

  // The one tool.invoked of `call_id`.
  pb::AuditEvent Invoked(const std::string& call_id) const {
    auto it = invoked.find(call_id);
    EXPECT_TRUE(it != invoked.end() && it->second.size() == 1) << "tool.invoked of " << call_id;
    return it == invoked.end() || it->second.empty() ? pb::AuditEvent() : it->second[0];
  }
  // The one turn.ended of `execution_id`.
  pb::AuditEvent Ended(const std::string& execution_id) const {
    auto it = ended.find(execution_id);
    EXPECT_TRUE(it != ended.end() && it->second.size() == 1) << "turn.ended of " << execution_id;
    return it == ended.end() || it->second.empty() ? pb::AuditEvent() : it->second[0];
  }
  // The authority hash of the turn traced `trace_id` (its one authority.resolved).
  std::string AuthorityHash(const std::string& trace_id) const {
    auto it = resolved.find(trace_id);
    EXPECT_TRUE(it != resolved.end() && it->second.size() == 1) << "authority of " << trace_id;
    return it == resolved.end() || it->second.empty() ? "" : it->second[0].authority_hash();
  }

  std::vector<pb::AuditEvent> events;
  std::map<std::string, std::vector<pb::AuditEvent>> invoked, checked, ended, resolved;
  std::vector<pb::AuditEvent> escalations;
};

class ReasonCodesEndToEndTest : public e2e::DeploymentTest {
 protected:
  // `extra_registry`: more ToolRegistryConfig text after the shipped and conformance tools.
  explicit ReasonCodesEndToEndTest(const std::string& extra_registry = "")
      : DeploymentTest(absl::StrCat(ShippedAndConformanceRegistry(), "\n", extra_registry),
                       /*sharedosd_registry=*/true) {}

  void SetUp() override {
    DeploymentTest::SetUp();
    if (HasFatalFailure()) return;
    IssueGrant(AssistantGrant());
    for (const char* grant : kOtherGrants) {
      IssueGrant(absl::StrCat(grant, R"pb(
        namespace_id: "world-demo"
        issuer { human_user_id: "user-alice" }
        issued_at { seconds: 1700000000 })pb"));
    }
  }

  // A driver turn of `agent` in world-demo for user-alice, traced "trace-<execution_id>",
  // asking for `tools`, with the tool namespaces files and sharedos enabled.
  static v1::OpenTurnRequest Request(const std::string& execution_id, const std::string& agent,
                                     const std::vector<std::string>& tools) {
    // The demo turn, by `agent` (its agent, actor and message receiver), asking for `tools`.
    v1::OpenTurnRequest request = demo::TurnRequest(execution_id, "trace-" + execution_id);
    pb::ExecutionRequest* execution = request.mutable_execution_request();
    execution->mutable_agent()->set_agent_id(agent);
    execution->mutable_context()->mutable_actor()->set_agent_id(agent);
    execution->mutable_message()->mutable_receiver()->set_agent_id(agent);
    execution->clear_tools();
    for (const std::string& tool : tools) execution->add_tools(tool);
    return request;
  }

  grpc::Status TryOpen(const v1::OpenTurnRequest& request, v1::OpenTurnResponse* response) {
    return envelope_stub_->OpenTurn(As(host_token_).get(), request, response);
  }

  // A turn that opened and runs.
  v1::OpenTurnResponse Open(const v1::OpenTurnRequest& request) {
    v1::OpenTurnResponse response;
    grpc::Status status = TryOpen(request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_FALSE(response.has_result()) << response.result().DebugString();
    return response;
  }

  // A turn that ended at OpenTurn: its result.
  pb::ExecutionResult OpenEnded(const v1::OpenTurnRequest& request, std::string* turn_id) {
    v1::OpenTurnResponse response;
    grpc::Status status = TryOpen(request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_TRUE(response.has_result()) << response.DebugString();
    if (turn_id != nullptr) *turn_id = response.turn_id();
    return response.result();
  }

  static v1::InvokeToolRequest CallRequest(const std::string& turn_id,
                                           const std::string& execution_id,
                                           const std::string& call_id, const std::string& tool,
                                           const std::string& arguments_json,
                                           std::optional<int64_t> step = std::nullopt) {
    v1::InvokeToolRequest request;
    request.set_turn_id(turn_id);
    pb::ToolCall* call = request.mutable_call();
    call->set_id(call_id);
    call->set_tool(tool);
    call->set_trace_id("trace-" + execution_id);
    EXPECT_TRUE(
        google::protobuf::util::JsonStringToMessage(arguments_json, call->mutable_arguments()).ok())
        << arguments_json;
    call->mutable_requested_at()->set_seconds(1786438801);
    if (step.has_value()) request.set_step(*step);
    return request;
  }

  grpc::Status TryInvoke(const v1::InvokeToolRequest& request, pb::ToolResult* result) {
    v1::InvokeToolResponse response;
    grpc::Status status = envelope_stub_->InvokeTool(As(host_token_).get(), request, &response);
    *result = response.result();
    return status;
  }

  pb::ToolResult Invoke(const v1::InvokeToolRequest& request) {
    pb::ToolResult result;
    grpc::Status status = TryInvoke(request, &result);
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(result.call_id(), request.call().id());
    return result;
  }

  pb::ExecutionResult Finish(const std::string& turn_id, const std::string& outcome_text) {
    v1::FinishTurnRequest request = Parse<v1::FinishTurnRequest>(outcome_text);
    request.set_turn_id(turn_id);
    v1::FinishTurnResponse response;
    grpc::Status status = envelope_stub_->FinishTurn(As(host_token_).get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response.result();
  }

  pb::ExecutionResult Cancel(const std::string& turn_id) {
    v1::CancelTurnRequest request;
    request.set_turn_id(turn_id);
    v1::CancelTurnResponse response;
    grpc::Status status = envelope_stub_->CancelTurn(As(host_token_).get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response.result();
  }

  // Ends the test's traffic with a turn denied at OpenTurn and reads the audit log until its
  // turn.ended (the envelope's records are delivered in order, so everything the envelope
  // wrote before is there) and `escalations` escalation.requested records (the authorizer's).
  AuditIndex AuditThroughSentinel(int escalations = 0) {
    v1::OpenTurnRequest sentinel = Request("exec-sentinel", "agent-assistant", {});
    sentinel.mutable_execution_request()->mutable_context()->mutable_actor()->set_agent_id(
        "agent-sentinel");
    OpenEnded(sentinel, nullptr);
    return AuditIndex(AuditUntil([&](const std::vector<pb::AuditEvent>& so_far) {
      bool sentinel_ended = false;
      int escalated = 0;
      for (const pb::AuditEvent& event : so_far) {
        if (event.type() == pb::AUDIT_EVENT_TYPE_TURN_ENDED &&
            event.operation_id() == "exec-sentinel") {
          sentinel_ended = true;
        }
        if (event.type() == pb::AUDIT_EVENT_TYPE_ESCALATION_REQUESTED) ++escalated;
      }
      return sentinel_ended && escalated >= escalations;
    }));
  }

  // A kernel record: source kernel, the turn's authority hash.
  static void ExpectKernel(const pb::AuditEvent& event, const std::string& authority_hash) {
    EXPECT_EQ(event.source(), pb::AUDIT_SOURCE_KERNEL) << event.DebugString();
    EXPECT_FALSE(authority_hash.empty());
    EXPECT_EQ(event.authority_hash(), authority_hash) << event.DebugString();
    EXPECT_FALSE(event.has_fail_closed()) << event.DebugString();
  }
};

// OpenTurn: the context checks deny without touching the kernel; malformed requests are
// INVALID_ARGUMENT naming the field and reach neither the turn layer nor audit; a call on a
// turn that ended at OpenTurn is refused and recorded.
TEST_P(ReasonCodesEndToEndTest, OpenTurnDenialsAndMalformedRequests) {
  v1::OpenTurnResponse response;
  v1::OpenTurnRequest request = Request("exec-version", "agent-assistant", {"files.read"});
  request.mutable_execution_request()->set_version("2");
  grpc::Status status = TryOpen(request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("execution_request.version"));

  request = Request("exec-unknown", "agent-assistant", {"files.read"});
  request.mutable_execution_request()
      ->mutable_context()
      ->GetReflection()
      ->MutableUnknownFields(request.mutable_execution_request()->mutable_context())
      ->AddVarint(999, 1);
  status = TryOpen(request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("execution_request.context"));
  EXPECT_THAT(status.error_message(), HasSubstr("unknown field 999"));

  // actor_mismatch; then a call on that ended turn.
  request = Request("exec-actor", "agent-assistant", {"files.read"});
  request.mutable_execution_request()->mutable_context()->mutable_actor()->set_agent_id(
      "agent-other");
  std::string actor_turn;
  pb::ExecutionResult result = OpenEnded(request, &actor_turn);
  EXPECT_EQ(result.status(), pb::EXECUTION_STATUS_DENIED);
  EXPECT_EQ(result.error().code(), "actor_mismatch");
  pb::ToolResult ignored;
  status = TryInvoke(CallRequest(actor_turn, "exec-actor", "call-after-denial", "files.read",
                                 R"({"path": "Workspace/notes.txt"})"),
                     &ignored);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << status.error_message();
  // An unknown field in a call: INVALID_ARGUMENT, nothing recorded.
  v1::InvokeToolRequest unknown =
      CallRequest(actor_turn, "exec-actor", "call-unknown-field", "files.read", R"({"path": "a"})");
  unknown.mutable_call()
      ->GetReflection()
      ->MutableUnknownFields(unknown.mutable_call())
      ->AddVarint(999, 1);
  status = TryInvoke(unknown, &ignored);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("call"));

  request = Request("exec-receiver", "agent-assistant", {"files.read"});
  request.mutable_execution_request()->mutable_message()->mutable_receiver()->set_agent_id(
      "agent-other");
  result = OpenEnded(request, nullptr);
  EXPECT_EQ(result.status(), pb::EXECUTION_STATUS_DENIED);
  EXPECT_EQ(result.error().code(), "receiver_mismatch");

  request = Request("exec-message", "agent-assistant", {"files.read"});
  request.mutable_execution_request()->mutable_message()->set_trace_id("trace-elsewhere");
  result = OpenEnded(request, nullptr);
  EXPECT_EQ(result.status(), pb::EXECUTION_STATUS_DENIED);
  EXPECT_EQ(result.error().code(), "message_context_mismatch");

  const AuditIndex audit = AuditThroughSentinel();
  for (const auto& [execution_id, code] : std::vector<std::pair<std::string, std::string>>{
           {"exec-actor", "actor_mismatch"},
           {"exec-receiver", "receiver_mismatch"},
           {"exec-message", "message_context_mismatch"}}) {
    const pb::AuditEvent ended = audit.Ended(execution_id);
    EXPECT_EQ(ended.outcome(), pb::AUDIT_OUTCOME_DENIED) << execution_id;
    EXPECT_EQ(ended.reason(), code);
    EXPECT_FALSE(ended.has_source());
    EXPECT_FALSE(ended.has_fail_closed());
    EXPECT_FALSE(ended.has_ended_by());
    // Denied without touching the kernel: no authority was loaded for it.
    EXPECT_TRUE(ended.authority_hash().empty());
    EXPECT_FALSE(audit.resolved.count("trace-" + execution_id));
  }
  EXPECT_FALSE(audit.ended.count("exec-version"));
  EXPECT_FALSE(audit.ended.count("exec-unknown"));
  EXPECT_FALSE(audit.invoked.count("call-unknown-field"));
  EXPECT_THAT(audit.checked, IsEmpty());
  const pb::AuditEvent late = audit.Invoked("call-after-denial");
  EXPECT_EQ(Summary(late), "AUDIT_SOURCE_ENVELOPE/AUDIT_OUTCOME_DENIED/turn_draining/turn_ended");
  EXPECT_EQ(late.actor().agent_id(), "agent-other");
  EXPECT_EQ(late.tool(), "files.read");
  EXPECT_TRUE(late.authority_hash().empty());
  EXPECT_FALSE(late.has_fail_closed());
}

// InvokeTool: every refusal of the turn layer and of mediation, then a runtime failure, then a
// call on the ended turn.
TEST_P(ReasonCodesEndToEndTest, ToolCallRefusalsAndARuntimeFailure) {
  const std::string exec = "exec-calls";
  const v1::OpenTurnResponse opened =
      Open(Request(exec, "agent-assistant",
                   {"files.read", "files.create", "files.index", "files.describe", "files.fetch",
                    "files.purge", "sharedos.escalate"}));
  // files.purge's tool namespace is never enabled: requested, but not in the catalogue.
  std::vector<std::string> offered;
  for (const auto& tool : opened.catalog().tools()) offered.push_back(tool.name());
  EXPECT_THAT(offered, ElementsAre("files.create", "files.describe", "files.fetch", "files.index",
                                   "files.read", "sharedos.escalate"));
  const std::string& turn = opened.turn_id();
  auto call = [&](const std::string& call_id, const std::string& tool,
                  const std::string& arguments) {
    return Invoke(CallRequest(turn, exec, call_id, tool, arguments));
  };
  auto expect = [](const pb::ToolResult& result, pb::ToolResultStatus status,
                   const std::string& code) {
    EXPECT_EQ(result.status(), status) << result.DebugString();
    EXPECT_EQ(result.error().code(), code) << result.DebugString();
    EXPECT_FALSE(result.error().retryable()) << result.DebugString();
  };

  const pb::ToolResult read = call("call-read", "files.read", R"({"path": "Workspace/notes.txt"})");
  EXPECT_EQ(read.status(), pb::TOOL_RESULT_STATUS_SUCCEEDED) << read.DebugString();
  expect(call("call-unoffered", "files.delete", R"({"path": "Workspace/notes.txt"})"),
         pb::TOOL_RESULT_STATUS_DENIED, "tool_unavailable");
  expect(call("call-unregistered", "admin.grant.issue", R"({})"), pb::TOOL_RESULT_STATUS_DENIED,
         "tool_unavailable");
  expect(call("call-sealed", "files.purge", R"({"path": "Workspace"})"),
         pb::TOOL_RESULT_STATUS_DENIED, "tool_unavailable");
  expect(call("call-arguments", "files.read", R"({"path": 7})"), pb::TOOL_RESULT_STATUS_FAILED,
         "invalid_tool_arguments");
  expect(call("call-requirement", "files.index", R"({"path": "scratch"})"),
         pb::TOOL_RESULT_STATUS_FAILED, "invalid_tool_requirement");
  expect(
      call("call-foreign", "files.fetch",
           R"({"path": "Workspace/notes.txt", "owner": {"kind": "human", "userId": "user-bob"}})"),
      pb::TOOL_RESULT_STATUS_DENIED, "invalid_request");
  const pb::ToolResult write =
      call("call-write", "files.create", R"({"path": "Workspace/summary.txt", "content": "milk"})");
  expect(write, pb::TOOL_RESULT_STATUS_DENIED, "no_matching_grant");
  EXPECT_TRUE(write.error().details().fields().contains("requiredAuthority"));
  expect(call("call-result", "files.describe", R"({"path": "Workspace/notes.txt"})"),
         pb::TOOL_RESULT_STATUS_FAILED, "invalid_tool_result");
  v1::InvokeToolRequest traced =
      CallRequest(turn, exec, "call-trace", "files.read", R"({"path": "Workspace/notes.txt"})");
  traced.mutable_call()->set_trace_id("trace-elsewhere");
  expect(Invoke(traced), pb::TOOL_RESULT_STATUS_DENIED, "trace_mismatch");
  expect(call("call-affordance", "sharedos.escalate", R"({"reason": "help"})"),
         pb::TOOL_RESULT_STATUS_FAILED, "escalation_not_terminated");
  // The refused write wrote nothing.
  EXPECT_EQ(e2e::ReadFile(files_root_ + "/human/user-alice/workspace/Workspace/summary.txt"), "");

  // The runtime fails: only repeatable calls ran, so its retryable stands.
  const pb::ExecutionResult failed = Finish(turn, R"pb(
    fail { error { code: "driver_failed" message: "the model stopped answering" retryable: true } }
  )pb");
  EXPECT_EQ(failed.status(), pb::EXECUTION_STATUS_FAILED);
  EXPECT_EQ(failed.error().code(), "driver_failed");
  EXPECT_TRUE(failed.error().retryable());
  EXPECT_EQ(failed.events(failed.events_size() - 1).type(), "turn.failed");

  // The agent calls again after its turn ended.
  pb::ToolResult ignored;
  grpc::Status status = TryInvoke(
      CallRequest(turn, exec, "call-late", "files.read", R"({"path": "Workspace/notes.txt"})"),
      &ignored);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << status.error_message();

  const AuditIndex audit = AuditThroughSentinel();
  const std::string hash = audit.AuthorityHash("trace-" + exec);
  EXPECT_EQ(audit.resolved.at("trace-" + exec)[0].outcome(), pb::AUDIT_OUTCOME_SUCCEEDED);

  const pb::AuditEvent read_record = audit.Invoked("call-read");
  EXPECT_EQ(Summary(read_record), "AUDIT_SOURCE_KERNEL/AUDIT_OUTCOME_SUCCEEDED//");
  ExpectKernel(read_record, hash);
  EXPECT_EQ(read_record.grant_id(), "grant-assistant");
  EXPECT_EQ(read_record.metadata().fields().at("catalogHash").string_value(),
            opened.catalog().catalog_hash());

  // The envelope's catalogue refusals: one code, the specific reason in the cause (seed ADR 0023).
  for (const auto& [call_id, cause] :
       std::vector<std::pair<std::string, std::string>>{{"call-unoffered", "not_offered"},
                                                        {"call-unregistered", "not_registered"},
                                                        {"call-sealed", "namespace_disabled"}}) {
    const pb::AuditEvent record = audit.Invoked(call_id);
    EXPECT_EQ(Summary(record),
              "AUDIT_SOURCE_ENVELOPE/AUDIT_OUTCOME_DENIED/tool_unavailable/" + cause)
        << call_id;
    EXPECT_EQ(record.authority_hash(), hash);
    EXPECT_FALSE(record.has_fail_closed());
    EXPECT_FALSE(audit.checked.count(call_id)) << call_id;
  }
  EXPECT_EQ(audit.Invoked("call-unregistered").tool(), "admin.grant.issue");

  // Mediation (source kernel).
  const std::map<std::string, std::string> kernel = {
      {"call-arguments", "AUDIT_SOURCE_KERNEL/AUDIT_OUTCOME_FAILED/invalid_tool_arguments/"},
      {"call-requirement", "AUDIT_SOURCE_KERNEL/AUDIT_OUTCOME_FAILED/invalid_tool_requirement/"},
      {"call-foreign", "AUDIT_SOURCE_KERNEL/AUDIT_OUTCOME_DENIED/invalid_request/"},
      {"call-write", "AUDIT_SOURCE_KERNEL/AUDIT_OUTCOME_DENIED/no_matching_grant/"},
      {"call-result", "AUDIT_SOURCE_KERNEL/AUDIT_OUTCOME_FAILED/invalid_tool_result/"},
      {"call-trace", "AUDIT_SOURCE_KERNEL/AUDIT_OUTCOME_DENIED/trace_mismatch/"},
      {"call-affordance", "AUDIT_SOURCE_KERNEL/AUDIT_OUTCOME_FAILED/escalation_not_terminated/"},
  };
  for (const auto& [call_id, summary] : kernel) {
    const pb::AuditEvent record = audit.Invoked(call_id);
    EXPECT_EQ(Summary(record), summary) << call_id;
    ExpectKernel(record, hash);
  }
  // A result never reaches audit.
  EXPECT_THAT(read_record.DebugString(), Not(HasSubstr("buy milk")));
  // The decisions behind the two authorization denials, recorded by the kernel first.
  for (const auto& [call_id, code] : std::vector<std::pair<std::string, std::string>>{
           {"call-foreign", "invalid_request"}, {"call-write", "no_matching_grant"}}) {
    ASSERT_TRUE(audit.checked.count(call_id)) << call_id;
    const pb::AuditEvent& decision = audit.checked.at(call_id).back();
    EXPECT_EQ(decision.outcome(), pb::AUDIT_OUTCOME_DENIED) << call_id;
    EXPECT_EQ(decision.reason(), code);
    EXPECT_EQ(decision.authority_hash(), hash);
    EXPECT_FALSE(decision.consumed());
  }
  EXPECT_EQ(audit.checked.at("call-write").back().resource().path(0), "Workspace");

  const pb::AuditEvent ended = audit.Ended(exec);
  EXPECT_EQ(ended.outcome(), pb::AUDIT_OUTCOME_FAILED);
  EXPECT_EQ(ended.reason(), "driver_failed");
  EXPECT_EQ(ended.ended_by(), pb::ENDED_BY_RUNTIME);
  EXPECT_FALSE(ended.has_fail_closed());
  EXPECT_FALSE(ended.has_source());

  const pb::AuditEvent late = audit.Invoked("call-late");
  EXPECT_EQ(Summary(late), "AUDIT_SOURCE_ENVELOPE/AUDIT_OUTCOME_DENIED/turn_draining/turn_ended");
  EXPECT_EQ(late.authority_hash(), hash);
  EXPECT_THAT(audit.events,
              Not(Contains(::testing::Property(&pb::AuditEvent::type,
                                               pb::AUDIT_EVENT_TYPE_ESCALATION_REQUESTED))));
}

// A single-use grant spent: when it was the only grant that made the tool discoverable, the next
// call finds the tool withheld (tool_unavailable, cause grant_exhausted, behind a recorded
// discovery decision); when another grant keeps the tool discoverable, the decision itself is
// grant_exhausted.
TEST_P(ReasonCodesEndToEndTest, SingleUseGrantsUsedTwice) {
  for (const std::string agent : {"agent-once", "agent-counter"}) {
    const std::string exec = "exec-" + agent;
    const v1::OpenTurnResponse opened = Open(Request(exec, agent, {"files.read"}));
    ASSERT_THAT(opened.catalog().tools(), SizeIs(1)) << agent;
    const pb::ToolResult first =
        Invoke(CallRequest(opened.turn_id(), exec, "call-1-" + agent, "files.read",
                           R"({"path": "Workspace/notes.txt"})"));
    EXPECT_EQ(first.status(), pb::TOOL_RESULT_STATUS_SUCCEEDED) << first.DebugString();
    const pb::ToolResult second =
        Invoke(CallRequest(opened.turn_id(), exec, "call-2-" + agent, "files.read",
                           R"({"path": "Workspace/notes.txt"})"));
    EXPECT_EQ(second.status(), pb::TOOL_RESULT_STATUS_DENIED) << second.DebugString();
    EXPECT_EQ(second.error().code(),
              agent == "agent-once" ? "tool_unavailable" : "grant_exhausted");
    EXPECT_EQ(
        Finish(opened.turn_id(), R"pb(complete { output { string_value: "read" } })pb").status(),
        pb::EXECUTION_STATUS_SUCCEEDED);
  }

  const AuditIndex audit = AuditThroughSentinel();
  for (const std::string agent : {"agent-once", "agent-counter"}) {
    const std::string hash = audit.AuthorityHash("trace-exec-" + agent);
    const pb::AuditEvent first = audit.Invoked("call-1-" + agent);
    EXPECT_EQ(Summary(first), "AUDIT_SOURCE_KERNEL/AUDIT_OUTCOME_SUCCEEDED//");
    EXPECT_EQ(first.grant_id(), agent == "agent-once" ? "grant-once-read" : "grant-counter-read");
    ExpectKernel(first, hash);
    ASSERT_TRUE(audit.checked.count("call-1-" + agent));
    // The bounded use is reserved before the record is written (ADR 0029), not yet consumed.
    const pb::AuditEvent& allowed = audit.checked.at("call-1-" + agent).back();
    EXPECT_EQ(allowed.outcome(), pb::AUDIT_OUTCOME_ALLOWED);
    EXPECT_FALSE(allowed.consumed());
    EXPECT_EQ(allowed.metadata().fields().at("usageState").string_value(), "reserved")
        << allowed.DebugString();

    const pb::AuditEvent second = audit.Invoked("call-2-" + agent);
    ExpectKernel(second, hash);
    ASSERT_TRUE(audit.checked.count("call-2-" + agent)) << agent;
    const pb::AuditEvent& decision = audit.checked.at("call-2-" + agent).back();
    EXPECT_EQ(decision.outcome(), pb::AUDIT_OUTCOME_DENIED);
    EXPECT_EQ(decision.reason(), "grant_exhausted");
    EXPECT_FALSE(decision.consumed());
    EXPECT_EQ(decision.authority_hash(), hash);
    if (agent == "agent-once") {
      EXPECT_EQ(Summary(second),
                "AUDIT_SOURCE_KERNEL/AUDIT_OUTCOME_DENIED/tool_unavailable/grant_exhausted");
    } else {
      EXPECT_EQ(Summary(second), "AUDIT_SOURCE_KERNEL/AUDIT_OUTCOME_DENIED/grant_exhausted/");
    }
    const pb::AuditEvent ended = audit.Ended("exec-" + agent);
    EXPECT_EQ(ended.outcome(), pb::AUDIT_OUTCOME_SUCCEEDED);
    EXPECT_TRUE(ended.reason().empty());
  }
}

// The turn budgets refuse calls, not the turn; the terminals: CancelTurn, the deadline,
// escalation with and without the affordance.
TEST_P(ReasonCodesEndToEndTest, BudgetsAndTerminals) {
  // max_steps 2, max_tool_calls 2: a step beyond the bound, two reads, a third call.
  v1::OpenTurnRequest request = Request("exec-budgets", "agent-assistant", {"files.read"});
  request.mutable_execution_request()->mutable_options()->set_max_steps(2);
  request.mutable_execution_request()->mutable_options()->set_max_tool_calls(2);
  const v1::OpenTurnResponse budgets = Open(request);
  EXPECT_EQ(budgets.limits().max_steps(), 2);
  EXPECT_EQ(budgets.limits().max_tool_calls(), 2);
  const std::string read = R"({"path": "Workspace/notes.txt"})";
  auto call = [&](const std::string& call_id, int64_t step) {
    return Invoke(
        CallRequest(budgets.turn_id(), "exec-budgets", call_id, "files.read", read, step));
  };
  pb::ToolResult result = call("call-step", 5);
  EXPECT_EQ(result.status(), pb::TOOL_RESULT_STATUS_DENIED);
  EXPECT_EQ(result.error().code(), "step_limit_exceeded");
  EXPECT_EQ(call("call-b1", 0).status(), pb::TOOL_RESULT_STATUS_SUCCEEDED);
  EXPECT_EQ(call("call-b2", 1).status(), pb::TOOL_RESULT_STATUS_SUCCEEDED);
  result = call("call-b3", 1);
  EXPECT_EQ(result.status(), pb::TOOL_RESULT_STATUS_DENIED);
  EXPECT_EQ(result.error().code(), "tool_call_limit_exceeded");
  // The budgets refused calls; the turn still runs until the host cancels it.
  pb::ExecutionResult ended = Cancel(budgets.turn_id());
  EXPECT_EQ(ended.status(), pb::EXECUTION_STATUS_CANCELLED);
  EXPECT_EQ(ended.error().code(), "turn_cancelled");

  // The deadline: a 1 ms turn ends cancelled by the envelope's own timer; WatchTurn streams
  // its events until the terminal one.
  request = Request("exec-deadline", "agent-assistant", {"files.read"});
  request.mutable_execution_request()->mutable_options()->set_timeout_ms(1);
  const v1::OpenTurnResponse expiring = Open(request);
  {
    v1::WatchTurnRequest watch;
    watch.set_turn_id(expiring.turn_id());
    auto context = As(host_token_);
    auto reader = envelope_stub_->WatchTurn(context.get(), watch);
    std::vector<std::string> types;
    v1::WatchTurnResponse event;
    while (reader->Read(&event)) types.push_back(event.event().type());
    EXPECT_TRUE(reader->Finish().ok());
    EXPECT_THAT(types, ElementsAre("turn.started", "turn.cancelled"));
  }
  v1::GetTurnRequest get;
  get.set_turn_id(expiring.turn_id());
  v1::GetTurnResponse got;
  ASSERT_TRUE(envelope_stub_->GetTurn(As(host_token_).get(), get, &got).ok());
  EXPECT_EQ(got.state(), v1::TURN_STATE_ENDED);
  EXPECT_EQ(got.result().status(), pb::EXECUTION_STATUS_CANCELLED);
  EXPECT_EQ(got.result().error().code(), "turn_cancelled");

  // Escalation with the affordance offered.
  const v1::OpenTurnResponse escalating =
      Open(Request("exec-escalate", "agent-assistant", {"files.read", "sharedos.escalate"}));
  ended = Finish(escalating.turn_id(), R"pb(escalate { reason: "The notes need a summary." })pb");
  EXPECT_EQ(ended.status(), pb::EXECUTION_STATUS_ESCALATED);
  EXPECT_EQ(ended.escalation().reason(), "The notes need a summary.");

  // Escalation without it: failed tool_unavailable, nothing recorded but the turn's end.
  const v1::OpenTurnResponse bare = Open(Request("exec-bare", "agent-assistant", {"files.read"}));
  ended = Finish(bare.turn_id(), R"pb(escalate { reason: "Let me out." })pb");
  EXPECT_EQ(ended.status(), pb::EXECUTION_STATUS_FAILED);
  EXPECT_EQ(ended.error().code(), "tool_unavailable");
  EXPECT_FALSE(ended.has_escalation());

  const AuditIndex audit = AuditThroughSentinel(/*escalations=*/1);
  const std::string hash = audit.AuthorityHash("trace-exec-budgets");
  EXPECT_EQ(Summary(audit.Invoked("call-step")),
            "AUDIT_SOURCE_ENVELOPE/AUDIT_OUTCOME_DENIED/step_limit_exceeded/");
  EXPECT_EQ(Summary(audit.Invoked("call-b3")),
            "AUDIT_SOURCE_ENVELOPE/AUDIT_OUTCOME_DENIED/tool_call_limit_exceeded/");
  for (const std::string call_id : {"call-step", "call-b3"}) {
    EXPECT_EQ(audit.Invoked(call_id).authority_hash(), hash);
    EXPECT_FALSE(audit.Invoked(call_id).has_fail_closed());
    EXPECT_FALSE(audit.checked.count(call_id));
  }
  for (const std::string call_id : {"call-b1", "call-b2"}) {
    EXPECT_EQ(Summary(audit.Invoked(call_id)), "AUDIT_SOURCE_KERNEL/AUDIT_OUTCOME_SUCCEEDED//");
    ExpectKernel(audit.Invoked(call_id), hash);
  }

  // A cancelled turn is recorded failed with turn_cancelled, ended by the envelope.
  for (const std::string exec : {"exec-budgets", "exec-deadline"}) {
    const pb::AuditEvent record = audit.Ended(exec);
    EXPECT_EQ(record.outcome(), pb::AUDIT_OUTCOME_FAILED) << exec;
    EXPECT_EQ(record.reason(), "turn_cancelled");
    EXPECT_EQ(record.ended_by(), pb::ENDED_BY_ENVELOPE);
    EXPECT_FALSE(record.has_fail_closed());
  }
  const pb::AuditEvent escalated = audit.Ended("exec-escalate");
  EXPECT_EQ(escalated.outcome(), pb::AUDIT_OUTCOME_ESCALATED);
  EXPECT_EQ(escalated.reason(), "escalation_requested");
  ASSERT_THAT(audit.escalations, SizeIs(1));
  EXPECT_EQ(audit.escalations[0].trace_id(), "trace-exec-escalate");
  EXPECT_EQ(audit.escalations[0].outcome(), pb::AUDIT_OUTCOME_ESCALATED);
  EXPECT_EQ(audit.escalations[0].reason(), "escalation_requested");
  EXPECT_EQ(audit.escalations[0].metadata().fields().at("detail").string_value(),
            "The notes need a summary.");

  const pb::AuditEvent bare_end = audit.Ended("exec-bare");
  EXPECT_EQ(bare_end.outcome(), pb::AUDIT_OUTCOME_FAILED);
  EXPECT_EQ(bare_end.reason(), "tool_unavailable");
  EXPECT_EQ(bare_end.ended_by(), pb::ENDED_BY_ENVELOPE);
  EXPECT_FALSE(bare_end.has_fail_closed());
  // Exactly one turn.ended per turn.
  for (const auto& [execution_id, records] : audit.ended) {
    EXPECT_THAT(records, SizeIs(1)) << execution_id;
  }
  EXPECT_EQ(audit.ended.size(), 5u);
}

// The grant store down when a turn opens: denied authority_unavailable, fail closed, with the
// failed authority load recorded by the kernel (four processes: sharedosd has no separate store).
TEST_P(ReasonCodesEndToEndTest, GrantStoreDownDeniesAuthorityUnavailable) {
  if (sharedosd()) GTEST_SKIP() << "the grant store runs inside sharedosd";
  StopGrantstore();
  const pb::ExecutionResult result =
      OpenEnded(Request("exec-no-store", "agent-assistant", {"files.read"}), nullptr);
  EXPECT_EQ(result.status(), pb::EXECUTION_STATUS_DENIED);
  EXPECT_EQ(result.error().code(), "authority_unavailable");

  const AuditIndex audit = AuditThroughSentinel();
  ASSERT_TRUE(audit.resolved.count("trace-exec-no-store"));
  const pb::AuditEvent& load = audit.resolved.at("trace-exec-no-store").back();
  EXPECT_EQ(load.outcome(), pb::AUDIT_OUTCOME_FAILED);
  EXPECT_EQ(load.reason(), "authority_unavailable");
  EXPECT_TRUE(load.fail_closed());
  const pb::AuditEvent ended = audit.Ended("exec-no-store");
  EXPECT_EQ(ended.outcome(), pb::AUDIT_OUTCOME_DENIED);
  EXPECT_EQ(ended.reason(), "authority_unavailable");
  EXPECT_TRUE(ended.fail_closed());
  EXPECT_FALSE(ended.has_source());
}

// audit_svc down mid-turn: the next call's decision cannot be recorded, so it is refused
// audit_unavailable (fail closed) and latches the outage; later calls are refused turn_draining
// and the turn fails audit_unavailable whatever the runtime says. The post-effect records wait
// in the outboxes and reach the log once audit_svc is back (four processes only).
TEST_P(ReasonCodesEndToEndTest, AuditOutageDrainsTheTurnAndFailsItAuditUnavailable) {
  if (sharedosd()) GTEST_SKIP() << "the audit log runs inside sharedosd";
  const std::string exec = "exec-outage";
  const v1::OpenTurnResponse opened = Open(Request(exec, "agent-assistant", {"files.read"}));
  const std::string read = R"({"path": "Workspace/notes.txt"})";
  StopAudit();
  pb::ToolResult result =
      Invoke(CallRequest(opened.turn_id(), exec, "call-outage", "files.read", read));
  EXPECT_EQ(result.status(), pb::TOOL_RESULT_STATUS_DENIED) << result.DebugString();
  EXPECT_EQ(result.error().code(), "audit_unavailable");
  result = Invoke(CallRequest(opened.turn_id(), exec, "call-drained", "files.read", read));
  EXPECT_EQ(result.status(), pb::TOOL_RESULT_STATUS_DENIED) << result.DebugString();
  EXPECT_EQ(result.error().code(), "turn_draining");
  const pb::ExecutionResult ended =
      Finish(opened.turn_id(), R"pb(complete { output { string_value: "done" } })pb");
  EXPECT_EQ(ended.status(), pb::EXECUTION_STATUS_FAILED);
  EXPECT_EQ(ended.error().code(), "audit_unavailable");
  // Nothing that could have had an effect ran.
  EXPECT_TRUE(ended.error().retryable());
  RestartAudit();

  const AuditIndex audit = AuditThroughSentinel();
  const std::string hash = audit.AuthorityHash("trace-" + exec);
  const pb::AuditEvent refused = audit.Invoked("call-outage");
  EXPECT_EQ(Summary(refused), "AUDIT_SOURCE_KERNEL/AUDIT_OUTCOME_DENIED/audit_unavailable/");
  EXPECT_TRUE(refused.fail_closed());
  EXPECT_EQ(refused.authority_hash(), hash);
  // The decision itself never reached the log: that is why the call was refused.
  EXPECT_FALSE(audit.checked.count("call-outage"));
  const pb::AuditEvent drained = audit.Invoked("call-drained");
  EXPECT_EQ(Summary(drained), "AUDIT_SOURCE_ENVELOPE/AUDIT_OUTCOME_DENIED/turn_draining/");
  EXPECT_EQ(drained.authority_hash(), hash);
  const pb::AuditEvent end = audit.Ended(exec);
  EXPECT_EQ(end.outcome(), pb::AUDIT_OUTCOME_FAILED);
  EXPECT_EQ(end.reason(), "audit_unavailable");
  EXPECT_EQ(end.ended_by(), pb::ENDED_BY_ENVELOPE);
  EXPECT_TRUE(end.fail_closed());
}

INSTANTIATE_TEST_SUITE_P(Deployments, ReasonCodesEndToEndTest, ::testing::Bool(),
                         e2e::DeploymentName);

// turn_draining by the drain window: started with --drain_grace as long as the longest turn
// (600 s), every turn is inside its window from the start, so each new call is refused
// turn_draining by the envelope before any decision is made; the refusals end nothing, and the
// runtime still completes the turn.
class DrainWindowEndToEndTest : public ReasonCodesEndToEndTest {
 protected:
  void SetUp() override {
    engine_args_.push_back("--drain_grace=600s");
    ReasonCodesEndToEndTest::SetUp();
  }
};

TEST_P(DrainWindowEndToEndTest, CallsInsideTheDrainWindowAreRefusedTurnDraining) {
  const std::string exec = "exec-drain-window";
  const v1::OpenTurnResponse opened = Open(Request(exec, "agent-assistant", {"files.read"}));
  const std::string read = R"({"path": "Workspace/notes.txt"})";
  for (const char* call_id : {"call-window-1", "call-window-2"}) {
    const pb::ToolResult result =
        Invoke(CallRequest(opened.turn_id(), exec, call_id, "files.read", read));
    EXPECT_EQ(result.status(), pb::TOOL_RESULT_STATUS_DENIED) << result.DebugString();
    EXPECT_EQ(result.error().code(), "turn_draining") << call_id;
  }
  const pb::ExecutionResult ended =
      Finish(opened.turn_id(), R"pb(complete { output { string_value: "done" } })pb");
  EXPECT_EQ(ended.status(), pb::EXECUTION_STATUS_SUCCEEDED) << ended.DebugString();

  const AuditIndex audit = AuditThroughSentinel();
  const std::string hash = audit.AuthorityHash("trace-" + exec);
  for (const char* call_id : {"call-window-1", "call-window-2"}) {
    const pb::AuditEvent refused = audit.Invoked(call_id);
    EXPECT_EQ(Summary(refused), "AUDIT_SOURCE_ENVELOPE/AUDIT_OUTCOME_DENIED/turn_draining/")
        << call_id;
    EXPECT_EQ(refused.authority_hash(), hash);
    // Refused before mediation: no decision was asked for.
    EXPECT_FALSE(audit.checked.count(call_id)) << call_id;
  }
  EXPECT_EQ(audit.Ended(exec).outcome(), pb::AUDIT_OUTCOME_SUCCEEDED);
}

INSTANTIATE_TEST_SUITE_P(Deployments, DrainWindowEndToEndTest, ::testing::Bool(),
                         e2e::DeploymentName);

// ---------------------------------------------------------------------------------------------
// A host ToolProvider over gRPC (four processes: sharedosd attaches none)

// Two host tools in tool namespace "host", resource host/jobs, action run: host.wait answers
// once the test releases it; host.broken's backend is down.
constexpr char kHostToolDefinition[] = R"pb(
  description: 'A host job.'
  namespace: 'host'
  source: 'host'
  read_write: READ_WRITE_READ
  annotations { read_only: true idempotent: true }
  required_capability {
    resource { namespace: 'host' path: 'jobs' }
    action: 'run'
  }
  input_schema {
    fields {
      key: 'type'
      value { string_value: 'object' }
    }
  }
)pb";

std::string HostToolsRegistry() {
  std::string registry;
  for (const std::string name : {"host.wait", "host.broken"}) {
    absl::StrAppend(&registry, "tools { definition { name: '", name, "' ", kHostToolDefinition,
                    " } requirement { ceiling {} } provider { grpc { provider_id: 'host-test' } } "
                    "}\n");
  }
  return registry;
}

// The host's provider, in the test process.
class HostProvider final : public v1::ToolProvider::Service {
 public:
  grpc::Status ListTools(grpc::ServerContext*, const v1::ListToolsRequest*,
                         v1::ListToolsResponse* response) override {
    absl::MutexLock lock(&mu_);
    if (listing_down_) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "backend down");
    for (const std::string name : {"host.wait", "host.broken"}) {
      pb::ToolDefinition* tool = response->add_tools();
      EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(kHostToolDefinition, tool));
      tool->set_name(name);
    }
    return grpc::Status::OK;
  }

  grpc::Status Invoke(grpc::ServerContext*, const v1::InvokeRequest* request,
                      v1::InvokeResponse* response) override {
    if (request->tool() == "host.broken") {
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "backend down");
    }
    if (!entered_.HasBeenNotified()) entered_.Notify();
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(&released_));
    pb::ToolResult* result = response->mutable_result();
    result->set_call_id(request->call_id());
    result->set_tool(request->tool());
    result->set_status(pb::TOOL_RESULT_STATUS_SUCCEEDED);
    result->mutable_output()->set_string_value("done");
    result->mutable_completed_at()->set_seconds(1786438802);
    return grpc::Status::OK;
  }

  // Blocks until a host.wait call has reached the provider.
  void WaitEntered() { entered_.WaitForNotification(); }
  void Release() {
    absl::MutexLock lock(&mu_);
    released_ = true;
  }
  void TakeListingDown() {
    absl::MutexLock lock(&mu_);
    listing_down_ = true;
  }

 private:
  absl::Notification entered_;
  absl::Mutex mu_;
  bool released_ ABSL_GUARDED_BY(mu_) = false;
  bool listing_down_ ABSL_GUARDED_BY(mu_) = false;
};

class HostProviderEndToEndTest : public ReasonCodesEndToEndTest {
 protected:
  HostProviderEndToEndTest() : ReasonCodesEndToEndTest(HostToolsRegistry()) {}

  void SetUp() override {
    if (sharedosd()) GTEST_SKIP() << "sharedosd attaches no host tool provider";
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&provider_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    ASSERT_GT(port, 0);
    providers_.push_back({"host-test", absl::StrCat("127.0.0.1:", port)});
    ReasonCodesEndToEndTest::SetUp();
    if (HasFatalFailure()) return;
    IssueGrant(R"pb(id: "grant-host-jobs"
                    namespace_id: "world-demo"
                    subject { agent_id: "agent-assistant" }
                    issuer { human_user_id: "user-alice" }
                    capabilities {
                      resource { namespace: "host" path: "jobs" }
                      actions: "run"
                      scope: SCOPE_EXACT
                    }
                    constraints {}
                    issued_at { seconds: 1700000000 })pb");
  }

  void TearDown() override {
    provider_.Release();
    ReasonCodesEndToEndTest::TearDown();
    if (server_ != nullptr) server_->Shutdown();
  }

  // A turn that may call the host tools (tool namespace "host" enabled).
  static v1::OpenTurnRequest HostRequest(const std::string& execution_id,
                                         const std::vector<std::string>& tools) {
    v1::OpenTurnRequest request = Request(execution_id, "agent-assistant", tools);
    request.mutable_execution_request()->mutable_context()->add_enabled_tool_namespaces("host");
    return request;
  }

  HostProvider provider_;
  std::unique_ptr<grpc::Server> server_;
};

// A call racing the turn's end: FinishTurn waits for the call still with the provider, and a
// call arriving meanwhile is refused turn_draining (recorded by the envelope, no cause).
TEST_P(HostProviderEndToEndTest, CallsWhileTheTurnEndsAreRefusedTurnDraining) {
  const std::string exec = "exec-ending";
  v1::OpenTurnRequest request = HostRequest(exec, {"host.wait"});
  request.mutable_execution_request()->mutable_options()->set_max_tool_calls(10000);
  const v1::OpenTurnResponse opened = Open(request);
  ASSERT_THAT(opened.catalog().tools(), SizeIs(1));
  const std::string turn = opened.turn_id();

  pb::ToolResult waited;
  std::thread waiting(
      [&] { waited = Invoke(CallRequest(turn, exec, "call-wait", "host.wait", "{}")); });
  provider_.WaitEntered();
  pb::ExecutionResult finished;
  std::thread finishing(
      [&] { finished = Finish(turn, R"pb(complete { output { string_value: "done" } })pb"); });
  // Probe (a tool never offered) until the turn is ending: each earlier probe is refused
  // not_offered, the first one after is refused turn_draining.
  int probes = 0;
  std::string code;
  while (code != "turn_draining" && probes < 10000) {
    const pb::ToolResult probe = Invoke(CallRequest(
        turn, exec, absl::StrCat("call-probe-", ++probes), "files.delete", R"({"path": "a"})"));
    EXPECT_EQ(probe.status(), pb::TOOL_RESULT_STATUS_DENIED);
    code = probe.error().code();
  }
  ASSERT_EQ(code, "turn_draining");
  provider_.Release();
  waiting.join();
  finishing.join();
  EXPECT_EQ(waited.status(), pb::TOOL_RESULT_STATUS_SUCCEEDED) << waited.DebugString();
  EXPECT_EQ(finished.status(), pb::EXECUTION_STATUS_SUCCEEDED) << finished.DebugString();

  const AuditIndex audit = AuditThroughSentinel();
  const std::string hash = audit.AuthorityHash("trace-" + exec);
  ExpectKernel(audit.Invoked("call-wait"), hash);
  EXPECT_EQ(Summary(audit.Invoked("call-wait")), "AUDIT_SOURCE_KERNEL/AUDIT_OUTCOME_SUCCEEDED//");
  for (int i = 1; i < probes; ++i) {
    EXPECT_EQ(Summary(audit.Invoked(absl::StrCat("call-probe-", i))),
              "AUDIT_SOURCE_ENVELOPE/AUDIT_OUTCOME_DENIED/tool_unavailable/not_offered");
  }
  const pb::AuditEvent drained = audit.Invoked(absl::StrCat("call-probe-", probes));
  EXPECT_EQ(Summary(drained), "AUDIT_SOURCE_ENVELOPE/AUDIT_OUTCOME_DENIED/turn_draining/");
  EXPECT_EQ(drained.authority_hash(), hash);
  EXPECT_FALSE(drained.has_fail_closed());
  EXPECT_EQ(audit.Ended(exec).outcome(), pb::AUDIT_OUTCOME_SUCCEEDED);
}

// A provider whose backend is down: its call fails tool_execution_failed; a turn whose catalogue
// cannot be listed fails tool_catalog_unavailable at OpenTurn.
TEST_P(HostProviderEndToEndTest, ProviderFailures) {
  const v1::OpenTurnResponse opened = Open(HostRequest("exec-broken", {"host.broken"}));
  const pb::ToolResult broken =
      Invoke(CallRequest(opened.turn_id(), "exec-broken", "call-broken", "host.broken", "{}"));
  EXPECT_EQ(broken.status(), pb::TOOL_RESULT_STATUS_FAILED) << broken.DebugString();
  EXPECT_EQ(broken.error().code(), "tool_execution_failed");
  EXPECT_THAT(broken.error().message(), Not(HasSubstr("backend down")));
  Cancel(opened.turn_id());

  provider_.TakeListingDown();
  const pb::ExecutionResult unlisted =
      OpenEnded(HostRequest("exec-unlisted", {"host.wait"}), nullptr);
  EXPECT_EQ(unlisted.status(), pb::EXECUTION_STATUS_FAILED);
  EXPECT_EQ(unlisted.error().code(), "tool_catalog_unavailable");

  const AuditIndex audit = AuditThroughSentinel();
  const pb::AuditEvent failed = audit.Invoked("call-broken");
  EXPECT_EQ(Summary(failed), "AUDIT_SOURCE_KERNEL/AUDIT_OUTCOME_FAILED/tool_execution_failed/");
  ExpectKernel(failed, audit.AuthorityHash("trace-exec-broken"));
  EXPECT_THAT(failed.DebugString(), Not(HasSubstr("backend down")));
  const pb::AuditEvent ended = audit.Ended("exec-unlisted");
  EXPECT_EQ(ended.outcome(), pb::AUDIT_OUTCOME_FAILED);
  EXPECT_EQ(ended.reason(), "tool_catalog_unavailable");
  EXPECT_EQ(ended.ended_by(), pb::ENDED_BY_ENVELOPE);
}

INSTANTIATE_TEST_SUITE_P(Deployments, HostProviderEndToEndTest, ::testing::Bool(),
                         e2e::DeploymentName);

}  // namespace
}  // namespace sharedos::envelope
