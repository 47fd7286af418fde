#ifndef SHAREDOS_AUDIT_SVC_CLIENT_AUDIT_CLIENT_H_
#define SHAREDOS_AUDIT_SVC_CLIENT_AUDIT_CLIENT_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "audit_svc/client/audit_writer.h"
#include "audit_svc/client/outbox.h"
#include "common/metrics/metrics.h"
#include "common/server/outbox_registry.h"
#include "common/time/clock.h"
#include "sharedos/audit/v1/audit.grpc.pb.h"

namespace sharedos::audit::client {

// Where an AuditClient delivers its records: audit_svc's Append — over gRPC with the writer's
// service credential (GrpcAppendTarget), or, in sharedosd, into the log in the same process
// stamped with the writer's principal and no credential at all (AuditServer). Thread-safe.
class AppendTarget {
 public:
  virtual ~AppendTarget() = default;
  // audit_svc's answer within `deadline`: OK once durable; INVALID_ARGUMENT, FAILED_PRECONDITION
  // and PERMISSION_DENIED when it refuses the records outright; anything else is an outage.
  virtual absl::Status Append(const sharedos::audit::v1::AppendRequest& request,
                              absl::Time deadline) = 0;
};

// audit_svc over gRPC, each call with "authorization: Bearer <token>" (never logged).
std::unique_ptr<AppendTarget> GrpcAppendTarget(
    std::unique_ptr<sharedos::audit::v1::AuditLog::StubInterface> stub, std::string token);

// Where pre-effect records become durable before the operation proceeds.
enum class PreEffectMode {
  // Appended to audit_svc synchronously, within `append_deadline`: the record is in the one log
  // before the operation runs; costs one round trip per pre-effect record.
  kRemote,
  // fsynced into this writer's outbox and shipped from there: no round trip on the hot path, but
  // the outbox must live on durable storage (in a container: a volume), and a full outbox fails.
  kLocal,
};

struct AuditClientOptions {
  PreEffectMode mode = PreEffectMode::kRemote;
  // The writer's service credential for audit_svc (sent as "Bearer <token>"; never logged) when
  // created over a stub.
  std::string token;
  // The durable outbox file.
  std::string outbox_path;
  // false: the outbox commits without fsync (synchronous=NORMAL): a record it took survives a
  // crash of this process, not a power loss or OS crash. Local mode then pays no fsync per
  // pre-effect record. Default true.
  bool outbox_fsync = true;
  int64_t max_outbox_events = 100000;
  absl::Duration append_deadline = absl::Seconds(2);
  int batch_size = 500;
  // The shipper waits this long after finding fewer than batch_size events, so a steady stream
  // leaves in batches rather than one Append per record competing with the callers for CPU.
  // Events are durable in the outbox meanwhile; this only delays their arrival at audit_svc.
  absl::Duration ship_linger = absl::Milliseconds(5);
  absl::Duration min_backoff = absl::Milliseconds(50);
  absl::Duration max_backoff = absl::Seconds(5);
  // Told about events audit_svc refused outright (moved to the dead-letter table) and about
  // post-effect records the outbox could not take. Never receives event content.
  std::function<void(const absl::Status&)> on_error;
  // Where the outbox reports its depth, age and undeliverable records (borrowed; null: nowhere),
  // as writer="<writer>" (a fixed word: "grantstore", "authorizer", "envelope").
  common::metrics::Metrics* metrics = nullptr;
  std::string writer;
  // The clock the shipper waits on (linger, backoff, idle) and Flush's timeout runs on; a test
  // drives the shipper with a SimulatedClock. Borrowed; must outlive the client.
  const common::Clock* clock = &common::RealClock();
};

// The AuditWriter every service uses against a running audit_svc. Post-effect records (and, in
// local mode, pre-effect ones) go to the durable outbox and a shipper thread delivers them in
// order, in batches, with exponential backoff while audit_svc is away; event ids make delivery
// exactly-once (audit_svc reports a re-sent id as a duplicate). Thread-safe.
class AuditClient : public AuditWriter {
 public:
  // Errors: UNAVAILABLE (outbox cannot be opened), INVALID_ARGUMENT (options).
  static absl::StatusOr<std::unique_ptr<AuditClient>> Create(std::unique_ptr<AppendTarget> target,
                                                             AuditClientOptions options);
  // Over gRPC: Create(GrpcAppendTarget(stub, options.token), options).
  static absl::StatusOr<std::unique_ptr<AuditClient>> Create(
      std::unique_ptr<sharedos::audit::v1::AuditLog::StubInterface> stub,
      AuditClientOptions options);
  // Stops the shipper; whatever is still in the outbox is delivered by the next start.
  ~AuditClient() override;

  absl::Status RecordPreEffect(sharedos::protocol::v1::AuditEvent event) override;
  absl::Status RecordPostEffect(sharedos::protocol::v1::AuditEvent event) override;
  // As RecordPreEffect (remote: appended before OK; local: fsynced into the outbox).
  absl::Status RecordControlPlane(sharedos::audit::v1::ControlPlaneEvent event) override;

  // Blocks until the outbox is empty or `timeout` passes; true when empty. For tests and
  // orderly shutdown.
  bool Flush(absl::Duration timeout);
  absl::StatusOr<int64_t> PendingEvents() { return outbox_->Size(); }

 private:
  AuditClient(std::unique_ptr<AppendTarget> target, std::unique_ptr<Outbox> outbox,
              AuditClientOptions options);

  // Stamps version and id, and refuses what audit_svc would refuse (so nothing malformed ever
  // sits in the outbox).
  absl::Status Prepare(sharedos::protocol::v1::AuditEvent& event) const;
  // One caller's pre-effect record (either kind) waiting for its group.
  struct PreEffectWaiter {
    const sharedos::audit::v1::LogEntry* entry = nullptr;
    bool done = false;
    absl::Status status;
  };
  // Makes a group of every pre-effect record waiting and makes it durable at once (one Append in
  // remote mode, one fsync in local mode): concurrent callers share the cost. The caller that
  // finds no group in flight leads; it hands leadership on once its own record is settled.
  absl::Status RecordPreEffectGrouped(const sharedos::audit::v1::LogEntry& entry)
      ABSL_LOCKS_EXCLUDED(pre_mu_);
  absl::Status MakeDurable(const std::vector<const sharedos::audit::v1::LogEntry*>& entries);
  absl::Status AppendNow(const std::vector<const sharedos::audit::v1::LogEntry*>& entries);
  void ShipLoop() ABSL_LOCKS_EXCLUDED(mu_);
  // Delivers one batch; returns false when audit_svc could not be reached.
  bool ShipOnce();
  void Wake() ABSL_LOCKS_EXCLUDED(mu_);
  void Report(const absl::Status& status);

  const std::unique_ptr<AppendTarget> target_;
  const std::unique_ptr<Outbox> outbox_;
  const AuditClientOptions options_;

  absl::Mutex pre_mu_;
  std::vector<PreEffectWaiter*> pre_queue_ ABSL_GUARDED_BY(pre_mu_);
  bool pre_leader_ ABSL_GUARDED_BY(pre_mu_) = false;

  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  int64_t wakeups_ ABSL_GUARDED_BY(mu_) = 0;
  // Delivery attempts the shipper has finished (Flush waits for the next one).
  int64_t passes_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread shipper_;
  // Its outbox in the process's status (sharedosctl status), for a named writer; reset first
  // on destruction.
  std::unique_ptr<common::server::OutboxRegistration> registration_;
};

// An AuditWriter that drops everything: only for `--audit=discard`, chosen explicitly.
class DiscardAuditWriter : public AuditWriter {
 public:
  absl::Status RecordPreEffect(sharedos::protocol::v1::AuditEvent) override {
    return absl::OkStatus();
  }
  absl::Status RecordPostEffect(sharedos::protocol::v1::AuditEvent) override {
    return absl::OkStatus();
  }
  absl::Status RecordControlPlane(sharedos::audit::v1::ControlPlaneEvent) override {
    return absl::OkStatus();
  }
};

}  // namespace sharedos::audit::client

#endif  // SHAREDOS_AUDIT_SVC_CLIENT_AUDIT_CLIENT_H_
