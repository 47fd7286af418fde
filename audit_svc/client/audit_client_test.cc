#include "audit_svc/client/audit_client.h"

#include <algorithm>
#include <cstdlib>
#include <thread>
#include <vector>

#include "audit_svc/core/audit_log.h"
#include "audit_svc/server/audit_service.h"
#include "audit_svc/storage/sqlite_audit_store.h"
#include "common/server/auth.h"
#include "common/server/server_runner.h"
#include "common/status/status_matchers.h"
#include "common/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::audit::client {
namespace {

using ::sharedos::common::IsOk;
using ::sharedos::common::StatusIs;
using ::sharedos::common::server::Authenticator;
using ::sharedos::common::server::ServerOptions;
using ::sharedos::common::server::ServerRunner;
using ::sharedos::common::server::TokenDigestHex;
using ::sharedos::protocol::v1::AuditEvent;
using ::testing::HasSubstr;
namespace v1 = ::sharedos::audit::v1;

AuditEvent MakeEvent(const std::string& reason = "allowed") {
  AuditEvent event;
  event.set_type(sharedos::protocol::v1::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED);
  event.set_outcome(sharedos::protocol::v1::AUDIT_OUTCOME_ALLOWED);
  event.mutable_at()->set_seconds(1786438800);
  event.set_trace_id("trace-1");
  event.set_namespace_id("world");
  event.mutable_actor()->set_agent_id("mallory");
  event.mutable_authority()->set_human_user_id("alice");
  event.mutable_owner()->set_human_user_id("alice");
  event.set_purpose("probe");
  event.set_reason(reason);
  return event;
}

// A real audit_svc (core + SQLite + gRPC adapter) on a port that survives restarts.
class AuditServer {
 public:
  explicit AuditServer(const std::string& db) : db_(db) {
    auto auth = Authenticator::FromJson(
        R"({"credentials": [{"name": "authorizer", "role": "service", "token_sha256": ")" +
        TokenDigestHex("svc") +
        R"("}, {"name": "grantstore", "role": "service", "token_sha256": ")" +
        TokenDigestHex("gs-svc") + R"("}]})");
    authenticator_ = *std::move(auth);
  }
  void Start(int port) {
    auto store = storage::SqliteAuditStore::Open(db_, {});
    ASSERT_TRUE(store.ok()) << store.status();
    log_ = std::make_unique<core::AuditLog>(*std::move(store), clock_, core::AuditLog::Options{});
    service_ = std::make_unique<server::AuditService>(*log_, *authenticator_);
    ServerOptions options;
    options.port = port;
    auto runner = ServerRunner::Start(options, {service_.get()});
    ASSERT_TRUE(runner.ok()) << runner.status();
    runner_ = *std::move(runner);
  }
  void Stop() {
    runner_.reset();
    service_.reset();
    log_.reset();
  }
  int port() const { return runner_->port(); }
  core::AuditLog& log() { return *log_; }
  std::vector<std::string> Ids() {
    v1::QueryRequest request;
    request.set_limit(1000);
    auto response = log_->Query(request);
    std::vector<std::string> ids;
    for (const auto& record : response->records()) {
      ids.push_back(record.has_control_plane() ? record.control_plane().id() : record.event().id());
    }
    return ids;
  }

 private:
  std::string db_;
  common::SimulatedClock clock_{absl::FromUnixSeconds(1786438800)};
  std::unique_ptr<Authenticator> authenticator_;
  std::unique_ptr<core::AuditLog> log_;
  std::unique_ptr<server::AuditService> service_;
  std::unique_ptr<ServerRunner> runner_;
};

class AuditClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string base = std::string(std::getenv("TEST_TMPDIR")) + "/" +
                             ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::remove((base + ".db").c_str());
    std::remove((base + ".outbox").c_str());
    outbox_path_ = base + ".outbox";
    server_ = std::make_unique<AuditServer>(base + ".db");
    server_->Start(0);
    port_ = server_->port();
  }

  // A writer with the authorizer's credential, or `token`'s (the grant store's: "gs-svc").
  // On `clock` (set): no linger, and a backoff of one minute of that clock.
  std::unique_ptr<AuditClient> Client(PreEffectMode mode, const std::string& token = "svc",
                                      const common::Clock* clock = nullptr) {
    AuditClientOptions options;
    options.mode = mode;
    options.token = token;
    options.outbox_path = outbox_path_;
    options.append_deadline = absl::Milliseconds(500);
    options.min_backoff = absl::Milliseconds(10);
    options.max_backoff = absl::Milliseconds(50);
    if (clock != nullptr) {
      options.clock = clock;
      options.ship_linger = absl::ZeroDuration();
      options.min_backoff = options.max_backoff = absl::Minutes(1);
    }
    options.on_error = [this](const absl::Status& status) {
      absl::MutexLock lock(&errors_mu_);
      errors_.push_back(status);
    };
    auto client = AuditClient::Create(
        v1::AuditLog::NewStub(grpc::CreateChannel("127.0.0.1:" + std::to_string(port_),
                                                  grpc::InsecureChannelCredentials())),
        options);
    EXPECT_TRUE(client.ok()) << client.status();
    return *std::move(client);
  }

  std::string outbox_path_;
  int port_ = 0;
  std::unique_ptr<AuditServer> server_;
  absl::Mutex errors_mu_;
  std::vector<absl::Status> errors_ ABSL_GUARDED_BY(errors_mu_);
};

TEST_F(AuditClientTest, RemotePreEffectIsInTheLogBeforeItReturns) {
  auto client = Client(PreEffectMode::kRemote);
  ASSERT_THAT(client->RecordPreEffect(MakeEvent()), IsOk());
  EXPECT_EQ(server_->log().HeadSequence(), 1);  // no flush needed
  EXPECT_EQ(*client->PendingEvents(), 0);
}

// The grant store's records (docs/adr/0008): pre-effect in both modes, in the same log.
TEST_F(AuditClientTest, ControlPlaneRecordsArePreEffectInBothModes) {
  v1::ControlPlaneEvent event;
  event.set_type(v1::CONTROL_PLANE_EVENT_TYPE_GRANT_ISSUED);
  event.set_outcome(sharedos::protocol::v1::AUDIT_OUTCOME_SUCCEEDED);
  event.mutable_at()->set_seconds(1786438800);
  event.set_trace_id("grantstore-r1");
  event.set_namespace_id("world");
  event.mutable_actor()->set_service_id("ops");
  event.mutable_authority()->set_human_user_id("alice");
  event.mutable_owner()->set_human_user_id("alice");
  event.set_purpose("sharedos.control-plane");
  {
    auto remote = Client(PreEffectMode::kRemote, "gs-svc");
    ASSERT_THAT(remote->RecordControlPlane(event), IsOk());
    EXPECT_EQ(server_->log().HeadSequence(), 1);  // appended before OK
    v1::ControlPlaneEvent malformed = event;
    malformed.clear_actor();
    EXPECT_THAT(remote->RecordControlPlane(malformed),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("control_plane.actor")));
  }
  auto local = Client(PreEffectMode::kLocal, "gs-svc");
  ASSERT_THAT(local->RecordControlPlane(event), IsOk());
  ASSERT_TRUE(local->Flush(absl::Seconds(10)));
  const std::vector<std::string> ids = server_->Ids();
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_NE(ids[0], ids[1]);  // a fresh id each
  v1::QueryRequest query;
  auto records = server_->log().Query(query);
  ASSERT_TRUE(records.ok());
  for (const auto& record : records->records()) EXPECT_TRUE(record.has_control_plane());
}

TEST_F(AuditClientTest, RemotePreEffectFailsClosedWhenAuditIsDown) {
  auto client = Client(PreEffectMode::kRemote);
  server_->Stop();
  EXPECT_THAT(client->RecordPreEffect(MakeEvent()),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("audit_unavailable")));
}

TEST_F(AuditClientTest, PostEffectRecordsWaitOutAnOutageAndArriveExactlyOnce) {
  server_->Stop();
  std::vector<std::string> ids;
  {
    auto client = Client(PreEffectMode::kRemote);
    for (int i = 0; i < 5; ++i) {
      AuditEvent event = MakeEvent();
      event.set_id("post-" + std::to_string(i));
      ids.push_back(event.id());
      ASSERT_THAT(client->RecordPostEffect(event), IsOk());
    }
    EXPECT_EQ(*client->PendingEvents(), 5);
  }  // the writer goes away with everything still in its outbox
  server_->Start(port_);
  auto client = Client(PreEffectMode::kRemote);  // a restarted writer picks the outbox up
  ASSERT_TRUE(client->Flush(absl::Seconds(20)));
  EXPECT_EQ(server_->Ids(), ids);
}

TEST_F(AuditClientTest, TheShipperWaitsOutItsBackoffOnItsClock) {
  server_->Stop();
  AuditEvent event = MakeEvent();
  event.set_id("post-0");
  {
    auto first = Client(PreEffectMode::kRemote);
    ASSERT_THAT(first->RecordPostEffect(event), IsOk());
  }  // left in the outbox
  common::SimulatedClock clock;
  auto client = Client(PreEffectMode::kRemote, "svc", &clock);
  clock.AwaitWaiters(1);  // its first attempt failed: it waits out a minute of `clock`
  server_->Start(port_);
  EXPECT_EQ(*client->PendingEvents(), 1);  // no retry before that minute has passed
  // Each pass of the clock lets one more attempt run (the restarted server's channel may refuse
  // the first ones while it reconnects).
  while (*client->PendingEvents() > 0) {
    clock.AwaitWaiters(1);
    clock.AdvanceTime(absl::Minutes(1));
  }
  EXPECT_EQ(server_->Ids(), std::vector<std::string>{"post-0"});
}

TEST_F(AuditClientTest, LocalPreEffectIsDurableInTheOutboxWhileAuditIsDown) {
  server_->Stop();
  auto client = Client(PreEffectMode::kLocal);
  ASSERT_THAT(client->RecordPreEffect(MakeEvent()), IsOk());
  EXPECT_EQ(*client->PendingEvents(), 1);
  server_->Start(port_);
  ASSERT_TRUE(client->Flush(absl::Seconds(20)));
  EXPECT_EQ(server_->log().HeadSequence(), 1);
}

TEST_F(AuditClientTest, StampsVersionAndAFreshIdPerEvent) {
  auto client = Client(PreEffectMode::kRemote);
  ASSERT_THAT(client->RecordPreEffect(MakeEvent()), IsOk());
  ASSERT_THAT(client->RecordPreEffect(MakeEvent()), IsOk());
  std::vector<std::string> ids = server_->Ids();
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_NE(ids[0], ids[1]);
  EXPECT_EQ(ids[0].size(), 36u);  // a UUID
}

TEST_F(AuditClientTest, RefusesRedactedOrMalformedEventsBeforeTheyReachTheOutbox) {
  auto client = Client(PreEffectMode::kLocal);
  AuditEvent leaky = MakeEvent();
  (*leaky.mutable_metadata()->mutable_fields())["payload"].set_string_value("secret");
  EXPECT_THAT(client->RecordPostEffect(leaky), StatusIs(absl::StatusCode::kInvalidArgument));
  AuditEvent no_purpose = MakeEvent();
  no_purpose.clear_purpose();
  EXPECT_THAT(client->RecordPreEffect(no_purpose),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("event.purpose")));
  EXPECT_EQ(*client->PendingEvents(), 0);
}

TEST_F(AuditClientTest, AnEventAuditRefusesIsSetAsideWithoutBlockingTheRest) {
  auto client = Client(PreEffectMode::kRemote);
  AuditEvent original = MakeEvent("allowed");
  original.set_id("reused-id");
  ASSERT_THAT(client->RecordPreEffect(original), IsOk());
  server_->Stop();  // queue both while audit is away, so they ship in one batch
  AuditEvent conflicting = MakeEvent("no_matching_grant");
  conflicting.set_id("reused-id");
  AuditEvent fine = MakeEvent();
  fine.set_id("after-the-poison");
  ASSERT_THAT(client->RecordPostEffect(conflicting), IsOk());
  ASSERT_THAT(client->RecordPostEffect(fine), IsOk());
  server_->Start(port_);
  ASSERT_TRUE(client->Flush(absl::Seconds(20)));
  EXPECT_EQ(server_->Ids(), (std::vector<std::string>{"reused-id", "after-the-poison"}));
  client.reset();  // the shipper is gone: errors_ is ours alone
  absl::MutexLock lock(&errors_mu_);
  ASSERT_FALSE(errors_.empty());
  EXPECT_THAT(std::string(errors_.back().message()), HasSubstr("dead letters"));
}

// A deliberately slow audit_svc that counts Append calls: while one group is in flight, the
// other callers' pre-effect records queue up and must leave together in the next Append.
class SlowCountingAuditLog : public v1::AuditLog::Service {
 public:
  grpc::Status Append(grpc::ServerContext*, const v1::AppendRequest* request,
                      v1::AppendResponse* response) override {
    absl::SleepFor(absl::Milliseconds(100));  // the slow server being simulated
    absl::MutexLock lock(&mu_);
    batch_sizes_.push_back(request->entries_size());
    for (const auto& entry : request->entries()) ids_.push_back(entry.event().id());
    response->set_appended(request->entries_size());
    return grpc::Status::OK;
  }
  std::vector<int> batch_sizes() {
    absl::MutexLock lock(&mu_);
    return batch_sizes_;
  }
  size_t event_count() {
    absl::MutexLock lock(&mu_);
    return ids_.size();
  }

 private:
  absl::Mutex mu_;
  std::vector<int> batch_sizes_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> ids_ ABSL_GUARDED_BY(mu_);
};

TEST(AuditClientGroupingTest, ConcurrentPreEffectRecordsShareOneAppend) {
  SlowCountingAuditLog service;
  auto runner = ServerRunner::Start(ServerOptions{}, {&service});
  ASSERT_TRUE(runner.ok()) << runner.status();
  AuditClientOptions options;
  options.mode = PreEffectMode::kRemote;
  options.token = "svc";
  options.outbox_path = std::string(std::getenv("TEST_TMPDIR")) + "/grouping.outbox";
  auto client = AuditClient::Create(v1::AuditLog::NewStub(grpc::CreateChannel(
                                        (*runner)->address(), grpc::InsecureChannelCredentials())),
                                    options);
  ASSERT_TRUE(client.ok()) << client.status();

  constexpr int kCallers = 8;
  absl::Mutex start_mu;
  bool go = false;
  std::vector<std::thread> callers;
  std::vector<absl::Status> results(kCallers);
  for (int i = 0; i < kCallers; ++i) {
    callers.emplace_back([&, i] {
      {
        absl::MutexLock lock(&start_mu);
        start_mu.Await(absl::Condition(&go));
      }
      results[i] = (*client)->RecordPreEffect(MakeEvent());
    });
  }
  {
    absl::MutexLock lock(&start_mu);
    go = true;
  }
  for (auto& caller : callers) caller.join();
  for (const absl::Status& status : results) EXPECT_THAT(status, IsOk());
  EXPECT_EQ(service.event_count(), static_cast<size_t>(kCallers));
  const std::vector<int> batches = service.batch_sizes();
  // The first caller's record goes alone; everything that queued behind it goes in one call.
  EXPECT_LT(batches.size(), static_cast<size_t>(kCallers));
  EXPECT_GT(*std::max_element(batches.begin(), batches.end()), 1);
}

}  // namespace
}  // namespace sharedos::audit::client
