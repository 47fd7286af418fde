// The four services as separate processes (audit_svc, grantstore_svc, authorizer_svc,
// envelope_svc), wired as in production: a host runs a turn that reads a file (allowed), is
// refused a write (no_matching_grant, with the authority it would need), and escalates with
// that authority; an operator approves the escalation on the reviewer's behalf; the next turn's
// write succeeds. The one audit log then verifies and holds every record with its source and cause.
#include <google/protobuf/util/json_util.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "sharedos/audit/v1/audit.grpc.pb.h"
#include "sharedos/envelope/v1/envelope.grpc.pb.h"
#include "sharedos/grantstore/v1/grantstore.grpc.pb.h"
#include "tests/e2e/e2e_deployment.h"
#include "tests/testing/demo_world.h"
#include "tests/testing/reference_vocabulary.h"

namespace sharedos {
namespace {

namespace pb = ::sharedos::protocol::v1;
namespace demo = ::sharedos::testing::demo;
using ::sharedos::e2e::ReadFile;
using ::testing::SizeIs;
using ::testing::StartsWith;

// Param: false = the four services as separate processes, with the demo world's registry
// (files.read, files.create, sharedos.escalate); true = the same turn against one sharedosd
// process with its shipped default registry. Both hold the demo workspace (notes.txt).
class EnvelopeEndToEndTest : public e2e::DeploymentTest {
 protected:
  EnvelopeEndToEndTest() : DeploymentTest(demo::RegistryText(), /*sharedosd_registry=*/false) {}

  // The demo world's turn (traced "trace-e2e").
  envelope::v1::OpenTurnResponse OpenTurn(const std::string& execution_id) {
    const envelope::v1::OpenTurnRequest request = demo::TurnRequest(execution_id, "trace-e2e");
    envelope::v1::OpenTurnResponse response;
    grpc::Status status = envelope_stub_->OpenTurn(As(host_token_).get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_FALSE(response.has_result()) << response.result().DebugString();
    return response;
  }

  pb::ToolResult Call(const std::string& turn_id, const std::string& call_id,
                      const std::string& tool, const std::string& arguments_json) {
    envelope::v1::InvokeToolRequest request;
    request.set_turn_id(turn_id);
    pb::ToolCall* call = request.mutable_call();
    call->set_id(call_id);
    call->set_tool(tool);
    call->set_trace_id("trace-e2e");
    EXPECT_TRUE(
        google::protobuf::util::JsonStringToMessage(arguments_json, call->mutable_arguments())
            .ok());
    call->mutable_requested_at()->set_seconds(1786438801);
    envelope::v1::InvokeToolResponse response;
    grpc::Status status = envelope_stub_->InvokeTool(As(host_token_).get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response.result();
  }
};

TEST_P(EnvelopeEndToEndTest, RefusedWriteEscalatesAndTheNextTurnWrites) {
  ASSERT_FALSE(envelope_address_.empty());
  // The operator's grant, the demo world's: run the agent, read the workspace, write only under
  // Scratch, escalate.
  IssueGrant(demo::Grant());
  ASSERT_FALSE(HasFatalFailure());

  // Turn 1: read allowed; a write outside Scratch refused with the authority it needs.
  envelope::v1::OpenTurnResponse first = OpenTurn("exec-e2e-1");
  ASSERT_THAT(first.catalog().tools(), SizeIs(3));
  pb::ToolResult read =
      Call(first.turn_id(), "call-read", "files.read", R"({"path": "Workspace/notes.txt"})");
  ASSERT_EQ(read.status(), pb::TOOL_RESULT_STATUS_SUCCEEDED) << read.DebugString();
  EXPECT_EQ(read.output().struct_value().fields().at("content").string_value(), "buy milk\n");
  pb::ToolResult unoffered =
      Call(first.turn_id(), "call-delete", "files.delete", R"({"path": "Workspace/notes.txt"})");
  EXPECT_EQ(unoffered.error().code(), "tool_unavailable");
  pb::ToolResult write = Call(first.turn_id(), "call-write", "files.create",
                              R"({"path": "Workspace/summary.txt", "content": "milk"})");
  ASSERT_EQ(write.status(), pb::TOOL_RESULT_STATUS_DENIED) << write.DebugString();
  ASSERT_EQ(write.error().code(), "no_matching_grant");
  ASSERT_TRUE(write.error().details().fields().contains("requiredAuthority"));
  std::string json;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(
                  write.error().details().fields().at("requiredAuthority").struct_value(), &json)
                  .ok());

  // The host escalates the denial with its required authority (ADR 0019).
  envelope::v1::FinishTurnRequest finish;
  finish.set_turn_id(first.turn_id());
  finish.mutable_escalate()->set_reason("The assistant needs to write its summary.");
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(
                  json, finish.mutable_escalate()->mutable_requested_authority())
                  .ok());
  const std::string required_id = finish.escalate().requested_authority().id();
  ASSERT_THAT(required_id, StartsWith("capreq-"));
  envelope::v1::FinishTurnResponse escalated;
  grpc::Status status = envelope_stub_->FinishTurn(As(host_token_).get(), finish, &escalated);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(escalated.result().status(), pb::EXECUTION_STATUS_ESCALATED);
  EXPECT_EQ(escalated.result().escalation().requested_authority().id(), required_id);

  // The operator approves it: grantstore issues a grant from the requested authority.
  grantstore::v1::ListEscalationsRequest list;
  list.set_namespace_id("world-demo");
  list.set_status(grantstore::v1::ESCALATION_RECORD_STATUS_PENDING);
  grantstore::v1::ListEscalationsResponse pending;
  status = grants_->ListEscalations(As(admin_token_).get(), list, &pending);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_THAT(pending.escalations(), SizeIs(1));
  EXPECT_EQ(pending.escalations(0).execution_id(), "exec-e2e-1");
  EXPECT_EQ(pending.escalations(0).escalation().requested_authority().id(), required_id);
  grantstore::v1::ResolveEscalationRequest resolve;
  resolve.set_escalation_id(pending.escalations(0).escalation_id());
  resolve.set_decision(grantstore::v1::ESCALATION_DECISION_APPROVE);
  // The operator (admin of every namespace) decides explicitly on alice's behalf (recorded);
  // reviewer_approval_e2e_test covers alice's own credential and who else is refused.
  resolve.set_on_behalf_of_reviewer(true);
  grantstore::v1::ResolveEscalationResponse resolved;
  status = grants_->ResolveEscalation(As(admin_token_).get(), resolve, &resolved);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_TRUE(resolved.has_grant());

  // Turn 2 loads the new grant: the same write succeeds.
  envelope::v1::OpenTurnResponse second = OpenTurn("exec-e2e-2");
  write = Call(second.turn_id(), "call-write-2", "files.create",
               R"({"path": "Workspace/summary.txt", "content": "milk"})");
  ASSERT_EQ(write.status(), pb::TOOL_RESULT_STATUS_SUCCEEDED) << write.DebugString();
  EXPECT_EQ(ReadFile(files_root_ + "/human/user-alice/workspace/Workspace/summary.txt"), "milk");
  finish.Clear();
  finish.set_turn_id(second.turn_id());
  finish.mutable_complete()->mutable_output()->set_string_value("summary written");
  envelope::v1::FinishTurnResponse completed;
  status = envelope_stub_->FinishTurn(As(host_token_).get(), finish, &completed);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(completed.result().status(), pb::EXECUTION_STATUS_SUCCEEDED);

  // The audit log: every record of both turns arrives, and the chain verifies.
  auto ended_count = [](const std::vector<pb::AuditEvent>& events) {
    int ended = 0;
    for (const pb::AuditEvent& event : events) {
      if (event.type() == pb::AUDIT_EVENT_TYPE_TURN_ENDED) ++ended;
    }
    return ended;
  };
  std::vector<pb::AuditEvent> events = AuditUntil([&](const auto& so_far) {
    int invoked = 0;
    bool escalation = false;
    for (const pb::AuditEvent& event : so_far) {
      if (event.type() == pb::AUDIT_EVENT_TYPE_TOOL_INVOKED) ++invoked;
      if (event.type() == pb::AUDIT_EVENT_TYPE_ESCALATION_REQUESTED) escalation = true;
    }
    return ended_count(so_far) == 2 && invoked == 4 && escalation;
  });
  ASSERT_EQ(ended_count(events), 2);

  // A strict 1.0.0-preview reader accepts every record this flow wrote (docs/adr/0008): each "1"
  // event has a reference type and reference codes; the control-plane records (the operator's
  // grant, the escalation recorded, approved, and its grant) are not "1" objects.
  absl::StatusOr<testing::ReferenceVocabulary> vocabulary = testing::LoadReferenceVocabulary();
  ASSERT_TRUE(vocabulary.ok()) << vocabulary.status();
  std::vector<std::string> findings;
  std::vector<audit::v1::ControlPlaneEventType> control_plane;
  for (const audit::v1::AuditRecord& record : audit_records_) {
    for (std::string& finding : testing::StrictReaderFindings(*vocabulary, record)) {
      findings.push_back(std::move(finding));
    }
    if (record.has_control_plane()) control_plane.push_back(record.control_plane().type());
  }
  EXPECT_THAT(findings, ::testing::IsEmpty());
  EXPECT_THAT(control_plane,
              ::testing::IsSupersetOf({audit::v1::CONTROL_PLANE_EVENT_TYPE_GRANT_ISSUED,
                                       audit::v1::CONTROL_PLANE_EVENT_TYPE_ESCALATION_RECORDED,
                                       audit::v1::CONTROL_PLANE_EVENT_TYPE_ESCALATION_RESOLVED}));

  audit::v1::VerifyResponse verify;
  status = audit_stub_->Verify(As(admin_token_).get(), audit::v1::VerifyRequest(), &verify);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_TRUE(verify.ok()) << verify.detail();
  EXPECT_GE(verify.checked(), static_cast<int64_t>(events.size()));

  int resolved_count = 0, listed = 0, checked_denied = 0;
  std::vector<std::string> invoked;  // "<source>/<outcome>/<reason>/<cause>"
  std::vector<std::string> ended;    // "<outcome>/<reason>"
  for (const pb::AuditEvent& event : events) {
    switch (event.type()) {
      case pb::AUDIT_EVENT_TYPE_AUTHORITY_RESOLVED:
        ++resolved_count;
        break;
      case pb::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED:
        if (event.outcome() == pb::AUDIT_OUTCOME_DENIED) {
          ++checked_denied;
          EXPECT_EQ(event.reason(), "no_matching_grant");
          EXPECT_EQ(event.operation_id(), "call-write");
        }
        break;
      case pb::AUDIT_EVENT_TYPE_TOOL_CATALOG_LISTED:
        ++listed;
        EXPECT_EQ(event.source(), pb::AUDIT_SOURCE_KERNEL);
        EXPECT_EQ(event.metadata().fields().at("catalogHash").string_value(),
                  first.catalog().catalog_hash());
        break;
      case pb::AUDIT_EVENT_TYPE_TOOL_INVOKED:
        invoked.push_back(absl::StrCat(pb::AuditSource_Name(event.source()), "/",
                                       pb::AuditOutcome_Name(event.outcome()), "/", event.reason(),
                                       "/", event.cause()));
        EXPECT_THAT(event.DebugString(), ::testing::Not(::testing::HasSubstr("buy milk")));
        break;
      case pb::AUDIT_EVENT_TYPE_ESCALATION_REQUESTED:
        EXPECT_EQ(event.requested_authority().id(), required_id);
        EXPECT_EQ(event.outcome(), pb::AUDIT_OUTCOME_ESCALATED);
        break;
      case pb::AUDIT_EVENT_TYPE_TURN_ENDED:
        EXPECT_FALSE(event.has_source());
        ended.push_back(absl::StrCat(pb::AuditOutcome_Name(event.outcome()), "/", event.reason()));
        break;
      default:
        break;
    }
  }
  EXPECT_EQ(resolved_count, 2);
  EXPECT_EQ(listed, 2);
  EXPECT_EQ(checked_denied, 1);
  EXPECT_THAT(
      invoked,
      ::testing::UnorderedElementsAre(
          "AUDIT_SOURCE_KERNEL/AUDIT_OUTCOME_SUCCEEDED//",
          // files.delete: absent from the demo registry; shipped (not requested) in sharedosd's.
          absl::StrCat("AUDIT_SOURCE_ENVELOPE/AUDIT_OUTCOME_DENIED/tool_unavailable/",
                       GetParam() ? "not_offered" : "not_registered"),
          "AUDIT_SOURCE_KERNEL/AUDIT_OUTCOME_DENIED/no_matching_grant/",
          "AUDIT_SOURCE_KERNEL/AUDIT_OUTCOME_SUCCEEDED//"));
  EXPECT_THAT(ended, ::testing::UnorderedElementsAre("AUDIT_OUTCOME_ESCALATED/escalation_requested",
                                                     "AUDIT_OUTCOME_SUCCEEDED/"));
}

INSTANTIATE_TEST_SUITE_P(Deployments, EnvelopeEndToEndTest, ::testing::Bool(), e2e::DeploymentName);

}  // namespace
}  // namespace sharedos
