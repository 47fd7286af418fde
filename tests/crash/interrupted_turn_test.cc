// Turns open at a crash (issue 22, ADR 0009): a turn running when its envelope is killed with
// SIGKILL is, once the envelope is started again, ended failed operation_aborted (fail closed):
// GetTurn answers that result, and the audit log holds exactly one turn.ended for its execution
// (outcome interrupted) — also after the envelope is killed and restarted again. Run against the
// four services as processes (the envelope killed alone) and against one sharedosd (killed,
// started again on the same data directory). An MCP turn whose harness had called
// sharedos.escalate (the latch answered) when its envelope was killed ends escalated on restart:
// the escalation pending for its reviewer at the grant store, naming the requirement the ask
// named (docs/adr/0018), one escalation.requested and one turn.ended in the log — also after a
// second kill and restart — and the chain verified.
#include <httplib.h>
#include <signal.h>

#include <cstdio>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "sharedos/audit/v1/audit.grpc.pb.h"
#include "sharedos/envelope/v1/envelope.grpc.pb.h"
#include "sharedos/grantstore/v1/grantstore.grpc.pb.h"
#include "tests/crash/campaign.h"
#include "tests/testing/demo_world.h"
#include "tests/testing/deployment.h"
#include "tests/testing/process.h"

namespace sharedos::crash {
namespace {

namespace demo = ::sharedos::testing::demo;
namespace pb = ::sharedos::protocol::v1;
using ::sharedos::testing::FourProcessDeployment;
using ::sharedos::testing::SharedosdDeployment;
using Service = FourProcessDeployment::Service;

// Opens the demo turn `execution` as `host` and answers its id (running).
std::string OpenRunningTurn(const std::string& envelope, const std::string& host,
                            const std::string& execution) {
  auto stub = envelope::v1::Envelope::NewStub(Connect(envelope));
  envelope::v1::OpenTurnResponse opened;
  grpc::Status status = stub->OpenTurn(As(host, absl::Seconds(20)).get(),
                                       demo::TurnRequest(execution, "trace-crash"), &opened);
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_FALSE(opened.has_result()) << opened.result().DebugString();
  return opened.turn_id();
}

// GetTurn of `turn_id` after the restart: ended failed operation_aborted, fail closed.
void ExpectInterrupted(const std::string& envelope, const std::string& host,
                       const std::string& turn_id, const std::string& execution) {
  auto stub = envelope::v1::Envelope::NewStub(Connect(envelope));
  envelope::v1::GetTurnRequest get;
  get.set_turn_id(turn_id);
  envelope::v1::GetTurnResponse got;
  grpc::Status status = stub->GetTurn(As(host, absl::Seconds(10)).get(), get, &got);
  ASSERT_TRUE(status.ok()) << status.error_code() << " " << status.error_message();
  EXPECT_EQ(got.result().execution_id(), execution);
  EXPECT_EQ(got.result().status(), pb::EXECUTION_STATUS_FAILED);
  EXPECT_EQ(got.result().error().code(), "operation_aborted");
  EXPECT_FALSE(got.result().error().retryable());
  const auto& details = got.result().error().details().fields();
  ASSERT_TRUE(details.contains("failClosed"));
  EXPECT_TRUE(details.at("failClosed").bool_value());
  EXPECT_TRUE(got.result().has_completed_at());
}

TEST(InterruptedTurnTest, AnEnvelopeKilledWithATurnRunningEndsItOnRestartOnce) {
  auto options = DemoFourProcessOptions(MakeDir("four"));
  ASSERT_TRUE(options.ok()) << options.status();
  auto started = FourProcessDeployment::Start(*std::move(options));
  ASSERT_TRUE(started.ok()) << started.status();
  FourProcessDeployment& four = **started;
  IssueBoundedGrant(four.grantstore_address(), four.admin_token());
  ASSERT_FALSE(::testing::Test::HasFatalFailure());

  const std::string execution = "exec-crash-four";
  const std::string turn_id =
      OpenRunningTurn(four.envelope_address(), four.host_token(), execution);
  ASSERT_FALSE(turn_id.empty());
  ASSERT_TRUE(four.Kill(Service::kEnvelope).ok());
  absl::Status restarted = four.Restart(Service::kEnvelope);
  ASSERT_TRUE(restarted.ok()) << restarted;
  ExpectInterrupted(four.envelope_address(), four.host_token(), turn_id, execution);
  EXPECT_EQ(InterruptedTurnEndedCount(four.audit_address(), four.admin_token(), execution, 1), 1);

  // Killed again and restarted: nothing is ended twice.
  ASSERT_TRUE(four.Kill(Service::kEnvelope).ok());
  restarted = four.Restart(Service::kEnvelope);
  ASSERT_TRUE(restarted.ok()) << restarted;
  absl::SleepFor(absl::Seconds(3));  // time for a second record to be delivered, were there one
  EXPECT_EQ(InterruptedTurnEndedCount(four.audit_address(), four.admin_token(), execution, 1), 1);
  EXPECT_TRUE(four.StopAll().ok());
}

// The records of `type` for `execution`, once `want` are in or 30 s pass.
std::vector<pb::AuditEvent> Records(const std::string& audit_address, const std::string& admin,
                                    const std::string& execution, pb::AuditEventType type,
                                    int want) {
  auto audit = audit::v1::AuditLog::NewStub(Connect(audit_address));
  const absl::Time give_up = absl::Now() + absl::Seconds(30);
  std::vector<pb::AuditEvent> events;
  for (;;) {
    audit::v1::QueryRequest query;
    query.mutable_filter()->set_execution_id(execution);
    query.mutable_filter()->set_type(type);
    query.set_limit(100);
    audit::v1::QueryResponse page;
    grpc::Status status = audit->Query(As(admin, absl::Seconds(10)).get(), query, &page);
    EXPECT_TRUE(status.ok()) << status.error_message();
    events.clear();
    for (const auto& record : page.records()) events.push_back(record.event());
    if (static_cast<int>(events.size()) >= want || absl::Now() > give_up) return events;
    absl::SleepFor(absl::Milliseconds(200));
  }
}

// The harness's tools/call of `tool` with `arguments` on the turn's MCP endpoint (raw Streamable
// HTTP, as envelope_svc/mcp's transport test speaks it): the CallToolResult.
nlohmann::json CallTool(const std::string& url, const std::string& token, const std::string& tool,
                        const nlohmann::json& arguments) {
  const size_t path = url.find('/', url.find("://") + 3);
  EXPECT_NE(path, std::string::npos) << url;
  if (path == std::string::npos) return nlohmann::json();
  httplib::Client http(url.substr(0, path));
  http.set_read_timeout(20, 0);
  const httplib::Headers headers = {{"Authorization", "Bearer " + token},
                                    {"Accept", "application/json, text/event-stream"},
                                    {"MCP-Protocol-Version", "2025-11-25"}};
  const nlohmann::json body = {{"jsonrpc", "2.0"},
                               {"id", 1},
                               {"method", "tools/call"},
                               {"params", {{"name", tool}, {"arguments", arguments}}}};
  auto answered = http.Post(url.substr(path), headers, body.dump(), "application/json");
  EXPECT_TRUE(answered) << httplib::to_string(answered.error());
  if (!answered) return nlohmann::json();
  EXPECT_EQ(answered->status, 200) << answered->body;
  const nlohmann::json answer = nlohmann::json::parse(answered->body, nullptr, false);
  EXPECT_TRUE(answer.is_object() && answer.contains("result")) << answered->body;
  return answer.is_object() ? answer.value("result", nlohmann::json()) : nlohmann::json();
}

// The harness's sharedos.escalate, naming `requirement` (a capreq- id) when not empty: answered
// succeeded by the latch.
void AskForAHuman(const std::string& url, const std::string& token, const std::string& reason,
                  const std::string& requirement = "") {
  nlohmann::json arguments = {{"reason", reason}};
  if (!requirement.empty()) arguments["requirement"] = requirement;
  const nlohmann::json result = CallTool(url, token, "sharedos.escalate", arguments);
  ASSERT_TRUE(result.is_object()) << result.dump();
  EXPECT_FALSE(result.value("isError", true)) << result.dump();
  // The latch's output {escalated, reason, note}, as the text content a harness reads.
  const nlohmann::json content = result.value("content", nlohmann::json::array());
  ASSERT_TRUE(content.is_array() && !content.empty()) << result.dump();
  const nlohmann::json output =
      nlohmann::json::parse(content[0].value("text", std::string()), nullptr, false);
  EXPECT_TRUE(output.is_object() && output.value("escalated", false)) << result.dump();
}

TEST(InterruptedTurnTest, AnEnvelopeKilledAfterTheLatchAnsweredEndsTheTurnEscalatedOnce) {
  auto options = DemoFourProcessOptions(MakeDir("latched"));
  ASSERT_TRUE(options.ok()) << options.status();
  options->mcp = true;
  auto started = FourProcessDeployment::Start(*std::move(options));
  ASSERT_TRUE(started.ok()) << started.status();
  FourProcessDeployment& four = **started;
  IssueBoundedGrant(four.grantstore_address(), four.admin_token());
  ASSERT_FALSE(::testing::Test::HasFatalFailure());

  const std::string execution = "exec-crash-latched";
  auto envelope = envelope::v1::Envelope::NewStub(Connect(four.envelope_address()));
  envelope::v1::OpenTurnResponse opened;
  grpc::Status status = envelope->OpenTurn(
      As(four.host_token(), absl::Seconds(20)).get(),
      demo::TurnRequest(execution, "trace-latched", envelope::v1::RUNTIME_MCP), &opened);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_FALSE(opened.has_result()) << opened.result().DebugString();
  ASSERT_FALSE(opened.mcp().url().empty());
  // Denied no_matching_grant (the grant creates under Scratch only): the refusal describes the
  // authority a reviewer would grant, and the ask names it (docs/adr/0018).
  const nlohmann::json denied =
      CallTool(opened.mcp().url(), opened.mcp().token(), "files.create",
               {{"path", "Workspace/summary.txt"}, {"content", "summary"}});
  ASSERT_TRUE(denied.is_object() && denied.value("isError", false)) << denied.dump();
  const nlohmann::json meta = denied.value("_meta", nlohmann::json::object());
  ASSERT_EQ(meta.value("sharedos/code", std::string()), "no_matching_grant") << denied.dump();
  const std::string requirement =
      meta.value("sharedos/requiredAuthority", nlohmann::json::object()).value("id", "");
  ASSERT_TRUE(absl::StartsWith(requirement, "capreq-")) << denied.dump();
  AskForAHuman(opened.mcp().url(), opened.mcp().token(), "Please approve writing the summary.",
               requirement);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());

  // Killed once the ask was answered, and again after it was recovered.
  std::string escalation_id;
  for (int restart = 0; restart < 2; ++restart) {
    ASSERT_TRUE(four.Kill(Service::kEnvelope).ok());
    absl::Status restarted = four.Restart(Service::kEnvelope);
    ASSERT_TRUE(restarted.ok()) << restarted;
    envelope = envelope::v1::Envelope::NewStub(Connect(four.envelope_address()));
    envelope::v1::GetTurnRequest get;
    get.set_turn_id(opened.turn_id());
    envelope::v1::GetTurnResponse got;
    status = envelope->GetTurn(As(four.host_token(), absl::Seconds(10)).get(), get, &got);
    if (restart == 0) {
      ASSERT_TRUE(status.ok()) << status.error_message();
      EXPECT_EQ(got.result().status(), pb::EXECUTION_STATUS_ESCALATED)
          << got.result().DebugString();
      EXPECT_EQ(got.result().metadata().fields().at("harnessOutcome").string_value(),
                "interrupted");
      EXPECT_EQ(got.result().escalation().reviewer().human_user_id(), demo::kOwner);
      // The recovered escalation names the requirement the ask named, as a live ending does.
      EXPECT_EQ(got.result().escalation().requested_authority().id(), requirement);
      EXPECT_EQ(got.result().metadata().fields().at("escalationRequirement").string_value(),
                requirement);
      ASSERT_EQ(got.described_authorities_size(), 1);
      EXPECT_EQ(got.described_authorities(0).id(), requirement);
      escalation_id = got.escalation_id();
      ASSERT_FALSE(escalation_id.empty());
    } else {
      absl::SleepFor(absl::Seconds(3));  // time for a second record to arrive, were there one
    }
  }

  // Pending for its reviewer, once.
  auto grants = grantstore::v1::GrantStore::NewStub(Connect(four.grantstore_address()));
  grantstore::v1::ListEscalationsRequest list;
  list.set_namespace_id(demo::kNamespace);
  grantstore::v1::ListEscalationsResponse listed;
  status = grants->ListEscalations(As(four.admin_token(), absl::Seconds(10)).get(), list, &listed);
  ASSERT_TRUE(status.ok()) << status.error_message();
  int of_turn = 0;
  for (const auto& record : listed.escalations()) {
    if (record.execution_id() != execution) continue;
    ++of_turn;
    EXPECT_EQ(record.escalation_id(), escalation_id);
    EXPECT_EQ(record.status(), grantstore::v1::ESCALATION_RECORD_STATUS_PENDING);
    EXPECT_EQ(record.escalation().reviewer().human_user_id(), demo::kOwner);
    EXPECT_EQ(record.escalation().requested_authority().id(), requirement);
    ASSERT_EQ(record.escalation().requested_authority().capabilities_size(), 1);
    EXPECT_EQ(record.escalation().requested_authority().capabilities(0).actions(0), "create");
  }
  EXPECT_EQ(of_turn, 1);

  const auto requested = Records(four.audit_address(), four.admin_token(), execution,
                                 pb::AUDIT_EVENT_TYPE_ESCALATION_REQUESTED, 1);
  ASSERT_EQ(requested.size(), 1u);
  EXPECT_EQ(requested[0].requested_authority().id(), requirement);
  const auto ended = Records(four.audit_address(), four.admin_token(), execution,
                             pb::AUDIT_EVENT_TYPE_TURN_ENDED, 1);
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].outcome(), pb::AUDIT_OUTCOME_ESCALATED);
  ExpectAuditVerified(four.audit_address(), four.admin_token());
  EXPECT_TRUE(four.StopAll().ok());
}

TEST(InterruptedTurnTest, SharedosdKilledWithATurnRunningEndsItOnRestartOnce) {
  const std::string dir = MakeDir("sharedosd");
  SharedosdDeployment::Options options;
  options.data_dir = dir + "/data";
  options.files_root = dir + "/files";
  ASSERT_TRUE(demo::WriteWorkspace(options.files_root).ok());
  auto start = [&]() -> std::unique_ptr<SharedosdDeployment> {
    auto started = SharedosdDeployment::Start(options);
    EXPECT_TRUE(started.ok()) << started.status();
    return started.ok() ? *std::move(started) : nullptr;
  };
  std::unique_ptr<SharedosdDeployment> sharedosd = start();
  ASSERT_NE(sharedosd, nullptr);
  const std::string admin = sharedosd->admin_token();
  const std::string host = sharedosd->host_token();
  IssueBoundedGrant(sharedosd->address(), admin);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());

  const std::string execution = "exec-crash-sharedosd";
  const std::string turn_id = OpenRunningTurn(sharedosd->address(), host, execution);
  ASSERT_FALSE(turn_id.empty());
  ASSERT_EQ(kill(sharedosd->pid(), SIGKILL), 0);
  sharedosd.reset();  // reaps the killed process
  sharedosd = start();
  ASSERT_NE(sharedosd, nullptr);
  ExpectInterrupted(sharedosd->address(), host, turn_id, execution);
  EXPECT_EQ(InterruptedTurnEndedCount(sharedosd->address(), admin, execution, 1), 1);

  ASSERT_EQ(kill(sharedosd->pid(), SIGKILL), 0);
  sharedosd.reset();
  sharedosd = start();
  ASSERT_NE(sharedosd, nullptr);
  absl::SleepFor(absl::Seconds(3));
  EXPECT_EQ(InterruptedTurnEndedCount(sharedosd->address(), admin, execution, 1), 1);
  EXPECT_TRUE(sharedosd->Stop().ok());
}

}  // namespace
}  // namespace sharedos::crash
