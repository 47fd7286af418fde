#ifndef SHAREDOS_AUDIT_SVC_STORAGE_MEMORY_AUDIT_STORE_H_
#define SHAREDOS_AUDIT_SVC_STORAGE_MEMORY_AUDIT_STORE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "audit_svc/storage/audit_store.h"
#include "audit_svc/storage/event_codec.h"

namespace sharedos::audit::storage {

// The audit log in memory: the SQLite store's twin for tests (and a reference for other
// backends), with the same semantics — gap-free sequences, one hash chain with its head stored
// beside the records, idempotency on event id, submissions rejected whole on a conflicting id,
// queries in sequence order, and a Verify that recomputes the chain from the stored canonical
// JSON (so an edit made through TamperForTesting is detected as it would be in a file). Nothing
// survives the object; Append never fails for want of space. Thread-safe: one mutex, so reads
// wait for an Append in progress (each sees whole batches only).
class MemoryAuditStore : public AuditStore {
 public:
  // One stored record (keyed by its sequence), as a backend keeps it: the canonical JSON the
  // chain covers, the links, and the indexed columns (derived from the event, checked by Verify).
  struct StoredRecord {
    std::string event_id;
    IndexedColumns columns;
    std::string event_json;
    std::string prev_hash;
    std::string hash;
    int64_t recorded_at_micros = 0;
  };

  MemoryAuditStore() = default;
  MemoryAuditStore(const MemoryAuditStore&) = delete;
  MemoryAuditStore& operator=(const MemoryAuditStore&) = delete;

  absl::StatusOr<AppendBatchResult> Append(
      const std::vector<std::vector<PendingEvent>>& submissions, absl::Time recorded_at) override
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<std::vector<sharedos::audit::v1::AuditRecord>> Query(
      const sharedos::audit::v1::AuditFilter& filter, int64_t after_sequence, int limit) override
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<std::vector<sharedos::audit::v1::AuditRecord>> QueryNewestFirst(
      const sharedos::audit::v1::AuditFilter& filter, int64_t before_sequence, int limit) override
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<Head> GetHead() override ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<VerifyResult> Verify(std::optional<int64_t> from,
                                      std::optional<int64_t> to) override ABSL_LOCKS_EXCLUDED(mu_);

  // For tests of tamper evidence: edits the stored records (by sequence) behind the chain's
  // back, as an attacker with access to the storage would; the stored head is left alone. The
  // id index is rebuilt from the records afterwards.
  void TamperForTesting(absl::FunctionRef<void(std::map<int64_t, StoredRecord>&)> edit)
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  absl::Mutex mu_;
  std::map<int64_t, StoredRecord> records_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, int64_t> by_id_ ABSL_GUARDED_BY(mu_);
  Head head_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sharedos::audit::storage

#endif  // SHAREDOS_AUDIT_SVC_STORAGE_MEMORY_AUDIT_STORE_H_
