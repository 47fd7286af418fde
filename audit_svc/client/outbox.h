#ifndef SHAREDOS_AUDIT_SVC_CLIENT_OUTBOX_H_
#define SHAREDOS_AUDIT_SVC_CLIENT_OUTBOX_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/metrics/sinks.h"
#include "common/sqlite/database.h"
#include "sharedos/audit/v1/audit.pb.h"
#include "sharedos/protocol/v1/audit.pb.h"

namespace sharedos::audit::client {

// A writer's durable, bounded queue of audit records (protocol "1" events and control-plane
// events, as LogEntry) not yet acknowledged by audit_svc: one
// SQLite file, synchronous=FULL (unless opened without fsync), so an event Put() returned OK for
// survives a crash of the writer. Events leave it in the order they entered; their removal is
// not fsynced (after a power loss some acknowledged events may be delivered again: audit_svc
// deduplicates by id).
// Thread-safe.
class Outbox {
 public:
  // `fsync` false: Put commits with synchronous=NORMAL (WAL, no fsync per Put): an event Put
  // returned OK for survives a crash or kill -9 of the writer, not a power loss or OS crash —
  // for operators who chose that trade (e.g. --audit_outbox_durability=normal).
  // `metrics`: where its depth, the age of its oldest record and what it moves aside are
  // reported (depth on every change, age by ReportGauges).
  // Errors: UNAVAILABLE (cannot open the file), INVALID_ARGUMENT (max_events < 1).
  static absl::StatusOr<std::unique_ptr<Outbox>> Open(
      const std::string& path, int64_t max_events, bool fsync = true,
      common::metrics::OutboxMetrics metrics = common::metrics::OutboxMetrics());

  // Appends durably. Errors: UNAVAILABLE when the outbox holds max_events already ("full") or
  // the file cannot be written.
  absl::Status Put(const sharedos::protocol::v1::AuditEvent& event) ABSL_LOCKS_EXCLUDED(mu_);
  // Appends all of them in one transaction (one fsync), or none. Errors: as Put (full when
  // they do not all fit).
  absl::Status PutAll(const std::vector<const sharedos::audit::v1::LogEntry*>& entries)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Up to `limit` oldest records with their outbox positions (rows an earlier build stored as
  // bare "1" events come back as LogEntry.event).
  absl::StatusOr<std::vector<std::pair<int64_t, sharedos::audit::v1::LogEntry>>> Peek(int limit)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Removes every event at a position ≤ `position` (they were acknowledged).
  absl::Status RemoveThrough(int64_t position) ABSL_LOCKS_EXCLUDED(mu_);

  // Moves one event to the dead-letter table (audit_svc refused it outright; kept for operators).
  absl::Status DeadLetter(int64_t position, const std::string& reason) ABSL_LOCKS_EXCLUDED(mu_);

  absl::StatusOr<int64_t> Size() ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<int64_t> DeadLetterSize() ABSL_LOCKS_EXCLUDED(mu_);
  // How long the oldest record has waited (zero when empty; a record an earlier build stored
  // counts from when this process opened the outbox).
  absl::StatusOr<absl::Duration> OldestAge() ABSL_LOCKS_EXCLUDED(mu_);

  // Sets the gauges from the outbox as it is now (the shipper calls it on every pass).
  void ReportGauges() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  Outbox(std::unique_ptr<common::sqlite::Database> db,
         std::unique_ptr<common::sqlite::Database> remover, int64_t max_events, int64_t size,
         common::metrics::OutboxMetrics metrics)
      : db_(std::move(db)),
        remover_(std::move(remover)),
        max_events_(max_events),
        metrics_(metrics),
        opened_(absl::Now()),
        size_(size) {}

  absl::StatusOr<absl::Duration> OldestAgeLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  absl::Mutex mu_;
  std::unique_ptr<common::sqlite::Database> db_ ABSL_GUARDED_BY(mu_);
  // The same file, synchronous=NORMAL: RemoveThrough only (a lost removal re-sends
  // acknowledged events, which audit_svc deduplicates by id).
  std::unique_ptr<common::sqlite::Database> remover_ ABSL_GUARDED_BY(mu_);
  const int64_t max_events_;
  common::metrics::OutboxMetrics metrics_;
  const absl::Time opened_;
  int64_t size_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sharedos::audit::client

#endif  // SHAREDOS_AUDIT_SVC_CLIENT_OUTBOX_H_
