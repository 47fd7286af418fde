#include "audit_svc/core/audit_log.h"

#include <atomic>
#include <set>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "audit_svc/core/control_plane_event.h"
#include "audit_svc/core/redaction.h"
#include "audit_svc/core/writer_policy.h"
#include "audit_svc/storage/event_codec.h"
#include "common/crypto/base64url.h"
#include "common/crypto/sha256.h"
#include "common/proto/deterministic.h"
#include "common/status/status_macros.h"
#include "common/validation/bounds.h"
#include "common/validation/limits.h"
#include "common/validation/protocol.h"
#include "google/protobuf/util/time_util.h"

namespace sharedos::audit::core {
namespace {

using ::sharedos::audit::v1::AppendRequest;
using ::sharedos::audit::v1::AppendResponse;
using ::sharedos::audit::v1::AuditFilter;
using ::sharedos::audit::v1::AuditRecord;
using ::sharedos::audit::v1::ControlPlaneEvent;
using ::sharedos::audit::v1::LogEntry;
using ::sharedos::audit::v1::QueryRequest;
using ::sharedos::audit::v1::QueryResponse;
using ::sharedos::audit::v1::VerifyRequest;
using ::sharedos::audit::v1::VerifyResponse;
using ::sharedos::protocol::v1::AuditEvent;

std::string FilterFingerprint(const AuditFilter& filter) {
  return common::Sha256Hex(common::DeterministicBytes(filter)).substr(0, 16);
}

// A page token names the last sequence returned and the filter it was issued for, so a token
// cannot be replayed against another filter (which would skip records silently).
std::string EncodePageToken(int64_t after_sequence, const AuditFilter& filter) {
  return common::Base64UrlEncode(absl::StrCat(after_sequence, ":", FilterFingerprint(filter)));
}

absl::StatusOr<int64_t> DecodePageToken(const std::string& token, const AuditFilter& filter) {
  if (token.empty()) return 0;
  absl::StatusOr<std::string> raw = common::Base64UrlDecode(token);
  std::vector<std::string> parts;
  if (raw.ok()) parts = absl::StrSplit(*raw, ':');
  int64_t after = 0;
  if (!raw.ok() || parts.size() != 2 || !absl::SimpleAtoi(parts[0], &after) || after < 0) {
    return absl::InvalidArgumentError("page_token: malformed");
  }
  if (parts[1] != FilterFingerprint(filter)) {
    return absl::InvalidArgumentError("page_token: issued for a different filter");
  }
  return after;
}

}  // namespace

AuditLog::AuditLog(std::unique_ptr<storage::AuditStore> store, const common::Clock& clock,
                   Options options)
    : store_(std::move(store)), clock_(clock), options_(options), metrics_(options.metrics) {
  absl::StatusOr<storage::Head> head = store_->GetHead();
  if (head.ok()) head_sequence_ = head->sequence;
  if (head.ok()) metrics_.Head(head->sequence);
  writer_ = std::thread([this] { WriterLoop(); });
}

AuditLog::~AuditLog() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  writer_.join();
}

absl::StatusOr<AppendResponse> AuditLog::Append(const AppendRequest& request,
                                                absl::string_view writer) {
  const int total = request.events_size() + request.entries_size();
  if (total == 0) return absl::InvalidArgumentError("events: empty (and no entries)");
  if (total > options_.max_events_per_append) {
    return absl::InvalidArgumentError(
        absl::StrCat("events and entries: more than ", options_.max_events_per_append));
  }
  std::vector<LogEntry> entries;
  entries.reserve(total);
  for (const AuditEvent& event : request.events()) *entries.emplace_back().mutable_event() = event;
  entries.insert(entries.end(), request.entries().begin(), request.entries().end());
  return AppendEntries(std::move(entries), request.events_size(), writer);
}

absl::StatusOr<AppendResponse> AuditLog::AppendEvent(AuditEvent event, absl::string_view writer) {
  std::vector<LogEntry> entries(1);
  *entries[0].mutable_event() = std::move(event);
  return AppendEntries(std::move(entries), 1, writer);
}

absl::StatusOr<AppendResponse> AuditLog::AppendControlPlane(ControlPlaneEvent event,
                                                            absl::string_view writer) {
  std::vector<LogEntry> entries(1);
  *entries[0].mutable_control_plane() = std::move(event);
  return AppendEntries(std::move(entries), 0, writer);
}

namespace {

// The request path of entry i: the first `from_events` came from AppendRequest.events.
std::string EntryPath(const LogEntry& entry, size_t i, int from_events) {
  if (static_cast<int>(i) < from_events) return absl::StrCat("events[", i, "]");
  const size_t index = i - from_events;
  if (entry.has_event()) return absl::StrCat("entries[", index, "].event");
  if (entry.has_control_plane()) return absl::StrCat("entries[", index, "].control_plane");
  return absl::StrCat("entries[", index, "]");
}

// Validates and guards one entry, checks it is `writer`'s to write and stamps it, then encodes it
// into `pending` (pointing into `entry`).
absl::Status PrepareEntry(LogEntry& entry, const std::string& path, absl::string_view writer,
                          storage::PendingEvent& pending) {
  if (entry.has_event()) {
    AuditEvent& event = *entry.mutable_event();
    RETURN_IF_ERROR(common::validation::ValidateAuditEvent(&event, path));
    RETURN_IF_ERROR(CheckRedaction(event, path));
  } else if (entry.has_control_plane()) {
    ControlPlaneEvent& event = *entry.mutable_control_plane();
    RETURN_IF_ERROR(ValidateControlPlaneEvent(&event, path));
    RETURN_IF_ERROR(CheckRedaction(event, path));
  } else {
    return absl::InvalidArgumentError(absl::StrCat(path, ": neither event nor control_plane"));
  }
  RETURN_IF_ERROR(CheckWriter(writer, entry, path));
  RETURN_IF_ERROR(StampWriter(writer, entry));
  if (entry.has_event()) {
    const AuditEvent& event = entry.event();
    ASSIGN_OR_RETURN(pending.canonical_json, storage::CanonicalEventJson(event));
    pending.event = &event;
    pending.columns = storage::DeriveColumns(event);
    return absl::OkStatus();
  }
  const ControlPlaneEvent& event = entry.control_plane();
  ASSIGN_OR_RETURN(pending.canonical_json, storage::CanonicalControlPlaneJson(event));
  pending.control_plane = &event;
  pending.columns = storage::DeriveColumns(event);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<AppendResponse> AuditLog::AppendEntries(std::vector<LogEntry> entries,
                                                       int from_events, absl::string_view writer) {
  // Counted from here, so concurrent callers are seen while they are still validating.
  active_callers_.fetch_add(1, std::memory_order_relaxed);
  struct Leave {
    std::atomic<int>& count;
    ~Leave() { count.fetch_sub(1, std::memory_order_relaxed); }
  } leave{active_callers_};
  // Validate and encode outside the writer: the single writer only links and inserts.
  Submission submission;
  submission.events.reserve(entries.size());
  std::set<std::string> ids;
  for (size_t i = 0; i < entries.size(); ++i) {
    const std::string path = EntryPath(entries[i], i, from_events);
    storage::PendingEvent pending;
    RETURN_IF_ERROR(PrepareEntry(entries[i], path, writer, pending));
    if (!ids.insert(pending.id()).second) {
      return absl::InvalidArgumentError(absl::StrCat(path, ".id: repeated in this request"));
    }
    submission.events.push_back(std::move(pending));
  }

  {
    absl::MutexLock lock(&mu_);
    if (!committing_ && queue_.empty() && !stopping_ &&
        active_callers_.load(std::memory_order_relaxed) == 1) {
      // The only caller, nothing in flight: commit on this thread, sparing the two thread
      // hand-offs. Callers arriving meanwhile queue for the writer, which waits for this commit.
      // With concurrent callers the writer groups them as before.
      committing_ = true;
      mu_.Unlock();
      const absl::Time started = absl::Now();
      absl::StatusOr<storage::AppendBatchResult> result =
          store_->Append({submission.events}, clock_.Now());
      const absl::Duration elapsed = absl::Now() - started;
      mu_.Lock();
      committing_ = false;
      if (result.ok()) {
        submission.outcome = std::move(result->submissions[0]);
        submission.head = result->head;
        metrics_.Committed(static_cast<int64_t>(submission.events.size()),
                           result->head.sequence - head_sequence_, elapsed, result->head.sequence);
        head_sequence_ = result->head.sequence;
      } else {
        submission.outcome = result.status();
      }
    } else {
      queue_.push_back(&submission);
      mu_.Await(absl::Condition(&submission.done));
    }
  }
  if (!submission.outcome.ok()) return submission.outcome.status();
  if (!submission.outcome->accepted) {
    const int conflict = submission.outcome->conflict_index;
    return absl::FailedPreconditionError(absl::StrCat(
        EntryPath(entries[conflict], conflict, from_events),
        ".id: already recorded with different content; nothing of this request was appended"));
  }
  AppendResponse response;
  for (const storage::EventOutcome& outcome : submission.outcome->events) {
    if (outcome.kind == storage::EventOutcome::Kind::kAppended) {
      response.set_appended(response.appended() + 1);
    } else {
      response.set_duplicates(response.duplicates() + 1);
    }
  }
  response.set_head_sequence(submission.head.sequence);
  response.set_head_hash(submission.head.hash);
  return response;
}

void AuditLog::WriterLoop() {
  auto has_work = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return !committing_ && (stopping_ || !queue_.empty());
  };
  while (true) {
    std::vector<Submission*> group;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(&has_work));
      if (queue_.empty() && stopping_) return;
      committing_ = true;
      int events = 0;
      while (!queue_.empty()) {
        Submission* next = queue_.front();
        const int size = static_cast<int>(next->events.size());
        if (!group.empty() && events + size > options_.max_events_per_group) break;
        group.push_back(next);
        events += size;
        queue_.pop_front();
      }
    }
    std::vector<std::vector<storage::PendingEvent>> submissions;
    submissions.reserve(group.size());
    for (Submission* s : group) submissions.push_back(s->events);
    const absl::Time started = absl::Now();
    absl::StatusOr<storage::AppendBatchResult> result = store_->Append(submissions, clock_.Now());
    const absl::Duration elapsed = absl::Now() - started;

    absl::MutexLock lock(&mu_);
    committing_ = false;
    for (size_t i = 0; i < group.size(); ++i) {
      if (result.ok()) {
        group[i]->outcome = result->submissions[i];
        group[i]->head = result->head;
      } else {
        group[i]->outcome = result.status();
      }
      group[i]->done = true;
    }
    if (result.ok()) {
      int64_t events = 0;
      for (const auto& submission : submissions) events += static_cast<int64_t>(submission.size());
      metrics_.Committed(events, result->head.sequence - head_sequence_, elapsed,
                         result->head.sequence);
      head_sequence_ = result->head.sequence;
    }
  }
}

absl::Status AuditLog::ValidateFilter(const AuditFilter& filter) {
  using ::sharedos::protocol::v1::AUDIT_EVENT_TYPE_UNSPECIFIED;
  using ::sharedos::protocol::v1::AUDIT_OUTCOME_UNSPECIFIED;
  using ::sharedos::protocol::v1::AUDIT_SOURCE_UNSPECIFIED;
  // Identifiers first, bounded (an empty one does not constrain), before anything reads them.
  for (const auto& [value, path] : {std::pair<const std::string&, absl::string_view>{
                                        filter.namespace_id(), "filter.namespace_id"},
                                    {filter.trace_id(), "filter.trace_id"},
                                    {filter.execution_id(), "filter.execution_id"},
                                    {filter.reason(), "filter.reason"}}) {
    absl::Status valid =
        common::validation::CheckString(value, 0, common::validation::kMaxIdentifierLength, path);
    if (!valid.ok()) return valid;
  }
  // An unknown number must not reach the store: 12..17 index control-plane records.
  if (filter.has_type() && (filter.type() == AUDIT_EVENT_TYPE_UNSPECIFIED ||
                            !sharedos::protocol::v1::AuditEventType_IsValid(filter.type()))) {
    return absl::InvalidArgumentError("filter.type: unspecified or not a protocol \"1\" type");
  }
  if (filter.has_control_plane_type() &&
      ControlPlaneEventTypeName(filter.control_plane_type()).empty()) {
    return absl::InvalidArgumentError("filter.control_plane_type: unspecified or unknown");
  }
  if (filter.has_type() && filter.has_control_plane_type()) {
    return absl::InvalidArgumentError(
        "filter.control_plane_type: not with filter.type (a record is of one kind)");
  }
  if (filter.has_outcome() && filter.outcome() == AUDIT_OUTCOME_UNSPECIFIED) {
    return absl::InvalidArgumentError("filter.outcome: unspecified");
  }
  if (filter.has_source() && filter.source() == AUDIT_SOURCE_UNSPECIFIED) {
    return absl::InvalidArgumentError("filter.source: unspecified");
  }
  if (filter.has_actor()) {
    sharedos::protocol::v1::Address actor = filter.actor();
    absl::Status valid = common::validation::ValidateAddress(&actor, "filter.actor");
    if (!valid.ok()) return valid;
  }
  if (filter.has_from()) {
    absl::Status valid = common::validation::CheckTimestamp(filter.from(), "filter.from");
    if (!valid.ok()) return valid;
  }
  if (filter.has_to()) {
    absl::Status valid = common::validation::CheckTimestamp(filter.to(), "filter.to");
    if (!valid.ok()) return valid;
  }
  if (filter.has_from() && filter.has_to() &&
      !(google::protobuf::util::TimeUtil::TimestampToNanoseconds(filter.from()) <
        google::protobuf::util::TimeUtil::TimestampToNanoseconds(filter.to()))) {
    return absl::InvalidArgumentError("filter.from: must be before filter.to");
  }
  return absl::OkStatus();
}

absl::StatusOr<QueryResponse> AuditLog::Query(const QueryRequest& request) {
  absl::Status valid = ValidateFilter(request.filter());
  if (!valid.ok()) return valid;
  if (request.limit() < 0 || request.limit() > options_.max_page_size) {
    return absl::InvalidArgumentError(absl::StrCat("limit: must be 0..", options_.max_page_size));
  }
  const int limit = request.limit() == 0 ? options_.default_page_size : request.limit();
  absl::StatusOr<int64_t> after = DecodePageToken(request.page_token(), request.filter());
  if (!after.ok()) return after.status();
  // One extra record tells whether another page exists.
  absl::StatusOr<std::vector<AuditRecord>> records =
      store_->Query(request.filter(), *after, limit + 1);
  if (!records.ok()) return records.status();
  QueryResponse response;
  const bool more = static_cast<int>(records->size()) > limit;
  if (more) records->resize(limit);
  for (AuditRecord& record : *records) *response.add_records() = std::move(record);
  if (more) {
    response.set_next_page_token(EncodePageToken(
        response.records(response.records_size() - 1).sequence(), request.filter()));
  }
  return response;
}

absl::StatusOr<VerifyResponse> AuditLog::Verify(const VerifyRequest& request) {
  std::optional<int64_t> from, to;
  if (request.has_from_sequence()) {
    if (request.from_sequence() < 1) return absl::InvalidArgumentError("from_sequence: below 1");
    from = request.from_sequence();
  }
  if (request.has_to_sequence()) {
    if (request.to_sequence() < 1) return absl::InvalidArgumentError("to_sequence: below 1");
    to = request.to_sequence();
  }
  if (from && to && *from > *to) {
    return absl::InvalidArgumentError("from_sequence: after to_sequence");
  }
  absl::StatusOr<storage::VerifyResult> result = store_->Verify(from, to);
  if (!result.ok()) return result.status();
  metrics_.Verified(result->ok);
  VerifyResponse response;
  response.set_ok(result->ok);
  response.set_checked(result->checked);
  if (result->first_bad_sequence) response.set_first_bad_sequence(*result->first_bad_sequence);
  response.set_head_hash(result->head_hash);
  response.set_detail(result->detail);
  return response;
}

absl::StatusOr<std::vector<AuditRecord>> AuditLog::ReadAfter(const AuditFilter& filter,
                                                             int64_t after_sequence, int limit) {
  return store_->Query(filter, after_sequence, limit);
}

absl::StatusOr<std::vector<AuditRecord>> AuditLog::ReadNewestFirst(const AuditFilter& filter,
                                                                   int64_t before_sequence,
                                                                   int limit) {
  return store_->QueryNewestFirst(filter, before_sequence, limit);
}

int64_t AuditLog::HeadSequence() const {
  absl::MutexLock lock(&mu_);
  return head_sequence_;
}

int64_t AuditLog::WaitForHeadAfter(int64_t sequence, absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto passed = [this, sequence]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return head_sequence_ > sequence || stopping_;
  };
  mu_.AwaitWithTimeout(absl::Condition(&passed), timeout);
  return head_sequence_;
}

}  // namespace sharedos::audit::core
