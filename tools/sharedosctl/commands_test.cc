#include "tools/sharedosctl/commands.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "envelope_svc/client/fake_envelope_client.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "grantstore_svc/client/explain.h"
#include "grantstore_svc/client/operator_render.h"
#include "gtest/gtest.h"
#include "tools/sharedosctl/cli.h"

namespace sharedos::sharedosctl {

using ::sharedos::grantstore::client::ExplainControlPlaneRecord;
using ::sharedos::grantstore::client::Explanation;
using ::sharedos::grantstore::client::FormatCapability;
using ::sharedos::grantstore::client::FormatDecider;
using ::sharedos::grantstore::client::FormatResolutionIdentity;
using ::sharedos::grantstore::client::RenderAuditRecords;
using ::sharedos::grantstore::client::RenderEscalations;
using ::sharedos::grantstore::client::RenderExplanation;
using ::sharedos::grantstore::client::RenderGrant;
using ::sharedos::grantstore::client::RenderGrants;
using ::sharedos::grantstore::client::RenderVerify;
using ::sharedos::grantstore::client::ToJson;

namespace {

using ::testing::HasSubstr;
using ::testing::IsSupersetOf;
using ::testing::Not;
using ::testing::Pair;

Invocation Parsed(std::vector<std::string> args) {
  GlobalOptions globals;
  auto parsed = ParseArgs(args, &globals);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  return parsed.ok() ? *parsed : Invocation();
}

TEST(ParseMessageTextTest, ReadsTextprotoAndJson) {
  protocol::v1::CapabilityGrant grant;
  ASSERT_TRUE(ParseMessageText("g.textproto", R"pb(id: "g1"
                                                   namespace_id: "w"
                                                   subject { agent_id: "a" })pb",
                               &grant)
                  .ok());
  EXPECT_EQ(grant.subject().agent_id(), "a");
  grant.Clear();
  // JSON by extension or by its opening brace.
  ASSERT_TRUE(ParseMessageText("g.json", R"({"id": "g2", "namespaceId": "w"})", &grant).ok());
  EXPECT_EQ(grant.id(), "g2");
  ASSERT_TRUE(ParseMessageText("grant", R"(  {"id": "g3"})", &grant).ok());
  EXPECT_EQ(grant.id(), "g3");
}

TEST(ParseMessageTextTest, RefusesUnknownFields) {
  protocol::v1::CapabilityGrant grant;
  auto text = ParseMessageText("g.textproto", "id: \"g\" colour: 3", &grant);
  EXPECT_EQ(text.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(text.message()), HasSubstr("g.textproto"));
  EXPECT_FALSE(ParseMessageText("g.json", R"({"colour": 3})", &grant).ok());
}

TEST(ReadTokenTest, ReadsTheFirstLineTrimmedAndNeverEchoesIt) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/admin.token";
  std::ofstream(path) << "  s3cret-token \nsecond line\n";
  EXPECT_EQ(*ReadToken(path), "s3cret-token");
  std::ofstream(path) << "\n";
  auto empty = ReadToken(path);
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kFailedPrecondition);
  auto missing = ReadToken(path + ".missing");
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("admin.token.missing"));
}

TEST(BuildersTest, ListGrantsFilter) {
  auto request = BuildListGrants(
      Parsed({"grants", "list", "--namespace=w", "--subject=agent:a", "--include_revoked"}));
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->filter().namespace_id(), "w");
  EXPECT_EQ(request->filter().subject().agent_id(), "a");
  EXPECT_FALSE(request->filter().has_issuer());
  EXPECT_TRUE(request->filter().include_revoked());
  EXPECT_FALSE(BuildListGrants(Parsed({"grants", "list", "--namespace=w", "--subject=a"})).ok());
}

TEST(BuildersTest, AuditFilterMapsNames) {
  auto filter = BuildAuditFilter(
      Parsed({"audit", "query", "--namespace=w", "--type=tool.invoked", "--source=envelope",
              "--outcome=denied", "--trace=t", "--execution=e", "--reason=r"}));
  ASSERT_TRUE(filter.ok()) << filter.status();
  EXPECT_EQ(filter->type(), protocol::v1::AUDIT_EVENT_TYPE_TOOL_INVOKED);
  EXPECT_EQ(filter->source(), protocol::v1::AUDIT_SOURCE_ENVELOPE);
  EXPECT_EQ(filter->outcome(), protocol::v1::AUDIT_OUTCOME_DENIED);
  EXPECT_EQ(filter->trace_id(), "t");
  EXPECT_EQ(filter->execution_id(), "e");
  EXPECT_EQ(filter->reason(), "r");
  // Absent enums stay absent (not UNSPECIFIED).
  auto bare = BuildAuditFilter(Parsed({"audit", "query"}));
  ASSERT_TRUE(bare.ok());
  EXPECT_FALSE(bare->has_type());
  EXPECT_FALSE(bare->has_source());
  EXPECT_FALSE(BuildAuditFilter(Parsed({"audit", "query", "--type=TOOL_INVOKED"})).ok());
  // What one agent did, in a window of time.
  auto window =
      BuildAuditFilter(Parsed({"audit", "query", "--actor=agent:a", "--since=2026-08-11T10:00:00Z",
                               "--until=2026-08-11T11:00:00Z"}));
  ASSERT_TRUE(window.ok()) << window.status();
  EXPECT_EQ(window->actor().agent_id(), "a");
  EXPECT_EQ(window->from().seconds(), 1786442400);
  EXPECT_EQ(window->to().seconds(), 1786446000);
  EXPECT_FALSE(bare->has_actor());
  EXPECT_FALSE(bare->has_from());
  EXPECT_FALSE(BuildAuditFilter(Parsed({"audit", "query", "--actor=a"})).ok());
  EXPECT_FALSE(BuildAuditFilter(Parsed({"audit", "query", "--since=yesterday"})).ok());
}

TEST(BuildersTest, ResolveEscalationNarrowing) {
  auto request =
      BuildResolveEscalation(Parsed({"escalations", "approve", "--id=e1", "--reviewer=human:alice",
                                     "--expires_at=2026-08-11T10:00:00Z", "--max_uses=1"}),
                             grantstore::v1::ESCALATION_DECISION_APPROVE);
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->escalation_id(), "e1");
  EXPECT_EQ(request->reviewer().human_user_id(), "alice");
  EXPECT_EQ(request->narrowing().expires_at().seconds(), 1786442400);
  EXPECT_EQ(request->narrowing().max_uses(), 1);
  auto deny =
      BuildResolveEscalation(Parsed({"escalations", "deny", "--id=e1", "--reviewer=human:bob"}),
                             grantstore::v1::ESCALATION_DECISION_DENY);
  ASSERT_TRUE(deny.ok());
  EXPECT_FALSE(deny->has_narrowing());
  EXPECT_FALSE(BuildResolveEscalation(
                   Parsed({"escalations", "approve", "--id=e", "--reviewer=h", "--max_uses=0"}),
                   grantstore::v1::ESCALATION_DECISION_APPROVE)
                   .ok());
}

TEST(BuildersTest, ResolveEscalationCarriesTheNoteOnEitherDecision) {
  auto deny =
      BuildResolveEscalation(Parsed({"escalations", "deny", "--id=e1", "--note=ask Bob first"}),
                             grantstore::v1::ESCALATION_DECISION_DENY);
  ASSERT_TRUE(deny.ok()) << deny.status();
  EXPECT_EQ(deny->note(), "ask Bob first");
  auto approve = BuildResolveEscalation(
      Parsed({"escalations", "approve", "--id=e1", "--note=once", "--max_uses=1"}),
      grantstore::v1::ESCALATION_DECISION_APPROVE);
  ASSERT_TRUE(approve.ok()) << approve.status();
  EXPECT_EQ(approve->note(), "once");
  auto none = BuildResolveEscalation(Parsed({"escalations", "deny", "--id=e1"}),
                                     grantstore::v1::ESCALATION_DECISION_DENY);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->note(), "");
}

TEST(BuildersTest, VerifyRange) {
  auto all = BuildVerify(Parsed({"audit", "verify"}));
  ASSERT_TRUE(all.ok());
  EXPECT_FALSE(all->has_from_sequence());
  auto range = BuildVerify(Parsed({"audit", "verify", "--from=2", "--to=5"}));
  ASSERT_TRUE(range.ok());
  EXPECT_EQ(range->from_sequence(), 2);
  EXPECT_EQ(range->to_sequence(), 5);
  EXPECT_FALSE(BuildVerify(Parsed({"audit", "verify", "--to=x"})).ok());
}

TEST(RunCommandTest, BadFlagValuesAreUsageErrorsBeforeAnyCall) {
  std::ostringstream out, err;
  Clients none;  // No stubs: a call would crash.
  EXPECT_EQ(RunCommand(Parsed({"grants", "list", "--namespace=w", "--subject=alice"}),
                       GlobalOptions(), none, out, err),
            kExitUsage);
  EXPECT_THAT(err.str(), HasSubstr("sharedosctl: address \"alice\""));
  EXPECT_EQ(RunCommand(Parsed({"grants", "issue", "--file=/nonexistent.textproto"}),
                       GlobalOptions(), none, out, err),
            kExitUsage);
  EXPECT_EQ(out.str(), "");
}

// The command table: every command the parser knows reaches its handler (here: its usage check
// or its missing client, before any call); a name outside the table is a usage error.
TEST(RunCommandTest, DispatchesByTheCommandTable) {
  Clients none;  // No stubs: a call would crash.
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"escalations", "approve", "--id=e", "--reviewer=alice"},
           {"escalations", "deny", "--id=e", "--reviewer=alice"},
           {"audit", "query", "--limit=0"},
           {"audit", "verify", "--from=x"},
           {"audit", "tail", "--since=yesterday"}}) {
    std::ostringstream out, err;
    EXPECT_EQ(RunCommand(Parsed(args), GlobalOptions(), none, out, err), kExitUsage)
        << args[0] << " " << args[1];
    EXPECT_THAT(err.str(), HasSubstr("(see sharedosctl --help)"));
  }
  std::ostringstream out, err;
  EXPECT_EQ(RunCommand(Parsed({"turn"}), GlobalOptions(), none, out, err), kExitFailed);
  EXPECT_THAT(err.str(), HasSubstr("no Envelope client"));
  Invocation unknown;
  unknown.command = "grants explode";
  EXPECT_EQ(RunCommand(unknown, GlobalOptions(), none, out, err), kExitUsage);
  EXPECT_THAT(err.str(), HasSubstr("unknown command \"grants explode\""));
  EXPECT_EQ(out.str(), "");
}

TEST(RenderTest, GrantsTable) {
  protocol::v1::CapabilityGrant grant;
  grant.set_id("g1");
  grant.mutable_subject()->set_agent_id("a");
  grant.mutable_issuer()->set_human_user_id("alice");
  auto* capability = grant.add_capabilities();
  capability->mutable_resource()->set_namespace_("files");
  capability->mutable_resource()->add_path("Workspace");
  capability->add_actions("read");
  capability->add_actions("write");
  capability->set_scope(protocol::v1::SCOPE_DESCENDANTS);
  EXPECT_EQ(FormatCapability(*capability), "files:Workspace/** [read,write]");
  // A grant's capability without an owner reaches any owner a turn names: shown as such.
  EXPECT_EQ(
      RenderGrants({grant}),
      "ID  SUBJECT  ISSUER       CAPABILITIES                                 PARENT  REVOKED\n"
      "g1  agent:a  human:alice  files:Workspace/**@(any owner) [read,write]  -       no\n");
  EXPECT_THAT(RenderGrant(grant),
              HasSubstr("capability   files:Workspace/**@(any owner) [read,write]"));
  capability->mutable_resource()->mutable_owner()->set_human_user_id("alice");
  EXPECT_THAT(RenderGrant(grant),
              HasSubstr("capability   files:Workspace/**@human:alice [read,write]"));
}

TEST(RenderTest, EscalationsShowTheNoteOnOneLine) {
  grantstore::v1::EscalationRecord record;
  record.set_escalation_id("e1");
  record.set_status(grantstore::v1::ESCALATION_RECORD_STATUS_DENIED);
  record.set_namespace_id("w");
  record.set_execution_id("x");
  record.mutable_escalation()->set_reason("write");
  record.mutable_reviewer()->set_human_user_id("alice");
  record.set_note("not now\nask Bob");
  EXPECT_EQ(
      RenderEscalations({record}),
      "ID  STATUS  NAMESPACE  EXECUTION  REASON  REVIEWER     DECIDED BY  GRANT  NOTE\n"
      "e1  denied  w          x          write   human:alice  -           -      not now / ask "
      "Bob\n");
  // Who decided, with which credential, and who set its secret (ADR 0014, T3).
  record.mutable_decided_by()->set_human_user_id("alice");
  record.mutable_decided_with()->set_credential_id("cred-1");
  record.mutable_decided_with()->mutable_secret_set_by()->set_service_id("ops");
  EXPECT_EQ(FormatDecider(record),
            "human:alice with cred-1 (secret set by service:ops, not by the decider)");
}

TEST(RenderTest, EscalationsNameTheIdentityProvidersPersonOrBreakGlass) {
  grantstore::v1::EscalationRecord record;
  record.set_escalation_id("e1");
  record.set_status(grantstore::v1::ESCALATION_RECORD_STATUS_APPROVED);
  record.set_namespace_id("w");
  record.mutable_reviewer()->set_human_user_id("alice");
  record.mutable_decided_by()->set_human_user_id("alice");
  grantstore::v1::DecisionCredential& with = *record.mutable_decided_with();
  // Decided with the provider's token: its issuer and subject, not a secret's story.
  with.set_credential_id("idp:alice");
  with.set_idp_issuer("https://idp.example.test");
  with.set_idp_subject("00u-alice");
  EXPECT_EQ(FormatDecider(record),
            "human:alice with an identity provider token (idpIssuer https://idp.example.test, "
            "idpSubject 00u-alice)");
  EXPECT_THAT(RenderEscalations({record}), HasSubstr("idpSubject 00u-alice"));
  // Decided with a SharedOS credential while a provider is configured: break-glass, said so.
  with.Clear();
  with.set_credential_id("cred-1");
  with.mutable_secret_set_by()->set_service_id("ops");
  with.set_break_glass(true);
  EXPECT_EQ(
      FormatDecider(record),
      "human:alice with cred-1 (secret set by service:ops, not by the decider); breakGlass: a "
      "human reviewer's SharedOS credential while an identity provider is configured");
  with.set_break_glass(false);
  EXPECT_THAT(FormatDecider(record), Not(HasSubstr("breakGlass")));
}

TEST(RenderTest, AuditRecordsOfAResolutionNameTheIdentityProvidersPerson) {
  audit::v1::AuditRecord record;
  record.set_sequence(9);
  audit::v1::ControlPlaneEvent& event = *record.mutable_control_plane();
  event.set_type(audit::v1::CONTROL_PLANE_EVENT_TYPE_ESCALATION_RESOLVED);
  event.set_outcome(protocol::v1::AUDIT_OUTCOME_SUCCEEDED);
  event.set_namespace_id("w");
  event.mutable_actor()->set_human_user_id("alice");
  auto& fields = *event.mutable_metadata()->mutable_fields();
  fields["escalationId"].set_string_value("esc-1");
  fields["idpIssuer"].set_string_value("https://idp.example.test");
  fields["idpSubject"].set_string_value("00u-alice");
  EXPECT_EQ(FormatResolutionIdentity(event),
            "idpIssuer=https://idp.example.test idpSubject=00u-alice");
  EXPECT_THAT(RenderAuditRecords({record}),
              HasSubstr("idpIssuer=https://idp.example.test idpSubject=00u-alice"));
  // audit explain shows every metadata field, the flag among them.
  fields["breakGlass"].set_bool_value(true);
  EXPECT_EQ(FormatResolutionIdentity(event),
            "idpIssuer=https://idp.example.test idpSubject=00u-alice breakGlass=true");
  const Explanation explained = ExplainControlPlaneRecord(record);
  EXPECT_THAT(
      explained.facts,
      IsSupersetOf({Pair("idpIssuer", "https://idp.example.test"), Pair("idpSubject", "00u-alice"),
                    Pair("breakGlass", "true"), Pair("escalationId", "esc-1")}));
  EXPECT_THAT(RenderExplanation(explained), HasSubstr("breakGlass: true"));
  // Another record type's metadata is not read as a resolution's.
  event.set_type(audit::v1::CONTROL_PLANE_EVENT_TYPE_GRANT_REVOKED);
  EXPECT_EQ(FormatResolutionIdentity(event), "");
}

TEST(RenderTest, AuditRecordsUseReferenceNames) {
  audit::v1::AuditRecord record;
  record.set_sequence(7);
  record.mutable_control_plane()->set_type(audit::v1::CONTROL_PLANE_EVENT_TYPE_GRANT_REVOKED);
  record.mutable_control_plane()->set_outcome(protocol::v1::AUDIT_OUTCOME_SUCCEEDED);
  record.mutable_control_plane()->set_namespace_id("w");
  record.mutable_control_plane()->set_grant_id("g1");
  record.mutable_control_plane()->mutable_at()->set_seconds(1786442400);
  EXPECT_EQ(RenderAuditRecords({record}),
            "SEQ  AT                    TYPE           OUTCOME    NAMESPACE  ACTOR  TOOL  GRANT  "
            "SOURCE  REASON  CAUSE  RECEIVER  MESSAGE\n"
            "7    2026-08-11T10:00:00Z  grant.revoked  succeeded  w          -      -     g1     "
            "-       -       -      -         -\n");
}

TEST(RenderTest, AuditRecordsNameAMessagesReceiverAndId) {
  audit::v1::AuditRecord record;
  record.set_sequence(11);
  protocol::v1::AuditEvent& event = *record.mutable_event();
  event.set_type(protocol::v1::AUDIT_EVENT_TYPE_MESSAGE_SENT);
  event.set_outcome(protocol::v1::AUDIT_OUTCOME_DENIED);
  event.set_namespace_id("w");
  event.mutable_actor()->set_agent_id("a");
  event.set_source(protocol::v1::AUDIT_SOURCE_KERNEL);
  event.set_reason("route_lease_revoked");
  event.mutable_receiver()->set_agent_id("b");
  event.set_message_id("msg-1");
  event.mutable_at()->set_seconds(1786442400);
  const std::string rendered = RenderAuditRecords({record});
  EXPECT_THAT(rendered, HasSubstr("RECEIVER  MESSAGE"));
  EXPECT_THAT(rendered, HasSubstr("message.sent  denied"));
  EXPECT_THAT(rendered, HasSubstr("route_lease_revoked  -      agent:b   msg-1"));
}

TEST(RenderTest, AuditRecordsSayWhoRefusedWhatAndWhy) {
  audit::v1::AuditRecord record;
  record.set_sequence(9);
  protocol::v1::AuditEvent& event = *record.mutable_event();
  event.set_type(protocol::v1::AUDIT_EVENT_TYPE_TOOL_INVOKED);
  event.set_outcome(protocol::v1::AUDIT_OUTCOME_DENIED);
  event.set_namespace_id("w");
  event.mutable_actor()->set_agent_id("a");
  event.set_tool("files.write");
  event.set_source(protocol::v1::AUDIT_SOURCE_ENVELOPE);
  event.set_reason("tool_unavailable");
  event.set_cause("not_offered");
  event.mutable_at()->set_seconds(1786442400);
  audit::v1::AuditRecord outage = record;
  outage.set_sequence(10);
  outage.mutable_event()->set_source(protocol::v1::AUDIT_SOURCE_KERNEL);
  outage.mutable_event()->set_reason("audit_unavailable");
  outage.mutable_event()->clear_cause();
  outage.mutable_event()->set_fail_closed(true);
  const std::string rendered = RenderAuditRecords({record, outage});
  EXPECT_THAT(rendered, HasSubstr("files.write  -      envelope  tool_unavailable"));
  EXPECT_THAT(rendered, HasSubstr("not_offered"));
  EXPECT_THAT(rendered, HasSubstr("kernel    audit_unavailable (fail closed)"));
}

TEST(RenderTest, VerifyAndJson) {
  audit::v1::VerifyResponse verify;
  verify.set_ok(true);
  verify.set_checked(2);
  verify.set_head_hash("ab");
  EXPECT_EQ(RenderVerify(verify), "ok: 2 records verify; head ab\n");
  EXPECT_EQ(ToJson(verify, /*compact=*/true),
            "{\"ok\":true,\"checked\":\"2\",\"headHash\":\"ab\"}\n");
  verify.set_ok(false);
  verify.set_first_bad_sequence(2);
  EXPECT_THAT(RenderVerify(verify), HasSubstr("BROKEN: first bad sequence 2"));
}

TEST(TurnTest, BuildsTheDemoTurn) {
  google::protobuf::Timestamp now;
  now.set_seconds(1786438800);
  const envelope::v1::OpenTurnRequest request = BuildDemoTurn("exec-1", now);
  EXPECT_EQ(request.runtime(), envelope::v1::RUNTIME_DRIVER);
  const protocol::v1::ExecutionRequest& execution = request.execution_request();
  EXPECT_EQ(execution.execution_id(), "exec-1");
  EXPECT_EQ(execution.context().namespace_id(), "world-demo");
  EXPECT_EQ(execution.context().actor().agent_id(), "agent-assistant");
  EXPECT_EQ(execution.context().owner().human_user_id(), "user-alice");
  EXPECT_EQ(execution.context().now().seconds(), 1786438800);
  EXPECT_EQ(execution.message().created_at().seconds(), 1786438800);
  EXPECT_THAT(execution.tools(),
              ::testing::ElementsAre("files.read", "files.create", "sharedos.escalate"));
}

TEST(TurnTest, TakesTheRequiredAuthorityOfADenial) {
  protocol::v1::ToolResult denial;
  denial.set_status(protocol::v1::TOOL_RESULT_STATUS_DENIED);
  denial.mutable_error()->set_code("no_matching_grant");
  EXPECT_EQ(RequiredAuthority(denial).status().code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(
                  R"({"requiredAuthority": {"id": "capreq-1", "namespaceId": "world-demo",
                      "capabilities": [{"resource": {"namespace": "files",
                                                     "path": ["Workspace", "summary.txt"]},
                                        "actions": ["create"]}]}})",
                  denial.mutable_error()->mutable_details())
                  .ok());
  auto required = RequiredAuthority(denial);
  ASSERT_TRUE(required.ok()) << required.status();
  EXPECT_EQ(required->id(), "capreq-1");
  ASSERT_EQ(required->capabilities_size(), 1);
  EXPECT_EQ(FormatCapability(required->capabilities(0)), "files:Workspace/summary.txt [create]");

  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(R"({"requiredAuthority": {"colour": 3}})",
                                                          denial.mutable_error()->mutable_details())
                  .ok());
  EXPECT_EQ(RequiredAuthority(denial).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(TurnTest, FindsTheEscalationOfTheTurn) {
  std::vector<grantstore::v1::EscalationRecord> records(3);
  records[0].set_escalation_id("esc-other-execution");
  records[0].set_execution_id("exec-0");
  records[0].mutable_escalation()->mutable_requested_authority()->set_id("capreq-1");
  records[1].set_escalation_id("esc-other-authority");
  records[1].set_execution_id("exec-1");
  records[1].mutable_escalation()->mutable_requested_authority()->set_id("capreq-2");
  records[2].set_escalation_id("esc-this");
  records[2].set_execution_id("exec-1");
  records[2].mutable_escalation()->mutable_requested_authority()->set_id("capreq-1");
  EXPECT_EQ(FindEscalationId(records, "exec-1", "capreq-1"), "esc-this");
  EXPECT_EQ(FindEscalationId(records, "exec-9", "capreq-1"), "");
}

TEST(TurnTest, RunsTheDemoTurnThroughTheEnvelopeClient) {
  envelope::client::FakeEnvelopeClient envelope;
  Clients clients;
  clients.envelope = &envelope;
  std::ostringstream out, err;
  EXPECT_EQ(RunCommand(Parsed({"turn"}), GlobalOptions(), clients, out, err), kExitOk) << err.str();
  EXPECT_THAT(out.str(), HasSubstr("turn turn-1 opened (execution exec-demo-"));
  EXPECT_THAT(out.str(), HasSubstr("files.read Workspace/notes.txt: succeeded\n"));
  EXPECT_THAT(out.str(), HasSubstr("files.create Workspace/summary.txt: succeeded\n"));
  EXPECT_THAT(out.str(), HasSubstr("turn: succeeded\n"));
  ASSERT_EQ(envelope.open_requests().size(), 1u);
  EXPECT_EQ(envelope.open_requests()[0].runtime(), envelope::v1::RUNTIME_DRIVER);
  std::vector<std::string> tools;
  for (const auto& request : envelope.invoke_requests()) {
    EXPECT_EQ(request.turn_id(), "turn-1");
    tools.push_back(request.call().tool());
  }
  EXPECT_THAT(tools, ::testing::ElementsAre("files.read", "files.create"));
  ASSERT_EQ(envelope.finish_requests().size(), 1u);
  EXPECT_TRUE(envelope.finish_requests()[0].has_complete());
  EXPECT_TRUE(envelope.cancel_requests().empty());
}

TEST(TurnTest, AnOffScriptTurnIsCancelled) {
  envelope::client::FakeEnvelopeClient envelope;
  envelope::v1::InvokeToolResponse refused;
  refused.mutable_result()->set_status(protocol::v1::TOOL_RESULT_STATUS_DENIED);
  refused.mutable_result()->mutable_error()->set_code("tool_unavailable");
  envelope.SetInvokeTool("files.read", refused);
  Clients clients;
  clients.envelope = &envelope;
  std::ostringstream out, err;
  EXPECT_EQ(RunCommand(Parsed({"turn"}), GlobalOptions(), clients, out, err), kExitFailed);
  EXPECT_THAT(out.str(), HasSubstr("files.read Workspace/notes.txt: denied tool_unavailable"));
  EXPECT_THAT(out.str(), HasSubstr("turn: cancelled (off script)"));
  ASSERT_EQ(envelope.cancel_requests().size(), 1u);
  EXPECT_EQ(envelope.cancel_requests()[0].turn_id(), "turn-1");
  EXPECT_TRUE(envelope.finish_requests().empty());
}

TEST(TurnTest, AnEnvelopeErrorIsPrintedWithItsCode) {
  envelope::client::FakeEnvelopeClient envelope;
  envelope.SetOpenTurn(absl::PermissionDeniedError("namespace world-demo outside scope"));
  Clients clients;
  clients.envelope = &envelope;
  std::ostringstream out, err;
  EXPECT_EQ(RunCommand(Parsed({"turn"}), GlobalOptions(), clients, out, err), kExitFailed);
  EXPECT_EQ(err.str(), "sharedosctl: PERMISSION_DENIED: namespace world-demo outside scope\n");
  EXPECT_TRUE(envelope.invoke_requests().empty());
}

}  // namespace
}  // namespace sharedos::sharedosctl
