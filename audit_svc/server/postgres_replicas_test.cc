// Two real audit_svc processes on one PostgreSQL database (`--db=postgresql://...`): callers
// append through both at once, every event also through the other replica. Afterwards the log
// holds one gap-free chain with each event once, both replicas report the same head, and
// Verify passes through either.
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "audit_svc/core/checkpoint_testing.h"
#include "common/server/auth.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "sharedos/audit/v1/audit.grpc.pb.h"
#include "tests/testing/postgres_cluster.h"
#include "tests/testing/process.h"

namespace sharedos::audit::server {
namespace {

using ::sharedos::common::IsOk;
using ::sharedos::protocol::v1::AuditEvent;
using ::sharedos::testing::CreateClusterWithDatabase;
using ::sharedos::testing::OwnedDatabase;
using ::sharedos::testing::PostgresCluster;
using ::sharedos::testing::Process;
using ::testing::HasSubstr;

constexpr char kAdminToken[] = "audit-admin-token-replicas";
constexpr char kServiceToken[] = "audit-service-token-replicas";

std::unique_ptr<grpc::ClientContext> As(const char* token) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->AddMetadata("authorization", absl::StrCat("Bearer ", token));
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  return context;
}

AuditEvent MakeEvent(const std::string& id) {
  AuditEvent event;
  event.set_version("1");
  event.set_id(id);
  event.set_type(protocol::v1::AUDIT_EVENT_TYPE_TOOL_INVOKED);
  event.set_outcome(protocol::v1::AUDIT_OUTCOME_SUCCEEDED);
  event.mutable_at()->set_seconds(1786438800);
  event.set_trace_id("trace-replicas");
  event.set_namespace_id("world");
  event.mutable_actor()->set_agent_id("writer");
  event.mutable_authority()->set_human_user_id("alice");
  event.mutable_owner()->set_human_user_id("alice");
  event.set_purpose("replica-test");
  event.set_source(protocol::v1::AUDIT_SOURCE_KERNEL);
  return event;
}

std::string Credentials() {
  const std::string credentials = sharedos::testing::TempPath("credentials.json");
  EXPECT_THAT(sharedos::testing::WriteFile(
                  credentials,
                  absl::StrCat(R"({"credentials": [{"name": "ops", "role": "admin", )",
                               R"("token_sha256": ")", common::server::TokenDigestHex(kAdminToken),
                               R"("}, {"name": "envelope", "role": "service", "token_sha256": ")",
                               common::server::TokenDigestHex(kServiceToken), R"("}]})")),
              IsOk());
  return credentials;
}

// The checkpoint key every replica shares: a PostgreSQL log has no default one.
std::string SharedCheckpointKey() {
  const std::string key = sharedos::testing::TempPath("checkpoint.key");
  if (!std::filesystem::exists(key)) {
    EXPECT_THAT(core::testing::WriteNewEd25519Key(key), IsOk());
  }
  return key;
}

absl::StatusOr<std::unique_ptr<Process>> StartReplica(const std::string& uri,
                                                      bool with_key = true) {
  std::vector<std::string> args = {"--port=0", absl::StrCat("--db=", uri),
                                   absl::StrCat("--credentials=", Credentials())};
  if (with_key) args.push_back("--checkpoint_key_file=" + SharedCheckpointKey());
  return Process::StartService("audit_svc/server/audit_svc", args, "audit_svc");
}

grpc::Status Append(v1::AuditLog::Stub& stub, const std::string& id, v1::AppendResponse* response) {
  v1::AppendRequest request;
  *request.add_events() = MakeEvent(id);
  return stub.Append(As(kServiceToken).get(), request, response);
}

TEST(AuditPostgresReplicasTest, TwoReplicasKeepOneChainAndStoreEachEventOnce) {
  absl::StatusOr<OwnedDatabase> postgres = CreateClusterWithDatabase("audit");
  ASSERT_THAT(postgres, IsOk());
  const std::string& uri = postgres->uri;
  // No data directory to keep a default key beside: a key must be given.
  absl::StatusOr<std::unique_ptr<Process>> keyless = StartReplica(uri, /*with_key=*/false);
  ASSERT_FALSE(keyless.ok());
  EXPECT_THAT(keyless.status().message(),
              HasSubstr("--checkpoint_key_file: required with a PostgreSQL log"));
  std::vector<std::unique_ptr<Process>> replicas;
  std::vector<std::unique_ptr<v1::AuditLog::Stub>> stubs;
  for (int r = 0; r < 2; ++r) {
    absl::StatusOr<std::unique_ptr<Process>> replica = StartReplica(uri);
    ASSERT_THAT(replica, IsOk());
    stubs.push_back(v1::AuditLog::NewStub(
        grpc::CreateChannel((*replica)->address(), grpc::InsecureChannelCredentials())));
    replicas.push_back(*std::move(replica));
  }

  // 4 callers per replica; caller c of replica r sends its event to r, then to the other.
  constexpr int kCallersPerReplica = 4;
  constexpr int kEventsPerCaller = 20;
  absl::Mutex mu;
  int64_t appended = 0;
  int64_t duplicates = 0;
  std::vector<std::thread> callers;
  for (int r = 0; r < 2; ++r) {
    for (int c = 0; c < kCallersPerReplica; ++c) {
      callers.emplace_back([&, r, c] {
        for (int i = 0; i < kEventsPerCaller; ++i) {
          v1::AppendRequest request;
          *request.add_events() = MakeEvent(absl::StrCat("r", r, "-c", c, "-", i));
          for (int target : {r, 1 - r}) {
            v1::AppendResponse response;
            const grpc::Status status =
                stubs[target]->Append(As(kServiceToken).get(), request, &response);
            ASSERT_TRUE(status.ok()) << status.error_message();
            absl::MutexLock lock(&mu);
            appended += response.appended();
            duplicates += response.duplicates();
          }
        }
      });
    }
  }
  for (std::thread& caller : callers) caller.join();
  constexpr int64_t kEvents = 2 * kCallersPerReplica * kEventsPerCaller;
  EXPECT_EQ(appended, kEvents);
  EXPECT_EQ(duplicates, kEvents);

  // Read the whole log through replica 1: sequences 1..kEvents, each id once, linked.
  std::map<std::string, int> seen;
  int64_t expected = 1;
  std::string prev(64, '0');
  std::string page_token;
  do {
    v1::QueryRequest request;
    request.set_limit(1000);
    request.set_page_token(page_token);
    v1::QueryResponse response;
    ASSERT_TRUE(stubs[1]->Query(As(kAdminToken).get(), request, &response).ok());
    for (const auto& record : response.records()) {
      EXPECT_EQ(record.sequence(), expected++);
      EXPECT_EQ(record.prev_hash(), prev);
      prev = record.hash();
      ++seen[record.event().id()];
    }
    page_token = response.next_page_token();
  } while (!page_token.empty());
  EXPECT_EQ(expected - 1, kEvents);
  EXPECT_EQ(seen.size(), static_cast<size_t>(kEvents));
  for (const auto& [id, count] : seen) EXPECT_EQ(count, 1) << id;

  for (auto& stub : stubs) {
    v1::VerifyResponse verify;
    ASSERT_TRUE(stub->Verify(As(kAdminToken).get(), v1::VerifyRequest(), &verify).ok());
    EXPECT_TRUE(verify.ok()) << verify.detail();
    EXPECT_EQ(verify.checked(), kEvents);
    EXPECT_EQ(verify.head_hash(), prev);
  }
}

// PostgreSQL restarts under a running audit_svc: appends are UNAVAILABLE while it is down (what
// writers report as audit_unavailable, keeping post-effect records in their outboxes), and the
// same process appends again once it is back, continuing the chain.
TEST(AuditPostgresReplicasTest, AppendsAreUnavailableWhileTheDatabaseIsDownAndResumeAfter) {
  absl::StatusOr<OwnedDatabase> postgres = CreateClusterWithDatabase("audit");
  ASSERT_THAT(postgres, IsOk());
  PostgresCluster& cluster = *postgres->cluster;
  const std::string& uri = postgres->uri;
  absl::StatusOr<std::unique_ptr<Process>> replica = StartReplica(uri);
  ASSERT_THAT(replica, IsOk());
  auto stub = v1::AuditLog::NewStub(
      grpc::CreateChannel((*replica)->address(), grpc::InsecureChannelCredentials()));
  v1::AppendResponse response;
  ASSERT_TRUE(Append(*stub, "before", &response).ok());

  ASSERT_THAT(cluster.Stop(), IsOk());
  const grpc::Status down = Append(*stub, "during", &response);
  EXPECT_EQ(down.error_code(), grpc::StatusCode::UNAVAILABLE) << down.error_message();

  ASSERT_THAT(cluster.Start(), IsOk());
  const grpc::Status resumed = Append(*stub, "during", &response);
  ASSERT_TRUE(resumed.ok()) << resumed.error_message();
  EXPECT_EQ(response.appended(), 1);
  EXPECT_EQ(response.head_sequence(), 2);
  v1::VerifyResponse verify;
  ASSERT_TRUE(stub->Verify(As(kAdminToken).get(), v1::VerifyRequest(), &verify).ok());
  EXPECT_TRUE(verify.ok()) << verify.detail();
  EXPECT_EQ(verify.checked(), 2);
}

}  // namespace
}  // namespace sharedos::audit::server
