#include "grantstore_svc/storage/postgres_grant_store.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "capability/address.h"
#include "capability/errors.h"
#include "common/postgres/migrations.h"
#include "common/postgres/transaction.h"
#include "common/status/status_macros.h"
#include "grantstore_svc/storage/grant_rows.h"

namespace sharedos::grantstore::storage {
namespace {

using ::sharedos::common::postgres::Connection;
using ::sharedos::common::postgres::Migration;
using ::sharedos::common::postgres::Param;
using ::sharedos::common::postgres::Result;
using ::sharedos::common::postgres::TransactionOptions;
using SqlTransaction = ::sharedos::common::postgres::Transaction;
namespace pb = ::sharedos::protocol::v1;
namespace gs = ::sharedos::grantstore::v1;

// Schema history. Append only: a shipped migration is never edited. Keys are COLLATE "C" so
// that ids order and compare by bytes (as the interface and SQLite do) whatever the database's
// locale; grants.issue_order keeps the insertion order of the grants of one revision.
const Migration kMigrations[] = {
    {1, R"sql(
CREATE TABLE store_revision (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  revision BIGINT NOT NULL
);
INSERT INTO store_revision (id, revision) VALUES (1, 0);

-- body: the CapabilityGrant as issued (never with revoked_at); revocation lives in columns.
CREATE TABLE grants (
  namespace_id TEXT COLLATE "C" NOT NULL,
  grant_id TEXT COLLATE "C" NOT NULL,
  subject_key TEXT COLLATE "C" NOT NULL,
  issuer_key TEXT COLLATE "C" NOT NULL,
  issued_revision BIGINT NOT NULL,
  issue_order BIGINT GENERATED ALWAYS AS IDENTITY,
  revoked_revision BIGINT,
  revoked_at_seconds BIGINT,
  revoked_at_nanos INTEGER,
  body BYTEA NOT NULL,
  PRIMARY KEY (namespace_id, grant_id)
);
CREATE INDEX grants_by_authority
  ON grants (namespace_id, subject_key, issuer_key, issued_revision, issue_order);

CREATE TABLE grant_usage (
  namespace_id TEXT COLLATE "C" NOT NULL,
  grant_id TEXT COLLATE "C" NOT NULL,
  uses BIGINT NOT NULL,
  PRIMARY KEY (namespace_id, grant_id)
);

CREATE TABLE idempotency_keys (
  idempotency_key TEXT COLLATE "C" PRIMARY KEY,
  namespace_id TEXT COLLATE "C" NOT NULL,
  grant_id TEXT COLLATE "C" NOT NULL,
  revision BIGINT NOT NULL
);

CREATE TABLE host_policies (
  namespace_id TEXT COLLATE "C" NOT NULL,
  revision BIGINT NOT NULL,
  version TEXT COLLATE "C" NOT NULL,
  body BYTEA NOT NULL,
  PRIMARY KEY (namespace_id, revision)
);
CREATE INDEX host_policies_by_version ON host_policies (namespace_id, version);

-- body: the EscalationRecord as it stands.
CREATE TABLE escalations (
  escalation_id TEXT COLLATE "C" PRIMARY KEY,
  namespace_id TEXT COLLATE "C" NOT NULL,
  status INTEGER NOT NULL,
  recorded_revision BIGINT NOT NULL UNIQUE,
  resolved_revision BIGINT,
  resolution_fingerprint BYTEA,
  body BYTEA NOT NULL
);
CREATE INDEX escalations_by_namespace ON escalations (namespace_id, recorded_revision);
CREATE INDEX escalations_by_status ON escalations (namespace_id, status, recorded_revision);
)sql"},
    {2, R"sql(
-- body: the Credential (never its secret); token_sha256: the digest of its current secret.
CREATE TABLE credentials (
  credential_id TEXT COLLATE "C" PRIMARY KEY,
  token_sha256 TEXT COLLATE "C" NOT NULL UNIQUE,
  revoked BOOLEAN NOT NULL,
  revision BIGINT NOT NULL,
  body BYTEA NOT NULL
);
)sql"},
    {3, R"sql(
-- The revision the write transaction holding the revision lock takes, noted in a transaction of
-- its own (committed) before any control-plane record of it is written (docs/adr/0021).
-- write_xid: that write transaction's id (txid_current(), with epoch); announcer_xid: the id of
-- the transaction that wrote this row, so that the row's xmin tells whether it is still the row
-- that transaction wrote (a logical restore -- pg_dump, then pg_restore or psql -- writes every
-- row anew, with the restoring transaction's id).
CREATE TABLE revision_announcement (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  revision BIGINT NOT NULL,
  write_xid BIGINT,
  announcer_xid BIGINT
);
INSERT INTO revision_announcement (id, revision) SELECT 1, revision FROM store_revision;
)sql"},
};

// One row of a result, for the shared row code (grant_rows.h).
class ResultRow final : public RowReader {
 public:
  ResultRow(const Result& result, int row) : result_(result), row_(row) {}
  bool IsNull(int column) const override { return result_.IsNull(row_, column); }
  int64_t Int64(int column) const override { return result_.Int64(row_, column); }
  absl::string_view Bytes(int column) const override { return result_.Bytes(row_, column); }

 private:
  const Result& result_;
  const int row_;
};

// The announced revision, when the announcement still is what its write transaction wrote in this
// database's own history and that transaction did not commit (docs/adr/0021): the row's xmin is
// the transaction id it recorded (no logical restore rewrote it), and its write transaction is
// in progress or aborted in this cluster (a copy of the database restored in the same cluster
// finds it committed; in another cluster it is unknown, in the future or a stranger's). Else
// nullopt: no announcement to honour.
absl::StatusOr<std::optional<int64_t>> ReadAnnouncement(Connection& conn) {
  ASSIGN_OR_RETURN(
      Result result,
      conn.Exec("SELECT revision, CASE WHEN write_xid < "
                "txid_snapshot_xmax(txid_current_snapshot()) THEN txid_status(write_xid) END "
                "FROM revision_announcement WHERE id = 1 AND write_xid IS NOT NULL AND "
                "announcer_xid IS NOT NULL AND xmin::text::bigint = announcer_xid % 4294967296"));
  if (result.rows() != 1 || result.IsNull(0, 1)) return std::optional<int64_t>();
  const absl::string_view status = result.Bytes(0, 1);
  if (status != "aborted" && status != "in progress") return std::optional<int64_t>();
  return std::optional<int64_t>(result.Int64(0, 0));
}

absl::StatusOr<int64_t> ReadRevision(Connection& conn) {
  ASSIGN_OR_RETURN(Result result, conn.Exec("SELECT revision FROM store_revision WHERE id = 1"));
  if (result.rows() != 1) return absl::InternalError("store_revision row missing");
  return result.Int64(0, 0);
}

// The revision a read serves: `at_revision` when it is within [0, current], else an error.
absl::StatusOr<int64_t> ServableRevision(Connection& conn, std::optional<int64_t> at_revision) {
  ASSIGN_OR_RETURN(const int64_t current, ReadRevision(conn));
  return storage::ServableRevision(current, at_revision);
}

absl::StatusOr<std::optional<StoredGrant>> SelectGrant(Connection& conn,
                                                       absl::string_view namespace_id,
                                                       absl::string_view grant_id,
                                                       int64_t at_revision) {
  const Param params[] = {Param::Text(namespace_id), Param::Text(grant_id),
                          Param::Int64(at_revision)};
  ASSIGN_OR_RETURN(Result result,
                   conn.Exec(absl::StrCat("SELECT ", kGrantColumns,
                                          " FROM grants WHERE namespace_id = $1 AND grant_id = $2 "
                                          "AND issued_revision <= $3"),
                             params));
  if (result.rows() == 0) return std::optional<StoredGrant>();
  ASSIGN_OR_RETURN(StoredGrant stored, GrantFromRow(ResultRow(result, 0), at_revision));
  return std::optional<StoredGrant>(std::move(stored));
}

absl::StatusOr<std::optional<StoredHostPolicy>> SelectHostPolicy(Connection& conn,
                                                                 absl::string_view namespace_id,
                                                                 int64_t at_revision) {
  const Param params[] = {Param::Text(namespace_id), Param::Int64(at_revision)};
  ASSIGN_OR_RETURN(Result result,
                   conn.Exec("SELECT revision, body FROM host_policies WHERE namespace_id = $1 "
                             "AND revision <= $2 ORDER BY revision DESC LIMIT 1",
                             params));
  if (result.rows() == 0) return std::optional<StoredHostPolicy>();
  ASSIGN_OR_RETURN(StoredHostPolicy stored, HostPolicyFromRow(ResultRow(result, 0), namespace_id));
  return std::optional<StoredHostPolicy>(std::move(stored));
}

absl::StatusOr<std::optional<StoredEscalation>> SelectEscalation(Connection& conn,
                                                                 absl::string_view escalation_id) {
  const Param params[] = {Param::Text(escalation_id)};
  ASSIGN_OR_RETURN(Result result, conn.Exec("SELECT body, resolution_fingerprint FROM escalations "
                                            "WHERE escalation_id = $1",
                                            params));
  if (result.rows() == 0) return std::optional<StoredEscalation>();
  ASSIGN_OR_RETURN(StoredEscalation stored, EscalationFromRow(ResultRow(result, 0), escalation_id));
  return std::optional<StoredEscalation>(std::move(stored));
}

absl::StatusOr<std::optional<StoredCredential>> SelectCredential(Connection& conn, bool by_digest,
                                                                 absl::string_view value) {
  const Param params[] = {Param::Text(value)};
  ASSIGN_OR_RETURN(Result result,
                   conn.Exec(by_digest ? "SELECT body, token_sha256 FROM credentials WHERE "
                                         "token_sha256 = $1"
                                       : "SELECT body, token_sha256 FROM credentials WHERE "
                                         "credential_id = $1",
                             params));
  if (result.rows() == 0) return std::optional<StoredCredential>();
  ASSIGN_OR_RETURN(StoredCredential stored,
                   CredentialFromRow(ResultRow(result, 0), by_digest ? "by digest" : value));
  return std::optional<StoredCredential>(std::move(stored));
}

// Usage of an existing grant (0 before its first use), or nullopt for an unknown grant.
absl::StatusOr<std::optional<int64_t>> SelectUsage(Connection& conn, absl::string_view namespace_id,
                                                   absl::string_view grant_id) {
  const Param params[] = {Param::Text(namespace_id), Param::Text(grant_id)};
  ASSIGN_OR_RETURN(Result result,
                   conn.Exec("SELECT COALESCE(u.uses, 0) FROM grants g LEFT JOIN grant_usage u "
                             "ON u.namespace_id = g.namespace_id AND u.grant_id = g.grant_id "
                             "WHERE g.namespace_id = $1 AND g.grant_id = $2",
                             params));
  if (result.rows() == 0) return std::optional<int64_t>();
  return std::optional<int64_t>(result.Int64(0, 0));
}

}  // namespace

absl::Status PostgresGrantStore::Read(const ReadFn& fn) {
  ASSIGN_OR_RETURN(PooledConnection conn, pool_.Acquire());
  TransactionOptions snapshot;
  snapshot.isolation = TransactionOptions::Isolation::kRepeatableRead;
  snapshot.read_only = true;
  return common::postgres::RunInTransaction(*conn, snapshot, fn);
}

// ---------------------------------------------------------------------------------------
// Write transactions

class PostgresGrantStore::Transaction : public WriteTransaction {
 public:
  explicit Transaction(PooledConnection conn) : conn_(std::move(conn)) {}

  // Opens the transaction, takes the next revision under the revision row's lock (see the
  // header), waiting at most `lock_timeout` for another writer, and announces it on
  // `announcer` (a connection of its own, in a transaction of its own, committed before this
  // one writes anything; docs/adr/0021). Only the holder of the revision lock announces, so
  // replicas never announce concurrently and an announcement names exactly its writer.
  absl::Status Begin(absl::Duration lock_timeout, common::postgres::ConnectionPool& announcer) {
    ASSIGN_OR_RETURN(SqlTransaction txn, SqlTransaction::Begin(*conn_));
    txn_.emplace(std::move(txn));
    const Param timeout[] = {Param::Text(
        absl::StrCat(std::max<int64_t>(1, absl::ToInt64Milliseconds(lock_timeout)), "ms"))};
    RETURN_IF_ERROR(conn_->Exec("SELECT set_config('lock_timeout', $1, true)", timeout).status());
    ASSIGN_OR_RETURN(Result result,
                     conn_->Exec("UPDATE store_revision SET revision = revision + 1 WHERE id = 1 "
                                 "RETURNING revision, txid_current()"));
    if (result.rows() != 1) return absl::InternalError("store_revision row missing");
    revision_ = result.Int64(0, 0);
    // One statement, so its own transaction, committed when it returns. Only the holder of the
    // revision lock writes the row, so the statement waits for nobody.
    ASSIGN_OR_RETURN(PooledConnection announcing, announcer.Acquire());
    const Param announcement[] = {Param::Int64(revision_), Param::Int64(result.Int64(0, 1))};
    RETURN_IF_ERROR(announcing
                        ->Exec("UPDATE revision_announcement SET revision = $1, write_xid = $2, "
                               "announcer_xid = txid_current() WHERE id = 1",
                               announcement)
                        .status());
    return absl::OkStatus();
  }

  int64_t revision() const override { return revision_; }

  absl::Status AdvanceRevision(int64_t revision) override {
    RETURN_IF_ERROR(CheckAdvance(revision, revision_));
    const Param params[] = {Param::Int64(revision)};
    RETURN_IF_ERROR(
        conn_->Exec("UPDATE store_revision SET revision = $1 WHERE id = 1", params).status());
    revision_ = revision;
    return absl::OkStatus();
  }

  absl::StatusOr<std::optional<StoredGrant>> GetGrant(absl::string_view namespace_id,
                                                      absl::string_view grant_id) override {
    return SelectGrant(*conn_, namespace_id, grant_id, revision_);
  }

  absl::Status InsertGrant(const pb::CapabilityGrant& grant) override {
    ASSIGN_OR_RETURN(const GrantRow row, EncodeGrant(grant, revision_));
    const Param params[] = {Param::Text(row.namespace_id),     Param::Text(row.grant_id),
                            Param::Text(row.subject_key),      Param::Text(row.issuer_key),
                            Param::Int64(row.issued_revision), Param::Bytes(row.body)};
    // ON CONFLICT DO NOTHING: a taken id is reported without aborting the transaction.
    ASSIGN_OR_RETURN(Result result,
                     conn_->Exec("INSERT INTO grants (namespace_id, grant_id, subject_key, "
                                 "issuer_key, issued_revision, body) VALUES ($1, $2, $3, $4, $5, "
                                 "$6) ON CONFLICT DO NOTHING",
                                 params));
    if (result.affected_rows() == 0) return GrantIdTaken(row.grant_id);
    return absl::OkStatus();
  }

  absl::Status RevokeGrant(absl::string_view namespace_id, absl::string_view grant_id,
                           absl::Time revoked_at) override {
    ASSIGN_OR_RETURN(std::optional<StoredGrant> existing,
                     SelectGrant(*conn_, namespace_id, grant_id, revision_));
    RETURN_IF_ERROR(CheckRevocable(existing, namespace_id, grant_id));
    const RevokedAtColumns at = EncodeRevokedAt(revoked_at);
    const Param params[] = {Param::Text(namespace_id), Param::Text(grant_id),
                            Param::Int64(revision_), Param::Int64(at.seconds),
                            Param::Int64(at.nanos)};
    return conn_
        ->Exec(
            "UPDATE grants SET revoked_revision = $3, revoked_at_seconds = $4, "
            "revoked_at_nanos = $5 WHERE namespace_id = $1 AND grant_id = $2 AND "
            "revoked_revision IS NULL",
            params)
        .status();
  }

  absl::StatusOr<std::optional<IdempotencyEntry>> GetIdempotencyKey(
      absl::string_view key) override {
    const Param params[] = {Param::Text(key)};
    ASSIGN_OR_RETURN(Result result, conn_->Exec("SELECT namespace_id, grant_id FROM "
                                                "idempotency_keys WHERE idempotency_key = $1",
                                                params));
    if (result.rows() == 0) return std::optional<IdempotencyEntry>();
    return std::optional<IdempotencyEntry>(
        IdempotencyEntry{std::string(result.Bytes(0, 0)), std::string(result.Bytes(0, 1))});
  }

  absl::Status PutIdempotencyKey(absl::string_view key, const IdempotencyEntry& entry) override {
    const Param params[] = {Param::Text(key), Param::Text(entry.namespace_id),
                            Param::Text(entry.grant_id), Param::Int64(revision_)};
    ASSIGN_OR_RETURN(Result result,
                     conn_->Exec("INSERT INTO idempotency_keys (idempotency_key, namespace_id, "
                                 "grant_id, revision) VALUES ($1, $2, $3, $4) ON CONFLICT DO "
                                 "NOTHING",
                                 params));
    if (result.affected_rows() == 0) {
      return absl::AlreadyExistsError("the idempotency key is already used");
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::optional<StoredHostPolicy>> GetHostPolicy(
      absl::string_view namespace_id) override {
    return SelectHostPolicy(*conn_, namespace_id, revision_);
  }

  absl::StatusOr<bool> HostPolicyVersionUsed(absl::string_view namespace_id,
                                             absl::string_view version) override {
    const Param params[] = {Param::Text(namespace_id), Param::Text(version)};
    ASSIGN_OR_RETURN(Result result,
                     conn_->Exec("SELECT 1 FROM host_policies WHERE namespace_id = $1 AND "
                                 "version = $2 LIMIT 1",
                                 params));
    return result.rows() > 0;
  }

  absl::Status PutHostPolicy(const gs::HostPolicy& policy) override {
    const Param params[] = {Param::Text(policy.namespace_id()), Param::Int64(revision_),
                            Param::Text(policy.version()),
                            Param::Bytes(policy.SerializeAsString())};
    ASSIGN_OR_RETURN(Result result,
                     conn_->Exec("INSERT INTO host_policies (namespace_id, revision, version, "
                                 "body) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
                                 params));
    if (result.affected_rows() == 0) {
      return absl::AlreadyExistsError(
          absl::StrCat("a host policy of namespace \"", policy.namespace_id(),
                       "\" is already written at revision ", revision_));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::optional<StoredEscalation>> GetEscalation(
      absl::string_view escalation_id) override {
    return SelectEscalation(*conn_, escalation_id);
  }

  absl::Status InsertEscalation(const gs::EscalationRecord& record) override {
    const EscalationRow row = EncodeEscalation(record, revision_);
    const Param params[] = {Param::Text(row.escalation_id), Param::Text(row.namespace_id),
                            Param::Int64(row.status), Param::Int64(row.recorded_revision),
                            Param::Bytes(row.body)};
    ASSIGN_OR_RETURN(Result result,
                     conn_->Exec("INSERT INTO escalations (escalation_id, namespace_id, status, "
                                 "recorded_revision, body) VALUES ($1, $2, $3, $4, $5) ON "
                                 "CONFLICT DO NOTHING",
                                 params));
    if (result.affected_rows() == 0) return EscalationIdTaken(row.escalation_id);
    return absl::OkStatus();
  }

  absl::Status ResolveEscalation(const gs::EscalationRecord& record,
                                 absl::string_view resolution_fingerprint) override {
    ASSIGN_OR_RETURN(std::optional<StoredEscalation> existing,
                     SelectEscalation(*conn_, record.escalation_id()));
    RETURN_IF_ERROR(CheckResolvable(existing, record.escalation_id()));
    const Param params[] = {Param::Text(record.escalation_id()),
                            Param::Int64(record.status()),
                            Param::Int64(revision_),
                            Param::Bytes(resolution_fingerprint),
                            Param::Bytes(record.SerializeAsString()),
                            Param::Int64(gs::ESCALATION_RECORD_STATUS_PENDING)};
    return conn_
        ->Exec(
            "UPDATE escalations SET status = $2, resolved_revision = $3, "
            "resolution_fingerprint = $4, body = $5 WHERE escalation_id = $1 AND status = $6",
            params)
        .status();
  }

  absl::StatusOr<std::optional<StoredCredential>> GetCredential(
      absl::string_view credential_id) override {
    return SelectCredential(*conn_, /*by_digest=*/false, credential_id);
  }

  absl::Status InsertCredential(const StoredCredential& credential) override {
    return WriteCredential(credential,
                           "INSERT INTO credentials (credential_id, token_sha256, revoked, "
                           "revision, body) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING");
  }

  absl::Status UpdateCredential(const StoredCredential& credential) override {
    ASSIGN_OR_RETURN(std::optional<StoredCredential> existing,
                     GetCredential(credential.credential.credential_id()));
    if (!existing.has_value()) {
      return CredentialToUpdateNotFound(credential.credential.credential_id());
    }
    if (existing->token_sha256 != credential.token_sha256) {
      ASSIGN_OR_RETURN(std::optional<StoredCredential> other,
                       SelectCredential(*conn_, /*by_digest=*/true, credential.token_sha256));
      if (other.has_value()) return CredentialTaken(credential.credential.credential_id());
    }
    return WriteCredential(credential,
                           "UPDATE credentials SET token_sha256 = $2, revoked = $3, revision = "
                           "$4, body = $5 WHERE credential_id = $1");
  }

  absl::Status Commit() override {
    if (!txn_.has_value() || !txn_->active()) {
      return absl::FailedPreconditionError("write transaction is no longer active");
    }
    return txn_->Commit();
  }

 private:
  absl::Status WriteCredential(const StoredCredential& credential, const char* sql) {
    const CredentialRow row = EncodeCredential(credential, revision_);
    const Param params[] = {Param::Text(row.credential_id), Param::Text(row.token_sha256),
                            Param::Bool(row.revoked), Param::Int64(row.revision),
                            Param::Bytes(row.body)};
    ASSIGN_OR_RETURN(Result result, conn_->Exec(sql, params));
    if (result.affected_rows() == 0) return CredentialTaken(row.credential_id);
    return absl::OkStatus();
  }

  PooledConnection conn_;
  // Declared after conn_: rolled back (if still open) before the connection goes back to the
  // pool.
  std::optional<SqlTransaction> txn_;
  int64_t revision_ = 0;
};

// ---------------------------------------------------------------------------------------
// The store

namespace {

common::postgres::ConnectionPool::Options PoolOptions(const PostgresGrantStore::Options& options) {
  common::postgres::ConnectionPool::Options pool;
  pool.uri = options.uri;
  pool.connection.connect_timeout = options.connect_timeout;
  pool.connection.application_name = "sharedos-grantstore";
  pool.max_connections = options.max_connections;
  pool.max_idle_connections = options.max_idle_connections;
  pool.acquire_timeout = options.lock_timeout;
  pool.owner = "the grant store";
  return pool;
}

// The announcements' own connection (docs/adr/0021): one, apart from the pool, so that a writer
// holding the revision lock never waits for a connection its peers hold while they wait for the
// lock.
common::postgres::ConnectionPool::Options AnnouncerOptions(
    const PostgresGrantStore::Options& options) {
  common::postgres::ConnectionPool::Options pool = PoolOptions(options);
  pool.connection.application_name = "sharedos-grantstore-announcer";
  pool.max_connections = 1;
  pool.max_idle_connections = 1;
  pool.owner = "the grant store's revision announcements";
  return pool;
}

}  // namespace

PostgresGrantStore::PostgresGrantStore(Options options)
    : options_(std::move(options)),
      pool_(PoolOptions(options_)),
      announcer_(AnnouncerOptions(options_)) {}

PostgresGrantStore::~PostgresGrantStore() = default;

absl::StatusOr<std::unique_ptr<PostgresGrantStore>> PostgresGrantStore::Open(
    const Options& options, const common::Clock& clock) {
  if (options.uri.empty()) return absl::InvalidArgumentError("PostgreSQL uri is empty");
  if (options.max_connections < 1 || options.max_idle_connections < 0) {
    return absl::InvalidArgumentError("max_connections must be >= 1 and max_idle_connections >= 0");
  }
  std::unique_ptr<PostgresGrantStore> store(new PostgresGrantStore(options));
  {
    ASSIGN_OR_RETURN(PooledConnection conn, store->pool_.Acquire());
    RETURN_IF_ERROR(common::postgres::Migrate(*conn, kHistoryTable, kMigrations, clock));
  }
  return store;
}

absl::StatusOr<std::unique_ptr<WriteTransaction>> PostgresGrantStore::BeginWrite() {
  ASSIGN_OR_RETURN(PooledConnection conn, pool_.Acquire());
  auto txn = std::make_unique<Transaction>(std::move(conn));
  RETURN_IF_ERROR(txn->Begin(options_.lock_timeout, announcer_));
  return std::unique_ptr<WriteTransaction>(std::move(txn));
}

absl::StatusOr<int64_t> PostgresGrantStore::CurrentRevision() {
  ASSIGN_OR_RETURN(PooledConnection conn, pool_.Acquire());
  return ReadRevision(*conn);
}

absl::StatusOr<int64_t> PostgresGrantStore::AnnouncedRevision() {
  int64_t revision = 0;
  RETURN_IF_ERROR(Read([&](Connection& conn) -> absl::Status {
    ASSIGN_OR_RETURN(revision, ReadRevision(conn));
    ASSIGN_OR_RETURN(const std::optional<int64_t> announced, ReadAnnouncement(conn));
    if (announced.has_value()) revision = std::max(revision, *announced);
    return absl::OkStatus();
  }));
  return revision;
}

absl::StatusOr<AuthoritySnapshot> PostgresGrantStore::LoadAuthority(
    absl::string_view namespace_id, const pb::Address& actor, const pb::Address& authority,
    std::optional<int64_t> at_revision, int max_grants) {
  AuthoritySnapshot snapshot;
  const std::string subject_key = capability::AddressKey(actor);
  const std::string issuer_key = capability::AddressKey(authority);
  RETURN_IF_ERROR(Read([&](Connection& conn) -> absl::Status {
    snapshot = AuthoritySnapshot();
    ASSIGN_OR_RETURN(snapshot.revision, ServableRevision(conn, at_revision));
    const Param params[] = {Param::Text(namespace_id), Param::Text(subject_key),
                            Param::Text(issuer_key), Param::Int64(snapshot.revision),
                            Param::Int64(std::max(max_grants, 0))};
    ASSIGN_OR_RETURN(
        Result result,
        conn.Exec("SELECT body FROM grants WHERE namespace_id = $1 AND subject_key = $2 AND "
                  "issuer_key = $3 AND issued_revision <= $4 AND (revoked_revision IS NULL OR "
                  "revoked_revision > $4) ORDER BY issued_revision, issue_order LIMIT $5",
                  params));
    for (int row = 0; row < result.rows(); ++row) {
      RETURN_IF_ERROR(ParseGrantBody(ResultRow(result, row), snapshot.grants.emplace_back()));
    }
    ASSIGN_OR_RETURN(std::optional<StoredHostPolicy> policy,
                     SelectHostPolicy(conn, namespace_id, snapshot.revision));
    if (policy.has_value()) snapshot.host_policy = std::move(policy->policy);
    return absl::OkStatus();
  }));
  return snapshot;
}

absl::StatusOr<std::optional<StoredGrant>> PostgresGrantStore::GetGrant(
    absl::string_view namespace_id, absl::string_view grant_id,
    std::optional<int64_t> at_revision) {
  std::optional<StoredGrant> result;
  RETURN_IF_ERROR(Read([&](Connection& conn) -> absl::Status {
    ASSIGN_OR_RETURN(const int64_t revision, ServableRevision(conn, at_revision));
    ASSIGN_OR_RETURN(result, SelectGrant(conn, namespace_id, grant_id, revision));
    return absl::OkStatus();
  }));
  return result;
}

absl::StatusOr<std::vector<pb::CapabilityGrant>> PostgresGrantStore::ListGrants(
    const GrantQuery& query) {
  std::vector<pb::CapabilityGrant> grants;
  std::optional<std::string> subject_key;
  std::optional<std::string> issuer_key;
  if (query.subject.has_value()) subject_key = capability::AddressKey(*query.subject);
  if (query.issuer.has_value()) issuer_key = capability::AddressKey(*query.issuer);
  RETURN_IF_ERROR(Read([&](Connection& conn) -> absl::Status {
    grants.clear();
    ASSIGN_OR_RETURN(const int64_t revision, ReadRevision(conn));
    const Param params[] = {
        Param::Text(query.namespace_id),    Param::Text(query.after_grant_id),
        Param::OptionalText(subject_key),   Param::OptionalText(issuer_key),
        Param::Bool(query.include_revoked), Param::Int64(std::max(query.limit, 0))};
    ASSIGN_OR_RETURN(
        Result result,
        conn.Exec(absl::StrCat("SELECT ", kGrantColumns,
                               " FROM grants WHERE namespace_id = $1 AND grant_id > $2 AND ($3 IS "
                               "NULL OR subject_key = $3) AND ($4 IS NULL OR issuer_key = $4) AND "
                               "($5 OR revoked_revision IS NULL) ORDER BY grant_id LIMIT $6"),
                  params));
    for (int row = 0; row < result.rows(); ++row) {
      ASSIGN_OR_RETURN(StoredGrant stored, GrantFromRow(ResultRow(result, row), revision));
      grants.push_back(std::move(stored.grant));
    }
    return absl::OkStatus();
  }));
  return grants;
}

absl::StatusOr<RevocationCheck> PostgresGrantStore::CheckRevocations(
    absl::string_view namespace_id, absl::Span<const std::string> grant_ids) {
  RevocationCheck check;
  RETURN_IF_ERROR(Read([&](Connection& conn) -> absl::Status {
    check = RevocationCheck();
    ASSIGN_OR_RETURN(check.revision, ReadRevision(conn));
    absl::flat_hash_set<absl::string_view> seen;
    for (const std::string& id : grant_ids) {
      if (!seen.insert(id).second) continue;
      const Param params[] = {Param::Text(namespace_id), Param::Text(id)};
      ASSIGN_OR_RETURN(Result result,
                       conn.Exec("SELECT revoked_revision IS NOT NULL FROM grants WHERE "
                                 "namespace_id = $1 AND grant_id = $2",
                                 params));
      // Unknown ids are reported revoked: a grant that cannot be found cannot be live.
      if (result.rows() == 0 || result.Bool(0, 0)) check.revoked_grant_ids.push_back(id);
    }
    return absl::OkStatus();
  }));
  return check;
}

absl::StatusOr<ConsumeResult> PostgresGrantStore::TryConsume(absl::string_view namespace_id,
                                                             absl::string_view grant_id,
                                                             int64_t max_uses) {
  ASSIGN_OR_RETURN(PooledConnection conn, pool_.Acquire());
  // One statement, so one transaction: the increment happens iff the grant exists and fewer
  // than max_uses were spent. ON CONFLICT DO UPDATE locks the usage row and re-checks the WHERE
  // against its latest committed version, so concurrent callers on any connection never spend
  // more than max_uses.
  const Param params[] = {Param::Text(namespace_id), Param::Text(grant_id), Param::Int64(max_uses)};
  ASSIGN_OR_RETURN(
      Result result,
      conn->Exec("INSERT INTO grant_usage (namespace_id, grant_id, uses) SELECT namespace_id, "
                 "grant_id, 1 FROM grants WHERE namespace_id = $1 AND grant_id = $2 AND $3 >= 1 "
                 "ON CONFLICT (namespace_id, grant_id) DO UPDATE SET uses = grant_usage.uses + 1 "
                 "WHERE grant_usage.uses < $3 RETURNING uses",
                 params));
  if (result.rows() == 1) return ConsumeResult{true, result.Int64(0, 0)};
  // Not consumed: the grant is unknown or spent (uses never decrease, so this is >= max_uses
  // for a spent grant).
  ASSIGN_OR_RETURN(std::optional<int64_t> uses, SelectUsage(*conn, namespace_id, grant_id));
  if (!uses.has_value()) return capability::errors::GrantNotFound(namespace_id, grant_id);
  return ConsumeResult{false, *uses};
}

absl::StatusOr<int64_t> PostgresGrantStore::GetUsage(absl::string_view namespace_id,
                                                     absl::string_view grant_id) {
  ASSIGN_OR_RETURN(PooledConnection conn, pool_.Acquire());
  ASSIGN_OR_RETURN(std::optional<int64_t> uses, SelectUsage(*conn, namespace_id, grant_id));
  if (!uses.has_value()) return capability::errors::GrantNotFound(namespace_id, grant_id);
  return *uses;
}

absl::StatusOr<std::optional<StoredHostPolicy>> PostgresGrantStore::GetHostPolicy(
    absl::string_view namespace_id) {
  std::optional<StoredHostPolicy> result;
  RETURN_IF_ERROR(Read([&](Connection& conn) -> absl::Status {
    ASSIGN_OR_RETURN(const int64_t revision, ReadRevision(conn));
    ASSIGN_OR_RETURN(result, SelectHostPolicy(conn, namespace_id, revision));
    return absl::OkStatus();
  }));
  return result;
}

absl::StatusOr<std::optional<StoredEscalation>> PostgresGrantStore::GetEscalation(
    absl::string_view escalation_id) {
  ASSIGN_OR_RETURN(PooledConnection conn, pool_.Acquire());
  return SelectEscalation(*conn, escalation_id);
}

absl::StatusOr<std::vector<gs::EscalationRecord>> PostgresGrantStore::ListEscalations(
    const EscalationQuery& query) {
  ASSIGN_OR_RETURN(PooledConnection conn, pool_.Acquire());
  const Param params[] = {
      Param::Text(query.namespace_id), Param::Int64(query.after_recorded_revision),
      query.status.has_value() ? Param::Int64(*query.status) : Param::Null(Param::Type::kInt64),
      Param::Int64(std::max(query.limit, 0))};
  ASSIGN_OR_RETURN(Result result,
                   conn->Exec("SELECT escalation_id, body FROM escalations WHERE namespace_id = "
                              "$1 AND recorded_revision > $2 AND ($3 IS NULL OR status = $3) "
                              "ORDER BY recorded_revision LIMIT $4",
                              params));
  std::vector<gs::EscalationRecord> records;
  for (int row = 0; row < result.rows(); ++row) {
    RETURN_IF_ERROR(ParseListedEscalation(ResultRow(result, row), records.emplace_back()));
  }
  return records;
}

absl::StatusOr<std::optional<StoredCredential>> PostgresGrantStore::FindCredentialByDigest(
    absl::string_view token_sha256) {
  ASSIGN_OR_RETURN(PooledConnection conn, pool_.Acquire());
  return SelectCredential(*conn, /*by_digest=*/true, token_sha256);
}

absl::StatusOr<std::vector<gs::Credential>> PostgresGrantStore::ListCredentials(
    const CredentialQuery& query) {
  ASSIGN_OR_RETURN(PooledConnection conn, pool_.Acquire());
  const Param params[] = {Param::Text(query.after_credential_id),
                          Param::Bool(query.include_revoked),
                          Param::Int64(std::max(query.limit, 0))};
  ASSIGN_OR_RETURN(Result result,
                   conn->Exec("SELECT credential_id, body FROM credentials WHERE credential_id > "
                              "$1 AND ($2 OR NOT revoked) ORDER BY credential_id LIMIT $3",
                              params));
  std::vector<gs::Credential> credentials;
  for (int row = 0; row < result.rows(); ++row) {
    RETURN_IF_ERROR(ParseListedCredential(ResultRow(result, row), credentials.emplace_back()));
  }
  return credentials;
}

}  // namespace sharedos::grantstore::storage
