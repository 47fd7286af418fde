#include "grantstore_svc/storage/sqlite_grant_store.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "capability/address.h"
#include "capability/errors.h"
#include "common/sqlite/migrations.h"
#include "common/sqlite/transaction.h"
#include "common/status/status_macros.h"
#include "grantstore_svc/storage/grant_rows.h"

namespace sharedos::grantstore::storage {
namespace {

using ::sharedos::common::sqlite::Database;
using ::sharedos::common::sqlite::Migration;
using ::sharedos::common::sqlite::Statement;
using SqlTransaction = ::sharedos::common::sqlite::Transaction;
namespace pb = ::sharedos::protocol::v1;
namespace gs = ::sharedos::grantstore::v1;

// Schema history. Append only: a shipped migration is never edited.
const Migration kMigrations[] = {
    {1, R"sql(
CREATE TABLE store_revision (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  revision INTEGER NOT NULL
);
INSERT INTO store_revision (id, revision) VALUES (1, 0);

-- body: the CapabilityGrant as issued (never with revoked_at); revocation lives in columns.
CREATE TABLE grants (
  namespace_id TEXT NOT NULL,
  grant_id TEXT NOT NULL,
  subject_key TEXT NOT NULL,
  issuer_key TEXT NOT NULL,
  issued_revision INTEGER NOT NULL,
  revoked_revision INTEGER,
  revoked_at_seconds INTEGER,
  revoked_at_nanos INTEGER,
  body BLOB NOT NULL,
  PRIMARY KEY (namespace_id, grant_id)
);
CREATE INDEX grants_by_authority
  ON grants (namespace_id, subject_key, issuer_key, issued_revision);

CREATE TABLE grant_usage (
  namespace_id TEXT NOT NULL,
  grant_id TEXT NOT NULL,
  uses INTEGER NOT NULL,
  PRIMARY KEY (namespace_id, grant_id)
) WITHOUT ROWID;

CREATE TABLE idempotency_keys (
  idempotency_key TEXT PRIMARY KEY,
  namespace_id TEXT NOT NULL,
  grant_id TEXT NOT NULL,
  revision INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE host_policies (
  namespace_id TEXT NOT NULL,
  revision INTEGER NOT NULL,
  version TEXT NOT NULL,
  body BLOB NOT NULL,
  PRIMARY KEY (namespace_id, revision)
);
CREATE INDEX host_policies_by_version ON host_policies (namespace_id, version);

-- body: the EscalationRecord as it stands.
CREATE TABLE escalations (
  escalation_id TEXT PRIMARY KEY,
  namespace_id TEXT NOT NULL,
  status INTEGER NOT NULL,
  recorded_revision INTEGER NOT NULL UNIQUE,
  resolved_revision INTEGER,
  resolution_fingerprint BLOB,
  body BLOB NOT NULL
);
CREATE INDEX escalations_by_namespace ON escalations (namespace_id, recorded_revision);
CREATE INDEX escalations_by_status ON escalations (namespace_id, status, recorded_revision);
)sql"},
    {2, R"sql(
-- body: the Credential (never its secret); token_sha256: the digest of its current secret.
CREATE TABLE credentials (
  credential_id TEXT PRIMARY KEY,
  token_sha256 TEXT NOT NULL UNIQUE,
  revoked INTEGER NOT NULL,
  revision INTEGER NOT NULL,
  body BLOB NOT NULL
);
)sql"},
    {3, R"sql(
-- The revision the next write transaction takes, noted (committed) before its control-plane
-- records are written: a revision in the audit log but not committed here is then known for a
-- crash between the two, not a restore (docs/adr/0021).
CREATE TABLE revision_announcement (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  revision INTEGER NOT NULL
);
INSERT INTO revision_announcement (id, revision) SELECT 1, revision FROM store_revision;
)sql"},
    {4, R"sql(
-- grants clustered by what LoadAuthority reads (docs/adr/0025): a WITHOUT ROWID table keyed by
-- (namespace, subject, issuer, issued_revision, issue_order), so an actor's grants from one
-- issuer sit side by side on a few pages, in issue order, whatever the table's size. issue_order
-- keeps the insertion order of one key's grants of one revision (the former rowid order); the
-- id stays unique in its namespace through grants_by_id. Rows are copied in key order.
CREATE TABLE grants_clustered (
  namespace_id TEXT NOT NULL,
  subject_key TEXT NOT NULL,
  issuer_key TEXT NOT NULL,
  issued_revision INTEGER NOT NULL,
  issue_order INTEGER NOT NULL,
  grant_id TEXT NOT NULL,
  revoked_revision INTEGER,
  revoked_at_seconds INTEGER,
  revoked_at_nanos INTEGER,
  body BLOB NOT NULL,
  PRIMARY KEY (namespace_id, subject_key, issuer_key, issued_revision, issue_order)
) WITHOUT ROWID;
INSERT INTO grants_clustered (namespace_id, subject_key, issuer_key, issued_revision,
                              issue_order, grant_id, revoked_revision, revoked_at_seconds,
                              revoked_at_nanos, body)
  SELECT namespace_id, subject_key, issuer_key, issued_revision, rowid, grant_id,
         revoked_revision, revoked_at_seconds, revoked_at_nanos, body
  FROM grants ORDER BY namespace_id, subject_key, issuer_key, issued_revision, rowid;
DROP TABLE grants;
ALTER TABLE grants_clustered RENAME TO grants;
CREATE UNIQUE INDEX grants_by_id ON grants (namespace_id, grant_id);
)sql"},
};

constexpr char kSelectRevision[] = "SELECT revision FROM store_revision WHERE id = 1";

absl::StatusOr<int64_t> ReadAnnouncement(Database& db) {
  ASSIGN_OR_RETURN(Statement stmt,
                   db.Cached("SELECT revision FROM revision_announcement WHERE id = 1"));
  ASSIGN_OR_RETURN(const bool row, stmt.Step());
  if (!row) return absl::InternalError("revision_announcement row missing");
  return stmt.ColumnInt64(0);
}

absl::StatusOr<int64_t> ReadRevision(Database& db) {
  ASSIGN_OR_RETURN(Statement stmt, db.Cached(kSelectRevision));
  ASSIGN_OR_RETURN(const bool row, stmt.Step());
  if (!row) return absl::InternalError("store_revision row missing");
  return stmt.ColumnInt64(0);
}

// The revision a read serves: `at_revision` when it is within [0, current], else an error.
absl::StatusOr<int64_t> ServableRevision(Database& db, std::optional<int64_t> at_revision) {
  ASSIGN_OR_RETURN(const int64_t current, ReadRevision(db));
  return storage::ServableRevision(current, at_revision);
}

absl::Status Bind(Statement& stmt, int index, absl::string_view text) {
  return stmt.BindText(index, text);
}

// The current row of a stepped statement, for the shared row code (grant_rows.h).
class StatementRow final : public RowReader {
 public:
  explicit StatementRow(const Statement& stmt) : stmt_(stmt) {}
  bool IsNull(int column) const override { return stmt_.ColumnIsNull(column); }
  int64_t Int64(int column) const override { return stmt_.ColumnInt64(column); }
  absl::string_view Bytes(int column) const override { return stmt_.ColumnBlob(column); }

 private:
  const Statement& stmt_;
};

absl::StatusOr<std::optional<StoredGrant>> SelectGrant(Database& db, absl::string_view namespace_id,
                                                       absl::string_view grant_id,
                                                       int64_t at_revision) {
  ASSIGN_OR_RETURN(Statement stmt,
                   db.Cached(absl::StrCat("SELECT ", kGrantColumns,
                                          " FROM grants WHERE namespace_id = ?1 AND grant_id = ?2 "
                                          "AND issued_revision <= ?3")));
  RETURN_IF_ERROR(Bind(stmt, 1, namespace_id));
  RETURN_IF_ERROR(Bind(stmt, 2, grant_id));
  RETURN_IF_ERROR(stmt.BindInt64(3, at_revision));
  ASSIGN_OR_RETURN(const bool row, stmt.Step());
  if (!row) return std::optional<StoredGrant>();
  ASSIGN_OR_RETURN(StoredGrant stored, GrantFromRow(StatementRow(stmt), at_revision));
  return std::optional<StoredGrant>(std::move(stored));
}

absl::StatusOr<std::optional<StoredHostPolicy>> SelectHostPolicy(Database& db,
                                                                 absl::string_view namespace_id,
                                                                 int64_t at_revision) {
  ASSIGN_OR_RETURN(Statement stmt,
                   db.Cached("SELECT revision, body FROM host_policies WHERE namespace_id = ?1 "
                             "AND revision <= ?2 ORDER BY revision DESC LIMIT 1"));
  RETURN_IF_ERROR(Bind(stmt, 1, namespace_id));
  RETURN_IF_ERROR(stmt.BindInt64(2, at_revision));
  ASSIGN_OR_RETURN(const bool row, stmt.Step());
  if (!row) return std::optional<StoredHostPolicy>();
  ASSIGN_OR_RETURN(StoredHostPolicy stored, HostPolicyFromRow(StatementRow(stmt), namespace_id));
  return std::optional<StoredHostPolicy>(std::move(stored));
}

absl::StatusOr<std::optional<StoredEscalation>> SelectEscalation(Database& db,
                                                                 absl::string_view escalation_id) {
  ASSIGN_OR_RETURN(Statement stmt, db.Cached("SELECT body, resolution_fingerprint FROM escalations "
                                             "WHERE escalation_id = ?1"));
  RETURN_IF_ERROR(Bind(stmt, 1, escalation_id));
  ASSIGN_OR_RETURN(const bool row, stmt.Step());
  if (!row) return std::optional<StoredEscalation>();
  ASSIGN_OR_RETURN(StoredEscalation stored, EscalationFromRow(StatementRow(stmt), escalation_id));
  return std::optional<StoredEscalation>(std::move(stored));
}

absl::StatusOr<std::optional<StoredCredential>> SelectCredential(Database& db,
                                                                 absl::string_view column,
                                                                 absl::string_view value) {
  ASSIGN_OR_RETURN(Statement stmt, db.Cached(column == "token_sha256"
                                                 ? "SELECT body, token_sha256 FROM credentials "
                                                   "WHERE token_sha256 = ?1"
                                                 : "SELECT body, token_sha256 FROM credentials "
                                                   "WHERE credential_id = ?1"));
  RETURN_IF_ERROR(Bind(stmt, 1, value));
  ASSIGN_OR_RETURN(const bool row, stmt.Step());
  if (!row) return std::optional<StoredCredential>();
  ASSIGN_OR_RETURN(
      StoredCredential stored,
      CredentialFromRow(StatementRow(stmt), column == "token_sha256" ? "by digest" : value));
  return std::optional<StoredCredential>(std::move(stored));
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Write transactions

class SqliteGrantStore::Transaction : public WriteTransaction {
 public:
  // Takes the in-process write lock for the transaction's whole life.
  explicit Transaction(SqliteGrantStore& store) ABSL_NO_THREAD_SAFETY_ANALYSIS
      : lock_(&store.write_mu_),
        db_(*store.writer_) {}

  absl::Status Begin() {
    for (int attempt = 0;; ++attempt) {
      // Announce the revision this transaction takes before anything records it: committed with
      // synchronous=NORMAL (no fsync: it survives a process crash, the case it is for).
      RETURN_IF_ERROR(db_.Exec("PRAGMA synchronous=NORMAL"));
      const absl::Status announced = db_.Exec(
          "UPDATE revision_announcement SET revision = MAX(revision, (SELECT revision FROM "
          "store_revision WHERE id = 1) + 1) WHERE id = 1");
      RETURN_IF_ERROR(db_.Exec("PRAGMA synchronous=FULL"));
      RETURN_IF_ERROR(announced);
      ASSIGN_OR_RETURN(SqlTransaction txn,
                       SqlTransaction::Begin(db_, SqlTransaction::Mode::kImmediate));
      txn_.emplace(std::move(txn));
      ASSIGN_OR_RETURN(const int64_t current, ReadRevision(db_));
      revision_ = current + 1;
      ASSIGN_OR_RETURN(const int64_t noted, ReadAnnouncement(db_));
      // Another process took the revision in between: announce again (a few times; past that,
      // unannounced — a crash then reads as a restore, fail closed).
      if (noted >= revision_ || attempt >= 3) return absl::OkStatus();
      txn_.reset();
    }
  }

  int64_t revision() const override { return revision_; }

  absl::Status AdvanceRevision(int64_t revision) override {
    RETURN_IF_ERROR(CheckAdvance(revision, revision_));
    revision_ = revision;
    return absl::OkStatus();
  }

  absl::StatusOr<std::optional<StoredGrant>> GetGrant(absl::string_view namespace_id,
                                                      absl::string_view grant_id) override {
    return SelectGrant(db_, namespace_id, grant_id, revision_);
  }

  absl::Status InsertGrant(const pb::CapabilityGrant& grant) override {
    ASSIGN_OR_RETURN(const GrantRow row, EncodeGrant(grant, revision_));
    // issue_order: the next of the grant's key and revision, so one revision's grants of one
    // actor and issuer read back in the order they were inserted (a seek on the page the row
    // goes to). The id's uniqueness is grants_by_id's: ALREADY_EXISTS as before.
    ASSIGN_OR_RETURN(Statement stmt,
                     db_.Cached("INSERT INTO grants (namespace_id, grant_id, subject_key, "
                                "issuer_key, issued_revision, issue_order, body) "
                                "VALUES (?1, ?2, ?3, ?4, ?5, (SELECT COALESCE(MAX(issue_order), "
                                "0) + 1 FROM grants WHERE namespace_id = ?1 AND subject_key = ?3 "
                                "AND issuer_key = ?4 AND issued_revision = ?5), ?6)"));
    RETURN_IF_ERROR(Bind(stmt, 1, row.namespace_id));
    RETURN_IF_ERROR(Bind(stmt, 2, row.grant_id));
    RETURN_IF_ERROR(Bind(stmt, 3, row.subject_key));
    RETURN_IF_ERROR(Bind(stmt, 4, row.issuer_key));
    RETURN_IF_ERROR(stmt.BindInt64(5, row.issued_revision));
    RETURN_IF_ERROR(stmt.BindBlob(6, row.body));
    absl::Status status = stmt.Step().status();
    if (absl::IsAlreadyExists(status)) return GrantIdTaken(row.grant_id);
    return status;
  }

  absl::Status RevokeGrant(absl::string_view namespace_id, absl::string_view grant_id,
                           absl::Time revoked_at) override {
    ASSIGN_OR_RETURN(std::optional<StoredGrant> existing,
                     SelectGrant(db_, namespace_id, grant_id, revision_));
    RETURN_IF_ERROR(CheckRevocable(existing, namespace_id, grant_id));
    const RevokedAtColumns at = EncodeRevokedAt(revoked_at);
    ASSIGN_OR_RETURN(Statement stmt,
                     db_.Cached("UPDATE grants SET revoked_revision = ?3, revoked_at_seconds = "
                                "?4, revoked_at_nanos = ?5 WHERE namespace_id = ?1 AND "
                                "grant_id = ?2 AND revoked_revision IS NULL"));
    RETURN_IF_ERROR(Bind(stmt, 1, namespace_id));
    RETURN_IF_ERROR(Bind(stmt, 2, grant_id));
    RETURN_IF_ERROR(stmt.BindInt64(3, revision_));
    RETURN_IF_ERROR(stmt.BindInt64(4, at.seconds));
    RETURN_IF_ERROR(stmt.BindInt64(5, at.nanos));
    return stmt.Step().status();
  }

  absl::StatusOr<std::optional<IdempotencyEntry>> GetIdempotencyKey(
      absl::string_view key) override {
    ASSIGN_OR_RETURN(Statement stmt,
                     db_.Cached("SELECT namespace_id, grant_id FROM idempotency_keys "
                                "WHERE idempotency_key = ?1"));
    RETURN_IF_ERROR(Bind(stmt, 1, key));
    ASSIGN_OR_RETURN(const bool row, stmt.Step());
    if (!row) return std::optional<IdempotencyEntry>();
    return std::optional<IdempotencyEntry>(
        IdempotencyEntry{std::string(stmt.ColumnText(0)), std::string(stmt.ColumnText(1))});
  }

  absl::Status PutIdempotencyKey(absl::string_view key, const IdempotencyEntry& entry) override {
    ASSIGN_OR_RETURN(Statement stmt,
                     db_.Cached("INSERT INTO idempotency_keys (idempotency_key, namespace_id, "
                                "grant_id, revision) VALUES (?1, ?2, ?3, ?4)"));
    RETURN_IF_ERROR(Bind(stmt, 1, key));
    RETURN_IF_ERROR(Bind(stmt, 2, entry.namespace_id));
    RETURN_IF_ERROR(Bind(stmt, 3, entry.grant_id));
    RETURN_IF_ERROR(stmt.BindInt64(4, revision_));
    return stmt.Step().status();
  }

  absl::StatusOr<std::optional<StoredHostPolicy>> GetHostPolicy(
      absl::string_view namespace_id) override {
    return SelectHostPolicy(db_, namespace_id, revision_);
  }

  absl::StatusOr<bool> HostPolicyVersionUsed(absl::string_view namespace_id,
                                             absl::string_view version) override {
    ASSIGN_OR_RETURN(Statement stmt,
                     db_.Cached("SELECT 1 FROM host_policies WHERE namespace_id = ?1 AND "
                                "version = ?2 LIMIT 1"));
    RETURN_IF_ERROR(Bind(stmt, 1, namespace_id));
    RETURN_IF_ERROR(Bind(stmt, 2, version));
    return stmt.Step();
  }

  absl::Status PutHostPolicy(const gs::HostPolicy& policy) override {
    ASSIGN_OR_RETURN(Statement stmt,
                     db_.Cached("INSERT INTO host_policies (namespace_id, revision, version, "
                                "body) VALUES (?1, ?2, ?3, ?4)"));
    RETURN_IF_ERROR(Bind(stmt, 1, policy.namespace_id()));
    RETURN_IF_ERROR(stmt.BindInt64(2, revision_));
    RETURN_IF_ERROR(Bind(stmt, 3, policy.version()));
    RETURN_IF_ERROR(stmt.BindBlob(4, policy.SerializeAsString()));
    return stmt.Step().status();
  }

  absl::StatusOr<std::optional<StoredEscalation>> GetEscalation(
      absl::string_view escalation_id) override {
    return SelectEscalation(db_, escalation_id);
  }

  absl::Status InsertEscalation(const gs::EscalationRecord& record) override {
    const EscalationRow row = EncodeEscalation(record, revision_);
    ASSIGN_OR_RETURN(Statement stmt,
                     db_.Cached("INSERT INTO escalations (escalation_id, namespace_id, status, "
                                "recorded_revision, body) VALUES (?1, ?2, ?3, ?4, ?5)"));
    RETURN_IF_ERROR(Bind(stmt, 1, row.escalation_id));
    RETURN_IF_ERROR(Bind(stmt, 2, row.namespace_id));
    RETURN_IF_ERROR(stmt.BindInt64(3, row.status));
    RETURN_IF_ERROR(stmt.BindInt64(4, row.recorded_revision));
    RETURN_IF_ERROR(stmt.BindBlob(5, row.body));
    const absl::Status status = stmt.Step().status();
    if (absl::IsAlreadyExists(status)) return EscalationIdTaken(row.escalation_id);
    return status;
  }

  absl::Status ResolveEscalation(const gs::EscalationRecord& record,
                                 absl::string_view resolution_fingerprint) override {
    ASSIGN_OR_RETURN(std::optional<StoredEscalation> existing,
                     SelectEscalation(db_, record.escalation_id()));
    RETURN_IF_ERROR(CheckResolvable(existing, record.escalation_id()));
    ASSIGN_OR_RETURN(Statement stmt,
                     db_.Cached("UPDATE escalations SET status = ?2, resolved_revision = ?3, "
                                "resolution_fingerprint = ?4, body = ?5 WHERE escalation_id = "
                                "?1 AND status = ?6"));
    RETURN_IF_ERROR(Bind(stmt, 1, record.escalation_id()));
    RETURN_IF_ERROR(stmt.BindInt64(2, record.status()));
    RETURN_IF_ERROR(stmt.BindInt64(3, revision_));
    RETURN_IF_ERROR(stmt.BindBlob(4, resolution_fingerprint));
    RETURN_IF_ERROR(stmt.BindBlob(5, record.SerializeAsString()));
    RETURN_IF_ERROR(stmt.BindInt64(6, gs::ESCALATION_RECORD_STATUS_PENDING));
    return stmt.Step().status();
  }

  absl::StatusOr<std::optional<StoredCredential>> GetCredential(
      absl::string_view credential_id) override {
    return SelectCredential(db_, "credential_id", credential_id);
  }

  absl::Status InsertCredential(const StoredCredential& credential) override {
    return WriteCredential(credential,
                           "INSERT INTO credentials (credential_id, token_sha256, "
                           "revoked, revision, body) VALUES (?1, ?2, ?3, ?4, ?5)");
  }

  absl::Status UpdateCredential(const StoredCredential& credential) override {
    ASSIGN_OR_RETURN(std::optional<StoredCredential> existing,
                     GetCredential(credential.credential.credential_id()));
    if (!existing.has_value()) {
      return CredentialToUpdateNotFound(credential.credential.credential_id());
    }
    return WriteCredential(credential,
                           "UPDATE credentials SET token_sha256 = ?2, revoked = ?3, "
                           "revision = ?4, body = ?5 WHERE credential_id = ?1");
  }

  absl::Status Commit() override {
    if (!txn_.has_value() || !txn_->active()) {
      return absl::FailedPreconditionError("write transaction is no longer active");
    }
    ASSIGN_OR_RETURN(Statement stmt,
                     db_.Cached("UPDATE store_revision SET revision = ?1 WHERE id = 1"));
    RETURN_IF_ERROR(stmt.BindInt64(1, revision_));
    RETURN_IF_ERROR(stmt.Step().status());
    return txn_->Commit();
  }

 private:
  absl::Status WriteCredential(const StoredCredential& credential, const char* sql) {
    const CredentialRow row = EncodeCredential(credential, revision_);
    ASSIGN_OR_RETURN(Statement stmt, db_.Cached(sql));
    RETURN_IF_ERROR(Bind(stmt, 1, row.credential_id));
    RETURN_IF_ERROR(Bind(stmt, 2, row.token_sha256));
    RETURN_IF_ERROR(stmt.BindInt64(3, row.revoked ? 1 : 0));
    RETURN_IF_ERROR(stmt.BindInt64(4, row.revision));
    RETURN_IF_ERROR(stmt.BindBlob(5, row.body));
    const absl::Status status = stmt.Step().status();
    if (absl::IsAlreadyExists(status)) return CredentialTaken(row.credential_id);
    return status;
  }

  absl::MutexLock lock_;
  Database& db_;
  // Declared after lock_: rolled back (if still open) before the lock is released.
  std::optional<SqlTransaction> txn_;
  int64_t revision_ = 0;
};

// ---------------------------------------------------------------------------------------
// The store

SqliteGrantStore::SqliteGrantStore(Options options, std::unique_ptr<Database> writer)
    : options_(std::move(options)),
      in_memory_(options_.path == ":memory:" || options_.path.empty()),
      writer_(std::move(writer)) {}

SqliteGrantStore::~SqliteGrantStore() = default;

absl::StatusOr<std::unique_ptr<SqliteGrantStore>> SqliteGrantStore::Open(
    const Options& options, const common::Clock& clock) {
  Options effective = options;
  if (effective.path.empty()) effective.path = ":memory:";
  Database::Options db_options;
  db_options.wal = true;
  db_options.busy_timeout = effective.busy_timeout;
  db_options.synchronous = Database::Synchronous::kFull;
  ASSIGN_OR_RETURN(std::unique_ptr<Database> writer, Database::Open(effective.path, db_options));
  ASSIGN_OR_RETURN(const int version_before, common::sqlite::SchemaVersion(*writer));
  RETURN_IF_ERROR(common::sqlite::Migrate(*writer, kMigrations, clock));
  ASSIGN_OR_RETURN(const int version_after, common::sqlite::SchemaVersion(*writer));
  if (version_before > 0 && version_after != version_before) {
    // A migration of an existing file may have rewritten a table (migration 4 rewrites
    // `grants`): its WAL grew to the table's size and would keep that size on disk. Checkpoint
    // it into the file and truncate it. Best effort: another process reading keeps it (BUSY is
    // not an error here), and the WAL is reused either way.
    writer->Exec("PRAGMA wal_checkpoint(TRUNCATE)").IgnoreError();
  }
  return std::unique_ptr<SqliteGrantStore>(
      new SqliteGrantStore(std::move(effective), std::move(writer)));
}

absl::StatusOr<std::unique_ptr<WriteTransaction>> SqliteGrantStore::BeginWrite() {
  auto txn = std::make_unique<Transaction>(*this);
  RETURN_IF_ERROR(txn->Begin());
  return std::unique_ptr<WriteTransaction>(std::move(txn));
}

absl::StatusOr<std::unique_ptr<Database>> SqliteGrantStore::AcquireReader() {
  {
    absl::MutexLock lock(&pool_mu_);
    if (!idle_readers_.empty()) {
      std::unique_ptr<Database> reader = std::move(idle_readers_.back());
      idle_readers_.pop_back();
      return reader;
    }
  }
  Database::Options db_options;
  db_options.wal = false;  // The writer set WAL; it is a property of the file.
  db_options.create = false;
  db_options.busy_timeout = options_.busy_timeout;
  ASSIGN_OR_RETURN(std::unique_ptr<Database> reader, Database::Open(options_.path, db_options));
  if (options_.reader_mmap_bytes > 0) {
    RETURN_IF_ERROR(reader->Exec(absl::StrCat("PRAGMA mmap_size=", options_.reader_mmap_bytes)));
  }
  return reader;
}

void SqliteGrantStore::ReleaseReader(std::unique_ptr<Database> reader) {
  absl::MutexLock lock(&pool_mu_);
  if (static_cast<int>(idle_readers_.size()) < options_.max_idle_readers) {
    idle_readers_.push_back(std::move(reader));
  }
}

absl::Status SqliteGrantStore::Read(const ReadFn& fn) {
  if (in_memory_) {
    absl::MutexLock lock(&write_mu_);
    ASSIGN_OR_RETURN(SqlTransaction txn,
                     SqlTransaction::Begin(*writer_, SqlTransaction::Mode::kDeferred));
    RETURN_IF_ERROR(fn(*writer_));
    return txn.Commit();
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Database> reader, AcquireReader());
  absl::Status status;
  {
    absl::StatusOr<SqlTransaction> txn =
        SqlTransaction::Begin(*reader, SqlTransaction::Mode::kDeferred);
    if (!txn.ok()) {
      status = txn.status();
    } else {
      status = fn(*reader);
      if (status.ok()) status = txn->Commit();
    }
  }
  // A connection left inside a transaction (a failed COMMIT) is not reused.
  if (!reader->InTransaction()) ReleaseReader(std::move(reader));
  return status;
}

absl::StatusOr<int64_t> SqliteGrantStore::CurrentRevision() {
  int64_t revision = 0;
  RETURN_IF_ERROR(Read([&](Database& db) -> absl::Status {
    ASSIGN_OR_RETURN(revision, ReadRevision(db));
    return absl::OkStatus();
  }));
  return revision;
}

absl::StatusOr<int64_t> SqliteGrantStore::AnnouncedRevision() {
  int64_t revision = 0;
  RETURN_IF_ERROR(Read([&](Database& db) -> absl::Status {
    ASSIGN_OR_RETURN(revision, ReadAnnouncement(db));
    return absl::OkStatus();
  }));
  return revision;
}

absl::StatusOr<AuthoritySnapshot> SqliteGrantStore::LoadAuthority(
    absl::string_view namespace_id, const pb::Address& actor, const pb::Address& authority,
    std::optional<int64_t> at_revision, int max_grants) {
  AuthoritySnapshot snapshot;
  const std::string subject_key = capability::AddressKey(actor);
  const std::string issuer_key = capability::AddressKey(authority);
  RETURN_IF_ERROR(Read([&](Database& db) -> absl::Status {
    ASSIGN_OR_RETURN(snapshot.revision, ServableRevision(db, at_revision));
    ASSIGN_OR_RETURN(
        Statement stmt,
        db.Cached("SELECT body FROM grants WHERE namespace_id = ?1 AND subject_key = ?2 AND "
                  "issuer_key = ?3 AND issued_revision <= ?4 AND (revoked_revision IS NULL OR "
                  "revoked_revision > ?4) ORDER BY issued_revision, issue_order LIMIT ?5"));
    RETURN_IF_ERROR(Bind(stmt, 1, namespace_id));
    RETURN_IF_ERROR(Bind(stmt, 2, subject_key));
    RETURN_IF_ERROR(Bind(stmt, 3, issuer_key));
    RETURN_IF_ERROR(stmt.BindInt64(4, snapshot.revision));
    RETURN_IF_ERROR(stmt.BindInt64(5, std::max(max_grants, 0)));
    while (true) {
      ASSIGN_OR_RETURN(const bool row, stmt.Step());
      if (!row) break;
      RETURN_IF_ERROR(ParseGrantBody(StatementRow(stmt), snapshot.grants.emplace_back()));
    }
    ASSIGN_OR_RETURN(std::optional<StoredHostPolicy> policy,
                     SelectHostPolicy(db, namespace_id, snapshot.revision));
    if (policy.has_value()) snapshot.host_policy = std::move(policy->policy);
    return absl::OkStatus();
  }));
  return snapshot;
}

absl::StatusOr<std::optional<StoredGrant>> SqliteGrantStore::GetGrant(
    absl::string_view namespace_id, absl::string_view grant_id,
    std::optional<int64_t> at_revision) {
  std::optional<StoredGrant> result;
  RETURN_IF_ERROR(Read([&](Database& db) -> absl::Status {
    ASSIGN_OR_RETURN(const int64_t revision, ServableRevision(db, at_revision));
    ASSIGN_OR_RETURN(result, SelectGrant(db, namespace_id, grant_id, revision));
    return absl::OkStatus();
  }));
  return result;
}

absl::StatusOr<std::vector<pb::CapabilityGrant>> SqliteGrantStore::ListGrants(
    const GrantQuery& query) {
  std::vector<pb::CapabilityGrant> grants;
  RETURN_IF_ERROR(Read([&](Database& db) -> absl::Status {
    ASSIGN_OR_RETURN(const int64_t revision, ReadRevision(db));
    ASSIGN_OR_RETURN(
        Statement stmt,
        db.Cached(absl::StrCat(
            "SELECT ", kGrantColumns,
            " FROM grants WHERE namespace_id = ?1 AND grant_id > ?2 AND (?3 IS NULL OR "
            "subject_key = ?3) AND (?4 IS NULL OR issuer_key = ?4) AND (?5 OR "
            "revoked_revision IS NULL) ORDER BY grant_id LIMIT ?6")));
    RETURN_IF_ERROR(Bind(stmt, 1, query.namespace_id));
    RETURN_IF_ERROR(Bind(stmt, 2, query.after_grant_id));
    if (query.subject.has_value())
      RETURN_IF_ERROR(Bind(stmt, 3, capability::AddressKey(*query.subject)));
    if (query.issuer.has_value())
      RETURN_IF_ERROR(Bind(stmt, 4, capability::AddressKey(*query.issuer)));
    RETURN_IF_ERROR(stmt.BindInt64(5, query.include_revoked ? 1 : 0));
    RETURN_IF_ERROR(stmt.BindInt64(6, std::max(query.limit, 0)));
    while (true) {
      ASSIGN_OR_RETURN(const bool row, stmt.Step());
      if (!row) break;
      ASSIGN_OR_RETURN(StoredGrant stored, GrantFromRow(StatementRow(stmt), revision));
      grants.push_back(std::move(stored.grant));
    }
    return absl::OkStatus();
  }));
  return grants;
}

absl::StatusOr<RevocationCheck> SqliteGrantStore::CheckRevocations(
    absl::string_view namespace_id, absl::Span<const std::string> grant_ids) {
  RevocationCheck check;
  RETURN_IF_ERROR(Read([&](Database& db) -> absl::Status {
    ASSIGN_OR_RETURN(check.revision, ReadRevision(db));
    ASSIGN_OR_RETURN(Statement stmt,
                     db.Cached("SELECT revoked_revision IS NOT NULL FROM grants WHERE "
                               "namespace_id = ?1 AND grant_id = ?2"));
    absl::flat_hash_set<absl::string_view> seen;
    for (const std::string& id : grant_ids) {
      if (!seen.insert(id).second) continue;
      RETURN_IF_ERROR(stmt.Reset());
      RETURN_IF_ERROR(Bind(stmt, 1, namespace_id));
      RETURN_IF_ERROR(Bind(stmt, 2, id));
      ASSIGN_OR_RETURN(const bool row, stmt.Step());
      // Unknown ids are reported revoked: a grant that cannot be found cannot be live.
      if (!row || stmt.ColumnInt64(0) != 0) check.revoked_grant_ids.push_back(id);
    }
    return absl::OkStatus();
  }));
  return check;
}

absl::StatusOr<ConsumeResult> SqliteGrantStore::TryConsume(absl::string_view namespace_id,
                                                           absl::string_view grant_id,
                                                           int64_t max_uses) {
  absl::MutexLock lock(&write_mu_);
  if (options_.usage_durability == UsageDurability::kFull) {
    return TryConsumeLocked(namespace_id, grant_id, max_uses);
  }
  RETURN_IF_ERROR(writer_->Exec("PRAGMA synchronous=NORMAL"));
  absl::StatusOr<ConsumeResult> result = TryConsumeLocked(namespace_id, grant_id, max_uses);
  const absl::Status restored = writer_->Exec("PRAGMA synchronous=FULL");
  if (!restored.ok()) return restored;
  return result;
}

absl::StatusOr<ConsumeResult> SqliteGrantStore::TryConsumeLocked(absl::string_view namespace_id,
                                                                 absl::string_view grant_id,
                                                                 int64_t max_uses) {
  // One statement, so one implicit transaction under SQLite's write lock: the increment
  // happens iff the grant exists and fewer than max_uses were spent (atomic across
  // processes too).
  {
    ASSIGN_OR_RETURN(
        Statement stmt,
        writer_->Cached("INSERT INTO grant_usage (namespace_id, grant_id, uses) "
                        "SELECT namespace_id, grant_id, 1 FROM grants WHERE namespace_id = ?1 "
                        "AND grant_id = ?2 AND ?3 >= 1 "
                        "ON CONFLICT (namespace_id, grant_id) DO UPDATE SET uses = uses + 1 "
                        "WHERE uses < ?3 RETURNING uses"));
    RETURN_IF_ERROR(Bind(stmt, 1, namespace_id));
    RETURN_IF_ERROR(Bind(stmt, 2, grant_id));
    RETURN_IF_ERROR(stmt.BindInt64(3, max_uses));
    ASSIGN_OR_RETURN(const bool row, stmt.Step());
    if (row) {
      ConsumeResult result{true, stmt.ColumnInt64(0)};
      // Finish the statement so its implicit transaction commits now.
      ASSIGN_OR_RETURN(const bool more, stmt.Step());
      (void)more;
      return result;
    }
  }
  // Not consumed: the grant is unknown or spent.
  ASSIGN_OR_RETURN(Statement stmt,
                   writer_->Cached("SELECT COALESCE(u.uses, 0) FROM grants g LEFT JOIN "
                                   "grant_usage u ON u.namespace_id = g.namespace_id AND "
                                   "u.grant_id = g.grant_id WHERE g.namespace_id = ?1 AND "
                                   "g.grant_id = ?2"));
  RETURN_IF_ERROR(Bind(stmt, 1, namespace_id));
  RETURN_IF_ERROR(Bind(stmt, 2, grant_id));
  ASSIGN_OR_RETURN(const bool row, stmt.Step());
  if (!row) return capability::errors::GrantNotFound(namespace_id, grant_id);
  return ConsumeResult{false, stmt.ColumnInt64(0)};
}

absl::StatusOr<int64_t> SqliteGrantStore::GetUsage(absl::string_view namespace_id,
                                                   absl::string_view grant_id) {
  std::optional<int64_t> uses;
  RETURN_IF_ERROR(Read([&](Database& db) -> absl::Status {
    ASSIGN_OR_RETURN(Statement stmt,
                     db.Cached("SELECT COALESCE(u.uses, 0) FROM grants g LEFT JOIN "
                               "grant_usage u ON u.namespace_id = g.namespace_id AND "
                               "u.grant_id = g.grant_id WHERE g.namespace_id = ?1 AND "
                               "g.grant_id = ?2"));
    RETURN_IF_ERROR(Bind(stmt, 1, namespace_id));
    RETURN_IF_ERROR(Bind(stmt, 2, grant_id));
    ASSIGN_OR_RETURN(const bool row, stmt.Step());
    if (row) uses = stmt.ColumnInt64(0);
    return absl::OkStatus();
  }));
  if (!uses.has_value()) return capability::errors::GrantNotFound(namespace_id, grant_id);
  return *uses;
}

absl::StatusOr<std::optional<StoredHostPolicy>> SqliteGrantStore::GetHostPolicy(
    absl::string_view namespace_id) {
  std::optional<StoredHostPolicy> result;
  RETURN_IF_ERROR(Read([&](Database& db) -> absl::Status {
    ASSIGN_OR_RETURN(const int64_t revision, ReadRevision(db));
    ASSIGN_OR_RETURN(result, SelectHostPolicy(db, namespace_id, revision));
    return absl::OkStatus();
  }));
  return result;
}

absl::StatusOr<std::optional<StoredEscalation>> SqliteGrantStore::GetEscalation(
    absl::string_view escalation_id) {
  std::optional<StoredEscalation> result;
  RETURN_IF_ERROR(Read([&](Database& db) -> absl::Status {
    ASSIGN_OR_RETURN(result, SelectEscalation(db, escalation_id));
    return absl::OkStatus();
  }));
  return result;
}

absl::StatusOr<std::vector<gs::EscalationRecord>> SqliteGrantStore::ListEscalations(
    const EscalationQuery& query) {
  std::vector<gs::EscalationRecord> records;
  RETURN_IF_ERROR(Read([&](Database& db) -> absl::Status {
    ASSIGN_OR_RETURN(Statement stmt,
                     db.Cached("SELECT escalation_id, body FROM escalations WHERE namespace_id "
                               "= ?1 AND recorded_revision > ?2 AND (?3 IS NULL OR status = "
                               "?3) ORDER BY recorded_revision LIMIT ?4"));
    RETURN_IF_ERROR(Bind(stmt, 1, query.namespace_id));
    RETURN_IF_ERROR(stmt.BindInt64(2, query.after_recorded_revision));
    if (query.status.has_value()) RETURN_IF_ERROR(stmt.BindInt64(3, *query.status));
    RETURN_IF_ERROR(stmt.BindInt64(4, std::max(query.limit, 0)));
    while (true) {
      ASSIGN_OR_RETURN(const bool row, stmt.Step());
      if (!row) break;
      RETURN_IF_ERROR(ParseListedEscalation(StatementRow(stmt), records.emplace_back()));
    }
    return absl::OkStatus();
  }));
  return records;
}

absl::StatusOr<std::optional<StoredCredential>> SqliteGrantStore::FindCredentialByDigest(
    absl::string_view token_sha256) {
  std::optional<StoredCredential> result;
  RETURN_IF_ERROR(Read([&](Database& db) -> absl::Status {
    ASSIGN_OR_RETURN(result, SelectCredential(db, "token_sha256", token_sha256));
    return absl::OkStatus();
  }));
  return result;
}

absl::StatusOr<std::vector<gs::Credential>> SqliteGrantStore::ListCredentials(
    const CredentialQuery& query) {
  std::vector<gs::Credential> credentials;
  RETURN_IF_ERROR(Read([&](Database& db) -> absl::Status {
    ASSIGN_OR_RETURN(Statement stmt,
                     db.Cached("SELECT credential_id, body FROM credentials WHERE credential_id > "
                               "?1 AND (?2 = 1 OR revoked = 0) ORDER BY credential_id LIMIT ?3"));
    RETURN_IF_ERROR(Bind(stmt, 1, query.after_credential_id));
    RETURN_IF_ERROR(stmt.BindInt64(2, query.include_revoked ? 1 : 0));
    RETURN_IF_ERROR(stmt.BindInt64(3, std::max(query.limit, 0)));
    while (true) {
      ASSIGN_OR_RETURN(const bool row, stmt.Step());
      if (!row) break;
      RETURN_IF_ERROR(ParseListedCredential(StatementRow(stmt), credentials.emplace_back()));
    }
    return absl::OkStatus();
  }));
  return credentials;
}

}  // namespace sharedos::grantstore::storage
