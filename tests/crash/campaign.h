// The shared parts of the crash campaigns (docs/reliability.md): clients that load a deployment
// of the demo world (grants issued, turns that read through a grant bounded to kMaxUses and then
// complete or escalate), the ledger of what the deployment acknowledged to them, and the checks
// that nothing acknowledged was lost once every service is back. Thread-safe: Clients runs its
// own threads; Ledger is guarded by its mutex.

#ifndef SHAREDOS_TESTS_CRASH_CAMPAIGN_H_
#define SHAREDOS_TESTS_CRASH_CAMPAIGN_H_

#include <atomic>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "sharedos/envelope/v1/envelope.grpc.pb.h"
#include "sharedos/grantstore/v1/grantstore.grpc.pb.h"
#include "sharedos/protocol/v1/grant.pb.h"
#include "tests/testing/deployment.h"

namespace sharedos::crash {

// The demo grant, bounded: its reads run out during a campaign.
inline constexpr int64_t kMaxUses = 120;

// The integer in environment variable `name`, or `fallback`.
int EnvInt(const char* name, int fallback);
// A context with "authorization: Bearer <token>" and a deadline `timeout` from now.
std::unique_ptr<grpc::ClientContext> As(const std::string& token, absl::Duration timeout);
// A channel that reconnects quickly to a restarted service; a list of replicas
// ("ipv4:<a>,<b>") takes calls in turn (round_robin).
std::shared_ptr<grpc::Channel> Connect(const std::string& address);
// "$TEST_TMPDIR/<name>", created.
std::string MakeDir(const std::string& name);
// The demo world written under `dir` (the files workspace `dir`/files and the tool registry),
// and the options of a four-process deployment in `dir` that serves it.
absl::StatusOr<::sharedos::testing::FourProcessDeployment::Options> DemoFourProcessOptions(
    const std::string& dir);

// The addresses the clients call; they change when sharedosd restarts on a new port.
struct Targets {
  std::string envelope, grantstore, audit;
};

// What the deployment acknowledged, as the clients saw it, and what refused them.
struct Ledger {
  absl::Mutex mu;
  std::set<std::string> grants ABSL_GUARDED_BY(mu);
  std::set<std::string> allowed_calls ABSL_GUARDED_BY(mu);
  std::set<std::string> escalated_executions ABSL_GUARDED_BY(mu);
  // A refusal's reason code or transport error text (cut to 120 characters), counted.
  std::map<std::string, int> refusals ABSL_GUARDED_BY(mu);
  // Turns opened, by the part of the turn id before its first '.' (an envelope replica's id
  // names the replica that owns the turn, ADR 0011).
  std::map<std::string, int> opened_by ABSL_GUARDED_BY(mu);
  std::atomic<int64_t> attempts{0};
};

// One thread issuing grants and `turn_runners` running turns, until Stop.
class Clients {
 public:
  Clients(std::string admin, std::string host, Ledger& ledger)
      : admin_(std::move(admin)), host_(std::move(host)), ledger_(ledger) {}
  // Stops the threads if still running (a test that failed half-way).
  ~Clients() { Stop(); }

  // (Re)points the clients at `targets`; calls in flight finish on the old channels.
  void Aim(const Targets& targets);
  void Start(int turn_runners);
  void Stop();

 private:
  std::shared_ptr<envelope::v1::Envelope::Stub> Envelope();
  std::shared_ptr<grantstore::v1::GrantStore::Stub> Grants();
  void IssueGrants();
  void RunTurns(int runner);
  void Note(const std::string& what);
  void Read(envelope::v1::Envelope::Stub& envelope, const std::string& turn_id,
            const std::string& call_id);
  void Finish(envelope::v1::Envelope::Stub& envelope, const std::string& turn_id,
              const std::string& execution, bool escalate);

  const std::string admin_, host_;
  Ledger& ledger_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
  absl::Mutex mu_;
  std::shared_ptr<envelope::v1::Envelope::Stub> envelope_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<grantstore::v1::GrantStore::Stub> grants_ ABSL_GUARDED_BY(mu_);
};

// The turn.ended records of `execution` in the audit log at `audit_address` (read as `admin`),
// once `want` are in or 30 s pass (an envelope's outbox delivers them); each must be the ending
// of an interrupted turn (outcome interrupted, operation_aborted, fail closed, ended by the
// envelope: ADR 0009). gtest assertions.
int InterruptedTurnEndedCount(const std::string& audit_address, const std::string& admin,
                              const std::string& execution, int want);

// The demo grant with constraints.max_uses = kMaxUses.
protocol::v1::CapabilityGrant BoundedDemoGrant();
// Issues BoundedDemoGrant as `admin` (gtest assertions).
void IssueBoundedGrant(const std::string& grantstore, const std::string& admin);

// The audit log's chain verifies (audit Verify as `admin`); answers the records checked. gtest
// assertions.
int64_t ExpectAuditVerified(const std::string& audit_address, const std::string& admin);

// Once every service is back: every acknowledged grant stored; the bounded grant counted between
// the acknowledged reads and kMaxUses; every acknowledged escalation stored once; every
// acknowledged read with exactly one tool.invoked (waiting up to 60 s for the writers' outboxes);
// no event id twice; the chain verified. Prints the ledger and the figures. gtest assertions.
void CheckAfterCampaign(const Targets& targets, const std::string& admin, Ledger& ledger);

}  // namespace sharedos::crash

#endif  // SHAREDOS_TESTS_CRASH_CAMPAIGN_H_
