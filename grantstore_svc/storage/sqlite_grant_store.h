// GrantStore on SQLite: the embedded default (architecture §6). WAL, busy_timeout, commits
// with synchronous=FULL, schema migrations versioned in `schema_migrations`, prepared
// statements cached per connection. All of the store's SQL lives in sqlite_grant_store.cc.

#ifndef SHAREDOS_GRANTSTORE_SVC_STORAGE_SQLITE_GRANT_STORE_H_
#define SHAREDOS_GRANTSTORE_SVC_STORAGE_SQLITE_GRANT_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/sqlite/database.h"
#include "common/time/clock.h"
#include "grantstore_svc/storage/grant_store.h"

namespace sharedos::grantstore::storage {

// Thread-safe. One writer connection (write transactions and usage updates, serialised by a
// mutex in-process and by SQLite's write lock across processes) and a pool of reader
// connections that read consistent WAL snapshots concurrently. An in-memory database
// (":memory:") is private to one connection, so there every read shares the writer's mutex.
class SqliteGrantStore : public GrantStore {
 public:
  // How durable a consumed use is. Grants, policies and escalations always commit FULL.
  enum class UsageDurability {
    // fsync per consumption: a spent use survives a power loss.
    kFull,
    // WAL with synchronous=NORMAL: survives a process crash (kill -9); the last uses before
    // a power loss may be lost (and so spent again). Several times faster on this disk.
    kNormal,
  };

  struct Options {
    // A file path, or ":memory:".
    std::string path;
    // How long a writer waits for another process's write lock before UNAVAILABLE.
    absl::Duration busy_timeout = absl::Seconds(5);
    UsageDurability usage_durability = UsageDurability::kFull;
    // Idle reader connections kept open (file databases).
    int max_idle_readers = 8;
    // Reader connections map this much of the file (PRAGMA mmap_size) instead of copying
    // pages through read(2); 0 disables. Writers never use mmap.
    int64_t reader_mmap_bytes = 0;
  };

  // Opens (creating when missing) and migrates the database. `clock` stamps the migration
  // rows only. Errors: UNAVAILABLE (cannot open), FAILED_PRECONDITION (schema newer than this
  // binary), INTERNAL.
  static absl::StatusOr<std::unique_ptr<SqliteGrantStore>> Open(
      const Options& options, const common::Clock& clock = common::RealClock());

  ~SqliteGrantStore() override;

  absl::StatusOr<std::unique_ptr<WriteTransaction>> BeginWrite() override
      ABSL_LOCKS_EXCLUDED(write_mu_);
  absl::StatusOr<int64_t> CurrentRevision() override;
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
                                           absl::string_view grant_id, int64_t max_uses) override
      ABSL_LOCKS_EXCLUDED(write_mu_);
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
  using ReadFn = std::function<absl::Status(common::sqlite::Database&)>;

  SqliteGrantStore(Options options, std::unique_ptr<common::sqlite::Database> writer);

  // Runs `fn` inside one read transaction (a consistent snapshot) on a reader connection,
  // or on the writer under write_mu_ for an in-memory database.
  absl::Status Read(const ReadFn& fn) ABSL_LOCKS_EXCLUDED(write_mu_, pool_mu_);
  absl::StatusOr<std::unique_ptr<common::sqlite::Database>> AcquireReader()
      ABSL_LOCKS_EXCLUDED(pool_mu_);
  void ReleaseReader(std::unique_ptr<common::sqlite::Database> reader)
      ABSL_LOCKS_EXCLUDED(pool_mu_);
  absl::StatusOr<ConsumeResult> TryConsumeLocked(absl::string_view namespace_id,
                                                 absl::string_view grant_id, int64_t max_uses)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);

  const Options options_;
  const bool in_memory_;

  absl::Mutex write_mu_;
  std::unique_ptr<common::sqlite::Database> writer_ ABSL_GUARDED_BY(write_mu_);

  absl::Mutex pool_mu_;
  std::vector<std::unique_ptr<common::sqlite::Database>> idle_readers_ ABSL_GUARDED_BY(pool_mu_);
};

}  // namespace sharedos::grantstore::storage

#endif  // SHAREDOS_GRANTSTORE_SVC_STORAGE_SQLITE_GRANT_STORE_H_
