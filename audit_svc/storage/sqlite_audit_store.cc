#include "audit_svc/storage/sqlite_audit_store.h"

#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "audit_svc/storage/chain_verifier.h"
#include "audit_svc/storage/event_codec.h"
#include "capability/address.h"
#include "common/sqlite/migrations.h"
#include "common/sqlite/transaction.h"
#include "common/status/status_macros.h"
#include "google/protobuf/util/time_util.h"

namespace sharedos::audit::storage {
namespace {

using ::google::protobuf::util::TimeUtil;
using ::sharedos::audit::v1::AuditFilter;
using ::sharedos::audit::v1::AuditRecord;
using ::sharedos::common::sqlite::Database;
using ::sharedos::common::sqlite::Statement;
using ::sharedos::common::sqlite::Transaction;

const common::sqlite::Migration kMigrations[] = {
    {1, R"sql(
      CREATE TABLE audit_records (
        sequence INTEGER PRIMARY KEY,
        event_id TEXT NOT NULL UNIQUE,
        type INTEGER NOT NULL,
        outcome INTEGER NOT NULL,
        namespace_id TEXT NOT NULL,
        trace_id TEXT NOT NULL,
        execution_id TEXT NOT NULL,
        reason TEXT NOT NULL,
        source INTEGER,
        actor TEXT NOT NULL,
        at_micros INTEGER NOT NULL,
        event_json TEXT NOT NULL,
        prev_hash TEXT NOT NULL,
        hash TEXT NOT NULL,
        recorded_at_micros INTEGER NOT NULL
      );
      CREATE INDEX audit_records_by_namespace ON audit_records(namespace_id, sequence);
      CREATE INDEX audit_records_by_trace ON audit_records(trace_id, sequence);
      CREATE INDEX audit_records_by_execution ON audit_records(execution_id, sequence);
      -- The chain's head, kept beside the records so that removing the last records is detected.
      CREATE TABLE audit_head (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        sequence INTEGER NOT NULL,
        hash TEXT NOT NULL
      );
      INSERT INTO audit_head (id, sequence, hash)
        VALUES (1, 0, '0000000000000000000000000000000000000000000000000000000000000000');
    )sql"},
    // The lookup keys move to a narrow derived table that the indexer fills off the commit path
    // (see the class comment); the records keep their columns (Verify checks them).
    {2, R"sql(
      CREATE TABLE audit_keys (
        sequence INTEGER PRIMARY KEY,
        namespace_id TEXT NOT NULL,
        trace_id TEXT NOT NULL,
        execution_id TEXT NOT NULL
      );
      INSERT INTO audit_keys (sequence, namespace_id, trace_id, execution_id)
        SELECT sequence, namespace_id, trace_id, execution_id FROM audit_records
        WHERE sequence <= (SELECT sequence FROM audit_head WHERE id = 1);
      CREATE INDEX audit_keys_by_namespace ON audit_keys(namespace_id, sequence);
      CREATE INDEX audit_keys_by_trace ON audit_keys(trace_id, sequence);
      CREATE INDEX audit_keys_by_execution ON audit_keys(execution_id, sequence);
      DROP INDEX audit_records_by_namespace;
      DROP INDEX audit_records_by_trace;
      DROP INDEX audit_records_by_execution;
    )sql"},
};

constexpr char kInsertSql[] =
    "INSERT INTO audit_records (sequence, event_id, type, outcome, namespace_id, trace_id, "
    "execution_id, reason, source, actor, at_micros, event_json, prev_hash, hash, "
    "recorded_at_micros) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15) "
    "ON CONFLICT(event_id) DO NOTHING";

// The record columns of `audit_records AS r`, in the order RecordFromRow and StoredColumns read.
constexpr char kSelectColumns[] =
    "SELECT r.sequence, r.event_id, r.type, r.outcome, r.namespace_id, r.trace_id, "
    "r.execution_id, r.reason, r.source, r.actor, r.at_micros, r.event_json, r.prev_hash, r.hash, "
    "r.recorded_at_micros";

// One indexer batch: the committed records in (?1, ?2]. REPLACE, so a keys row forged ahead of
// the log is overwritten by the record's own keys instead of wedging the indexer.
constexpr char kIndexSql[] =
    "INSERT OR REPLACE INTO audit_keys (sequence, namespace_id, trace_id, execution_id) "
    "SELECT sequence, namespace_id, trace_id, execution_id FROM audit_records "
    "WHERE sequence > ?1 AND sequence <= ?2";

absl::Status BindColumns(Statement& insert, int64_t sequence, const std::string& event_id,
                         const IndexedColumns& columns, absl::string_view json,
                         absl::string_view prev_hash, absl::string_view hash,
                         int64_t recorded_at_micros) {
  RETURN_IF_ERROR(insert.BindInt64(1, sequence));
  RETURN_IF_ERROR(insert.BindText(2, event_id));
  RETURN_IF_ERROR(insert.BindInt64(3, columns.type));
  RETURN_IF_ERROR(insert.BindInt64(4, columns.outcome));
  RETURN_IF_ERROR(insert.BindText(5, columns.namespace_id));
  RETURN_IF_ERROR(insert.BindText(6, columns.trace_id));
  RETURN_IF_ERROR(insert.BindText(7, columns.execution_id));
  RETURN_IF_ERROR(insert.BindText(8, columns.reason));
  if (columns.source.has_value()) {
    RETURN_IF_ERROR(insert.BindInt64(9, *columns.source));
  } else {
    RETURN_IF_ERROR(insert.BindNull(9));
  }
  RETURN_IF_ERROR(insert.BindText(10, columns.actor));
  RETURN_IF_ERROR(insert.BindInt64(11, columns.at_micros));
  RETURN_IF_ERROR(insert.BindText(12, json));
  RETURN_IF_ERROR(insert.BindText(13, prev_hash));
  RETURN_IF_ERROR(insert.BindText(14, hash));
  return insert.BindInt64(15, recorded_at_micros);
}

// Runs constant SQL that returns no rows through the connection's statement cache (no parsing
// per call, unlike Exec).
absl::Status RunCached(Database& db, const char* sql) {
  ASSIGN_OR_RETURN(Statement statement, db.Cached(sql));
  return statement.Step().status();
}

// The indexed columns as stored in a row read with kSelectColumns.
IndexedColumns StoredColumns(const Statement& row) {
  IndexedColumns columns;
  columns.type = static_cast<int>(row.ColumnInt64(2));
  columns.outcome = static_cast<int>(row.ColumnInt64(3));
  columns.namespace_id = std::string(row.ColumnText(4));
  columns.trace_id = std::string(row.ColumnText(5));
  columns.execution_id = std::string(row.ColumnText(6));
  columns.reason = std::string(row.ColumnText(7));
  if (!row.ColumnIsNull(8)) columns.source = static_cast<int>(row.ColumnInt64(8));
  columns.actor = std::string(row.ColumnText(9));
  columns.at_micros = row.ColumnInt64(10);
  return columns;
}

absl::StatusOr<AuditRecord> RecordFromRow(const Statement& row) {
  AuditRecord record;
  record.set_sequence(row.ColumnInt64(0));
  RETURN_IF_ERROR(ParseRecordJson(row.ColumnText(11), record));
  record.set_prev_hash(std::string(row.ColumnText(12)));
  record.set_hash(std::string(row.ColumnText(13)));
  *record.mutable_recorded_at() = TimeUtil::MicrosecondsToTimestamp(row.ColumnInt64(14));
  return record;
}

// Indexes the records in (from, to]; one statement, so it commits (or fails) on its own.
absl::Status IndexRange(Database& db, int64_t from, int64_t to) {
  if (from >= to) return absl::OkStatus();
  ASSIGN_OR_RETURN(Statement insert, db.Cached(kIndexSql));
  RETURN_IF_ERROR(insert.BindInt64(1, from));
  RETURN_IF_ERROR(insert.BindInt64(2, to));
  return insert.Step().status();
}

absl::StatusOr<int64_t> SelectInt64(Database& db, const char* sql, int64_t parameter) {
  ASSIGN_OR_RETURN(Statement select, db.Cached(sql));
  RETURN_IF_ERROR(select.BindInt64(1, parameter));
  ASSIGN_OR_RETURN(bool row, select.Step());
  if (!row || select.ColumnIsNull(0)) return absl::InternalError(absl::StrCat("no value: ", sql));
  return select.ColumnInt64(0);
}

}  // namespace

const char* SqliteAuditStore::InsertSql() { return kInsertSql; }

absl::StatusOr<std::string> SqliteAuditStore::PendingUpgrade(const std::string& path) {
  // Not SQLite's read-only mode: a WAL file closed cleanly has no -shm, which a read-only
  // connection cannot create. Nothing is written here all the same.
  Database::Options options;
  options.create = false;
  options.wal = false;
  absl::StatusOr<std::unique_ptr<Database>> db = Database::Open(path, options);
  if (!db.ok()) {
    // No file yet: Open creates it at the current schema, nothing to go over.
    if (::access(path.c_str(), F_OK) != 0) return std::string();
    return db.status();
  }
  ASSIGN_OR_RETURN(const int version, common::sqlite::SchemaVersion(**db));
  const int current = std::end(kMigrations)[-1].version;
  // A newer schema than this binary knows is Open's (the migrator's) to refuse.
  if (version == 0 || version >= current) return std::string();
  ASSIGN_OR_RETURN(Statement count,
                   (*db)->Prepare("SELECT COALESCE(MAX(sequence), 0) FROM audit_records"));
  ASSIGN_OR_RETURN(bool row, count.Step());
  const int64_t records = row ? count.ColumnInt64(0) : 0;
  return absl::StrCat("upgrading the audit log ", path, " from schema ", version, " to ", current,
                      " over its ", records, records == 1 ? " record" : " records",
                      " (once; a large log takes a while)");
}

absl::StatusOr<std::unique_ptr<SqliteAuditStore>> SqliteAuditStore::Open(
    const std::string& path, const Options& store_options) {
  if (path.empty() || path == ":memory:") {
    return absl::InvalidArgumentError("audit store path: must be a file");
  }
  Database::Options options;
  options.synchronous = store_options.durability == Durability::kFull
                            ? Database::Synchronous::kFull
                            : Database::Synchronous::kNormal;
  ASSIGN_OR_RETURN(std::unique_ptr<Database> writer, Database::Open(path, options));
  RETURN_IF_ERROR(common::sqlite::Migrate(*writer, kMigrations));
  // Crash recovery: records committed but not indexed before the store last closed. The
  // indexer only ever adds the records after the last indexed one, so audit_keys holds a
  // prefix of the log (keys rows beyond the head can only be forged, and are ignored).
  ASSIGN_OR_RETURN(const int64_t head_sequence,
                   SelectInt64(*writer, "SELECT sequence FROM audit_head WHERE id = ?1", 1));
  ASSIGN_OR_RETURN(const int64_t indexed_through,
                   SelectInt64(*writer,
                               "SELECT COALESCE(MAX(sequence), 0) FROM audit_keys "
                               "WHERE sequence <= ?1",
                               head_sequence));
  RETURN_IF_ERROR(IndexRange(*writer, indexed_through, head_sequence));
  if (store_options.max_size_bytes > 0) {
    ASSIGN_OR_RETURN(Statement page_size, writer->Prepare("PRAGMA page_size"));
    ASSIGN_OR_RETURN(bool row, page_size.Step());
    if (!row || page_size.ColumnInt64(0) <= 0) return absl::InternalError("PRAGMA page_size");
    const int64_t pages =
        std::max<int64_t>(1, store_options.max_size_bytes / page_size.ColumnInt64(0));
    // Pragmas take no bound parameters; the value is a number we computed.
    RETURN_IF_ERROR(writer->Exec(absl::StrCat("PRAGMA max_page_count = ", pages)));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Database> reader, Database::Open(path, options));
  ASSIGN_OR_RETURN(std::unique_ptr<Database> verifier, Database::Open(path, options));
  ASSIGN_OR_RETURN(std::unique_ptr<Database> checkpointer, Database::Open(path, options));
  return std::unique_ptr<SqliteAuditStore>(new SqliteAuditStore(
      std::move(writer), std::move(reader), std::move(verifier), std::move(checkpointer),
      head_sequence, store_options.durability, store_options.background_indexing));
}

SqliteAuditStore::SqliteAuditStore(std::unique_ptr<Database> writer,
                                   std::unique_ptr<Database> reader,
                                   std::unique_ptr<Database> verifier,
                                   std::unique_ptr<Database> checkpointer, int64_t head_sequence,
                                   Durability durability, bool background_indexing)
    : durability_(durability),
      writer_(std::move(writer)),
      reader_(std::move(reader)),
      verifier_(std::move(verifier)),
      checkpointer_(std::move(checkpointer)),
      committed_through_(head_sequence),
      indexed_through_(head_sequence) {
  checkpoint_thread_ = std::thread([this] { CheckpointLoop(); });
  if (background_indexing) index_thread_ = std::thread([this] { IndexLoop(); });
  // Replaces the writer's automatic checkpoint (wal_autocheckpoint is itself a WAL hook).
  absl::MutexLock lock(&write_mu_);
  sqlite3_wal_hook(writer_->handle(), &SqliteAuditStore::OnWalCommit, this);
}

SqliteAuditStore::~SqliteAuditStore() {
  {
    absl::MutexLock lock(&write_mu_);
    sqlite3_wal_hook(writer_->handle(), nullptr, nullptr);
  }
  {
    absl::MutexLock lock(&index_mu_);
    index_stopping_ = true;
  }
  if (index_thread_.joinable()) index_thread_.join();
  {
    absl::MutexLock lock(&checkpoint_mu_);
    stopping_ = true;
  }
  checkpoint_thread_.join();
}

int SqliteAuditStore::OnWalCommit(void* self, sqlite3* db, const char* schema, int pages) {
  auto* store = static_cast<SqliteAuditStore*>(self);
  if (pages >= kInlineCheckpointPages) {
    // Copies what the background checkpointer left (or all, if it is failing), so the next
    // commit rewinds the WAL. As with SQLite's own automatic checkpoint, the commit has already
    // succeeded either way.
    sqlite3_wal_checkpoint_v2(db, schema, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
    return SQLITE_OK;
  }
  absl::MutexLock lock(&store->checkpoint_mu_);
  if (pages < store->checkpointed_pages_) store->checkpointed_pages_ = 0;  // the WAL rewound
  if (pages - store->checkpointed_pages_ >= kBackgroundCheckpointPages) {
    store->checkpoint_wanted_ = true;
  }
  return SQLITE_OK;
}

void SqliteAuditStore::CheckpointLoop() {
  while (true) {
    {
      absl::MutexLock lock(&checkpoint_mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(checkpoint_mu_) {
        return checkpoint_wanted_ || stopping_;
      };
      checkpoint_mu_.Await(absl::Condition(&ready));
      if (stopping_) return;
      checkpoint_wanted_ = false;
    }
    // PASSIVE: copies what no reader still needs, never blocks the writer; a failure (busy, I/O)
    // leaves the WAL to the next attempt or to the writer's inline checkpoint.
    int log_pages = 0;
    int copied_pages = 0;
    const int rc = sqlite3_wal_checkpoint_v2(checkpointer_->handle(), "main",
                                             SQLITE_CHECKPOINT_PASSIVE, &log_pages, &copied_pages);
    if (rc == SQLITE_OK && copied_pages > 0) {
      absl::MutexLock lock(&checkpoint_mu_);
      checkpointed_pages_ = copied_pages;
    }
  }
}

void SqliteAuditStore::IndexLoop() {
  while (true) {
    {
      absl::MutexLock lock(&index_mu_);
      auto unindexed = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(index_mu_) {
        return index_stopping_ || committed_through_ > indexed_through_;
      };
      index_mu_.Await(absl::Condition(&unindexed));
      // A batch's worth, or whatever came within kIndexDelay of the first unindexed record
      // (the wait returns early when a Query or Verify has indexed everything meanwhile).
      auto batch_ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(index_mu_) {
        return index_stopping_ || committed_through_ == indexed_through_ ||
               committed_through_ - indexed_through_ >= kIndexBatchRows;
      };
      index_mu_.AwaitWithTimeout(absl::Condition(&batch_ready), kIndexDelay);
      if (index_stopping_) return;
    }
    // A failure (busy, full disk, I/O) fails no Append: the records stay unindexed, the next
    // Query or Verify indexes them (or fails), and this loop retries after a pause.
    if (!CatchUpIndex().ok()) {
      absl::MutexLock lock(&index_mu_);
      index_mu_.AwaitWithTimeout(absl::Condition(&index_stopping_), kIndexRetryDelay);
      if (index_stopping_) return;
    }
  }
}

absl::StatusOr<int64_t> SqliteAuditStore::CatchUpIndex() {
  absl::MutexLock write_lock(&write_mu_);
  int64_t from = 0;
  int64_t to = 0;
  {
    absl::MutexLock lock(&index_mu_);
    from = indexed_through_;
    to = committed_through_;
  }
  if (from >= to) return to;
  if (durability_ == Durability::kFull) {
    // Keys rows are derived and rebuilt at Open when lost, so a batch needs no fsync of its
    // own (it would hold up the next Append); the next FULL commit syncs the WAL, batch and all.
    RETURN_IF_ERROR(RunCached(*writer_, "PRAGMA synchronous = NORMAL"));
    full_sync_pending_ = true;
  }
  const absl::Status indexed = IndexRange(*writer_, from, to);
  RETURN_IF_ERROR(RestoreFullSync());
  RETURN_IF_ERROR(indexed);
  absl::MutexLock lock(&index_mu_);
  indexed_through_ = to;
  return to;
}

absl::Status SqliteAuditStore::RestoreFullSync() {
  if (!full_sync_pending_) return absl::OkStatus();
  RETURN_IF_ERROR(RunCached(*writer_, "PRAGMA synchronous = FULL"));
  full_sync_pending_ = false;
  return absl::OkStatus();
}

absl::StatusOr<Head> SqliteAuditStore::ReadHead(Database& db) {
  ASSIGN_OR_RETURN(Statement select,
                   db.Cached("SELECT sequence, hash FROM audit_head WHERE id = 1"));
  ASSIGN_OR_RETURN(bool row, select.Step());
  if (!row) return absl::InternalError("audit store: head row missing");
  Head head;
  head.sequence = select.ColumnInt64(0);
  head.hash = std::string(select.ColumnText(1));
  return head;
}

absl::StatusOr<AppendBatchResult> SqliteAuditStore::Append(
    const std::vector<std::vector<PendingEvent>>& submissions, absl::Time recorded_at) {
  absl::MutexLock lock(&write_mu_);
  // Never commit with less durability than configured (fails closed if it cannot be restored).
  RETURN_IF_ERROR(RestoreFullSync());
  Database& db = *writer_;
  const int64_t recorded_at_micros = absl::ToUnixMicros(recorded_at);
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db));
  ASSIGN_OR_RETURN(Head head, ReadHead(db));

  AppendBatchResult result;
  result.submissions.reserve(submissions.size());
  // Prepared once per group; Step() resets it after each row, keeping it ready for the next.
  ASSIGN_OR_RETURN(Statement insert, db.Cached(kInsertSql));
  for (const std::vector<PendingEvent>& submission : submissions) {
    // A savepoint per submission of several events: a conflicting id undoes only its own
    // submission. A single event needs none: its INSERT either adds the row or changes nothing.
    const bool savepoint = submission.size() > 1;
    if (savepoint) RETURN_IF_ERROR(RunCached(db, "SAVEPOINT submission"));
    const Head head_before = head;
    SubmissionOutcome outcome;
    outcome.events.reserve(submission.size());
    for (size_t i = 0; i < submission.size() && outcome.accepted; ++i) {
      const PendingEvent& pending = submission[i];
      const std::string hash = ChainHash(head.hash, pending.canonical_json);
      RETURN_IF_ERROR(BindColumns(insert, head.sequence + 1, pending.id(), pending.columns,
                                  pending.canonical_json, head.hash, hash, recorded_at_micros));
      RETURN_IF_ERROR(insert.Step().status());
      if (db.Changes() == 1) {
        head.sequence += 1;
        head.hash = hash;
        outcome.events.push_back({EventOutcome::Kind::kAppended, head.sequence});
        continue;
      }
      // The id is already stored: the same content is a duplicate, other content a conflict.
      ASSIGN_OR_RETURN(
          Statement existing,
          db.Cached("SELECT sequence, event_json FROM audit_records WHERE event_id = ?1"));
      RETURN_IF_ERROR(existing.BindText(1, pending.id()));
      ASSIGN_OR_RETURN(bool found, existing.Step());
      if (!found) return absl::InternalError("audit store: conflicting id vanished");
      if (existing.ColumnText(1) == pending.canonical_json) {
        outcome.events.push_back({EventOutcome::Kind::kDuplicate, existing.ColumnInt64(0)});
      } else {
        outcome.accepted = false;
        outcome.conflict_index = static_cast<int>(i);
        outcome.events.clear();
      }
    }
    if (!outcome.accepted) {
      if (savepoint) RETURN_IF_ERROR(RunCached(db, "ROLLBACK TO submission"));
      head = head_before;
    }
    if (savepoint) RETURN_IF_ERROR(RunCached(db, "RELEASE submission"));
    result.submissions.push_back(std::move(outcome));
  }
  {
    ASSIGN_OR_RETURN(Statement update,
                     db.Cached("UPDATE audit_head SET sequence = ?1, hash = ?2 WHERE id = 1"));
    RETURN_IF_ERROR(update.BindInt64(1, head.sequence));
    RETURN_IF_ERROR(update.BindText(2, head.hash));
    RETURN_IF_ERROR(update.Step().status());
  }
  RETURN_IF_ERROR(txn.Commit());
  {
    // The background indexer picks the new records up (it waits on this).
    absl::MutexLock index_lock(&index_mu_);
    committed_through_ = head.sequence;
  }
  result.head = std::move(head);
  return result;
}

absl::StatusOr<std::vector<AuditRecord>> SqliteAuditStore::Query(const AuditFilter& filter,
                                                                 int64_t after_sequence,
                                                                 int limit) {
  return Select(filter, after_sequence, /*newest_first=*/false, limit);
}

absl::StatusOr<std::vector<AuditRecord>> SqliteAuditStore::QueryNewestFirst(
    const AuditFilter& filter, int64_t before_sequence, int limit) {
  return Select(filter, before_sequence, /*newest_first=*/true, limit);
}

absl::StatusOr<std::vector<AuditRecord>> SqliteAuditStore::Select(const AuditFilter& filter,
                                                                  int64_t cursor, bool newest_first,
                                                                  int limit) {
  // A filter on a lookup key walks that key's audit_keys index in sequence order (either way)
  // and joins each hit to its record (CROSS JOIN fixes that order), so a large namespace is
  // never materialised; other filters scan the records from the cursor. Only the filter's shape
  // enters the SQL text (so statements are cached per shape); every value is bound.
  const bool by_key = !filter.namespace_id().empty() || !filter.trace_id().empty() ||
                      !filter.execution_id().empty();
  const char* order_column = by_key ? "k.sequence" : "r.sequence";
  const char* from_cursor = newest_first ? " < ?1" : " > ?1";
  std::string sql = by_key ? absl::StrCat(kSelectColumns,
                                          " FROM audit_keys AS k CROSS JOIN audit_records AS r"
                                          " ON r.sequence = k.sequence WHERE k.sequence",
                                          from_cursor)
                           : absl::StrCat(kSelectColumns,
                                          " FROM audit_records AS r WHERE r.sequence", from_cursor);
  struct Binding {
    bool is_text;
    std::string text;
    int64_t number;
  };
  std::vector<Binding> bindings;
  auto add_text = [&](const char* column, const std::string& value) {
    bindings.push_back({true, value, 0});
    absl::StrAppend(&sql, " AND ", column, " = ?", bindings.size() + 1);
  };
  auto add_number = [&](const char* column, const char* op, int64_t value) {
    bindings.push_back({false, "", value});
    absl::StrAppend(&sql, " AND ", column, " ", op, " ?", bindings.size() + 1);
  };
  if (!filter.namespace_id().empty()) add_text("k.namespace_id", filter.namespace_id());
  if (!filter.trace_id().empty()) add_text("k.trace_id", filter.trace_id());
  if (!filter.execution_id().empty()) add_text("k.execution_id", filter.execution_id());
  if (std::optional<int> type = TypeColumnFilter(filter)) add_number("r.type", "=", *type);
  if (filter.has_outcome()) add_number("r.outcome", "=", filter.outcome());
  if (!filter.reason().empty()) add_text("r.reason", filter.reason());
  if (filter.has_source()) add_number("r.source", "=", filter.source());
  if (filter.has_actor()) add_text("r.actor", capability::AddressKey(filter.actor()));
  if (filter.has_from()) {
    add_number("r.at_micros", ">=", TimeUtil::TimestampToMicroseconds(filter.from()));
  }
  if (filter.has_to()) {
    add_number("r.at_micros", "<", TimeUtil::TimestampToMicroseconds(filter.to()));
  }
  bindings.push_back({false, "", limit});
  absl::StrAppend(&sql, " ORDER BY ", order_column, newest_first ? " DESC" : "", " LIMIT ?",
                  bindings.size() + 1);

  // Read-your-writes: every record committed before this Query is indexed before it reads.
  // Records committed meanwhile may be missing, but only after every record returned, so a
  // page token never skips one (newest first, they are newer than the page's first).
  if (by_key) {
    bool behind = false;
    {
      absl::MutexLock lock(&index_mu_);
      behind = committed_through_ > indexed_through_;
    }
    if (behind) RETURN_IF_ERROR(CatchUpIndex().status());
  }

  absl::MutexLock lock(&read_mu_);
  ASSIGN_OR_RETURN(Statement select, reader_->Cached(sql));
  RETURN_IF_ERROR(select.BindInt64(1, cursor));
  for (size_t i = 0; i < bindings.size(); ++i) {
    const int index = static_cast<int>(i) + 2;
    if (bindings[i].is_text) {
      RETURN_IF_ERROR(select.BindText(index, bindings[i].text));
    } else {
      RETURN_IF_ERROR(select.BindInt64(index, bindings[i].number));
    }
  }
  std::vector<AuditRecord> records;
  while (true) {
    ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) break;
    ASSIGN_OR_RETURN(AuditRecord record, RecordFromRow(select));
    records.push_back(std::move(record));
  }
  return records;
}

absl::StatusOr<Head> SqliteAuditStore::GetHead() {
  absl::MutexLock lock(&read_mu_);
  return ReadHead(*reader_);
}

absl::StatusOr<VerifyResult> SqliteAuditStore::Verify(std::optional<int64_t> from,
                                                      std::optional<int64_t> to) {
  // Every record up to `indexed_through` has its keys row in the snapshot read below (which
  // starts after this); later records may not have one yet.
  ASSIGN_OR_RETURN(const int64_t indexed_through, CatchUpIndex());
  absl::MutexLock lock(&verify_mu_);
  Database& db = *verifier_;
  // One read transaction: a consistent snapshot while the writer goes on.
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db, Transaction::Mode::kDeferred));
  ASSIGN_OR_RETURN(Head head, ReadHead(db));
  ChainVerifier verifier(head, from, to);
  if (verifier.link_sequence() > 0) {
    ASSIGN_OR_RETURN(Statement before,
                     db.Prepare("SELECT hash FROM audit_records WHERE sequence = ?1"));
    RETURN_IF_ERROR(before.BindInt64(1, verifier.link_sequence()));
    ASSIGN_OR_RETURN(bool found, before.Step());
    verifier.Link(found ? std::optional<absl::string_view>(before.ColumnText(0)) : std::nullopt);
  }

  // Columns 15-18: the record's keys row, NULL when it has none.
  ASSIGN_OR_RETURN(
      Statement rows,
      db.Prepare(absl::StrCat(kSelectColumns,
                              ", k.sequence, k.namespace_id, k.trace_id, k.execution_id"
                              " FROM audit_records AS r LEFT JOIN audit_keys AS k"
                              " ON k.sequence = r.sequence"
                              " WHERE r.sequence >= ?1 AND r.sequence <= ?2 ORDER BY r.sequence")));
  RETURN_IF_ERROR(rows.BindInt64(1, verifier.first()));
  RETURN_IF_ERROR(rows.BindInt64(2, verifier.last()));
  while (verifier.ok()) {
    ASSIGN_OR_RETURN(bool has_row, rows.Step());
    if (!has_row) break;
    StoredChainRow row;
    row.sequence = rows.ColumnInt64(0);
    row.event_id = rows.ColumnText(1);
    row.event_json = rows.ColumnText(11);
    row.prev_hash = rows.ColumnText(12);
    row.hash = rows.ColumnText(13);
    row.columns = StoredColumns(rows);
    if (!verifier.Check(row)) break;
    // This backend's own index: a missing or edited keys row would hide the record from
    // lookups by namespace, trace or execution.
    if (rows.ColumnIsNull(15)) {
      if (row.sequence <= indexed_through) {
        verifier.Fail(row.sequence, "lookup keys missing for the event");
      }
    } else if (rows.ColumnText(16) != row.columns.namespace_id ||
               rows.ColumnText(17) != row.columns.trace_id ||
               rows.ColumnText(18) != row.columns.execution_id) {
      verifier.Fail(row.sequence, "lookup keys do not match the event");
    }
  }
  std::optional<int64_t> beyond_head;
  if (verifier.ok()) {
    ASSIGN_OR_RETURN(Statement beyond,
                     db.Prepare("SELECT MIN(sequence) FROM audit_records WHERE sequence > ?1"));
    RETURN_IF_ERROR(beyond.BindInt64(1, head.sequence));
    ASSIGN_OR_RETURN(bool found, beyond.Step());
    if (found && !beyond.ColumnIsNull(0)) beyond_head = beyond.ColumnInt64(0);
  }
  return verifier.Finish(beyond_head);
}

}  // namespace sharedos::audit::storage
