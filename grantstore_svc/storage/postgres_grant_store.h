// GrantStore on PostgreSQL (libpq): the scale-out backend (architecture §6). Any number of
// stateless replicas, each with its own PostgresGrantStore, share one database. All of the
// store's SQL lives in postgres_grant_store.cc; the schema is versioned in
// `grantstore_schema_migrations` (common/postgres/migrations).
//
// Revisions. The database holds one row, store_revision(id = 1, revision). A write transaction
// (BeginWrite) is a READ COMMITTED transaction whose first statement is
//
//   UPDATE store_revision SET revision = revision + 1 WHERE id = 1 RETURNING revision
//
// That takes the row's lock, which PostgreSQL holds until the transaction ends, so writers of
// every connection, process and replica are serialised on it: a second writer's UPDATE waits
// for the first to commit or roll back and then reads the row as committed. Hence:
//   - each committed mutation takes exactly the next revision (the number is read under the
//     lock), and a rolled-back one gives its number back with its rows (no gaps);
//   - commit order == revision order: writer R+1 cannot get past the UPDATE before writer R
//     has committed, so R's rows are visible to every later statement;
//   - every row a transaction writes is stamped with its revision, and it becomes visible in
//     the same atomic commit as the revision row. A reader that runs in one REPEATABLE READ
//     snapshot and sees revision = N sees every row of revisions <= N and none of later ones;
//     rows of revision <= R are never changed afterwards except for revoked_revision, which a
//     later revision sets to itself (> R) and a read at R filters out. So LoadAuthority(R)
//     returns the same snapshot forever, on any connection or replica that has reached R (a
//     replica behind R answers FAILED_PRECONDITION, never stale data).
// Announcements (docs/adr/0021). Holding the lock, the writer notes the revision it took and its
// transaction id in revision_announcement, on a connection of its own in a transaction of its
// own, committed before it returns from BeginWrite and so before any control-plane record of the
// revision is written. A replica killed between its records and its commit leaves that
// announcement behind, its transaction aborted: AnnouncedRevision() tells the anchor check the
// revision was never committed, not rolled back by a restore. It honours an announcement only
// while the row is still the one its announcer wrote (its xmin) and the announced transaction is
// in progress or aborted in this cluster, which a restored copy of the database never is.
// READ COMMITTED is enough for the writer: after the revision lock, each of its statements
// takes a fresh snapshot that includes every earlier writer, and nothing else writes the
// revisioned tables. TryConsume is one INSERT ... ON CONFLICT DO UPDATE ... WHERE uses < max
// (atomic in PostgreSQL at any isolation level), outside the revision.
//
// Connection loss. A call whose connection breaks fails with UNAVAILABLE (the layers above map
// that to their fail-closed codes). Connections come from a pool that drops broken ones and
// checks idle ones before reuse (Connection::healthy), so the next call reconnects: no restart
// needed. UNAVAILABLE from WriteTransaction::Commit means the outcome is unknown (the commit may
// have happened); callers retry with their idempotency keys.

#ifndef SHAREDOS_GRANTSTORE_SVC_STORAGE_POSTGRES_GRANT_STORE_H_
#define SHAREDOS_GRANTSTORE_SVC_STORAGE_POSTGRES_GRANT_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/postgres/connection.h"
#include "common/postgres/connection_pool.h"
#include "common/time/clock.h"
#include "grantstore_svc/storage/grant_store.h"

namespace sharedos::grantstore::storage {

// Thread-safe. Each call checks a connection out of a bounded pool, so calls of different
// threads run concurrently on their own connections; the database serialises writers.
class PostgresGrantStore : public GrantStore {
 public:
  // The schema history table (shared databases: each store has its own).
  static constexpr char kHistoryTable[] = "grantstore_schema_migrations";

  struct Options {
    // A libpq connection URI (postgres://... or postgresql://...) or key=value string.
    std::string uri;
    // Bound on establishing each connection.
    absl::Duration connect_timeout = absl::Seconds(5);
    // How long a writer waits for the revision lock (another writer's transaction), and a call
    // for a free connection when max_connections are in use, before UNAVAILABLE.
    absl::Duration lock_timeout = absl::Seconds(5);
    // Connections open at once (busy and idle).
    int max_connections = 16;
    // Idle connections kept open between calls.
    int max_idle_connections = 8;
  };

  // Connects and migrates the schema. `clock` stamps the migration rows only. Errors:
  // UNAVAILABLE (cannot connect), FAILED_PRECONDITION (schema newer than this binary: the
  // message names both versions), INVALID_ARGUMENT (options), INTERNAL.
  static absl::StatusOr<std::unique_ptr<PostgresGrantStore>> Open(
      const Options& options, const common::Clock& clock = common::RealClock());

  ~PostgresGrantStore() override;

  absl::StatusOr<std::unique_ptr<WriteTransaction>> BeginWrite() override;
  absl::StatusOr<int64_t> CurrentRevision() override;
  // The revision the last write transaction announced (docs/adr/0021) when that announcement is
  // still the row its announcer wrote in this database (no logical restore rewrote it) and its
  // write transaction is in progress or aborted in this cluster; else CurrentRevision().
  absl::StatusOr<int64_t> AnnouncedRevision() override;
  absl::StatusOr<AuthoritySnapshot> LoadAuthority(absl::string_view namespace_id,
                                                  const protocol::v1::Address& actor,
                                                  const protocol::v1::Address& authority,
                                                  std::optional<int64_t> at_revision,
                                                  int max_grants) override;
  absl::StatusOr<std::optional<StoredGrant>> GetGrant(absl::string_view namespace_id,
                                                      absl::string_view grant_id,
                                                      std::optional<int64_t> at_revision) override;
  absl::StatusOr<std::vector<protocol::v1::CapabilityGrant>> ListGrants(
      const GrantQuery& query) override;
  absl::StatusOr<RevocationCheck> CheckRevocations(
      absl::string_view namespace_id, absl::Span<const std::string> grant_ids) override;
  absl::StatusOr<ConsumeResult> TryConsume(absl::string_view namespace_id,
                                           absl::string_view grant_id, int64_t max_uses) override;
  absl::StatusOr<int64_t> GetUsage(absl::string_view namespace_id,
                                   absl::string_view grant_id) override;
  absl::StatusOr<std::optional<StoredHostPolicy>> GetHostPolicy(
      absl::string_view namespace_id) override;
  absl::StatusOr<std::optional<StoredEscalation>> GetEscalation(
      absl::string_view escalation_id) override;
  absl::StatusOr<std::vector<grantstore::v1::EscalationRecord>> ListEscalations(
      const EscalationQuery& query) override;
  absl::StatusOr<std::optional<StoredCredential>> FindCredentialByDigest(
      absl::string_view token_sha256) override;
  absl::StatusOr<std::vector<grantstore::v1::Credential>> ListCredentials(
      const CredentialQuery& query) override;

 private:
  class Transaction;
  using Connection = common::postgres::Connection;
  using PooledConnection = common::postgres::PooledConnection;
  using ReadFn = std::function<absl::Status(Connection&)>;

  explicit PostgresGrantStore(Options options);

  // Runs `fn` in one REPEATABLE READ READ ONLY transaction: one consistent snapshot.
  absl::Status Read(const ReadFn& fn);

  const Options options_;
  common::postgres::ConnectionPool pool_;
  // One connection for the revision announcements (their own short transactions).
  common::postgres::ConnectionPool announcer_;
};

}  // namespace sharedos::grantstore::storage

#endif  // SHAREDOS_GRANTSTORE_SVC_STORAGE_POSTGRES_GRANT_STORE_H_
