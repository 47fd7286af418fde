#ifndef SHAREDOS_AUDIT_SVC_STORAGE_AUDIT_STORE_H_
#define SHAREDOS_AUDIT_SVC_STORAGE_AUDIT_STORE_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "audit_svc/storage/event_codec.h"
#include "sharedos/audit/v1/audit.pb.h"
#include "sharedos/protocol/v1/audit.pb.h"

namespace sharedos::audit::storage {

// The chain's genesis link: the prev_hash of record 1.
inline constexpr char kGenesisHash[] =
    "0000000000000000000000000000000000000000000000000000000000000000";

// A record ready to be stored: the validated protocol "1" event or control-plane event (exactly
// one set), its canonical JSON and its indexed columns (computed by the caller, outside the
// writer, so the single writer only links and inserts).
struct PendingEvent {
  const sharedos::protocol::v1::AuditEvent* event = nullptr;
  std::string canonical_json;
  IndexedColumns columns;  // DeriveColumns(*event) or DeriveColumns(*control_plane)
  const sharedos::audit::v1::ControlPlaneEvent* control_plane = nullptr;

  // The record's id (the log is idempotent on it, across both kinds).
  const std::string& id() const { return event != nullptr ? event->id() : control_plane->id(); }
};

// What happened to one event of an Append batch.
struct EventOutcome {
  enum class Kind {
    kAppended,   // stored at `sequence`
    kDuplicate,  // the same id with the same content was already stored at `sequence`
  };
  Kind kind = Kind::kAppended;
  int64_t sequence = 0;
};

// What happened to one submission (one caller's events) of a group commit.
struct SubmissionOutcome {
  // False when an event's id is already stored with different content: then nothing of this
  // submission was written, and `conflict_index` names the event.
  bool accepted = true;
  int conflict_index = -1;
  std::vector<EventOutcome> events;  // one per event when accepted
};

// QueryNewestFirst's `before_sequence` for "from the newest record".
inline constexpr int64_t kFromTheHead = std::numeric_limits<int64_t>::max();

struct Head {
  int64_t sequence = 0;             // 0 for an empty log
  std::string hash = kGenesisHash;  // kGenesisHash for an empty log
};

struct AppendBatchResult {
  std::vector<SubmissionOutcome> submissions;  // one per submission, same order
  Head head;                                   // after the batch
};

struct VerifyResult {
  bool ok = true;
  int64_t checked = 0;
  std::optional<int64_t> first_bad_sequence;
  std::string head_hash;
  std::string detail;
};

// The durable, append-only, hash-chained audit log. Implementations are thread-safe; Append is
// called by one writer at a time (the group committer), reads may run concurrently with it.
// record.hash = SHA-256(hex prev_hash ‖ canonical_json), lowercase hex; record 1 links to
// kGenesisHash. The head (sequence and hash) is stored beside the records, so deleting the last
// records is detected as well as editing, deleting or reordering any.
class AuditStore {
 public:
  virtual ~AuditStore() = default;

  // Appends every submission's events, in order, in ONE transaction (group commit), durable
  // (per the configured durability) before it returns. Idempotent on event id: an id already
  // stored with the same canonical JSON is a duplicate; with different JSON it rejects its whole
  // submission (nothing of it written) while the other submissions proceed.
  // Errors: UNAVAILABLE (disk full, read-only file, I/O error, busy) — nothing of any submission
  // is written; INTERNAL (corrupt store).
  virtual absl::StatusOr<AppendBatchResult> Append(
      const std::vector<std::vector<PendingEvent>>& submissions, absl::Time recorded_at) = 0;

  // Records with sequence > after_sequence matching the filter, in sequence order, at most
  // `limit`. Errors: UNAVAILABLE, INTERNAL (a stored event no longer parses).
  virtual absl::StatusOr<std::vector<sharedos::audit::v1::AuditRecord>> Query(
      const sharedos::audit::v1::AuditFilter& filter, int64_t after_sequence, int limit) = 0;

  // Records with sequence < before_sequence (kFromTheHead: every record) matching the filter,
  // newest first (descending sequence), at most `limit`: the last records of a kind without
  // reading the log from its start. The next page is before the last sequence returned.
  // Errors: as Query.
  virtual absl::StatusOr<std::vector<sharedos::audit::v1::AuditRecord>> QueryNewestFirst(
      const sharedos::audit::v1::AuditFilter& filter, int64_t before_sequence, int limit) = 0;

  // Errors: UNAVAILABLE.
  virtual absl::StatusOr<Head> GetHead() = 0;

  // Recomputes the chain over [from, to] (1 and the head when absent): every record's hash from
  // its predecessor and its stored canonical JSON, contiguous sequences, the stored head, and
  // the indexed columns against the event they index. Errors: INVALID_ARGUMENT (bad range),
  // UNAVAILABLE.
  virtual absl::StatusOr<VerifyResult> Verify(std::optional<int64_t> from,
                                              std::optional<int64_t> to) = 0;
};

}  // namespace sharedos::audit::storage

#endif  // SHAREDOS_AUDIT_SVC_STORAGE_AUDIT_STORE_H_
