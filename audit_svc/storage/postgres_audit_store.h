// The audit log on PostgreSQL (libpq): several audit_svc replicas append to one database and
// keep ONE chain. All of the store's SQL lives in postgres_audit_store.cc; the schema is
// versioned in `audit_schema_migrations` (common/postgres/migrations), and a database whose
// schema is newer than this binary knows is refused at Open.
//
// One chain, several writers. The head row audit_head(id = 1, sequence, hash) is the chain's
// lock: an Append transaction (READ COMMITTED) starts with
//
//   SELECT sequence, hash FROM audit_head WHERE id = 1 FOR UPDATE
//
// which waits for any other writer's transaction (any connection, process or replica) to end
// and then returns the head as that writer committed it. Every later statement of the
// transaction sees that writer's records. So the appender links to the true head, takes the
// next sequences (gap-free: a rolled-back Append gives its numbers back with its rows) and
// finds every event id stored before it: idempotency on event id holds across replicas (the
// same event sent to two replicas is stored once; the second is a duplicate). A group commit
// (AuditLog's batch of many callers' submissions) is still one transaction: one lock, one
// lookup of the batch's ids, one statement inserting every row and moving the head, one commit.
// These statements are prepared once on the writer's connection (their text does not depend on
// the batch's size: ids and rows are bound as arrays), so a group commit costs PostgreSQL no
// parse; each is planned at its execution, for the log as it is then (a generic plan chosen
// while the log was small grew costly with it).
//
// Durability: kFull commits with synchronous_commit=on (each group durable on the server's
// disk before Append returns, whatever the server's default); kNormal with synchronous_commit=
// off (a server crash may lose the last groups; the chain stays consistent).
//
// Connection loss. A call whose connection breaks fails with UNAVAILABLE (the audit log maps it
// to audit_unavailable) and nothing of its batch is written, or -- when the COMMIT itself was
// cut -- the outcome is unknown and a retry is a duplicate. Connections are re-opened on the
// next call (common/postgres/connection_pool), so the store resumes when the server is back
// without a restart. Thread-safe.

#ifndef SHAREDOS_AUDIT_SVC_STORAGE_POSTGRES_AUDIT_STORE_H_
#define SHAREDOS_AUDIT_SVC_STORAGE_POSTGRES_AUDIT_STORE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "audit_svc/storage/audit_store.h"
#include "common/postgres/connection_pool.h"
#include "common/time/clock.h"

namespace sharedos::audit::storage {

class PostgresAuditStore : public AuditStore {
 public:
  // The schema history table (a database shared with the grant store keeps both apart).
  static constexpr char kHistoryTable[] = "audit_schema_migrations";
  // Rows Verify reads per statement (one snapshot throughout), bounding its memory.
  static constexpr int kVerifyPageRows = 1000;

  enum class Durability { kFull, kNormal };

  struct Options {
    // A libpq URI (postgres://... or postgresql://...) or key=value string.
    std::string uri;
    Durability durability = Durability::kFull;
    // Bound on establishing each connection.
    absl::Duration connect_timeout = absl::Seconds(5);
    // How long an Append waits for the head lock (another replica's commit) and a call for a
    // free connection, before UNAVAILABLE.
    absl::Duration lock_timeout = absl::Seconds(5);
    // Bound on each statement (PostgreSQL's statement_timeout): a server that stops answering
    // fails the call UNAVAILABLE (SQLSTATE 57014) instead of holding it.
    absl::Duration statement_timeout = absl::Seconds(30);
    // Reader connections open at once (the writer has its own).
    int max_read_connections = 8;
  };

  // Connects and migrates the schema (replicas starting together migrate once). Errors:
  // UNAVAILABLE (cannot connect); FAILED_PRECONDITION (the database's schema is newer than this
  // binary's: the message names both versions); INVALID_ARGUMENT (options); INTERNAL.
  static absl::StatusOr<std::unique_ptr<PostgresAuditStore>> Open(
      const Options& options, const common::Clock& clock = common::RealClock());

  absl::StatusOr<AppendBatchResult> Append(
      const std::vector<std::vector<PendingEvent>>& submissions, absl::Time recorded_at) override;
  absl::StatusOr<std::vector<sharedos::audit::v1::AuditRecord>> Query(
      const sharedos::audit::v1::AuditFilter& filter, int64_t after_sequence, int limit) override;
  absl::StatusOr<std::vector<sharedos::audit::v1::AuditRecord>> QueryNewestFirst(
      const sharedos::audit::v1::AuditFilter& filter, int64_t before_sequence, int limit) override;
  absl::StatusOr<Head> GetHead() override;
  absl::StatusOr<VerifyResult> Verify(std::optional<int64_t> from,
                                      std::optional<int64_t> to) override;

 private:
  explicit PostgresAuditStore(const Options& options);
  // Query (ascending, after `cursor`) and QueryNewestFirst (descending, before `cursor`).
  absl::StatusOr<std::vector<sharedos::audit::v1::AuditRecord>> Select(
      const sharedos::audit::v1::AuditFilter& filter, int64_t cursor, bool newest_first, int limit);

  const Options options_;
  // One connection for Append (the AuditLog commits one group at a time; a second Append on
  // this store waits for it), one pool for reads.
  common::postgres::ConnectionPool writer_;
  common::postgres::ConnectionPool readers_;
};

}  // namespace sharedos::audit::storage

#endif  // SHAREDOS_AUDIT_SVC_STORAGE_POSTGRES_AUDIT_STORE_H_
