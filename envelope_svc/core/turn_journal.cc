#include "envelope_svc/core/turn_journal.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/sqlite/migrations.h"
#include "common/status/status_macros.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/util/delimited_message_util.h"

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
    // What the latch's ask named (docs/adr/0018): the authorities described to the turn
    // (length-delimited CapabilityRequests, at most 64) and the named one's capreq- id.
    {3, R"sql(
      ALTER TABLE open_turns ADD COLUMN latch_described BLOB;
      ALTER TABLE open_turns ADD COLUMN latch_requirement_id TEXT;
    )sql"},
};

// The described authorities as one BLOB: each CapabilityRequest length-delimited, in order.
std::string EncodeDescribed(const std::vector<protocol::v1::CapabilityRequest>& described) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    for (const protocol::v1::CapabilityRequest& request : described) {
      google::protobuf::util::SerializeDelimitedToCodedStream(request, &coded);
    }
  }
  return out;
}

// Errors: DATA_LOSS (not a sequence of at most kMaxLatchDescribed CapabilityRequests).
absl::StatusOr<std::vector<protocol::v1::CapabilityRequest>> DecodeDescribed(
    absl::string_view blob) {
  std::vector<protocol::v1::CapabilityRequest> described;
  google::protobuf::io::CodedInputStream coded(reinterpret_cast<const uint8_t*>(blob.data()),
                                               static_cast<int>(blob.size()));
  while (coded.CurrentPosition() < static_cast<int>(blob.size())) {
    if (described.size() >= TurnJournal::kMaxLatchDescribed) {
      return absl::DataLossError("turn journal: a row cannot be read");
    }
    protocol::v1::CapabilityRequest request;
    bool clean_eof = false;
    if (!google::protobuf::util::ParseDelimitedFromCodedStream(&request, &coded, &clean_eof)) {
      return absl::DataLossError("turn journal: a row cannot be read");
    }
    described.push_back(std::move(request));
  }
  return described;
}

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
  if (latch.described.size() > kMaxLatchDescribed) {
    return absl::InvalidArgumentError("turn journal: more than 64 described authorities");
  }
  const std::string described = EncodeDescribed(latch.described);
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(
      Statement mark,
      db_->Cached("UPDATE open_turns SET latched_at_us = ?2, latch_reason_sha256 = ?3, "
                  "latch_reason_length = ?4, latch_event_id = ?5, latch_described = ?6, "
                  "latch_requirement_id = ?7 "
                  "WHERE turn_id = ?1 AND latched_at_us IS NULL"));
  RETURN_IF_ERROR(mark.BindText(1, turn_id));
  RETURN_IF_ERROR(mark.BindInt64(2, absl::ToUnixMicros(latch.asked_at)));
  RETURN_IF_ERROR(mark.BindText(3, latch.reason_sha256));
  RETURN_IF_ERROR(mark.BindInt64(4, latch.reason_length));
  RETURN_IF_ERROR(mark.BindText(5, latch.requested_event_id));
  RETURN_IF_ERROR(mark.BindBlob(6, described));
  RETURN_IF_ERROR(mark.BindText(7, latch.requirement_id));
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
                               "latch_event_id, latch_described, latch_requirement_id "
                               "FROM open_turns ORDER BY turn_id"));
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
      // A latch journaled before schema 3 has neither (NULL): it names no requirement.
      if (!select.ColumnIsNull(12)) {
        ASSIGN_OR_RETURN(latch.described, DecodeDescribed(select.ColumnBlob(12)));
      }
      if (!select.ColumnIsNull(13)) latch.requirement_id = std::string(select.ColumnText(13));
      entry.latch = std::move(latch);
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

}  // namespace sharedos::envelope::core
