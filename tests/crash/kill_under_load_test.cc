// kill -9 under load, as a campaign (issue 22): clients issue grants, run turns that read through
// a grant bounded to a few uses, and escalate, while a seeded loop kills one service at a random
// moment and starts it again, round after round. Afterwards, with every service back:
//   - every grant whose IssueGrant was acknowledged is in the store;
//   - the bounded grant was never spent beyond its max uses, and every acknowledged allowed call
//     is among its counted uses;
//   - every acknowledged escalation is stored exactly once;
//   - every acknowledged allowed call has exactly one tool.invoked record, no event id appears
//     twice, and the chain verifies.
// Run against the four services as processes (each killed in turn), against one sharedosd, and
// against two replicas of each of the four services on one PostgreSQL database (issue 18: one
// replica of each service killed in every group of four kills, while the clients' calls go
// round-robin over the replicas, so a turn's calls alternate between the envelope that owns it
// and the one that forwards them).
// SHAREDOS_KILL_SEED and SHAREDOS_KILL_ROUNDS override the seed and the number of kills (the
// long variant: docs/reliability.md); the test prints both, and what it counted.
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/crash/campaign.h"
#include "tests/testing/demo_world.h"
#include "tests/testing/deployment.h"
#include "tests/testing/postgres_cluster.h"
#include "tests/testing/process.h"

namespace sharedos::crash {
namespace {

namespace demo = ::sharedos::testing::demo;
using ::sharedos::testing::CreateClusterWithDatabase;
using ::sharedos::testing::FourProcessDeployment;
using ::sharedos::testing::SharedosdDeployment;
using Service = FourProcessDeployment::Service;

// One round: a random pause, `victim` killed with SIGKILL, a random pause, started again on its
// port and files. gtest assertions.
void KillAndRestart(FourProcessDeployment& four, Service victim, int round, std::mt19937& random) {
  absl::SleepFor(absl::Milliseconds(150 + random() % 450));
  ASSERT_TRUE(four.Kill(victim).ok());
  absl::SleepFor(absl::Milliseconds(random() % 200));
  absl::Status restarted = four.Restart(victim);
  ASSERT_TRUE(restarted.ok()) << restarted;
  std::printf("round %d: killed and restarted service %d\n", round, static_cast<int>(victim));
}

TEST(KillUnderLoadTest, EachOfTheFourServicesKilledAndRestartedLosesNothingAcknowledged) {
  const int seed = EnvInt("SHAREDOS_KILL_SEED", 22);
  const int rounds = EnvInt("SHAREDOS_KILL_ROUNDS", 8);
  std::printf("seed %d, %d kills\n", seed, rounds);
  std::mt19937 random(seed);

  auto options = DemoFourProcessOptions(MakeDir("four"));
  ASSERT_TRUE(options.ok()) << options.status();
  auto started = FourProcessDeployment::Start(*std::move(options));
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
    KillAndRestart(four, victim, round, random);
    ASSERT_FALSE(::testing::Test::HasFatalFailure());
  }
  absl::SleepFor(absl::Milliseconds(300));
  clients.Stop();
  CheckAfterCampaign(targets, four.admin_token(), ledger);
  EXPECT_TRUE(four.StopAll().ok());
}

TEST(KillUnderLoadTest, OneReplicaOfEachServiceKilledOnPostgresLosesNothingAcknowledged) {
  const int seed = EnvInt("SHAREDOS_KILL_SEED", 22) + 2;
  const int rounds = std::max(4, EnvInt("SHAREDOS_KILL_ROUNDS", 8));
  std::printf("seed %d, %d kills\n", seed, rounds);
  std::mt19937 random(seed);

  auto postgres = CreateClusterWithDatabase("replicas");
  ASSERT_TRUE(postgres.ok()) << postgres.status();
  auto options = DemoFourProcessOptions(MakeDir("replicas"));
  ASSERT_TRUE(options.ok()) << options.status();
  options->database = postgres->uri;
  options->replicate_all = true;
  auto started = FourProcessDeployment::Start(*std::move(options));
  ASSERT_TRUE(started.ok()) << started.status();
  FourProcessDeployment& four = **started;
  // The clients, like the services, reach each service through one target naming both replicas.
  const Targets targets{four.target(Service::kEnvelope), four.target(Service::kGrantstore),
                        four.target(Service::kAudit)};
  IssueBoundedGrant(targets.grantstore, four.admin_token());
  ASSERT_FALSE(::testing::Test::HasFatalFailure());

  Ledger ledger;
  Clients clients(four.admin_token(), four.host_token(), ledger);
  clients.Aim(targets);
  clients.Start(/*turn_runners=*/3);
  // Each group of four kills takes one replica of every service, in a seeded order, the replica
  // chosen at random.
  const std::vector<std::pair<Service, Service>> pairs = {
      {Service::kGrantstore, Service::kGrantstoreReplica},
      {Service::kAuthorizer, Service::kAuthorizerReplica},
      {Service::kEnvelope, Service::kEnvelopeReplica},
      {Service::kAudit, Service::kAuditReplica}};
  std::vector<int> order = {0, 1, 2, 3};
  for (int round = 0; round < rounds; ++round) {
    if (round % 4 == 0) std::shuffle(order.begin(), order.end(), random);
    const auto& pair = pairs[order[round % 4]];
    const Service victim = random() % 2 == 0 ? pair.first : pair.second;
    KillAndRestart(four, victim, round, random);
    ASSERT_FALSE(::testing::Test::HasFatalFailure());
  }
  absl::SleepFor(absl::Milliseconds(300));
  clients.Stop();
  {
    // OpenTurn went round-robin: both envelope replicas own turns of the campaign.
    absl::MutexLock lock(&ledger.mu);
    for (const auto& [owner, count] : ledger.opened_by) {
      std::printf("turns opened by %s: %d\n", owner.c_str(), count);
    }
    EXPECT_GT(ledger.opened_by["turn-r1"], 0);
    EXPECT_GT(ledger.opened_by["turn-r2"], 0);
  }
  CheckAfterCampaign(targets, four.admin_token(), ledger);
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
  CheckAfterCampaign(Targets{address, address, address}, admin, ledger);
  EXPECT_TRUE(sharedosd->Stop().ok());
}

}  // namespace
}  // namespace sharedos::crash
