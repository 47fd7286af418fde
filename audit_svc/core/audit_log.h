#ifndef SHAREDOS_AUDIT_SVC_CORE_AUDIT_LOG_H_
#define SHAREDOS_AUDIT_SVC_CORE_AUDIT_LOG_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "audit_svc/storage/audit_store.h"
#include "common/metrics/sinks.h"
#include "common/time/clock.h"
#include "sharedos/audit/v1/audit.pb.h"

namespace sharedos::audit::core {

// The audit log's logic: validates and guards every event, then hands it to a single writer
// that group-commits whatever is queued (many callers' events, one transaction) and answers each
// caller once its events are durable. A caller alone in Append, with no commit in flight,
// commits its own events on its thread (a group of one, without the hand-off to the writer and
// back); commits never overlap. Thread-safe.
class AuditLog {
 public:
  struct Options {
    // Most events one Append call may carry.
    int max_events_per_append = 1000;
    // Most events one group commit may hold (callers beyond it wait for the next group).
    int max_events_per_group = 4096;
    // Default and maximum page sizes for Query.
    int default_page_size = 100;
    int max_page_size = 1000;
    // Appends, group-commit sizes, commit latency, chain head (common/metrics/sinks.h); null:
    // none. Borrowed.
    common::metrics::Metrics* metrics = nullptr;
  };

  AuditLog(std::unique_ptr<storage::AuditStore> store, const common::Clock& clock, Options options);
  // Stops the writer after the queued groups are committed.
  ~AuditLog();

  // Appends request.events, then request.entries (either kind), in order, each stamped with
  // `writer` — the authenticated writer's address key ("service:envelope") — which must produce
  // its type (writer_policy.h).
  // Errors: INVALID_ARGUMENT (no records, too many, an event fails protocol "1" validation, a
  // control-plane event its validation (control_plane_event.h), or either the redaction guard;
  // an entry of neither kind; an id repeated in the request) naming the record and field;
  // PERMISSION_DENIED (a record type `writer` never produces); FAILED_PRECONDITION (an id already
  // stored with different content; nothing of the request is written); UNAVAILABLE (storage
  // failed; nothing of the request is written).
  absl::StatusOr<sharedos::audit::v1::AppendResponse> Append(
      const sharedos::audit::v1::AppendRequest& request, absl::string_view writer);
  // Append of a request holding exactly `event`, taking it by value (an in-process writer moves
  // its record in instead of building a request that is copied again). Same checks, errors and
  // durability; error messages name it `events[0]`.
  absl::StatusOr<sharedos::audit::v1::AppendResponse> AppendEvent(
      sharedos::protocol::v1::AuditEvent event, absl::string_view writer);

  // Append of one control-plane record (the in-process grant store's writer); same checks,
  // errors and durability; error messages name it `entries[0].control_plane`.
  absl::StatusOr<sharedos::audit::v1::AppendResponse> AppendControlPlane(
      sharedos::audit::v1::ControlPlaneEvent event, absl::string_view writer);

  // Errors: INVALID_ARGUMENT (limit out of range, enums present but unspecified, from ≥ to, a
  // page token not issued for this filter); UNAVAILABLE; DATA_LOSS (a stored event no longer
  // parses).
  absl::StatusOr<sharedos::audit::v1::QueryResponse> Query(
      const sharedos::audit::v1::QueryRequest& request);

  // Errors: INVALID_ARGUMENT (range); UNAVAILABLE.
  absl::StatusOr<sharedos::audit::v1::VerifyResponse> Verify(
      const sharedos::audit::v1::VerifyRequest& request);

  // For Tail: validates a filter (same rules as Query).
  static absl::Status ValidateFilter(const sharedos::audit::v1::AuditFilter& filter);
  // For Tail: records after `after_sequence` matching the filter (at most `limit`).
  absl::StatusOr<std::vector<sharedos::audit::v1::AuditRecord>> ReadAfter(
      const sharedos::audit::v1::AuditFilter& filter, int64_t after_sequence, int limit);
  // Records before `before_sequence` (storage::kFromTheHead: from the newest) matching the
  // filter, newest first, at most `limit` (the witness's last checkpoint of a signer).
  absl::StatusOr<std::vector<sharedos::audit::v1::AuditRecord>> ReadNewestFirst(
      const sharedos::audit::v1::AuditFilter& filter, int64_t before_sequence, int limit);
  // For Tail: the current head sequence.
  int64_t HeadSequence() const ABSL_LOCKS_EXCLUDED(mu_);
  // For Tail: blocks until the head passes `sequence` or `timeout` elapses; returns the head.
  int64_t WaitForHeadAfter(int64_t sequence, absl::Duration timeout) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Submission {
    std::vector<storage::PendingEvent> events;
    bool done = false;
    absl::StatusOr<storage::SubmissionOutcome> outcome;
    storage::Head head;
  };

  // Append's body once the request's size is checked; `entries` is non-empty, its first
  // `from_events` taken from AppendRequest.events (for the paths errors name).
  absl::StatusOr<sharedos::audit::v1::AppendResponse> AppendEntries(
      std::vector<sharedos::audit::v1::LogEntry> entries, int from_events, absl::string_view writer)
      ABSL_LOCKS_EXCLUDED(mu_);
  void WriterLoop() ABSL_LOCKS_EXCLUDED(mu_);

  const std::unique_ptr<storage::AuditStore> store_;
  const common::Clock& clock_;
  const Options options_;
  common::metrics::AuditMetrics metrics_;

  mutable absl::Mutex mu_;
  std::deque<Submission*> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // A group is being committed (by the writer, or inline by a caller that found the log idle):
  // one commit at a time keeps the chain in order.
  bool committing_ ABSL_GUARDED_BY(mu_) = false;
  // Callers inside Append (validating, committing or waiting).
  std::atomic<int> active_callers_{0};
  int64_t head_sequence_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread writer_;
};

}  // namespace sharedos::audit::core

#endif  // SHAREDOS_AUDIT_SVC_CORE_AUDIT_LOG_H_
