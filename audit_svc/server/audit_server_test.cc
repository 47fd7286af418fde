// BuildAuditServer as both composition roots use it: a log on a SQLite file under TEST_TMPDIR,
// served on port 0, written through the wire and through an in-process writer.
#include "audit_svc/server/audit_server.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>

#include "common/server/server_runner.h"
#include "common/status/status_matchers.h"
#include "common/time/clock.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "sharedos/audit/v1/audit.grpc.pb.h"

namespace sharedos::audit::server {
namespace {

using ::sharedos::common::IsOk;
using ::sharedos::common::IsOkAndHolds;
using ::sharedos::common::StatusIs;
using ::sharedos::common::server::Authenticator;
using ::sharedos::common::server::ServerOptions;
using ::sharedos::common::server::ServerRunner;
using ::sharedos::common::server::TokenDigestHex;
using ::testing::SizeIs;

protocol::v1::AuditEvent Event(const std::string& id) {
  protocol::v1::AuditEvent event;
  event.set_version("1");
  event.set_id(id);
  event.set_type(protocol::v1::AUDIT_EVENT_TYPE_TURN_ENDED);
  event.set_outcome(protocol::v1::AUDIT_OUTCOME_SUCCEEDED);
  event.mutable_at()->set_seconds(1786438800);
  event.set_trace_id("trace-1");
  event.set_namespace_id("world-1");
  event.mutable_actor()->set_agent_id("agent-assistant");
  event.mutable_authority()->set_human_user_id("user-alice");
  event.mutable_owner()->set_human_user_id("user-alice");
  event.set_purpose("probe");
  event.set_operation_id("exec-1");
  return event;
}

std::string TempPath(const std::string& name) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/" +
                           ::testing::UnitTest::GetInstance()->current_test_info()->name() + "." +
                           name;
  std::remove(path.c_str());
  return path;
}

class AuditServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto authenticator = Authenticator::FromJson(
        R"({"credentials": [
          {"name": "ops", "role": "admin", "token_sha256": ")" +
        TokenDigestHex("admin") + R"("},
          {"name": "envelope", "role": "service", "token_sha256": ")" +
        TokenDigestHex("svc") + R"("}]})");
    ASSERT_TRUE(authenticator.ok()) << authenticator.status();
    authenticator_ = *std::move(authenticator);
    AuditServerOptions options;
    options.db_path = TempPath("audit.db");
    options.durability = storage::SqliteAuditStore::Durability::kNormal;
    auto built = BuildAuditServer({*authenticator_, clock_}, options);
    ASSERT_TRUE(built.ok()) << built.status();
    server_ = *std::move(built);
    auto runner = ServerRunner::Start(ServerOptions{}, server_->services());
    ASSERT_TRUE(runner.ok()) << runner.status();
    runner_ = *std::move(runner);
    ASSERT_GT(runner_->port(), 0);
    stub_ = v1::AuditLog::NewStub(
        grpc::CreateChannel(runner_->address(), grpc::InsecureChannelCredentials()));
  }

  std::unique_ptr<grpc::ClientContext> As(const std::string& token) {
    auto context = std::make_unique<grpc::ClientContext>();
    context->AddMetadata("authorization", "Bearer " + token);
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return context;
  }

  int Records() {
    v1::QueryRequest query;
    query.mutable_filter()->set_namespace_id("world-1");
    v1::QueryResponse response;
    grpc::Status status = stub_->Query(As("admin").get(), query, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response.records_size();
  }

  common::SimulatedClock clock_{absl::FromUnixSeconds(1786438800)};
  std::unique_ptr<Authenticator> authenticator_;
  std::unique_ptr<AuditServer> server_;
  std::unique_ptr<ServerRunner> runner_;
  std::unique_ptr<v1::AuditLog::Stub> stub_;
};

TEST_F(AuditServerTest, ServesTheLogOnAFreePort) {
  v1::AppendRequest append;
  *append.add_events() = Event("event-1");
  v1::AppendResponse appended;
  grpc::Status status = stub_->Append(As("svc").get(), append, &appended);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(Records(), 1);
}

TEST_F(AuditServerTest, AnotherAdapterServesTheSameLog) {
  std::unique_ptr<grpc::Service> second = server_->NewService();
  auto other = ServerRunner::Start(ServerOptions{}, {second.get()});
  ASSERT_TRUE(other.ok()) << other.status();
  auto stub = v1::AuditLog::NewStub((*other)->InProcessChannel());
  v1::AppendRequest append;
  *append.add_events() = Event("event-2");
  v1::AppendResponse appended;
  ASSERT_TRUE(stub->Append(As("svc").get(), append, &appended).ok());
  EXPECT_EQ(Records(), 1);
}

// In sharedosd: no channel, no credential; the writer's principal stamps its records and bounds
// what it may write (ADR 0014, T4).
TEST_F(AuditServerTest, AnInProcessWriterAppendsToTheLogDirectlyAsItsService) {
  auto writer = server_->NewInProcessWriter("service:envelope", TempPath("writer.outbox"));
  ASSERT_TRUE(writer.ok()) << writer.status();
  EXPECT_THAT((*writer)->RecordPreEffect(Event("event-3")), IsOk());
  EXPECT_EQ(Records(), 1);
  auto grantstore = server_->NewInProcessWriter("service:grantstore", TempPath("gs.outbox"));
  ASSERT_TRUE(grantstore.ok()) << grantstore.status();
  EXPECT_THAT((*grantstore)->RecordPreEffect(Event("event-4")),
              StatusIs(absl::StatusCode::kPermissionDenied));
  EXPECT_EQ(Records(), 1);
}

TEST_F(AuditServerTest, AnInProcessWriterNeedsAnOutbox) {
  EXPECT_FALSE(
      server_->NewInProcessWriter("service:envelope", "/nonexistent/dir/writer.outbox").ok());
}

TEST(AuditDurabilityTest, IsFullOrNormalNamingTheFlag) {
  EXPECT_THAT(ParseAuditDurability("full"),
              IsOkAndHolds(storage::SqliteAuditStore::Durability::kFull));
  EXPECT_THAT(ParseAuditDurability("normal"),
              IsOkAndHolds(storage::SqliteAuditStore::Durability::kNormal));
  EXPECT_THAT(ParseAuditDurability("fast"),
              StatusIs(absl::StatusCode::kInvalidArgument, "--durability: must be full or normal"));
}

TEST(BuildAuditServerTest, AFileThatCannotBeOpenedIsAnError) {
  auto authenticator = Authenticator::FromJson(R"({"credentials": []})");
  ASSERT_TRUE(authenticator.ok());
  AuditServerOptions options;
  options.db_path = "/nonexistent/dir/audit.db";
  EXPECT_FALSE(BuildAuditServer({**authenticator, common::RealClock()}, options).ok());
}

}  // namespace
}  // namespace sharedos::audit::server
