// A dependency that hangs or answers slowly (issue 22): the four services as processes, each
// hop to audit_svc, grantstore_svc and authorizer_svc through a TCP proxy the test controls.
// With one dependency blackholed (connections open, nothing answered), a turn cannot open and a
// running turn's read through a grant bounded in uses cannot be allowed: every call is answered
// by the server itself — a fail-closed refusal with its code, well before the client's own
// deadline — and nothing is allowed. Slowed rather than stopped, calls are still answered within
// the services' deadlines. Back to normal, the next turn reads again.
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sharedos/audit/v1/audit.grpc.pb.h"
#include "sharedos/envelope/v1/envelope.grpc.pb.h"
#include "tests/crash/campaign.h"
#include "tests/testing/demo_world.h"
#include "tests/testing/deployment.h"
#include "tests/testing/process.h"
#include "tests/testing/tcp_proxy.h"

namespace sharedos::crash {
namespace {

namespace pb = ::sharedos::protocol::v1;
namespace demo = ::sharedos::testing::demo;
using ::sharedos::testing::FourProcessDeployment;
using ::sharedos::testing::TcpProxy;
using Service = FourProcessDeployment::Service;
using ::testing::AnyOf;
using ::testing::Eq;

// Far beyond the services' own deadlines (2 s per hop): a call that needs it has hung.
constexpr absl::Duration kClientDeadline = absl::Seconds(30);
// What an answer may take when a dependency hangs: a few hops of 2 s.
constexpr absl::Duration kAnsweredWithin = absl::Seconds(10);

// What one call came back with.
struct Outcome {
  bool transport_ok = false;
  bool allowed = false;
  std::string code;  // the refusal's reason code, or the gRPC error text
  absl::Duration took;
};

class SlowDependencyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string dir = MakeDir(
        std::string("slow-") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    ASSERT_TRUE(demo::WriteWorkspace(dir + "/files").ok());
    ASSERT_TRUE(
        sharedos::testing::WriteFile(dir + "/registry.textproto", demo::RegistryText()).ok());
    FourProcessDeployment::Options options;
    options.dir = dir;
    options.registry = dir + "/registry.textproto";
    options.files_root = dir + "/files";
    // One proxy per dependency, whichever services dial it.
    options.dial = [this](Service service, const std::string& address) {
      if (proxies_[static_cast<int>(service)])
        return proxies_[static_cast<int>(service)]->address();
      auto proxy = TcpProxy::Start(address);
      EXPECT_TRUE(proxy.ok()) << proxy.status();
      if (!proxy.ok()) return address;
      const std::string dialed = (*proxy)->address();
      proxies_[static_cast<int>(service)] = *std::move(proxy);
      return dialed;
    };
    auto started = FourProcessDeployment::Start(std::move(options));
    ASSERT_TRUE(started.ok()) << started.status();
    four_ = *std::move(started);
    IssueBoundedGrant(four_->grantstore_address(), four_->admin_token());
    envelope_ = envelope::v1::Envelope::NewStub(Connect(four_->envelope_address()));
  }

  void TearDown() override {
    for (auto& proxy : proxies_) {
      if (proxy) proxy->Set(TcpProxy::Mode::kPass);
    }
    envelope_.reset();
    if (four_) {
      EXPECT_TRUE(four_->StopAll().ok());
    }
  }

  TcpProxy& Proxy(Service service) { return *proxies_[static_cast<int>(service)]; }

  Outcome Open(const std::string& execution, std::string* turn_id) {
    Outcome outcome;
    const absl::Time start = absl::Now();
    envelope::v1::OpenTurnResponse opened;
    const grpc::Status status =
        envelope_->OpenTurn(As(four_->host_token(), kClientDeadline).get(),
                            demo::TurnRequest(execution, "trace-slow"), &opened);
    outcome.took = absl::Now() - start;
    outcome.transport_ok = status.ok();
    outcome.allowed = status.ok() && !opened.has_result();
    outcome.code = status.ok() ? opened.result().error().code() : status.error_message();
    if (outcome.allowed) *turn_id = opened.turn_id();
    return outcome;
  }

  Outcome Read(const std::string& turn_id, const std::string& call_id) {
    envelope::v1::InvokeToolRequest request;
    request.set_turn_id(turn_id);
    pb::ToolCall* call = request.mutable_call();
    call->set_id(call_id);
    call->set_tool("files.read");
    call->set_trace_id("trace-slow");
    (*call->mutable_arguments()->mutable_fields())["path"].set_string_value("Workspace/notes.txt");
    call->mutable_requested_at()->set_seconds(demo::kNowSeconds + 1);
    Outcome outcome;
    const absl::Time start = absl::Now();
    envelope::v1::InvokeToolResponse response;
    const grpc::Status status =
        envelope_->InvokeTool(As(four_->host_token(), kClientDeadline).get(), request, &response);
    outcome.took = absl::Now() - start;
    outcome.transport_ok = status.ok();
    outcome.allowed = status.ok() && response.result().status() == pb::TOOL_RESULT_STATUS_SUCCEEDED;
    outcome.code = status.ok() ? response.result().error().code() : status.error_message();
    return outcome;
  }

  // A refusal the server gave by itself, in time: a fail-closed code, or tool_unavailable (the
  // tool's availability could not be established; its record says why, ExpectRecordedFailClosed).
  static void ExpectRefusedInTime(const Outcome& outcome, const std::string& what) {
    EXPECT_FALSE(outcome.allowed) << what << " was allowed while a dependency hung";
    EXPECT_TRUE(outcome.transport_ok) << what << ": " << outcome.code;
    EXPECT_THAT(outcome.code, AnyOf(Eq("authority_unavailable"), Eq("usage_store_unavailable"),
                                    Eq("audit_unavailable"), Eq("tool_unavailable")))
        << what;
    EXPECT_LT(outcome.took, kAnsweredWithin) << what << " took " << outcome.took;
  }

  // The tool.invoked of `call_id`, once the audit log has it (up to 30 s: it may wait in an
  // outbox), is a refusal marked fail-closed, with a fail-closed code as its reason or cause.
  void ExpectRecordedFailClosed(const std::string& call_id) {
    auto audit = audit::v1::AuditLog::NewStub(Connect(four_->audit_address()));
    const absl::Time give_up = absl::Now() + absl::Seconds(30);
    while (absl::Now() < give_up) {
      audit::v1::QueryRequest query;
      query.mutable_filter()->set_namespace_id(demo::kNamespace);
      query.mutable_filter()->set_type(pb::AUDIT_EVENT_TYPE_TOOL_INVOKED);
      query.set_limit(1000);
      audit::v1::QueryResponse page;
      if (audit->Query(As(four_->admin_token(), absl::Seconds(5)).get(), query, &page).ok()) {
        for (const auto& record : page.records()) {
          const pb::AuditEvent& event = record.event();
          if (event.operation_id() != call_id) continue;
          EXPECT_EQ(event.outcome(), pb::AUDIT_OUTCOME_DENIED);
          EXPECT_TRUE(event.fail_closed()) << event.ShortDebugString();
          EXPECT_THAT(event.reason() == "tool_unavailable" ? event.cause() : event.reason(),
                      AnyOf(Eq("authority_unavailable"), Eq("usage_store_unavailable"),
                            Eq("audit_unavailable")))
              << event.ShortDebugString();
          return;
        }
      }
      absl::SleepFor(absl::Milliseconds(200));
    }
    ADD_FAILURE() << "no tool.invoked for " << call_id;
  }

  // Blackholes `dependency` under a running turn and a new one, then restores it.
  void HangAndRecover(Service dependency) {
    std::string running;
    ASSERT_TRUE(Open("exec-before", &running).allowed);
    ASSERT_TRUE(Read(running, "call-before").allowed);

    Proxy(dependency).Set(TcpProxy::Mode::kBlackhole);
    std::string opened;
    const Outcome open = Open("exec-during", &opened);
    ExpectRefusedInTime(open, "OpenTurn");
    const Outcome read = Read(running, "call-during");
    ExpectRefusedInTime(read, "a read through a bounded grant");
    std::printf("hung: OpenTurn refused %s in %s, read refused %s in %s\n", open.code.c_str(),
                absl::FormatDuration(open.took).c_str(), read.code.c_str(),
                absl::FormatDuration(read.took).c_str());

    // Back to normal: the hung connections are dropped, as a restarted peer would; the
    // services reconnect and serve.
    Proxy(dependency).Set(TcpProxy::Mode::kPass);
    Proxy(dependency).DropConnections();
    bool served = false;
    for (int attempt = 0; attempt < 50 && !served; ++attempt) {
      std::string turn;
      served = Open(absl::StrCat("exec-after-", attempt), &turn).allowed &&
               Read(turn, absl::StrCat("call-after-", attempt)).allowed;
      if (!served) absl::SleepFor(absl::Milliseconds(200));
    }
    EXPECT_TRUE(served) << "no turn read after the dependency came back";
    // The refused read's record (it waited in the envelope's outbox if audit_svc was the one).
    ExpectRecordedFailClosed("call-during");
  }

  std::unique_ptr<FourProcessDeployment> four_;
  std::unique_ptr<TcpProxy> proxies_[5];
  std::unique_ptr<envelope::v1::Envelope::Stub> envelope_;
};

TEST_F(SlowDependencyTest, HungGrantStoreFailsClosedInTime) {
  HangAndRecover(Service::kGrantstore);
}

TEST_F(SlowDependencyTest, HungAuthorizerFailsClosedInTime) {
  HangAndRecover(Service::kAuthorizer);
}

TEST_F(SlowDependencyTest, HungAuditLogFailsClosedInTime) { HangAndRecover(Service::kAudit); }

TEST_F(SlowDependencyTest, SlowDependenciesStillAnswerWithinTheirDeadlines) {
  for (Service service : {Service::kAudit, Service::kGrantstore, Service::kAuthorizer}) {
    Proxy(service).Set(TcpProxy::Mode::kDelay, absl::Milliseconds(100));
  }
  for (int i = 0; i < 3; ++i) {
    std::string turn;
    const Outcome open = Open(absl::StrCat("exec-slow-", i), &turn);
    EXPECT_LT(open.took, kAnsweredWithin);
    if (!open.allowed) {
      ExpectRefusedInTime(open, "a slowed OpenTurn");
      continue;
    }
    const Outcome read = Read(turn, absl::StrCat("call-slow-", i));
    EXPECT_LT(read.took, kAnsweredWithin);
    if (!read.allowed) {
      ExpectRefusedInTime(read, "a slowed read");
    }
    std::printf(
        "slowed 100 ms per chunk: OpenTurn %s in %s, read %s in %s\n",
        open.allowed ? "opened" : open.code.c_str(), absl::FormatDuration(open.took).c_str(),
        read.allowed ? "allowed" : read.code.c_str(), absl::FormatDuration(read.took).c_str());
  }
}

}  // namespace
}  // namespace sharedos::crash
