#include "audit_svc/server/audit_service.h"

#include <cstdlib>
#include <thread>

#include "audit_svc/storage/sqlite_audit_store.h"
#include "common/server/server_runner.h"
#include "common/status/grpc_status.h"
#include "common/status/status_matchers.h"
#include "common/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::audit::server {
namespace {

using ::sharedos::common::server::Authenticator;
using ::sharedos::common::server::ServerOptions;
using ::sharedos::common::server::ServerRunner;
using ::sharedos::common::server::TokenDigestHex;
using ::sharedos::protocol::v1::AuditEvent;
using ::testing::HasSubstr;
namespace v1 = ::sharedos::audit::v1;

AuditEvent MakeEvent(const std::string& id) {
  AuditEvent event;
  event.set_version("1");
  event.set_id(id);
  event.set_type(sharedos::protocol::v1::AUDIT_EVENT_TYPE_TURN_ENDED);
  event.set_outcome(sharedos::protocol::v1::AUDIT_OUTCOME_SUCCEEDED);
  event.mutable_at()->set_seconds(1786438800);
  event.set_trace_id("trace-1");
  event.set_namespace_id("world");
  event.mutable_actor()->set_agent_id("mallory");
  event.mutable_authority()->set_human_user_id("alice");
  event.mutable_owner()->set_human_user_id("alice");
  event.set_purpose("probe");
  event.set_operation_id("exec-1");
  return event;
}

class AuditServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/" +
                             ::testing::UnitTest::GetInstance()->current_test_info()->name() +
                             ".db";
    std::remove(path.c_str());
    auto store = storage::SqliteAuditStore::Open(path, {});
    ASSERT_TRUE(store.ok()) << store.status();
    log_ = std::make_unique<core::AuditLog>(*std::move(store), clock_, core::AuditLog::Options{});
    auto auth = Authenticator::FromJson(
        R"({"credentials": [
          {"name": "ops", "role": "admin", "token_sha256": ")" +
        TokenDigestHex("admin") + R"("},
          {"name": "envelope", "role": "service", "token_sha256": ")" +
        TokenDigestHex("svc") + R"("},
          {"name": "grantstore", "role": "service", "token_sha256": ")" +
        TokenDigestHex("gs") + R"("},
          {"name": "host", "role": "host", "token_sha256": ")" +
        TokenDigestHex("host") + R"("}]})");
    ASSERT_TRUE(auth.ok()) << auth.status();
    authenticator_ = *std::move(auth);
    service_ = std::make_unique<AuditService>(*log_, *authenticator_);
    auto runner = ServerRunner::Start(ServerOptions{}, {service_.get()});
    ASSERT_TRUE(runner.ok()) << runner.status();
    runner_ = *std::move(runner);
    stub_ = v1::AuditLog::NewStub(
        grpc::CreateChannel(runner_->address(), grpc::InsecureChannelCredentials()));
  }

  void TearDown() override {
    runner_.reset();
    service_.reset();
    log_.reset();
  }

  std::unique_ptr<grpc::ClientContext> Context(const std::string& token) {
    auto context = std::make_unique<grpc::ClientContext>();
    if (!token.empty()) context->AddMetadata("authorization", "Bearer " + token);
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return context;
  }

  common::SimulatedClock clock_{absl::FromUnixSeconds(1786438800)};
  std::unique_ptr<core::AuditLog> log_;
  std::unique_ptr<Authenticator> authenticator_;
  std::unique_ptr<AuditService> service_;
  std::unique_ptr<ServerRunner> runner_;
  std::unique_ptr<v1::AuditLog::Stub> stub_;
};

TEST_F(AuditServiceTest, AServiceAppendsAndAnOperatorReadsBack) {
  v1::AppendRequest append;
  *append.add_events() = MakeEvent("e1");
  v1::AppendResponse appended;
  grpc::Status status = stub_->Append(Context("svc").get(), append, &appended);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(appended.appended(), 1);

  v1::QueryRequest query;
  query.mutable_filter()->set_execution_id("exec-1");
  v1::QueryResponse records;
  status = stub_->Query(Context("admin").get(), query, &records);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(records.records_size(), 1);
  EXPECT_EQ(records.records(0).event().id(), "e1");
  EXPECT_EQ(records.records(0).hash(), appended.head_hash());

  v1::VerifyResponse verify;
  status = stub_->Verify(Context("admin").get(), v1::VerifyRequest(), &verify);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_TRUE(verify.ok());
  EXPECT_EQ(verify.checked(), 1);
}

TEST_F(AuditServiceTest, EachMethodRefusesTheWrongCredential) {
  v1::AppendRequest append;
  *append.add_events() = MakeEvent("e1");
  v1::AppendResponse appended;
  // No or an unknown credential is UNAUTHENTICATED; a known one of another role PERMISSION_DENIED.
  for (const char* token : {"", "bogus"}) {
    grpc::Status status = stub_->Append(Context(token).get(), append, &appended);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << token;
  }
  for (const char* token : {"admin", "host"}) {
    grpc::Status status = stub_->Append(Context(token).get(), append, &appended);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED) << token;
  }
  v1::QueryResponse records;
  EXPECT_EQ(stub_->Query(Context("").get(), v1::QueryRequest(), &records).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  for (const char* token : {"svc", "host"}) {
    grpc::Status status = stub_->Query(Context(token).get(), v1::QueryRequest(), &records);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED) << token;
  }
  v1::VerifyResponse verify;
  EXPECT_EQ(stub_->Verify(Context("svc").get(), v1::VerifyRequest(), &verify).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(log_->HeadSequence(), 0);
}

// The grant store reads the log only to compare its revision with its own control-plane records
// (docs/adr/0021): a query of protocol "1" events is refused, one of control-plane records
// answered.
TEST_F(AuditServiceTest, TheGrantStoreReadsControlPlaneRecordsOnly) {
  v1::AppendRequest append;
  *append.add_events() = MakeEvent("e1");
  v1::AppendResponse appended;
  ASSERT_TRUE(stub_->Append(Context("svc").get(), append, &appended).ok());

  v1::QueryRequest events;
  events.mutable_filter()->set_execution_id("exec-1");
  v1::QueryResponse records;
  grpc::Status status = stub_->Query(Context("gs").get(), events, &records);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(status.error_message(), HasSubstr("filter.control_plane_type"));
  EXPECT_EQ(records.records_size(), 0);

  v1::QueryRequest control_plane;
  control_plane.mutable_filter()->set_control_plane_type(
      v1::CONTROL_PLANE_EVENT_TYPE_GRANT_REVOKED);
  status = stub_->Query(Context("gs").get(), control_plane, &records);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(records.records_size(), 0);
  // Another service is refused even with the filter: the table admits the grant store alone.
  EXPECT_EQ(stub_->Query(Context("svc").get(), control_plane, &records).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
}

TEST_F(AuditServiceTest, MalformedEventsAreInvalidArgumentNamingTheField) {
  v1::AppendRequest append;
  AuditEvent event = MakeEvent("e1");
  event.set_purpose(std::string(513, 'p'));
  *append.add_events() = event;
  v1::AppendResponse appended;
  grpc::Status status = stub_->Append(Context("svc").get(), append, &appended);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("events[0].purpose"));
}

TEST_F(AuditServiceTest, TailStreamsRecordsAsTheyCommit) {
  v1::AppendRequest first;
  *first.add_events() = MakeEvent("e1");
  v1::AppendResponse appended;
  ASSERT_TRUE(stub_->Append(Context("svc").get(), first, &appended).ok());

  auto context = Context("admin");
  v1::TailRequest tail;
  tail.set_from_sequence(1);
  auto reader = stub_->Tail(context.get(), tail);
  v1::TailResponse response;
  ASSERT_TRUE(reader->Read(&response));
  EXPECT_EQ(response.record().event().id(), "e1");

  std::thread writer([this] {
    v1::AppendRequest later;
    *later.add_events() = MakeEvent("e2");
    v1::AppendResponse ok;
    ASSERT_TRUE(stub_->Append(Context("svc").get(), later, &ok).ok());
  });
  ASSERT_TRUE(reader->Read(&response));
  EXPECT_EQ(response.record().event().id(), "e2");
  EXPECT_EQ(response.record().sequence(), 2);
  writer.join();
  context->TryCancel();
  reader->Finish();
}

TEST_F(AuditServiceTest, TailRefusesAStartBeyondTheHead) {
  auto context = Context("admin");
  v1::TailRequest tail;
  tail.set_from_sequence(5);
  auto reader = stub_->Tail(context.get(), tail);
  v1::TailResponse response;
  EXPECT_FALSE(reader->Read(&response));
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::FAILED_PRECONDITION);
}

}  // namespace
}  // namespace sharedos::audit::server
