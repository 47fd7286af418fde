// The grant store anchored in the audit log (docs/adr/0021). Every mutation of the store commits
// one revision and, before it, writes control-plane records carrying that revision (trace
// "grantstore-r<revision>", metadata.revision). So the log says how far the store has been: a
// store whose next revision is already in the log is BEHIND it — an older grants.db put back, a
// rolled-back PostgreSQL database — and would serve revoked grants and credentials again. A store
// AHEAD of the log is normal (a writer's outbox may still hold records not yet delivered).
//
// ControlPlaneLog asks the log (through AuditLog.Query, with a control-plane type in every filter
// so that no protocol "1" event — whose trace id a host chooses — is ever taken for one);
// RecordAnchor holds what the last comparison found and is the gate every core method passes
// (GrantStoreCore::Options::anchor). Thread-safe.

#ifndef SHAREDOS_GRANTSTORE_SVC_CORE_RECORD_ANCHOR_H_
#define SHAREDOS_GRANTSTORE_SVC_CORE_RECORD_ANCHOR_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "grantstore_svc/storage/grant_store.h"
#include "sharedos/audit/v1/audit.pb.h"

namespace sharedos::grantstore::core {

// AuditLog.Query, in this process (sharedosd: the log's core) or over gRPC (grantstore_svc: the
// service's credential, which may query control-plane records only).
using AuditQuery =
    std::function<absl::StatusOr<audit::v1::QueryResponse>(const audit::v1::QueryRequest& request)>;

// The trace id of every control-plane record of `revision`.
std::string RevisionTraceId(int64_t revision);

// A control-plane record of the grant store, as the log holds it.
struct LoggedRecord {
  int64_t sequence = 0;
  int64_t revision = 0;
  audit::v1::ControlPlaneEvent event;
};

class ControlPlaneLog {
 public:
  explicit ControlPlaneLog(AuditQuery query) : query_(std::move(query)) {}

  // The first record (lowest sequence) the grant store wrote for `revision`; nullopt when the log
  // holds none. Errors: UNAVAILABLE (the log cannot be asked; the query's error in the message).
  absl::StatusOr<std::optional<LoggedRecord>> FindRevision(int64_t revision) const;

  // The highest revision the log holds, given that it holds `present` (FindRevision found it):
  // the log's revisions are contiguous (each taken once, docs/adr/0021), so a doubling then a
  // halving search finds it in O(log n) queries. Errors: as FindRevision.
  absl::StatusOr<int64_t> HighestRevision(int64_t present) const;

  // The grant store's records of `type` from sequence `from` on whose revision is above
  // `after_revision`, in log order; at most `max_records` (more: FAILED_PRECONDITION).
  // Errors: as FindRevision.
  absl::StatusOr<std::vector<LoggedRecord>> RecordsAfter(audit::v1::ControlPlaneEventType type,
                                                         const LoggedRecord& from,
                                                         int64_t after_revision,
                                                         int max_records) const;

 private:
  const AuditQuery query_;
};

// What the last comparison found.
enum class AnchorState {
  // Not compared yet, or the log could not be read: not serving (fail closed).
  kUnchecked,
  // The log holds no revision beyond the store's.
  kServing,
  // The log holds the store's next revision: a restore, waiting for AcceptRestore.
  kBehind,
};

class RecordAnchor {
 public:
  // Borrows `store`, which must outlive it.
  RecordAnchor(storage::GrantStore& store, ControlPlaneLog log);

  // Compares the store's revision with the log's records, and answers Serving(). Re-reads the
  // store's revision when the log holds the next one, so a revision another replica commits
  // meanwhile is not taken for a restore.
  absl::Status Check() ABSL_LOCKS_EXCLUDED(mu_);

  // OK while the store may serve; else UNAVAILABLE "authority_unavailable: ..." naming why (the
  // store behind the log, with both revisions, or the log not readable).
  absl::Status Serving() const ABSL_LOCKS_EXCLUDED(mu_);

  AnchorState state() const ABSL_LOCKS_EXCLUDED(mu_);
  // The log's first record beyond the store (state kBehind).
  std::optional<LoggedRecord> first_beyond() const ABSL_LOCKS_EXCLUDED(mu_);
  // The store's revision when it was last compared.
  int64_t store_revision() const ABSL_LOCKS_EXCLUDED(mu_);
  // A revision the log holds but the store never committed, found at the last comparison: the
  // store had announced it and the log holds nothing after it (a crash between a change's
  // records and its commit; storage::GrantStore::AnnouncedRevision). Serving.
  std::optional<int64_t> uncommitted_revision() const ABSL_LOCKS_EXCLUDED(mu_);

  // After AcceptRestore committed: serving.
  void MarkAccepted() ABSL_LOCKS_EXCLUDED(mu_);

  const ControlPlaneLog& log() const { return log_; }

 private:
  storage::GrantStore& store_;
  const ControlPlaneLog log_;
  mutable absl::Mutex mu_;
  AnchorState state_ ABSL_GUARDED_BY(mu_) = AnchorState::kUnchecked;
  std::string reason_ ABSL_GUARDED_BY(mu_) = "the store has not been compared with the audit log";
  int64_t store_revision_ ABSL_GUARDED_BY(mu_) = 0;
  std::optional<LoggedRecord> first_beyond_ ABSL_GUARDED_BY(mu_);
  std::optional<int64_t> uncommitted_revision_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sharedos::grantstore::core

#endif  // SHAREDOS_GRANTSTORE_SVC_CORE_RECORD_ANCHOR_H_
