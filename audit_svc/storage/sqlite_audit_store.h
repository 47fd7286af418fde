#ifndef SHAREDOS_AUDIT_SVC_STORAGE_SQLITE_AUDIT_STORE_H_
#define SHAREDOS_AUDIT_SVC_STORAGE_SQLITE_AUDIT_STORE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "audit_svc/storage/audit_store.h"
#include "common/sqlite/database.h"

namespace sharedos::audit::storage {

// The audit log in one SQLite file (WAL). One connection writes (group commits under a mutex),
// another reads, so queries and Verify never wait for a commit, and a third checkpoints the WAL
// into the database file on a background thread, so a commit does not pay for the checkpoint
// (its copying and, under either durability, its two fsyncs). When the background checkpointer
// falls far behind, the committing writer checkpoints inline, as SQLite would by itself.
// Thread-safe.
class SqliteAuditStore : public AuditStore {
 public:
  // WAL pages not yet checkpointed that wake the background checkpointer (SQLite's default
  // wal_autocheckpoint). A checkpoint that runs while commits go on leaves the newest pages in
  // the WAL, and SQLite only rewinds a WAL that is fully checkpointed: at this many pages in
  // the WAL the writer checkpoints the rest inline, so the WAL rewinds and stays bounded.
  static constexpr int kBackgroundCheckpointPages = 1000;
  static constexpr int kInlineCheckpointPages = 4000;

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
  };

  // Opens or creates the log at `path` (":memory:" is refused: the reader needs the file) and
  // migrates its schema. Errors: UNAVAILABLE (cannot open), FAILED_PRECONDITION (a newer
  // schema), INVALID_ARGUMENT (":memory:").
  static absl::StatusOr<std::unique_ptr<SqliteAuditStore>> Open(const std::string& path,
                                                                const Options& options);

  absl::StatusOr<AppendBatchResult> Append(
      const std::vector<std::vector<PendingEvent>>& submissions, absl::Time recorded_at) override
      ABSL_LOCKS_EXCLUDED(write_mu_);
  absl::StatusOr<std::vector<sharedos::audit::v1::AuditRecord>> Query(
      const sharedos::audit::v1::AuditFilter& filter, int64_t after_sequence, int limit) override
      ABSL_LOCKS_EXCLUDED(read_mu_);
  absl::StatusOr<Head> GetHead() override ABSL_LOCKS_EXCLUDED(read_mu_);
  absl::StatusOr<VerifyResult> Verify(std::optional<int64_t> from,
                                      std::optional<int64_t> to) override
      ABSL_LOCKS_EXCLUDED(read_mu_);

  // Stops the background checkpointer (the last connection to close checkpoints the rest).
  ~SqliteAuditStore() override;

  // The schema, for tools that load rows directly (the raw-insert benchmark baseline).
  static const char* InsertSql();

 private:
  SqliteAuditStore(std::unique_ptr<common::sqlite::Database> writer,
                   std::unique_ptr<common::sqlite::Database> reader,
                   std::unique_ptr<common::sqlite::Database> checkpointer);

  absl::StatusOr<Head> ReadHead(common::sqlite::Database& db);
  // sqlite3_wal_hook on the writer connection, after every commit.
  static int OnWalCommit(void* self, sqlite3* db, const char* schema, int pages);
  void CheckpointLoop() ABSL_LOCKS_EXCLUDED(checkpoint_mu_);

  absl::Mutex write_mu_;
  std::unique_ptr<common::sqlite::Database> writer_ ABSL_GUARDED_BY(write_mu_);
  absl::Mutex read_mu_;
  std::unique_ptr<common::sqlite::Database> reader_ ABSL_GUARDED_BY(read_mu_);
  // Used only by the checkpoint thread.
  const std::unique_ptr<common::sqlite::Database> checkpointer_;
  absl::Mutex checkpoint_mu_;
  bool checkpoint_wanted_ ABSL_GUARDED_BY(checkpoint_mu_) = false;
  // WAL pages the last background checkpoint copied (0 once the WAL has rewound).
  int checkpointed_pages_ ABSL_GUARDED_BY(checkpoint_mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(checkpoint_mu_) = false;
  std::thread checkpoint_thread_;
};

}  // namespace sharedos::audit::storage

#endif  // SHAREDOS_AUDIT_SVC_STORAGE_SQLITE_AUDIT_STORE_H_
