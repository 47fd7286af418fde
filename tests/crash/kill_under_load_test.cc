// kill -9 under load, as a campaign (issue 22): clients issue grants, run turns that read through
// a grant bounded to a few uses, and escalate, while a seeded loop kills one service at a random
// moment and starts it again, round after round. Afterwards, with every service back:
//   - every grant whose IssueGrant was acknowledged is in the store;
//   - the bounded grant was never spent beyond its max uses, and every acknowledged allowed call
//     is among its counted uses;
//   - every acknowledged escalation is stored exactly once;
//   - every acknowledged allowed call has exactly one tool.invoked record, no event id appears
//     twice, and the chain verifies.
// Run against the four services as processes (each killed in turn) and against one sharedosd.
// SHAREDOS_KILL_SEED and SHAREDOS_KILL_ROUNDS override the seed and the number of kills (the
// long variant: docs/reliability.md); the test prints both, and what it counted.
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "sharedos/audit/v1/audit.grpc.pb.h"
#include "sharedos/envelope/v1/envelope.grpc.pb.h"
#include "sharedos/grantstore/v1/grantstore.grpc.pb.h"
#include "tests/testing/demo_world.h"
#include "tests/testing/deployment.h"
#include "tests/testing/process.h"

namespace sharedos {
namespace {

namespace pb = ::sharedos::protocol::v1;
namespace demo = ::sharedos::testing::demo;
using ::sharedos::testing::FourProcessDeployment;
using ::sharedos::testing::SharedosdDeployment;
using Service = FourProcessDeployment::Service;

// The demo grant, bounded: its reads run out during the campaign.
constexpr int64_t kMaxUses = 120;

int EnvInt(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::atoi(value) : fallback;
}

std::unique_ptr<grpc::ClientContext> As(const std::string& token, absl::Duration timeout) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->AddMetadata("authorization", "Bearer " + token);
  context->set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  return context;
}

// A channel that reconnects quickly to a restarted service.
std::shared_ptr<grpc::Channel> Connect(const std::string& address) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 50);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 50);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 200);
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
}

// The addresses the clients call; they change when sharedosd restarts on a new port.
struct Targets {
  std::string envelope, grantstore, audit;
};

// What the system acknowledged, as the clients saw it.
struct Ledger {
  absl::Mutex mu;
  std::set<std::string> grants ABSL_GUARDED_BY(mu);
  std::set<std::string> allowed_calls ABSL_GUARDED_BY(mu);
  std::set<std::string> escalated_executions ABSL_GUARDED_BY(mu);
  std::map<std::string, int> refusals ABSL_GUARDED_BY(mu);
  std::atomic<int64_t> attempts{0};
  std::atomic<int64_t> refused_exhausted{0};
};

class Clients {
 public:
  Clients(std::string admin, std::string host, Ledger& ledger)
      : admin_(std::move(admin)), host_(std::move(host)), ledger_(ledger) {}

  void Aim(const Targets& targets) {
    absl::MutexLock lock(&mu_);
    envelope_ = envelope::v1::Envelope::NewStub(Connect(targets.envelope));
    grants_ = grantstore::v1::GrantStore::NewStub(Connect(targets.grantstore));
  }

  void Start(int turn_runners) {
    threads_.emplace_back([this] { IssueGrants(); });
    for (int i = 0; i < turn_runners; ++i) threads_.emplace_back([this, i] { RunTurns(i); });
  }

  void Stop() {
    stop_ = true;
    for (std::thread& thread : threads_) thread.join();
    threads_.clear();
  }

 private:
  std::shared_ptr<envelope::v1::Envelope::Stub> Envelope() {
    absl::MutexLock lock(&mu_);
    return envelope_;
  }
  std::shared_ptr<grantstore::v1::GrantStore::Stub> Grants() {
    absl::MutexLock lock(&mu_);
    return grants_;
  }

  void IssueGrants() {
    for (int n = 0; !stop_; ++n) {
      grantstore::v1::IssueGrantRequest request;
      *request.mutable_grant() = demo::Grant();
      request.mutable_grant()->set_id(absl::StrCat("grant-load-", n));
      request.mutable_grant()->mutable_subject()->set_agent_id(absl::StrCat("agent-load-", n));
      grantstore::v1::IssueGrantResponse response;
      ++ledger_.attempts;
      grpc::Status status =
          Grants()->IssueGrant(As(admin_, absl::Seconds(5)).get(), request, &response);
      if (status.ok()) {
        absl::MutexLock lock(&ledger_.mu);
        ledger_.grants.insert(request.grant().id());
      } else {
        Note(status.error_message());
      }
    }
  }

  void RunTurns(int runner) {
    for (int n = 0; !stop_; ++n) {
      const std::string execution = absl::StrCat("exec-load-", runner, "-", n);
      auto envelope = Envelope();
      envelope::v1::OpenTurnResponse opened;
      ++ledger_.attempts;
      grpc::Status status = envelope->OpenTurn(As(host_, absl::Seconds(5)).get(),
                                               demo::TurnRequest(execution, "trace-load"), &opened);
      if (!status.ok() || opened.has_result()) {
        Note(status.ok() ? opened.result().error().code() : status.error_message());
        continue;
      }
      const std::string call_id = absl::StrCat("call-", execution);
      Read(*envelope, opened.turn_id(), call_id);
      Finish(*envelope, opened.turn_id(), execution, n % 3 == 0);
    }
  }

  // Counts a refusal by its text (printed at the end: what the clients met while services died).
  // A refused call backs off briefly, as a real client would, instead of spinning while a
  // service is down.
  void Note(const std::string& what) {
    {
      absl::MutexLock lock(&ledger_.mu);
      ++ledger_.refusals[what.substr(0, 120)];
    }
    absl::SleepFor(absl::Milliseconds(10));
  }

  void Read(envelope::v1::Envelope::Stub& envelope, const std::string& turn_id,
            const std::string& call_id) {
    envelope::v1::InvokeToolRequest request;
    request.set_turn_id(turn_id);
    pb::ToolCall* call = request.mutable_call();
    call->set_id(call_id);
    call->set_tool("files.read");
    call->set_trace_id("trace-load");
    (*call->mutable_arguments()->mutable_fields())["path"].set_string_value("Workspace/notes.txt");
    call->mutable_requested_at()->set_seconds(demo::kNowSeconds + 1);
    envelope::v1::InvokeToolResponse response;
    grpc::Status status =
        envelope.InvokeTool(As(host_, absl::Seconds(5)).get(), request, &response);
    if (!status.ok()) return Note(status.error_message());
    if (response.result().status() == pb::TOOL_RESULT_STATUS_SUCCEEDED) {
      absl::MutexLock lock(&ledger_.mu);
      ledger_.allowed_calls.insert(call_id);
    } else {
      if (response.result().error().code() == "grant_exhausted") ++ledger_.refused_exhausted;
      Note(response.result().error().code());
    }
  }

  void Finish(envelope::v1::Envelope::Stub& envelope, const std::string& turn_id,
              const std::string& execution, bool escalate) {
    envelope::v1::FinishTurnRequest request;
    request.set_turn_id(turn_id);
    if (escalate) {
      request.mutable_escalate()->set_reason("The assistant needs a person.");
    } else {
      request.mutable_complete()->mutable_output()->set_string_value("done");
    }
    envelope::v1::FinishTurnResponse response;
    if (!envelope.FinishTurn(As(host_, absl::Seconds(5)).get(), request, &response).ok()) return;
    if (escalate && response.result().status() == pb::EXECUTION_STATUS_ESCALATED) {
      absl::MutexLock lock(&ledger_.mu);
      ledger_.escalated_executions.insert(execution);
    }
  }

  const std::string admin_, host_;
  Ledger& ledger_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
  absl::Mutex mu_;
  std::shared_ptr<envelope::v1::Envelope::Stub> envelope_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<grantstore::v1::GrantStore::Stub> grants_ ABSL_GUARDED_BY(mu_);
};

// Every check of the file comment, once every service is back.
void CheckAfterCampaign(const Targets& targets, const std::string& admin,
                        const std::string& service, Ledger& ledger) {
  auto grants = grantstore::v1::GrantStore::NewStub(Connect(targets.grantstore));
  auto audit = audit::v1::AuditLog::NewStub(Connect(targets.audit));
  absl::MutexLock lock(&ledger.mu);
  std::printf(
      "acknowledged: %zu grants, %zu allowed calls, %zu escalations; %lld attempts, "
      "%lld refused grant_exhausted\n",
      ledger.grants.size(), ledger.allowed_calls.size(), ledger.escalated_executions.size(),
      static_cast<long long>(ledger.attempts.load()),
      static_cast<long long>(ledger.refused_exhausted.load()));
  for (const auto& [what, count] : ledger.refusals)
    std::printf("  %6d × %s\n", count, what.c_str());
  EXPECT_FALSE(ledger.grants.empty());
  EXPECT_FALSE(ledger.allowed_calls.empty());

  for (const std::string& id : ledger.grants) {
    grantstore::v1::GetGrantRequest request;
    request.set_namespace_id(demo::kNamespace);
    request.set_grant_id(id);
    grantstore::v1::GetGrantResponse response;
    grpc::Status status = grants->GetGrant(As(admin, absl::Seconds(10)).get(), request, &response);
    EXPECT_TRUE(status.ok()) << "acknowledged grant " << id << " lost: " << status.error_message();
  }

  grantstore::v1::GetUsageRequest usage_request;
  usage_request.set_namespace_id(demo::kNamespace);
  usage_request.set_grant_id(demo::Grant().id());
  grantstore::v1::GetUsageResponse usage;
  ASSERT_TRUE(grants->GetUsage(As(service, absl::Seconds(10)).get(), usage_request, &usage).ok());
  std::printf("bounded grant: %lld of %lld uses counted\n", static_cast<long long>(usage.uses()),
              static_cast<long long>(kMaxUses));
  EXPECT_LE(usage.uses(), kMaxUses);
  EXPECT_GE(usage.uses(), static_cast<int64_t>(ledger.allowed_calls.size()));

  std::map<std::string, int> escalations;
  grantstore::v1::ListEscalationsRequest list;
  list.set_namespace_id(demo::kNamespace);
  list.set_page_size(1000);
  do {
    grantstore::v1::ListEscalationsResponse page;
    ASSERT_TRUE(grants->ListEscalations(As(admin, absl::Seconds(10)).get(), list, &page).ok());
    for (const auto& record : page.escalations()) ++escalations[record.execution_id()];
    list.set_page_token(page.next_page_token());
  } while (!list.page_token().empty());
  for (const std::string& execution : ledger.escalated_executions) {
    EXPECT_EQ(escalations[execution], 1) << "escalation of " << execution;
  }

  // The writers' outboxes deliver post-effect records after a restart: read until every
  // acknowledged call's tool.invoked is in, or 60 s pass.
  std::map<std::string, int> invoked;
  std::set<std::string> event_ids;
  int duplicates = 0;
  const absl::Time give_up = absl::Now() + absl::Seconds(60);
  for (;;) {
    invoked.clear();
    event_ids.clear();
    duplicates = 0;
    audit::v1::QueryRequest query;
    query.mutable_filter()->set_namespace_id(demo::kNamespace);
    query.set_limit(1000);
    do {
      audit::v1::QueryResponse page;
      ASSERT_TRUE(audit->Query(As(admin, absl::Seconds(10)).get(), query, &page).ok());
      for (const auto& record : page.records()) {
        if (!event_ids.insert(record.event().id()).second) ++duplicates;
        if (record.event().type() == pb::AUDIT_EVENT_TYPE_TOOL_INVOKED) {
          ++invoked[record.event().operation_id()];
        }
      }
      query.set_page_token(page.next_page_token());
    } while (!query.page_token().empty());
    bool all = true;
    for (const std::string& call : ledger.allowed_calls) all = all && invoked.count(call) > 0;
    if (all || absl::Now() > give_up) break;
    absl::SleepFor(absl::Milliseconds(200));
  }
  EXPECT_EQ(duplicates, 0);
  for (const std::string& call : ledger.allowed_calls) {
    EXPECT_EQ(invoked[call], 1) << "tool.invoked of acknowledged call " << call;
  }
  audit::v1::VerifyResponse verified;
  ASSERT_TRUE(audit->Verify(As(admin, absl::Seconds(30)).get(), {}, &verified).ok());
  EXPECT_TRUE(verified.ok()) << verified.detail();
  std::printf("audit: %zu records, chain verified over %lld\n", event_ids.size(),
              static_cast<long long>(verified.checked()));
}

pb::CapabilityGrant BoundedDemoGrant() {
  pb::CapabilityGrant grant = demo::Grant();
  grant.mutable_constraints()->set_max_uses(kMaxUses);
  return grant;
}

void IssueBoundedGrant(const std::string& grantstore, const std::string& admin) {
  auto grants = grantstore::v1::GrantStore::NewStub(Connect(grantstore));
  grantstore::v1::IssueGrantRequest request;
  *request.mutable_grant() = BoundedDemoGrant();
  grantstore::v1::IssueGrantResponse response;
  grpc::Status status = grants->IssueGrant(As(admin, absl::Seconds(10)).get(), request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
}

std::string MakeDir(const std::string& name) {
  const std::string dir = sharedos::testing::TempPath(name);
  EXPECT_EQ(mkdir(dir.c_str(), 0700), 0) << dir;
  return dir;
}

TEST(KillUnderLoadTest, EachOfTheFourServicesKilledAndRestartedLosesNothingAcknowledged) {
  const int seed = EnvInt("SHAREDOS_KILL_SEED", 22);
  const int rounds = EnvInt("SHAREDOS_KILL_ROUNDS", 8);
  std::printf("seed %d, %d kills\n", seed, rounds);
  std::mt19937 random(seed);

  const std::string dir = MakeDir("four");
  const std::string files = dir + "/files";
  ASSERT_TRUE(demo::WriteWorkspace(files).ok());
  ASSERT_TRUE(sharedos::testing::WriteFile(dir + "/registry.textproto", demo::RegistryText()).ok());
  FourProcessDeployment::Options options;
  options.dir = dir;
  options.registry = dir + "/registry.textproto";
  options.files_root = files;
  auto started = FourProcessDeployment::Start(std::move(options));
  ASSERT_TRUE(started.ok()) << started.status();
  FourProcessDeployment& four = **started;
  const Targets targets{four.envelope_address(), four.grantstore_address(), four.audit_address()};
  IssueBoundedGrant(targets.grantstore, four.admin_token());
  ASSERT_FALSE(::testing::Test::HasFatalFailure());

  Ledger ledger;
  Clients clients(four.admin_token(), four.host_token(), ledger);
  clients.Aim(targets);
  clients.Start(/*turn_runners=*/3);
  const std::vector<Service> services = {Service::kGrantstore, Service::kAuthorizer,
                                         Service::kEnvelope, Service::kAudit};
  for (int round = 0; round < rounds; ++round) {
    const Service victim = services[random() % services.size()];
    absl::SleepFor(absl::Milliseconds(150 + random() % 450));
    ASSERT_TRUE(four.Kill(victim).ok());
    absl::SleepFor(absl::Milliseconds(random() % 200));
    absl::Status restarted = four.Restart(victim);
    ASSERT_TRUE(restarted.ok()) << restarted;
    std::printf("round %d: killed and restarted service %d\n", round, static_cast<int>(victim));
  }
  absl::SleepFor(absl::Milliseconds(300));
  clients.Stop();
  CheckAfterCampaign(targets, four.admin_token(), four.credentials().service_token, ledger);
  EXPECT_TRUE(four.StopAll().ok());
}

TEST(KillUnderLoadTest, SharedosdKilledAndRestartedLosesNothingAcknowledged) {
  const int seed = EnvInt("SHAREDOS_KILL_SEED", 22) + 1;
  const int rounds = std::max(1, EnvInt("SHAREDOS_KILL_ROUNDS", 8) / 2);
  std::printf("seed %d, %d kills\n", seed, rounds);
  std::mt19937 random(seed);

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
  IssueBoundedGrant(sharedosd->address(), admin);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());

  Ledger ledger;
  Clients clients(admin, sharedosd->host_token(), ledger);
  auto aim = [&] {
    const std::string& address = sharedosd->address();
    clients.Aim(Targets{address, address, address});
  };
  aim();
  clients.Start(/*turn_runners=*/3);
  for (int round = 0; round < rounds; ++round) {
    absl::SleepFor(absl::Milliseconds(200 + random() % 600));
    ASSERT_EQ(kill(sharedosd->pid(), SIGKILL), 0);
    sharedosd.reset();  // reaps the killed process
    sharedosd = start();
    ASSERT_NE(sharedosd, nullptr);
    EXPECT_EQ(sharedosd->admin_token(), admin) << "tokens are kept across restarts";
    aim();
    std::printf("round %d: killed and restarted sharedosd\n", round);
  }
  absl::SleepFor(absl::Milliseconds(300));
  clients.Stop();
  const std::string& address = sharedosd->address();
  CheckAfterCampaign(Targets{address, address, address}, admin, sharedosd->service_token(), ledger);
  EXPECT_TRUE(sharedosd->Stop().ok());
}

}  // namespace
}  // namespace sharedos
