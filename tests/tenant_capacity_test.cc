// Issue 34, "no tenant starves another", against sharedosd --demo as a real process, one test per
// observation of the issue, each through gRPC or HTTP from outside the process (and each failing
// on the main before the issue's change):
//   1. a host that fills its open-turn quota gets RESOURCE_EXHAUSTED naming the quota and its
//      flag; another host keeps opening turns; turns ended at admission do not count;
//   2. refused calls past a turn's budget are recorded up to a bound, then the turn ends and later
//      calls leave no record;
//   3. files.grep's amplified answer is refused tool_execution_failed, cause result_too_large,
//      before it is built;
//   4. slow clients on the MCP door do not stall a harness (a real slow client), and long-polls
//      are bounded per principal;
//   5. an owner's files are bounded (quota_exceeded);
//   6. console sessions are bounded per principal.

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "sharedos/audit/v1/audit.grpc.pb.h"
#include "sharedos/envelope/v1/envelope.grpc.pb.h"
#include "sharedos/grantstore/v1/grantstore.grpc.pb.h"
#include "tests/testing/demo_world.h"
#include "tests/testing/deployment.h"
#include "tests/testing/process.h"
#include "tests/testing/raw_connection.h"

namespace sharedos {
namespace {

namespace demo = ::sharedos::testing::demo;
namespace ev1 = ::sharedos::envelope::v1;
namespace pb = ::sharedos::protocol::v1;
using ::sharedos::testing::SharedosdDeployment;
using ::testing::HasSubstr;

template <typename T>
T Parse(const std::string& text) {
  T message;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &message)) << text;
  return message;
}

using ::sharedos::testing::RawConnection;

class TenantCapacityTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    SharedosdDeployment::Options options;
    options.data_dir = sharedos::testing::TempPath("sharedosd-tenant-capacity");
    data_dir_ = new std::string(options.data_dir);
    options.demo = true;
    options.mcp = true;
    options.args = {"--max_open_turns_per_host=5",
                    "--max_long_polls_per_principal=2",
                    "--files_max_owner_bytes=65536",
                    "--mcp_read_timeout=2s",
                    "--mcp_max_connections_per_address=200",
                    "--max_tool_result_bytes=1048576",
                    "--console_port=0"};
    auto started = SharedosdDeployment::Start(std::move(options));
    ASSERT_TRUE(started.ok()) << started.status();
    sharedosd_ = started->release();
    channel_ = new std::shared_ptr<grpc::Channel>(
        grpc::CreateChannel(sharedosd_->address(), grpc::InsecureChannelCredentials()));
  }
  static void TearDownTestSuite() {
    delete channel_;
    channel_ = nullptr;
    if (sharedosd_ != nullptr) {
      EXPECT_TRUE(sharedosd_->Stop().ok());
      delete sharedosd_;
      sharedosd_ = nullptr;
    }
  }

  static std::unique_ptr<grpc::ClientContext> As(const std::string& token, int seconds = 30) {
    auto context = std::make_unique<grpc::ClientContext>();
    context->AddMetadata("authorization", "Bearer " + token);
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(seconds));
    return context;
  }
  std::unique_ptr<ev1::Envelope::Stub> Envelope() { return ev1::Envelope::NewStub(*channel_); }

  // A running demo turn opened by `token`; its id.
  std::string OpenRunning(const std::string& token, const std::string& execution_id,
                          int max_tool_calls = 0, ev1::Runtime runtime = ev1::RUNTIME_DRIVER,
                          ev1::OpenTurnResponse* opened_out = nullptr) {
    ev1::OpenTurnRequest request =
        demo::TurnRequest(execution_id, "trace-" + execution_id, runtime);
    request.mutable_execution_request()->add_tools("files.grep");
    if (max_tool_calls > 0) {
      request.mutable_execution_request()->mutable_options()->set_max_tool_calls(max_tool_calls);
    }
    ev1::OpenTurnResponse opened;
    grpc::Status status = Envelope()->OpenTurn(As(token).get(), request, &opened);
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_FALSE(opened.has_result()) << opened.result().DebugString();
    if (opened_out != nullptr) *opened_out = opened;
    return opened.turn_id();
  }

  pb::ToolResult Call(const std::string& token, const std::string& turn_id,
                      const std::string& execution_id, const std::string& tool,
                      const std::string& arguments_json) {
    ev1::InvokeToolRequest invoke;
    invoke.set_turn_id(turn_id);
    pb::ToolCall* call = invoke.mutable_call();
    call->set_id(absl::StrCat("call-", ++calls_));
    call->set_tool(tool);
    call->set_trace_id("trace-" + execution_id);
    EXPECT_TRUE(
        google::protobuf::util::JsonStringToMessage(arguments_json, call->mutable_arguments())
            .ok());
    call->mutable_requested_at()->set_seconds(demo::kNowSeconds + 1);
    ev1::InvokeToolResponse invoked;
    grpc::Status status = Envelope()->InvokeTool(As(token).get(), invoke, &invoked);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return invoked.result();
  }

  void Cancel(const std::string& token, const std::string& turn_id) {
    ev1::CancelTurnRequest cancel;
    cancel.set_turn_id(turn_id);
    ev1::CancelTurnResponse cancelled;
    EXPECT_TRUE(Envelope()->CancelTurn(As(token).get(), cancel, &cancelled).ok());
  }

  // The audit records of one trace.
  std::vector<pb::AuditEvent> Trace(const std::string& trace_id) {
    auto audit = audit::v1::AuditLog::NewStub(*channel_);
    audit::v1::QueryRequest query;
    query.mutable_filter()->set_trace_id(trace_id);
    query.set_limit(1000);
    audit::v1::QueryResponse answered;
    grpc::Status status = audit->Query(As(sharedosd_->admin_token()).get(), query, &answered);
    EXPECT_TRUE(status.ok()) << status.error_message();
    std::vector<pb::AuditEvent> events;
    for (const auto& record : answered.records()) events.push_back(record.event());
    return events;
  }

  // Issues a host credential for world-demo's alice; answers its secret.
  std::string IssueHost(const std::string& id) {
    auto grants = grantstore::v1::GrantStore::NewStub(*channel_);
    grantstore::v1::IssueCredentialResponse issued;
    grpc::Status status = grants->IssueCredential(
        As(sharedosd_->admin_token()).get(),
        Parse<grantstore::v1::IssueCredentialRequest>(
            absl::StrCat("credential_id: '", id, "' principal { service_id: '", id,
                         "' } role: CREDENTIAL_ROLE_HOST scope { namespaces: 'world-demo' owners: "
                         "'human:user-alice' }")),
        &issued);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return issued.secret();
  }

  // The console's port, from the line sharedosd prints ("sharedosd console on <url>").
  static int ConsolePort() {
    const std::string output = sharedosd_->output();
    const size_t at = output.find("sharedosd console on ");
    if (at == std::string::npos) return -1;
    const std::string line = output.substr(at, output.find('\n', at) - at);
    const size_t colon = line.rfind(':');
    return std::stoi(line.substr(colon + 1));
  }

  static SharedosdDeployment* sharedosd_;
  static std::shared_ptr<grpc::Channel>* channel_;
  static std::string* data_dir_;
  int calls_ = 0;
};

SharedosdDeployment* TenantCapacityTest::sharedosd_ = nullptr;
std::shared_ptr<grpc::Channel>* TenantCapacityTest::channel_ = nullptr;
std::string* TenantCapacityTest::data_dir_ = nullptr;

// Observation 1.
TEST_F(TenantCapacityTest, AHostAtItsOpenTurnQuotaIsRefusedNamingItAndOthersKeepOpening) {
  const std::string bob = IssueHost("host-bob");
  const std::string alice = IssueHost("host-alice");
  // Turns that end at admission (actor_mismatch) hold no open slot, whatever their number.
  for (int i = 0; i < 300; ++i) {
    ev1::OpenTurnRequest request = demo::TurnRequest(absl::StrCat("flood-", i), "trace-flood");
    request.mutable_execution_request()->mutable_context()->mutable_actor()->set_agent_id("other");
    ev1::OpenTurnResponse opened;
    ASSERT_TRUE(Envelope()->OpenTurn(As(bob).get(), request, &opened).ok());
    ASSERT_TRUE(opened.has_result());
    EXPECT_EQ(opened.result().error().code(), "actor_mismatch");
  }
  std::vector<std::string> held;
  for (int i = 0; i < 5; ++i) held.push_back(OpenRunning(bob, absl::StrCat("bob-", i)));
  ev1::OpenTurnResponse refused;
  grpc::Status status =
      Envelope()->OpenTurn(As(bob).get(), demo::TurnRequest("bob-5", "trace-bob-5"), &refused);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(), HasSubstr("host credential \"host-bob\": 5 of 5"));
  EXPECT_THAT(status.error_message(), HasSubstr("--max_open_turns_per_host raises it"));
  // Alice's host is not affected.
  const std::string alices = OpenRunning(alice, "alice-0");
  EXPECT_FALSE(alices.empty());
  Cancel(alice, alices);
  // A turn that ends frees its slot.
  Cancel(bob, held.back());
  held.pop_back();
  held.push_back(OpenRunning(bob, "bob-6"));
  for (const std::string& turn : held) Cancel(bob, turn);
}

// Observation 2.
TEST_F(TenantCapacityTest, RefusalsPastTheBudgetAreBoundedThenTheTurnEnds) {
  const std::string host = sharedosd_->host_token();
  const std::string turn = OpenRunning(host, "budget", /*max_tool_calls=*/1);
  EXPECT_EQ(Call(host, turn, "budget", "files.read", R"({"path": "Workspace/notes.txt"})").status(),
            pb::TOOL_RESULT_STATUS_SUCCEEDED);
  int refused = 0;
  int ended = 0;
  for (int i = 0; i < 500; ++i) {
    ev1::InvokeToolRequest invoke;
    invoke.set_turn_id(turn);
    invoke.mutable_call()->set_id(absl::StrCat("over-", i));
    invoke.mutable_call()->set_tool("files.read");
    invoke.mutable_call()->set_trace_id("trace-budget");
    invoke.mutable_call()->mutable_arguments();
    invoke.mutable_call()->mutable_requested_at()->set_seconds(demo::kNowSeconds + 1);
    ev1::InvokeToolResponse invoked;
    grpc::Status status = Envelope()->InvokeTool(As(host).get(), invoke, &invoked);
    if (status.ok()) {
      EXPECT_EQ(invoked.result().error().code(), "tool_call_limit_exceeded");
      ++refused;
    } else {
      EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION)
          << status.error_message();
      ++ended;
    }
  }
  EXPECT_EQ(refused, 33);  // 32 recorded, the 33rd ended the turn
  EXPECT_EQ(ended, 467);
  const std::vector<pb::AuditEvent> records = Trace("trace-budget");
  // lease, admission, listing, the read's decision and tool.invoked, 32 refusals, turn.ended, …
  EXPECT_LT(records.size(), 50u);
  const pb::AuditEvent& last = records.back();
  EXPECT_EQ(last.type(), pb::AUDIT_EVENT_TYPE_TURN_ENDED);
  EXPECT_EQ(last.reason(), "tool_call_limit_exceeded");
  EXPECT_EQ(last.cause(), "refusals_exhausted");
  ev1::GetTurnRequest get;
  get.set_turn_id(turn);
  ev1::GetTurnResponse got;
  ASSERT_TRUE(Envelope()->GetTurn(As(host).get(), get, &got).ok());
  EXPECT_LT(got.result().events_size(), 80);
}

// Observation 3.
TEST_F(TenantCapacityTest, AnAmplifiedGrepIsRefusedBeforeItIsBuilt) {
  // Grep on alice's Workspace, granted beside the demo grant.
  pb::CapabilityGrant grant = demo::Grant();
  grant.set_id("grant-demo-grep");
  for (pb::Capability& capability : *grant.mutable_capabilities()) {
    if (capability.resource().namespace_() == "files") capability.add_actions("grep");
  }
  grantstore::v1::IssueGrantRequest issue;
  *issue.mutable_grant() = grant;
  grantstore::v1::IssueGrantResponse issued;
  auto grants = grantstore::v1::GrantStore::NewStub(*channel_);
  grpc::Status granted = grants->IssueGrant(As(sharedosd_->admin_token()).get(), issue, &issued);
  ASSERT_TRUE(granted.ok()) << granted.error_message();
  // ~60 KB of matching lines: every match with 100 lines of context each way is ~12 MB.
  const std::string host = sharedosd_->host_token();
  std::string lines;
  for (int i = 0; i < 300; ++i) lines += "match " + std::string(200, 'x') + "\n";
  {
    std::string path = demo::WorkspaceRoot(*data_dir_ + "/files") + "/Workspace/big.txt";
    FILE* file = fopen(path.c_str(), "w");
    ASSERT_NE(file, nullptr) << path;
    fwrite(lines.data(), 1, lines.size(), file);
    fclose(file);
  }
  const std::string turn = OpenRunning(host, "grep");
  pb::ToolResult result = Call(
      host, turn, "grep", "files.grep",
      R"({"path": "Workspace", "pattern": "match", "contextBefore": 100, "contextAfter": 100})");
  EXPECT_EQ(result.status(), pb::TOOL_RESULT_STATUS_FAILED) << result.DebugString();
  EXPECT_EQ(result.error().code(), "tool_execution_failed");
  EXPECT_EQ(result.error().details().fields().at("cause").string_value(), "result_too_large");
  EXPECT_EQ(result.error().details().fields().at("limitBytes").number_value(), 1048576);
  std::vector<pb::AuditEvent> records = Trace("trace-grep");
  bool recorded = false;
  for (const pb::AuditEvent& event : records) {
    if (event.type() == pb::AUDIT_EVENT_TYPE_TOOL_INVOKED && event.cause() == "result_too_large") {
      recorded = true;
    }
  }
  EXPECT_TRUE(recorded);
  // The same grep without context fits.
  EXPECT_EQ(Call(host, turn, "grep", "files.grep", R"({"path": "Workspace", "pattern": "match"})")
                .status(),
            pb::TOOL_RESULT_STATUS_SUCCEEDED);
  Cancel(host, turn);
}

// Observation 4: a real slow client — forty connections that send half a request and stall —
// does not stall a harness; the slow ones lose their connections at --mcp_read_timeout.
TEST_F(TenantCapacityTest, SlowClientsOnTheMcpDoorDoNotStallAHarness) {
  const std::string host = sharedosd_->host_token();
  ev1::OpenTurnResponse opened;
  const std::string turn = OpenRunning(host, "mcp", 0, ev1::RUNTIME_MCP, &opened);
  const std::string url = opened.mcp().url();
  const int port = std::stoi(url.substr(url.rfind(':') + 1));
  std::vector<std::unique_ptr<RawConnection>> slow;
  for (int i = 0; i < 40; ++i) {
    slow.push_back(std::make_unique<RawConnection>(port));
    ASSERT_TRUE(slow.back()->connected());
    ASSERT_TRUE(slow.back()->Send("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthoriz"));
  }
  const std::string body = R"({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}})";
  const absl::Time start = absl::Now();
  RawConnection harness(port);
  ASSERT_TRUE(harness.Send(absl::StrCat(
      "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ", opened.mcp().token(),
      "\r\nContent-Type: application/json\r\nAccept: application/json\r\nMCP-Protocol-Version: "
      "2025-06-18\r\nContent-Length: ",
      body.size(), "\r\n\r\n", body)));
  const std::string answer = harness.Receive(absl::Seconds(5));
  EXPECT_THAT(answer, HasSubstr("HTTP/1.1 200"));
  EXPECT_THAT(answer, HasSubstr("files.read"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
  for (auto& connection : slow) {
    connection->Receive(absl::Seconds(5));
    EXPECT_TRUE(connection->closed());
  }
  Cancel(host, turn);
}

// Observation 4: long-polls are bounded per principal (--max_long_polls_per_principal=2).
TEST_F(TenantCapacityTest, LongPollsAreBoundedPerPrincipal) {
  const std::string host = sharedosd_->host_token();
  const std::string turn = OpenRunning(host, "watch");
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::unique_ptr<grpc::ClientReader<ev1::WatchTurnResponse>>> watchers;
  for (int i = 0; i < 2; ++i) {
    contexts.push_back(As(host));
    ev1::WatchTurnRequest watch;
    watch.set_turn_id(turn);
    watchers.push_back(Envelope()->WatchTurn(contexts.back().get(), watch));
    ev1::WatchTurnResponse first;
    ASSERT_TRUE(watchers.back()->Read(&first));  // turn.started: the watch is being served
  }
  auto refused_context = As(host);
  ev1::WatchTurnRequest watch;
  watch.set_turn_id(turn);
  auto refused = Envelope()->WatchTurn(refused_context.get(), watch);
  ev1::WatchTurnResponse ignored;
  EXPECT_FALSE(refused->Read(&ignored));
  grpc::Status status = refused->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(), HasSubstr("--max_long_polls_per_principal raises it"));
  Cancel(host, turn);
  for (auto& watcher : watchers) {
    while (watcher->Read(&ignored)) {
    }
    EXPECT_TRUE(watcher->Finish().ok());
  }
}

// Observation 5.
TEST_F(TenantCapacityTest, AnOwnersFilesAreBoundedByItsQuota) {
  const std::string host = sharedosd_->host_token();
  const std::string turn = OpenRunning(host, "quota", /*max_tool_calls=*/100);
  const std::string content(16000, 'q');
  std::string last_code;
  int created = 0;
  for (int i = 0; i < 10 && last_code.empty(); ++i) {
    pb::ToolResult result = Call(
        host, turn, "quota", "files.create",
        absl::StrCat(R"({"path": "Scratch/fill-)", i, R"(.txt", "content": ")", content, R"("})"));
    if (result.status() == pb::TOOL_RESULT_STATUS_SUCCEEDED) {
      ++created;
    } else {
      last_code = result.error().code();
    }
  }
  EXPECT_EQ(last_code, "quota_exceeded");
  EXPECT_LE(created, 4);  // 65536 bytes, the demo's notes included
  Cancel(host, turn);
}

// Observation 6: a principal signing in again and again holds at most its share of console
// sessions (its oldest end), so it never takes them all.
TEST_F(TenantCapacityTest, ConsoleSessionsAreBoundedPerPrincipal) {
  const int port = ConsolePort();
  ASSERT_GT(port, 0) << sharedosd_->output();
  std::vector<std::string> sessions;
  for (int i = 0; i < 8; ++i) {
    RawConnection form(port);
    ASSERT_TRUE(form.Send("GET /signin HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"));
    const std::string page = form.Receive(absl::Seconds(5));
    const size_t at = page.find("sos_signin=");
    ASSERT_NE(at, std::string::npos) << page;
    const std::string signin = page.substr(at + 11, page.find(';', at) - at - 11);
    const std::string body = absl::StrCat("signin=", signin, "&secret=", sharedosd_->admin_token());
    RawConnection post(port);
    ASSERT_TRUE(post.Send(absl::StrCat(
        "POST /signin HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nCookie: sos_signin=",
        signin, "\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ",
        body.size(), "\r\n\r\n", body)));
    const std::string answer = post.Receive(absl::Seconds(5));
    const size_t session_at = answer.find("sos_session=");
    ASSERT_NE(session_at, std::string::npos) << answer;
    sessions.push_back(
        answer.substr(session_at + 12, answer.find(';', session_at) - session_at - 12));
  }
  auto signed_in = [&](const std::string& session) {
    RawConnection get(port);
    EXPECT_TRUE(
        get.Send(absl::StrCat("GET /queue HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: "
                              "close\r\nCookie: sos_session=",
                              session, "\r\n\r\n")));
    return absl::StartsWith(get.Receive(absl::Seconds(5)), "HTTP/1.1 200");
  };
  // The default share is 4: the first four sessions have ended, the last four live.
  EXPECT_FALSE(signed_in(sessions[0]));
  EXPECT_FALSE(signed_in(sessions[3]));
  EXPECT_TRUE(signed_in(sessions[4]));
  EXPECT_TRUE(signed_in(sessions[7]));
}

}  // namespace
}  // namespace sharedos
