#include "audit_svc/storage/postgres_audit_store.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "audit_svc/storage/chain_verifier.h"
#include "audit_svc/storage/event_codec.h"
#include "capability/address.h"
#include "common/postgres/migrations.h"
#include "common/postgres/transaction.h"
#include "common/status/status_macros.h"
#include "google/protobuf/util/time_util.h"

namespace sharedos::audit::storage {
namespace {

using ::google::protobuf::util::TimeUtil;
using ::sharedos::audit::v1::AuditFilter;
using ::sharedos::audit::v1::AuditRecord;
using ::sharedos::common::postgres::Connection;
using ::sharedos::common::postgres::ConnectionPool;
using ::sharedos::common::postgres::Migration;
using ::sharedos::common::postgres::Param;
using ::sharedos::common::postgres::PooledConnection;
using ::sharedos::common::postgres::Result;
using ::sharedos::common::postgres::TransactionOptions;
using SqlTransaction = ::sharedos::common::postgres::Transaction;

// Schema history. Append only: a shipped migration is never edited. Text keys are COLLATE "C"
// (byte order and comparison, as on SQLite, whatever the database's locale). event_json is the
// canonical JSON the chain covers (event_codec.h): any record the codec prints fits, whatever
// the event carries (bytes are base64 in JSON).
const Migration kMigrations[] = {
    {1, R"sql(
CREATE TABLE audit_records (
  sequence BIGINT PRIMARY KEY,
  event_id TEXT COLLATE "C" NOT NULL UNIQUE,
  type BIGINT NOT NULL,
  outcome BIGINT NOT NULL,
  namespace_id TEXT COLLATE "C" NOT NULL,
  trace_id TEXT COLLATE "C" NOT NULL,
  execution_id TEXT COLLATE "C" NOT NULL,
  reason TEXT COLLATE "C" NOT NULL,
  source BIGINT,
  actor TEXT COLLATE "C" NOT NULL,
  at_micros BIGINT NOT NULL,
  event_json TEXT NOT NULL,
  prev_hash TEXT COLLATE "C" NOT NULL,
  hash TEXT COLLATE "C" NOT NULL,
  recorded_at_micros BIGINT NOT NULL
);
CREATE INDEX audit_records_by_namespace ON audit_records (namespace_id, sequence);
CREATE INDEX audit_records_by_trace ON audit_records (trace_id, sequence);
CREATE INDEX audit_records_by_execution ON audit_records (execution_id, sequence);
-- The chain's head, kept beside the records so that removing the last records is detected;
-- its row lock serialises the writers of every replica.
CREATE TABLE audit_head (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  sequence BIGINT NOT NULL,
  hash TEXT COLLATE "C" NOT NULL
);
INSERT INTO audit_head (id, sequence, hash)
  VALUES (1, 0, '0000000000000000000000000000000000000000000000000000000000000000');
)sql"},
};

// The record columns, in the order RecordFromRow and StoredColumns read.
constexpr char kSelectColumns[] =
    "SELECT sequence, event_id, type, outcome, namespace_id, trace_id, execution_id, reason, "
    "source, actor, at_micros, event_json, prev_hash, hash, recorded_at_micros";

// The append path's statements, prepared once on the writer's connection: parsed once, not per
// group commit, and planned at each execution (SessionSetup's plan_cache_mode). Their text does
// not depend on the group's size: the ids and the rows are bound as arrays. Four round trips and a
// BEGIN per group commit: BEGIN, the head lock, the id lookup, the rows with the head, COMMIT.
//
// The chain's lock (see the header): waits for other replicas' commits, returns their head.
constexpr char kLockHeadName[] = "audit_lock_head";
constexpr char kLockHeadSql[] = "SELECT sequence, hash FROM audit_head WHERE id = 1 FOR UPDATE";
// The batch's ids already stored. A statement of its own, after the lock: under READ COMMITTED
// each statement reads the data committed when it starts, so this one sees the records of the
// commit the lock waited for (one statement joining both would read them as of before the
// wait).
constexpr char kLookUpName[] = "audit_look_up_ids";
constexpr char kLookUpSql[] =
    "SELECT event_id, sequence, event_json FROM audit_records WHERE event_id = ANY($1)";
// The new rows (one array per column, $15 the batch's recorded_at) and the new head, in one
// statement: the INSERT runs to completion before the UPDATE, and either fails the whole
// statement. No ON CONFLICT: under the head lock no other writer inserts, so a duplicate key is
// a bug or tampering, and fails the batch (fail closed).
constexpr char kInsertName[] = "audit_insert_rows";
constexpr char kInsertSql[] =
    "WITH inserted AS (INSERT INTO audit_records (sequence, event_id, type, outcome, "
    "namespace_id, trace_id, execution_id, reason, source, actor, at_micros, event_json, "
    "prev_hash, hash, recorded_at_micros) SELECT r.*, $15::bigint FROM unnest($1::bigint[], "
    "$2::text[], $3::bigint[], $4::bigint[], $5::text[], $6::text[], $7::text[], $8::text[], "
    "$9::bigint[], $10::text[], $11::bigint[], $12::text[], $13::text[], $14::text[]) AS r) "
    "UPDATE audit_head SET sequence = $16, hash = $17 WHERE id = 1";

// A record about to be inserted.
struct NewRow {
  int64_t sequence;
  const PendingEvent* pending;
  std::string prev_hash;
  std::string hash;
};

// An event id already in the log, or taken earlier in this batch.
struct KnownEvent {
  int64_t sequence;
  std::string json;
};
using KnownEvents = absl::flat_hash_map<std::string, KnownEvent>;

IndexedColumns StoredColumns(const Result& rows, int row) {
  IndexedColumns columns;
  columns.type = static_cast<int>(rows.Int64(row, 2));
  columns.outcome = static_cast<int>(rows.Int64(row, 3));
  columns.namespace_id = std::string(rows.Bytes(row, 4));
  columns.trace_id = std::string(rows.Bytes(row, 5));
  columns.execution_id = std::string(rows.Bytes(row, 6));
  columns.reason = std::string(rows.Bytes(row, 7));
  if (!rows.IsNull(row, 8)) columns.source = static_cast<int>(rows.Int64(row, 8));
  columns.actor = std::string(rows.Bytes(row, 9));
  columns.at_micros = rows.Int64(row, 10);
  return columns;
}

absl::StatusOr<AuditRecord> RecordFromRow(const Result& rows, int row) {
  AuditRecord record;
  record.set_sequence(rows.Int64(row, 0));
  RETURN_IF_ERROR(ParseRecordJson(rows.Bytes(row, 11), record));
  record.set_prev_hash(std::string(rows.Bytes(row, 12)));
  record.set_hash(std::string(rows.Bytes(row, 13)));
  *record.mutable_recorded_at() = TimeUtil::MicrosecondsToTimestamp(rows.Int64(row, 14));
  return record;
}

absl::StatusOr<Head> HeadFromResult(const Result& result) {
  if (result.rows() != 1) return absl::InternalError("audit store: head row missing");
  Head head;
  head.sequence = result.Int64(0, 0);
  head.hash = std::string(result.Bytes(0, 1));
  return head;
}

// The ids of the batch that are already stored, with their sequence and content.
absl::StatusOr<KnownEvents> LookUpStored(Connection& conn,
                                         const std::vector<std::vector<PendingEvent>>& batch) {
  std::vector<absl::string_view> ids;
  for (const auto& submission : batch) {
    for (const PendingEvent& pending : submission) ids.push_back(pending.id());
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  const Param params[] = {Param::TextArray(ids)};
  ASSIGN_OR_RETURN(Result rows, conn.ExecPrepared(kLookUpName, kLookUpSql, params));
  KnownEvents known;
  for (int row = 0; row < rows.rows(); ++row) {
    known[std::string(rows.Bytes(row, 0))] = {rows.Int64(row, 1), std::string(rows.Bytes(row, 2))};
  }
  return known;
}

// Links one submission's events after `head` (both updated when it is accepted), recording
// duplicates and new rows; a conflicting id rejects it and leaves `head`, `known` and `rows`
// as they were.
SubmissionOutcome LinkSubmission(const std::vector<PendingEvent>& submission, Head& head,
                                 KnownEvents& known, std::vector<NewRow>& rows) {
  SubmissionOutcome outcome;
  Head linked = head;
  KnownEvents taken;  // ids this submission adds
  std::vector<NewRow> added;
  for (size_t i = 0; i < submission.size(); ++i) {
    const PendingEvent& pending = submission[i];
    const std::string& id = pending.id();
    const KnownEvent* existing = nullptr;
    if (auto it = taken.find(id); it != taken.end()) existing = &it->second;
    if (auto it = known.find(id); existing == nullptr && it != known.end()) existing = &it->second;
    if (existing != nullptr) {
      if (existing->json != pending.canonical_json) {
        SubmissionOutcome rejected;
        rejected.accepted = false;
        rejected.conflict_index = static_cast<int>(i);
        return rejected;
      }
      outcome.events.push_back({EventOutcome::Kind::kDuplicate, existing->sequence});
      continue;
    }
    NewRow row{linked.sequence + 1, &pending, linked.hash,
               ChainHash(linked.hash, pending.canonical_json)};
    linked.sequence = row.sequence;
    linked.hash = row.hash;
    taken[id] = {row.sequence, pending.canonical_json};
    outcome.events.push_back({EventOutcome::Kind::kAppended, row.sequence});
    added.push_back(std::move(row));
  }
  head = std::move(linked);
  for (auto& [id, event] : taken) known[id] = std::move(event);
  for (NewRow& row : added) rows.push_back(std::move(row));
  return outcome;
}

// Inserts the rows and moves the head to `head`, in one statement (kInsertSql).
absl::Status InsertRowsAndHead(Connection& conn, const std::vector<NewRow>& rows,
                               int64_t recorded_at_micros, const Head& head) {
  const size_t n = rows.size();
  std::vector<std::optional<int64_t>> sequence(n), type(n), outcome(n), source(n), at(n);
  std::vector<absl::string_view> event_id(n), namespace_id(n), trace_id(n), execution_id(n),
      reason(n), actor(n), event_json(n), prev_hash(n), hash(n);
  for (size_t i = 0; i < n; ++i) {
    const PendingEvent& pending = *rows[i].pending;
    const IndexedColumns& columns = pending.columns;
    sequence[i] = rows[i].sequence;
    event_id[i] = pending.id();
    type[i] = columns.type;
    outcome[i] = columns.outcome;
    namespace_id[i] = columns.namespace_id;
    trace_id[i] = columns.trace_id;
    execution_id[i] = columns.execution_id;
    reason[i] = columns.reason;
    if (columns.source.has_value()) source[i] = *columns.source;
    actor[i] = columns.actor;
    at[i] = columns.at_micros;
    event_json[i] = pending.canonical_json;
    prev_hash[i] = rows[i].prev_hash;
    hash[i] = rows[i].hash;
  }
  const Param params[] = {Param::Int64Array(sequence),
                          Param::TextArray(event_id),
                          Param::Int64Array(type),
                          Param::Int64Array(outcome),
                          Param::TextArray(namespace_id),
                          Param::TextArray(trace_id),
                          Param::TextArray(execution_id),
                          Param::TextArray(reason),
                          Param::Int64Array(source),
                          Param::TextArray(actor),
                          Param::Int64Array(at),
                          Param::TextArray(event_json),
                          Param::TextArray(prev_hash),
                          Param::TextArray(hash),
                          Param::Int64(recorded_at_micros),
                          Param::Int64(head.sequence),
                          Param::Text(head.hash)};
  return conn.ExecPrepared(kInsertName, kInsertSql, params).status();
}

int64_t Milliseconds(absl::Duration duration) {
  return std::max<int64_t>(1, absl::ToInt64Milliseconds(duration));
}

// Session settings of a new connection: the bound on every statement (a server that stops
// answering fails the call UNAVAILABLE instead of holding it), and for the writer the commit
// durability, the bound on waiting for the head lock, and a plan for each execution of the
// prepared append statements: they are parsed once, but a generic plan — which PostgreSQL
// settles on after five executions, chosen against the log as it was then, small — kept costs
// that grew with the log (on the replicas benchmark PostgreSQL's CPU per Authorize doubled and
// per InvokeTool nearly tripled against unprepared statements; planning each execution brought
// both back, docs/performance.md, session 46). Values are ours (an enum and numbers), never input.
std::function<absl::Status(Connection&)> SessionSetup(const PostgresAuditStore::Options& options,
                                                      bool writer) {
  std::string sql =
      absl::StrCat("SET statement_timeout = '", Milliseconds(options.statement_timeout), "ms'");
  if (writer) {
    absl::StrAppend(&sql, "; SET synchronous_commit = ",
                    options.durability == PostgresAuditStore::Durability::kFull ? "on" : "off",
                    "; SET lock_timeout = '", Milliseconds(options.lock_timeout), "ms'",
                    "; SET plan_cache_mode = force_custom_plan");
  }
  return [sql](Connection& conn) { return conn.ExecScript(sql); };
}

ConnectionPool::Options PoolOptions(const PostgresAuditStore::Options& options, bool writer) {
  ConnectionPool::Options pool;
  pool.uri = options.uri;
  pool.connection.connect_timeout = options.connect_timeout;
  pool.connection.application_name = writer ? "sharedos-audit-writer" : "sharedos-audit";
  pool.max_connections = writer ? 1 : std::max(1, options.max_read_connections);
  pool.max_idle_connections = pool.max_connections;
  // The writer is used by one group commit at a time (AuditLog); a second caller waits for it.
  pool.acquire_timeout = writer ? options.lock_timeout + absl::Minutes(1) : options.lock_timeout;
  pool.owner = writer ? "the audit writer" : "the audit readers";
  pool.on_connect = SessionSetup(options, writer);
  return pool;
}

}  // namespace

PostgresAuditStore::PostgresAuditStore(const Options& options)
    : options_(options),
      writer_(PoolOptions(options, true)),
      readers_(PoolOptions(options, false)) {}

absl::StatusOr<std::unique_ptr<PostgresAuditStore>> PostgresAuditStore::Open(
    const Options& options, const common::Clock& clock) {
  if (options.uri.empty()) return absl::InvalidArgumentError("audit store uri: must be set");
  if (options.max_read_connections < 1) {
    return absl::InvalidArgumentError("audit store max_read_connections: must be at least 1");
  }
  auto store = std::unique_ptr<PostgresAuditStore>(new PostgresAuditStore(options));
  {
    ASSIGN_OR_RETURN(PooledConnection conn, store->writer_.Acquire());
    const absl::Status migrated =
        common::postgres::Migrate(*conn, kHistoryTable, kMigrations, clock);
    if (!migrated.ok()) {
      return absl::Status(migrated.code(), absl::StrCat("audit store: ", migrated.message()));
    }
  }
  return store;
}

absl::StatusOr<AppendBatchResult> PostgresAuditStore::Append(
    const std::vector<std::vector<PendingEvent>>& submissions, absl::Time recorded_at) {
  ASSIGN_OR_RETURN(PooledConnection conn, writer_.Acquire());
  ASSIGN_OR_RETURN(SqlTransaction txn, SqlTransaction::Begin(*conn));
  ASSIGN_OR_RETURN(Result locked, conn->ExecPrepared(kLockHeadName, kLockHeadSql));
  ASSIGN_OR_RETURN(Head head, HeadFromResult(locked));
  const int64_t first_sequence = head.sequence;
  ASSIGN_OR_RETURN(KnownEvents known, LookUpStored(*conn, submissions));

  AppendBatchResult result;
  result.submissions.reserve(submissions.size());
  std::vector<NewRow> rows;
  for (const std::vector<PendingEvent>& submission : submissions) {
    result.submissions.push_back(LinkSubmission(submission, head, known, rows));
  }
  // Rows were added exactly when the head moved (every new row takes the next sequence).
  if (head.sequence != first_sequence) {
    RETURN_IF_ERROR(InsertRowsAndHead(*conn, rows, absl::ToUnixMicros(recorded_at), head));
  }
  RETURN_IF_ERROR(txn.Commit());
  result.head = std::move(head);
  return result;
}

absl::StatusOr<std::vector<AuditRecord>> PostgresAuditStore::Query(const AuditFilter& filter,
                                                                   int64_t after_sequence,
                                                                   int limit) {
  return Select(filter, after_sequence, /*newest_first=*/false, limit);
}

absl::StatusOr<std::vector<AuditRecord>> PostgresAuditStore::QueryNewestFirst(
    const AuditFilter& filter, int64_t before_sequence, int limit) {
  return Select(filter, before_sequence, /*newest_first=*/true, limit);
}

absl::StatusOr<std::vector<AuditRecord>> PostgresAuditStore::Select(const AuditFilter& filter,
                                                                    int64_t cursor,
                                                                    bool newest_first, int limit) {
  // Only the filter's shape enters the SQL text; every value is bound. The (key, sequence)
  // indexes serve either order.
  std::string sql = absl::StrCat(kSelectColumns, " FROM audit_records WHERE sequence ",
                                 newest_first ? "<" : ">", " $1");
  std::vector<Param> params = {Param::Int64(cursor)};
  auto add = [&](const char* column, const char* op, Param value) {
    params.push_back(std::move(value));
    absl::StrAppend(&sql, " AND ", column, " ", op, " $", params.size());
  };
  if (!filter.namespace_id().empty()) add("namespace_id", "=", Param::Text(filter.namespace_id()));
  if (!filter.trace_id().empty()) add("trace_id", "=", Param::Text(filter.trace_id()));
  if (!filter.execution_id().empty()) add("execution_id", "=", Param::Text(filter.execution_id()));
  if (std::optional<int> type = TypeColumnFilter(filter)) add("type", "=", Param::Int64(*type));
  if (filter.has_outcome()) add("outcome", "=", Param::Int64(filter.outcome()));
  if (!filter.reason().empty()) add("reason", "=", Param::Text(filter.reason()));
  if (filter.has_source()) add("source", "=", Param::Int64(filter.source()));
  if (filter.has_actor()) add("actor", "=", Param::Text(capability::AddressKey(filter.actor())));
  if (filter.has_from()) {
    add("at_micros", ">=", Param::Int64(TimeUtil::TimestampToMicroseconds(filter.from())));
  }
  if (filter.has_to()) {
    add("at_micros", "<", Param::Int64(TimeUtil::TimestampToMicroseconds(filter.to())));
  }
  params.push_back(Param::Int64(std::max(0, limit)));
  absl::StrAppend(&sql, " ORDER BY sequence", newest_first ? " DESC" : "", " LIMIT $",
                  params.size());

  ASSIGN_OR_RETURN(PooledConnection conn, readers_.Acquire());
  ASSIGN_OR_RETURN(Result rows, conn->Exec(sql, params));
  std::vector<AuditRecord> records;
  records.reserve(rows.rows());
  for (int row = 0; row < rows.rows(); ++row) {
    ASSIGN_OR_RETURN(AuditRecord record, RecordFromRow(rows, row));
    records.push_back(std::move(record));
  }
  return records;
}

absl::StatusOr<Head> PostgresAuditStore::GetHead() {
  ASSIGN_OR_RETURN(PooledConnection conn, readers_.Acquire());
  ASSIGN_OR_RETURN(Result result, conn->Exec("SELECT sequence, hash FROM audit_head WHERE id = 1"));
  return HeadFromResult(result);
}

absl::StatusOr<VerifyResult> PostgresAuditStore::Verify(std::optional<int64_t> from,
                                                        std::optional<int64_t> to) {
  ASSIGN_OR_RETURN(PooledConnection conn, readers_.Acquire());
  // One snapshot throughout, while the writers go on.
  TransactionOptions snapshot;
  snapshot.isolation = TransactionOptions::Isolation::kRepeatableRead;
  snapshot.read_only = true;
  ASSIGN_OR_RETURN(SqlTransaction txn, SqlTransaction::Begin(*conn, snapshot));
  ASSIGN_OR_RETURN(Result head_row,
                   conn->Exec("SELECT sequence, hash FROM audit_head WHERE id = 1"));
  ASSIGN_OR_RETURN(const Head head, HeadFromResult(head_row));
  ChainVerifier verifier(head, from, to);
  if (verifier.link_sequence() > 0) {
    const Param params[] = {Param::Int64(verifier.link_sequence())};
    ASSIGN_OR_RETURN(Result before,
                     conn->Exec("SELECT hash FROM audit_records WHERE sequence = $1", params));
    verifier.Link(before.rows() == 0 ? std::nullopt
                                     : std::optional<absl::string_view>(before.Bytes(0, 0)));
  }
  // The range kVerifyPageRows records at a time.
  int64_t next = verifier.first();
  while (verifier.ok() && next <= verifier.last()) {
    const Param params[] = {Param::Int64(next), Param::Int64(verifier.last()),
                            Param::Int64(kVerifyPageRows)};
    ASSIGN_OR_RETURN(Result rows,
                     conn->Exec(absl::StrCat(kSelectColumns,
                                             " FROM audit_records WHERE sequence >= $1 AND "
                                             "sequence <= $2 ORDER BY sequence LIMIT $3"),
                                params));
    if (rows.rows() == 0) break;  // Finish names the first missing record
    for (int i = 0; i < rows.rows() && verifier.ok(); ++i) {
      StoredChainRow row;
      row.sequence = rows.Int64(i, 0);
      row.event_id = rows.Bytes(i, 1);
      row.event_json = rows.Bytes(i, 11);
      row.prev_hash = rows.Bytes(i, 12);
      row.hash = rows.Bytes(i, 13);
      row.columns = StoredColumns(rows, i);
      verifier.Check(row);
      next = row.sequence + 1;
    }
  }
  std::optional<int64_t> beyond_head;
  if (verifier.ok()) {
    const Param params[] = {Param::Int64(head.sequence)};
    ASSIGN_OR_RETURN(
        Result beyond,
        conn->Exec("SELECT MIN(sequence) FROM audit_records WHERE sequence > $1", params));
    if (beyond.rows() == 1 && !beyond.IsNull(0, 0)) beyond_head = beyond.Int64(0, 0);
  }
  return verifier.Finish(beyond_head);
}

}  // namespace sharedos::audit::storage
