#include "audit_svc/client/outbox.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "common/sqlite/migrations.h"
#include "common/sqlite/transaction.h"
#include "common/status/status_macros.h"

namespace sharedos::audit::client {
namespace {

using ::sharedos::audit::v1::LogEntry;
using ::sharedos::common::sqlite::Database;
using ::sharedos::common::sqlite::Statement;
using ::sharedos::common::sqlite::Transaction;
using ::sharedos::protocol::v1::AuditEvent;

// `entry` 0: the blob is a bare protocol "1" AuditEvent (rows of earlier builds); 1: a LogEntry.
const common::sqlite::Migration kMigrations[] = {
    {1, R"sql(
      CREATE TABLE outbox (position INTEGER PRIMARY KEY AUTOINCREMENT, event BLOB NOT NULL);
      CREATE TABLE dead_letters (
        position INTEGER PRIMARY KEY, event BLOB NOT NULL, reason TEXT NOT NULL);
    )sql"},
    {2, R"sql(
      ALTER TABLE outbox ADD COLUMN entry INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE dead_letters ADD COLUMN entry INTEGER NOT NULL DEFAULT 0;
    )sql"},
    // When a record entered (Unix microseconds; 0: before this column), for the age gauge.
    {3, R"sql(
      ALTER TABLE outbox ADD COLUMN enqueued_us INTEGER NOT NULL DEFAULT 0;
    )sql"},
};

}  // namespace

absl::StatusOr<std::unique_ptr<Outbox>> Outbox::Open(const std::string& path, int64_t max_events,
                                                     bool fsync,
                                                     common::metrics::OutboxMetrics metrics) {
  if (max_events < 1) return absl::InvalidArgumentError("outbox max_events: must be at least 1");
  Database::Options options;
  options.synchronous = fsync ? Database::Synchronous::kFull : Database::Synchronous::kNormal;
  ASSIGN_OR_RETURN(std::unique_ptr<Database> db, Database::Open(path, options));
  RETURN_IF_ERROR(common::sqlite::Migrate(*db, kMigrations));
  ASSIGN_OR_RETURN(Statement count, db->Prepare("SELECT COUNT(*) FROM outbox"));
  ASSIGN_OR_RETURN(bool row, count.Step());
  const int64_t size = row ? count.ColumnInt64(0) : 0;
  // Removals need no fsync: an acknowledged event that comes back after a power loss is sent
  // again, and audit_svc answers it as a duplicate (same id, same content).
  Database::Options removal_options;
  removal_options.synchronous = Database::Synchronous::kNormal;
  ASSIGN_OR_RETURN(std::unique_ptr<Database> remover, Database::Open(path, removal_options));
  std::unique_ptr<Outbox> outbox(
      new Outbox(std::move(db), std::move(remover), max_events, size, metrics));
  outbox->ReportGauges();
  return outbox;
}

absl::Status Outbox::Put(const AuditEvent& event) {
  LogEntry entry;
  *entry.mutable_event() = event;
  return PutAll({&entry});
}

absl::Status Outbox::PutAll(const std::vector<const LogEntry*>& events) {
  absl::MutexLock lock(&mu_);
  if (size_ + static_cast<int64_t>(events.size()) > max_events_) {
    return absl::UnavailableError("audit outbox full: audit_svc has not taken events for a while");
  }
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(*db_));
  {
    ASSIGN_OR_RETURN(
        Statement insert,
        db_->Cached("INSERT INTO outbox (event, entry, enqueued_us) VALUES (?1, 1, ?2)"));
    std::string bytes;
    const int64_t now_us = absl::ToUnixMicros(absl::Now());
    for (const LogEntry* event : events) {
      if (!event->SerializeToString(&bytes)) {
        return absl::InternalError("audit event does not serialize");
      }
      RETURN_IF_ERROR(insert.BindBlob(1, bytes));
      RETURN_IF_ERROR(insert.BindInt64(2, now_us));
      RETURN_IF_ERROR(insert.Step().status());
    }
  }
  RETURN_IF_ERROR(txn.Commit());
  size_ += static_cast<int64_t>(events.size());
  metrics_.Depth(size_);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::pair<int64_t, LogEntry>>> Outbox::Peek(int limit) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(Statement select, db_->Cached("SELECT position, event, entry FROM outbox "
                                                 "ORDER BY position LIMIT ?1"));
  RETURN_IF_ERROR(select.BindInt64(1, limit));
  std::vector<std::pair<int64_t, LogEntry>> events;
  while (true) {
    ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) break;
    LogEntry entry;
    absl::string_view bytes = select.ColumnBlob(1);
    const bool parsed =
        select.ColumnInt64(2) == 0
            ? entry.mutable_event()->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))
            : entry.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
    if (!parsed) return absl::DataLossError("audit outbox: a stored event does not parse");
    events.emplace_back(select.ColumnInt64(0), std::move(entry));
  }
  return events;
}

absl::Status Outbox::RemoveThrough(int64_t position) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(Statement remove, remover_->Cached("DELETE FROM outbox WHERE position <= ?1"));
  RETURN_IF_ERROR(remove.BindInt64(1, position));
  RETURN_IF_ERROR(remove.Step().status());
  size_ -= remover_->Changes();
  metrics_.Depth(size_);
  if (size_ == 0) metrics_.Outbox(0, absl::ZeroDuration());
  return absl::OkStatus();
}

absl::Status Outbox::DeadLetter(int64_t position, const std::string& reason) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(*db_));
  {
    ASSIGN_OR_RETURN(
        Statement move,
        db_->Cached("INSERT INTO dead_letters (position, event, reason, entry) "
                    "SELECT position, event, ?2, entry FROM outbox WHERE position = ?1"));
    RETURN_IF_ERROR(move.BindInt64(1, position));
    RETURN_IF_ERROR(move.BindText(2, reason));
    RETURN_IF_ERROR(move.Step().status());
  }
  {
    ASSIGN_OR_RETURN(Statement remove, db_->Cached("DELETE FROM outbox WHERE position = ?1"));
    RETURN_IF_ERROR(remove.BindInt64(1, position));
    RETURN_IF_ERROR(remove.Step().status());
  }
  const int64_t removed = db_->Changes();
  RETURN_IF_ERROR(txn.Commit());
  size_ -= removed;
  metrics_.Depth(size_);
  metrics_.MovedAside(removed);
  return absl::OkStatus();
}

absl::StatusOr<int64_t> Outbox::Size() {
  absl::MutexLock lock(&mu_);
  return size_;
}

absl::StatusOr<int64_t> Outbox::DeadLetterSize() {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(Statement count, db_->Prepare("SELECT COUNT(*) FROM dead_letters"));
  ASSIGN_OR_RETURN(bool row, count.Step());
  return row ? count.ColumnInt64(0) : 0;
}

absl::StatusOr<absl::Duration> Outbox::OldestAge() {
  absl::MutexLock lock(&mu_);
  return OldestAgeLocked();
}

absl::StatusOr<absl::Duration> Outbox::OldestAgeLocked() {
  if (size_ == 0) return absl::ZeroDuration();
  ASSIGN_OR_RETURN(Statement oldest,
                   db_->Cached("SELECT enqueued_us FROM outbox ORDER BY position LIMIT 1"));
  ASSIGN_OR_RETURN(bool row, oldest.Step());
  if (!row) return absl::ZeroDuration();
  const int64_t enqueued_us = oldest.ColumnInt64(0);
  const absl::Time enqueued = enqueued_us == 0 ? opened_ : absl::FromUnixMicros(enqueued_us);
  return std::max(absl::ZeroDuration(), absl::Now() - enqueued);
}

void Outbox::ReportGauges() {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<absl::Duration> age = OldestAgeLocked();
  // An unreadable outbox keeps its last age: the depth still tells.
  if (age.ok()) metrics_.Outbox(size_, *age);
}

}  // namespace sharedos::audit::client
