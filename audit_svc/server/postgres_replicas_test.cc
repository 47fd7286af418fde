// Two real audit_svc processes on one PostgreSQL database (`--db=postgresql://...`): callers
// append through both at once, every event also through the other replica. Afterwards the log
// holds one gap-free chain with each event once, both replicas report the same head, and
// Verify passes through either. And a real audit writer (audit_svc/client) dialing both replicas
// as one target appends through the first only, until it is stopped, then through the second,
// losing nothing (ADR 0012: one group committer per chain).
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "audit_svc/client/audit_client.h"
#include "audit_svc/client/audit_writer_factory.h"
#include "audit_svc/core/checkpoint_testing.h"
#include "common/server/auth.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "httplib.h"
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

absl::StatusOr<std::unique_ptr<Process>> StartReplica(const std::string& uri, bool with_key = true,
                                                      bool metrics = false) {
  std::vector<std::string> args = {"--port=0", absl::StrCat("--db=", uri),
                                   absl::StrCat("--credentials=", Credentials())};
  if (with_key) args.push_back("--checkpoint_key_file=" + SharedCheckpointKey());
  if (metrics) args.push_back("--metrics_port=0");
  return Process::StartService("audit_svc/server/audit_svc", args, "audit_svc");
}

grpc::Status Append(v1::AuditLog::Stub& stub, const std::string& id, v1::AppendResponse* response) {
  v1::AppendRequest request;
  *request.add_events() = MakeEvent(id);
  return stub.Append(As(kServiceToken).get(), request, response);
}

// The log read through `stub`: every record's id in sequence order, and the head's hash. Checks on
// the way that sequences run 1, 2, … and that each record links to the one before.
struct LoggedChain {
  std::vector<std::string> ids;
  std::string head_hash = std::string(64, '0');
};
LoggedChain ReadChain(v1::AuditLog::Stub& stub) {
  LoggedChain chain;
  std::vector<std::string>& ids = chain.ids;
  std::string& prev = chain.head_hash;
  std::string page_token;
  do {
    v1::QueryRequest request;
    request.set_limit(1000);
    request.set_page_token(page_token);
    v1::QueryResponse response;
    const grpc::Status status = stub.Query(As(kAdminToken).get(), request, &response);
    if (!status.ok()) {
      ADD_FAILURE() << status.error_message();
      return chain;
    }
    for (const auto& record : response.records()) {
      EXPECT_EQ(record.sequence(), static_cast<int64_t>(ids.size()) + 1);
      EXPECT_EQ(record.prev_hash(), prev);
      prev = record.hash();
      ids.push_back(record.event().id());
    }
    page_token = response.next_page_token();
  } while (!page_token.empty());
  return chain;
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
  const LoggedChain chain = ReadChain(*stubs[1]);
  EXPECT_EQ(static_cast<int64_t>(chain.ids.size()), kEvents);
  std::map<std::string, int> seen;
  for (const std::string& id : chain.ids) ++seen[id];
  EXPECT_EQ(seen.size(), static_cast<size_t>(kEvents));
  for (const auto& [id, count] : seen) EXPECT_EQ(count, 1) << id;

  for (auto& stub : stubs) {
    v1::VerifyResponse verify;
    ASSERT_TRUE(stub->Verify(As(kAdminToken).get(), v1::VerifyRequest(), &verify).ok());
    EXPECT_TRUE(verify.ok()) << verify.detail();
    EXPECT_EQ(verify.checked(), kEvents);
    EXPECT_EQ(verify.head_hash(), chain.head_hash);
  }
}

// The port of the /metrics endpoint a replica started with --metrics_port=0 printed (before its
// "listening" line, so already in its output).
int MetricsPort(const Process& replica) {
  constexpr char kLine[] = "audit_svc metrics on http://127.0.0.1:";
  const std::string output = replica.output();
  const size_t at = output.find(kLine);
  int port = 0;
  if (at == std::string::npos ||
      !absl::SimpleAtoi(
          output.substr(at + sizeof(kLine) - 1,
                        output.find('/', at + sizeof(kLine) - 1) - at - (sizeof(kLine) - 1)),
          &port)) {
    ADD_FAILURE() << "no metrics line: " << output;
  }
  return port;
}

// The events the replica whose /metrics is on `port` committed itself (the sum of its
// sharedos_audit_group_commit_size; its sharedos_audit_appends_total counts the chain's growth,
// whichever replica wrote it); -1: unreadable.
double EventsCommitted(int port) {
  constexpr char kCounter[] = "\nsharedos_audit_group_commit_size_sum ";
  httplib::Client client("127.0.0.1", port);
  httplib::Result result = client.Get("/metrics");
  if (!result || result->status != 200) return -1;
  const size_t at = result->body.find(kCounter);
  if (at == std::string::npos) return -1;
  const size_t from = at + sizeof(kCounter) - 1;
  double value = -1;
  if (!absl::SimpleAtod(result->body.substr(from, result->body.find('\n', from) - from), &value)) {
    return -1;
  }
  return value;
}

// Issue 37 (session 46): every writer lists the audit replicas in the same order and appends
// through the first that is up (common/client/channel.h Replicas::kFirstUp), so one replica's
// group committer writes the chain. The writer's pre-effect appends and its outbox's deliveries
// all land at replica 0 (its group commits hold them all, replica 1 commits none);
// replica 0 stopped, they land at replica 1, and the log holds every acknowledged record once,
// on a chain that verifies.
TEST(AuditPostgresReplicasTest, AWriterAppendsThroughTheFirstReplicaUpAndFailsOverToTheNext) {
  absl::StatusOr<std::unique_ptr<PostgresCluster>> cluster = PostgresCluster::Create();
  ASSERT_THAT(cluster, IsOk());
  absl::StatusOr<std::string> uri = (*cluster)->CreateDatabase("audit");
  ASSERT_THAT(uri, IsOk());
  std::vector<std::unique_ptr<Process>> replicas;
  std::vector<int> metrics_ports;
  for (int r = 0; r < 2; ++r) {
    absl::StatusOr<std::unique_ptr<Process>> replica =
        StartReplica(*uri, /*with_key=*/true, /*metrics=*/true);
    ASSERT_THAT(replica, IsOk());
    metrics_ports.push_back(MetricsPort(**replica));
    replicas.push_back(*std::move(replica));
  }
  const auto port = [](const std::string& address) {
    return address.substr(address.rfind(':') + 1);
  };
  const std::string token_file = sharedos::testing::TempPath("writer.token");
  ASSERT_THAT(sharedos::testing::WriteFile(token_file, kServiceToken), IsOk());
  client::AuditWriterConfig config;
  config.mode = "remote";
  config.target = absl::StrCat("ipv4:127.0.0.1:", port(replicas[0]->address()),
                               ",127.0.0.1:", port(replicas[1]->address()));
  config.token_file = token_file;
  config.outbox_path = sharedos::testing::TempPath("writer.outbox");
  absl::StatusOr<std::unique_ptr<client::AuditWriter>> writer =
      client::NewAuditWriter(config, /*outbox_fsync=*/false);
  ASSERT_THAT(writer, IsOk());
  auto* audit_client = dynamic_cast<client::AuditClient*>(writer->get());
  ASSERT_NE(audit_client, nullptr);

  // Pre-effect records (appended before OK) and post-effect ones (through the outbox), from
  // four threads so that the writer groups them.
  std::vector<std::string> acknowledged;
  absl::Mutex mu;
  const auto write = [&](const std::string& phase, int per_thread) {
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < per_thread; ++i) {
          const std::string pre = absl::StrCat(phase, "-pre-", t, "-", i);
          const std::string post = absl::StrCat(phase, "-post-", t, "-", i);
          const absl::Status recorded = (*writer)->RecordPreEffect(MakeEvent(pre));
          EXPECT_THAT((*writer)->RecordPostEffect(MakeEvent(post)), IsOk());
          absl::MutexLock lock(&mu);
          if (recorded.ok()) acknowledged.push_back(pre);
          acknowledged.push_back(post);
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
  };
  constexpr int kPerThread = 10;
  write("first", kPerThread);
  ASSERT_TRUE(audit_client->Flush(absl::Seconds(30)));
  EXPECT_EQ(acknowledged.size(), 2u * 4 * kPerThread);
  EXPECT_EQ(EventsCommitted(metrics_ports[0]), 2 * 4 * kPerThread);
  EXPECT_EQ(EventsCommitted(metrics_ports[1]), 0) << "a second committer on the chain";

  // Replica 0 stopped: the same channel finds replica 1. A pre-effect append racing the stop may
  // fail (fail closed: the caller refuses); nothing acknowledged is lost.
  EXPECT_EQ(replicas[0]->Terminate(), 0);
  write("second", kPerThread);
  ASSERT_TRUE(audit_client->Flush(absl::Seconds(30)));
  const size_t second = acknowledged.size() - 2u * 4 * kPerThread;
  EXPECT_GE(second, 2u * 4 * kPerThread - 4);
  EXPECT_EQ(EventsCommitted(metrics_ports[1]), static_cast<double>(second));

  auto stub = v1::AuditLog::NewStub(
      grpc::CreateChannel(replicas[1]->address(), grpc::InsecureChannelCredentials()));
  const std::vector<std::string> logged = ReadChain(*stub).ids;
  EXPECT_EQ(logged.size(), acknowledged.size());
  EXPECT_THAT(logged, ::testing::UnorderedElementsAreArray(acknowledged));
  v1::VerifyResponse verify;
  ASSERT_TRUE(stub->Verify(As(kAdminToken).get(), v1::VerifyRequest(), &verify).ok());
  EXPECT_TRUE(verify.ok()) << verify.detail();
  EXPECT_EQ(verify.checked(), static_cast<int64_t>(acknowledged.size()));
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
