#include "envelope_svc/core/turn_journal.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/sqlite/migrations.h"
#include "common/status/status_macros.h"

namespace sharedos::envelope::core {
namespace {

using common::sqlite::Database;
using common::sqlite::Statement;

const common::sqlite::Migration kMigrations[] = {
    {1, R"sql(
      CREATE TABLE open_turns (
        turn_id TEXT PRIMARY KEY,
        execution_id TEXT NOT NULL,
        runtime INTEGER NOT NULL,
        context BLOB NOT NULL,
        lease_id TEXT NOT NULL,
        started_at_us INTEGER NOT NULL,
        ended_event_id TEXT NOT NULL,
        interrupted_at_us INTEGER);
    )sql"},
    // The MCP escalation latch (ADR 0009, "A latched escalation"): NULL until the turn asked.
    {2, R"sql(
      ALTER TABLE open_turns ADD COLUMN latched_at_us INTEGER;
      ALTER TABLE open_turns ADD COLUMN latch_reason_sha256 TEXT;
      ALTER TABLE open_turns ADD COLUMN latch_reason_length INTEGER;
      ALTER TABLE open_turns ADD COLUMN latch_event_id TEXT;
    )sql"},
};

}  // namespace

absl::StatusOr<std::unique_ptr<TurnJournal>> TurnJournal::Open(const std::string& path,
                                                               bool fsync) {
  Database::Options options;
  options.synchronous = fsync ? Database::Synchronous::kFull : Database::Synchronous::kNormal;
  auto db = Database::Open(path, options);
  if (!db.ok()) {
    return absl::UnavailableError(absl::StrCat("turn journal: ", db.status().message()));
  }
  absl::Status migrated = common::sqlite::Migrate(**db, kMigrations);
  if (!migrated.ok()) {
    return absl::UnavailableError(absl::StrCat("turn journal: ", migrated.message()));
  }
  Database::Options removal_options;
  removal_options.synchronous = Database::Synchronous::kNormal;
  auto remover = Database::Open(path, removal_options);
  if (!remover.ok()) {
    return absl::UnavailableError(absl::StrCat("turn journal: ", remover.status().message()));
  }
  return std::unique_ptr<TurnJournal>(new TurnJournal(*std::move(db), *std::move(remover)));
}

absl::Status TurnJournal::Put(const Entry& entry) {
  if (entry.turn_id.empty()) return absl::InvalidArgumentError("turn journal: empty turn id");
  if (entry.ended_event_id.empty()) {
    return absl::InvalidArgumentError("turn journal: empty ended event id");
  }
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(Statement insert,
                   db_->Cached("INSERT INTO open_turns (turn_id, execution_id, runtime, context, "
                               "lease_id, started_at_us, ended_event_id) "
                               "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"));
  RETURN_IF_ERROR(insert.BindText(1, entry.turn_id));
  RETURN_IF_ERROR(insert.BindText(2, entry.execution_id));
  RETURN_IF_ERROR(insert.BindInt64(3, static_cast<int64_t>(entry.runtime)));
  RETURN_IF_ERROR(insert.BindBlob(4, entry.context.SerializeAsString()));
  RETURN_IF_ERROR(insert.BindText(5, entry.lease_id));
  RETURN_IF_ERROR(insert.BindInt64(6, absl::ToUnixMicros(entry.started_at)));
  RETURN_IF_ERROR(insert.BindText(7, entry.ended_event_id));
  return insert.Step().status();
}

absl::Status TurnJournal::Remove(const std::string& turn_id) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(Statement remove, remover_->Cached("DELETE FROM open_turns WHERE turn_id = ?1"));
  RETURN_IF_ERROR(remove.BindText(1, turn_id));
  return remove.Step().status();
}

absl::Status TurnJournal::MarkLatched(const std::string& turn_id, const Entry::Latch& latch) {
  if (turn_id.empty()) return absl::InvalidArgumentError("turn journal: empty turn id");
  if (latch.requested_event_id.empty()) {
    return absl::InvalidArgumentError("turn journal: empty requested event id");
  }
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(
      Statement mark,
      db_->Cached("UPDATE open_turns SET latched_at_us = ?2, latch_reason_sha256 = ?3, "
                  "latch_reason_length = ?4, latch_event_id = ?5 "
                  "WHERE turn_id = ?1 AND latched_at_us IS NULL"));
  RETURN_IF_ERROR(mark.BindText(1, turn_id));
  RETURN_IF_ERROR(mark.BindInt64(2, absl::ToUnixMicros(latch.asked_at)));
  RETURN_IF_ERROR(mark.BindText(3, latch.reason_sha256));
  RETURN_IF_ERROR(mark.BindInt64(4, latch.reason_length));
  RETURN_IF_ERROR(mark.BindText(5, latch.requested_event_id));
  return mark.Step().status();
}

absl::StatusOr<absl::Time> TurnJournal::MarkInterrupted(const std::string& turn_id, absl::Time at) {
  absl::MutexLock lock(&mu_);
  {
    ASSIGN_OR_RETURN(Statement mark,
                     db_->Cached("UPDATE open_turns SET interrupted_at_us = ?2 "
                                 "WHERE turn_id = ?1 AND interrupted_at_us IS NULL"));
    RETURN_IF_ERROR(mark.BindText(1, turn_id));
    RETURN_IF_ERROR(mark.BindInt64(2, absl::ToUnixMicros(at)));
    RETURN_IF_ERROR(mark.Step().status());
  }
  ASSIGN_OR_RETURN(Statement read, db_->Cached("SELECT interrupted_at_us FROM open_turns "
                                               "WHERE turn_id = ?1"));
  RETURN_IF_ERROR(read.BindText(1, turn_id));
  ASSIGN_OR_RETURN(bool row, read.Step());
  if (!row || read.ColumnIsNull(0)) return absl::NotFoundError("turn journal: no such turn");
  return absl::FromUnixMicros(read.ColumnInt64(0));
}

absl::StatusOr<std::vector<TurnJournal::Entry>> TurnJournal::List() const {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(Statement select,
                   db_->Cached("SELECT turn_id, execution_id, runtime, context, lease_id, "
                               "started_at_us, ended_event_id, interrupted_at_us, "
                               "latched_at_us, latch_reason_sha256, latch_reason_length, "
                               "latch_event_id FROM open_turns ORDER BY turn_id"));
  std::vector<Entry> entries;
  while (true) {
    ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) break;
    Entry entry;
    entry.turn_id = std::string(select.ColumnText(0));
    entry.execution_id = std::string(select.ColumnText(1));
    const int64_t runtime = select.ColumnInt64(2);
    if (!v1::Runtime_IsValid(static_cast<int>(runtime)) ||
        !entry.context.ParseFromString(std::string(select.ColumnBlob(3)))) {
      return absl::DataLossError("turn journal: a row cannot be read");
    }
    entry.runtime = static_cast<v1::Runtime>(runtime);
    entry.lease_id = std::string(select.ColumnText(4));
    entry.started_at = absl::FromUnixMicros(select.ColumnInt64(5));
    entry.ended_event_id = std::string(select.ColumnText(6));
    if (!select.ColumnIsNull(7)) entry.interrupted_at = absl::FromUnixMicros(select.ColumnInt64(7));
    if (!select.ColumnIsNull(8)) {
      if (select.ColumnIsNull(11)) return absl::DataLossError("turn journal: a row cannot be read");
      Entry::Latch latch;
      latch.asked_at = absl::FromUnixMicros(select.ColumnInt64(8));
      latch.reason_sha256 = std::string(select.ColumnText(9));
      latch.reason_length = select.ColumnInt64(10);
      latch.requested_event_id = std::string(select.ColumnText(11));
      entry.latch = std::move(latch);
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

}  // namespace sharedos::envelope::core
