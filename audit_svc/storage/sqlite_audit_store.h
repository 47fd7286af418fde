#ifndef SHAREDOS_AUDIT_SVC_STORAGE_SQLITE_AUDIT_STORE_H_
#define SHAREDOS_AUDIT_SVC_STORAGE_SQLITE_AUDIT_STORE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "audit_svc/storage/audit_store.h"
#include "common/sqlite/database.h"

namespace sharedos::audit::storage {

// The audit log in one SQLite file (WAL). One connection writes (group commits under a mutex),
// another reads, so reads never wait for a commit (except to catch up the index, below), and a
// third checkpoints the WAL into the database file on a background thread, so a commit does not
// pay for the checkpoint (its copying and, under either durability, its two fsyncs). When the
// background checkpointer falls far behind, the committing writer checkpoints inline, as SQLite
// would by itself.
//
// What a commit (Append) writes synchronously: the record row, its UNIQUE event_id index entry
// (dedup by id) and the head row (truncation detection) -- everything the chain's integrity and
// idempotency need. What is deferred: the lookup keys (namespace, trace, execution) live in a
// narrow derived table `audit_keys` with the three lookup indexes, which an indexer fills from
// the records in batches, one INSERT ... SELECT per batch on the writer connection (the one
// writer; a second writing connection would wait on SQLite's sleeping busy handler). Those
// three index pages per commit were about half of a single-event commit's WAL pages and time;
// a batch writes each index page once for many rows, and commits without an fsync of its own
// (synchronous=NORMAL for that commit; the next Append's sync covers it, and keys lost to a
// power cut are rebuilt at Open). The indexer runs in the background (after kIndexBatchRows
// unindexed rows or kIndexDelay after the first one), synchronously at the start of a Query
// that filters on a lookup key and of Verify (so both see every record whose Append returned
// before they started; one committing concurrently may already be in the head and not yet in
// the keys), and at Open (rows committed but not indexed before a crash are indexed on
// restart). A failing background run is retried later and never fails an Append; a failing
// synchronous run fails its Query or Verify. Verify checks each record's keys row against the
// record, so editing or deleting keys rows cannot hide records from lookups unnoticed.
// Thread-safe.
class SqliteAuditStore : public AuditStore {
 public:
  // WAL pages not yet checkpointed that wake the background checkpointer (SQLite's default
  // wal_autocheckpoint). A checkpoint that runs while commits go on leaves the newest pages in
  // the WAL, and SQLite only rewinds a WAL that is fully checkpointed: at this many pages in
  // the WAL the writer checkpoints the rest inline, so the WAL rewinds and stays bounded.
  static constexpr int kBackgroundCheckpointPages = 1000;
  static constexpr int kInlineCheckpointPages = 4000;
  // Unindexed records that wake the background indexer at once; fewer are indexed kIndexDelay
  // after the indexer first saw them. A batch costs about one commit (each index page written
  // once), so batching is what makes deferring pay; the delay bounds how long a row waits when
  // appends are sparse (queries never wait for it: they index synchronously). kIndexRetryDelay
  // spaces out retries of a failing background run (e.g. a full disk).
  static constexpr int kIndexBatchRows = 64;
  static constexpr absl::Duration kIndexDelay = absl::Milliseconds(20);
  static constexpr absl::Duration kIndexRetryDelay = absl::Seconds(1);

  enum class Durability {
    // synchronous=FULL: every group commit is fsynced before Append returns (survives a power
    // loss).
    kFull,
    // synchronous=NORMAL in WAL mode: committed groups survive a process kill, but the last
    // ones may be lost on a power loss or OS crash.
    kNormal,
  };

  struct Options {
    Durability durability = Durability::kFull;
    // Appends that would grow the file beyond this many bytes fail with UNAVAILABLE (as on a
    // full disk), leaving nothing partial; 0 means no cap. Keeps the log inside a volume quota.
    int64_t max_size_bytes = 0;
    // False: no background indexer; records are indexed only by Query, Verify and Open (tests
    // use it to observe the deferred path deterministically).
    bool background_indexing = true;
  };

  // Opens or creates the log at `path` (":memory:" is refused: the reader needs the file) and
  // migrates its schema, then indexes the records not yet indexed (crash recovery). Errors:
  // UNAVAILABLE (cannot open), FAILED_PRECONDITION (a newer schema), INVALID_ARGUMENT
  // (":memory:").
  static absl::StatusOr<std::unique_ptr<SqliteAuditStore>> Open(const std::string& path,
                                                                const Options& options);

  // What Open would do to the log at `path` before serving, for the operator: empty when
  // nothing long (no file yet, or already at this schema), else one sentence naming the schema
  // upgrade and how many records it will go over (it runs once, and on a large log takes a
  // while). Writes nothing. A schema newer than this binary's is Open's to refuse (empty here).
  // Errors: UNAVAILABLE (the file exists but cannot be read).
  static absl::StatusOr<std::string> PendingUpgrade(const std::string& path);

  absl::StatusOr<AppendBatchResult> Append(
      const std::vector<std::vector<PendingEvent>>& submissions, absl::Time recorded_at) override
      ABSL_LOCKS_EXCLUDED(write_mu_);
  absl::StatusOr<std::vector<sharedos::audit::v1::AuditRecord>> Query(
      const sharedos::audit::v1::AuditFilter& filter, int64_t after_sequence, int limit) override
      ABSL_LOCKS_EXCLUDED(write_mu_, read_mu_, index_mu_);
  absl::StatusOr<std::vector<sharedos::audit::v1::AuditRecord>> QueryNewestFirst(
      const sharedos::audit::v1::AuditFilter& filter, int64_t before_sequence, int limit) override
      ABSL_LOCKS_EXCLUDED(write_mu_, read_mu_, index_mu_);
  absl::StatusOr<Head> GetHead() override ABSL_LOCKS_EXCLUDED(read_mu_);
  absl::StatusOr<VerifyResult> Verify(std::optional<int64_t> from,
                                      std::optional<int64_t> to) override
      ABSL_LOCKS_EXCLUDED(write_mu_, verify_mu_, index_mu_);

  // Stops the background checkpointer and indexer (the last connection to close checkpoints the
  // rest; records left unindexed are indexed at the next Open).
  ~SqliteAuditStore() override;

  // The schema, for tools that load rows directly (the raw-insert benchmark baseline).
  static const char* InsertSql();

 private:
  SqliteAuditStore(std::unique_ptr<common::sqlite::Database> writer,
                   std::unique_ptr<common::sqlite::Database> reader,
                   std::unique_ptr<common::sqlite::Database> verifier,
                   std::unique_ptr<common::sqlite::Database> checkpointer, int64_t head_sequence,
                   Durability durability, bool background_indexing);

  absl::StatusOr<Head> ReadHead(common::sqlite::Database& db);
  // Query (ascending, after `cursor`) and QueryNewestFirst (descending, before `cursor`).
  absl::StatusOr<std::vector<sharedos::audit::v1::AuditRecord>> Select(
      const sharedos::audit::v1::AuditFilter& filter, int64_t cursor, bool newest_first, int limit)
      ABSL_LOCKS_EXCLUDED(write_mu_, read_mu_, index_mu_);
  // sqlite3_wal_hook on the writer connection, after every commit.
  static int OnWalCommit(void* self, sqlite3* db, const char* schema, int pages);
  void CheckpointLoop() ABSL_LOCKS_EXCLUDED(checkpoint_mu_);
  // Indexes every committed record not yet in audit_keys; returns the last sequence indexed.
  absl::StatusOr<int64_t> CatchUpIndex() ABSL_LOCKS_EXCLUDED(write_mu_, index_mu_);
  void IndexLoop() ABSL_LOCKS_EXCLUDED(write_mu_, index_mu_);
  // Puts the writer back to synchronous=FULL after an index batch relaxed it.
  absl::Status RestoreFullSync() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);

  const Durability durability_;
  absl::Mutex write_mu_;
  std::unique_ptr<common::sqlite::Database> writer_ ABSL_GUARDED_BY(write_mu_);
  // The writer is at synchronous=NORMAL for an index batch (kFull only).
  bool full_sync_pending_ ABSL_GUARDED_BY(write_mu_) = false;
  absl::Mutex read_mu_;
  std::unique_ptr<common::sqlite::Database> reader_ ABSL_GUARDED_BY(read_mu_);
  // Verify's own connection (issue 34): a full-chain verification reads its snapshot here and
  // never holds read_mu_, so Query and GetHead are answered while it runs (WAL readers do not
  // block each other). Verifications run one at a time.
  absl::Mutex verify_mu_;
  std::unique_ptr<common::sqlite::Database> verifier_ ABSL_GUARDED_BY(verify_mu_);
  // Used only by the checkpoint thread.
  const std::unique_ptr<common::sqlite::Database> checkpointer_;
  absl::Mutex checkpoint_mu_;
  bool checkpoint_wanted_ ABSL_GUARDED_BY(checkpoint_mu_) = false;
  // WAL pages the last background checkpoint copied (0 once the WAL has rewound).
  int checkpointed_pages_ ABSL_GUARDED_BY(checkpoint_mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(checkpoint_mu_) = false;
  std::thread checkpoint_thread_;
  // The indexer's progress. Taken after write_mu_ when both are held; indexed_through_ only
  // changes with write_mu_ held too (the indexer writes through writer_).
  absl::Mutex index_mu_ ABSL_ACQUIRED_AFTER(write_mu_);
  int64_t committed_through_ ABSL_GUARDED_BY(index_mu_) = 0;  // the head's sequence
  int64_t indexed_through_ ABSL_GUARDED_BY(index_mu_) = 0;    // audit_keys holds 1..this
  bool index_stopping_ ABSL_GUARDED_BY(index_mu_) = false;
  std::thread index_thread_;  // not started when background indexing is off
};

}  // namespace sharedos::audit::storage

#endif  // SHAREDOS_AUDIT_SVC_STORAGE_SQLITE_AUDIT_STORE_H_
