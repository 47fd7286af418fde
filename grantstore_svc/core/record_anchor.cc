#include "grantstore_svc/core/record_anchor.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "capability/address.h"
#include "capability/reason_codes.h"
#include "common/server/access_policy.h"
#include "common/status/status_macros.h"
#include "grantstore_svc/core/control_plane_events.h"

namespace sharedos::grantstore::core {
namespace {

namespace av1 = ::sharedos::audit::v1;

// Every type the grant store writes: a query names one, so it never returns a "1" event.
constexpr av1::ControlPlaneEventType kTypes[] = {
    av1::CONTROL_PLANE_EVENT_TYPE_GRANT_ISSUED,
    av1::CONTROL_PLANE_EVENT_TYPE_GRANT_DERIVED,
    av1::CONTROL_PLANE_EVENT_TYPE_GRANT_REVOKED,
    av1::CONTROL_PLANE_EVENT_TYPE_HOST_POLICY_UPDATED,
    av1::CONTROL_PLANE_EVENT_TYPE_ESCALATION_RECORDED,
    av1::CONTROL_PLANE_EVENT_TYPE_ESCALATION_RESOLVED,
    av1::CONTROL_PLANE_EVENT_TYPE_CREDENTIAL_CHANGED,
    av1::CONTROL_PLANE_EVENT_TYPE_RESTORE_ACCEPTED,
};

// The most pages one question reads (1000 records each).
constexpr int kMaxPages = 100;

// The record's revision when the grant store wrote it, else nullopt.
std::optional<int64_t> StoreRevisionOf(const av1::AuditRecord& record) {
  if (!record.has_control_plane()) return std::nullopt;
  const av1::ControlPlaneEvent& event = record.control_plane();
  if (capability::AddressKey(event.writer()) != common::server::kGrantstoreService ||
      event.purpose() != kControlPlanePurpose) {
    return std::nullopt;
  }
  const auto& fields = event.metadata().fields();
  auto it = fields.find("revision");
  if (it == fields.end() || !it->second.has_number_value()) return std::nullopt;
  return static_cast<int64_t>(it->second.number_value());
}

absl::Status LogUnreadable(const absl::Status& status) {
  return absl::UnavailableError(absl::StrCat(
      "the audit log cannot be read to compare the grant store with it: ", status.message()));
}

}  // namespace

std::string RevisionTraceId(int64_t revision) { return absl::StrCat("grantstore-r", revision); }

absl::StatusOr<std::optional<LoggedRecord>> ControlPlaneLog::FindRevision(int64_t revision) const {
  std::optional<LoggedRecord> first;
  for (const av1::ControlPlaneEventType type : kTypes) {
    av1::QueryRequest request;
    request.mutable_filter()->set_trace_id(RevisionTraceId(revision));
    request.mutable_filter()->set_control_plane_type(type);
    request.set_limit(1000);
    absl::StatusOr<av1::QueryResponse> response = query_(request);
    if (!response.ok()) return LogUnreadable(response.status());
    for (const av1::AuditRecord& record : response->records()) {
      if (StoreRevisionOf(record) != revision) continue;
      if (!first.has_value() || record.sequence() < first->sequence) {
        first = LoggedRecord{record.sequence(), revision, record.control_plane()};
      }
      break;
    }
  }
  return first;
}

absl::StatusOr<int64_t> ControlPlaneLog::HighestRevision(int64_t present) const {
  // Doubling: the first absent revision above `present`.
  int64_t low = present;  // held
  int64_t step = 1;
  int64_t high = 0;  // absent
  while (true) {
    const int64_t probe = low + step;
    ASSIGN_OR_RETURN(std::optional<LoggedRecord> found, FindRevision(probe));
    if (!found.has_value()) {
      high = probe;
      break;
    }
    low = probe;
    step *= 2;
  }
  // Halving between the last held and the first absent.
  while (high - low > 1) {
    const int64_t mid = low + (high - low) / 2;
    ASSIGN_OR_RETURN(std::optional<LoggedRecord> found, FindRevision(mid));
    (found.has_value() ? low : high) = mid;
  }
  return low;
}

absl::StatusOr<std::vector<LoggedRecord>> ControlPlaneLog::RecordsAfter(
    av1::ControlPlaneEventType type, const LoggedRecord& from, int64_t after_revision,
    int max_records) const {
  std::vector<LoggedRecord> records;
  av1::QueryRequest request;
  request.mutable_filter()->set_control_plane_type(type);
  // Nothing the discarded revisions wrote is older than their first record.
  *request.mutable_filter()->mutable_from() = from.event.at();
  request.set_limit(1000);
  for (int page = 0; page < kMaxPages; ++page) {
    absl::StatusOr<av1::QueryResponse> response = query_(request);
    if (!response.ok()) return LogUnreadable(response.status());
    for (const av1::AuditRecord& record : response->records()) {
      const std::optional<int64_t> revision = StoreRevisionOf(record);
      if (!revision.has_value() || *revision <= after_revision ||
          record.sequence() < from.sequence) {
        continue;
      }
      if (static_cast<int>(records.size()) >= max_records) {
        return absl::FailedPreconditionError(
            absl::StrCat("more than ", max_records, " records to re-apply"));
      }
      records.push_back({record.sequence(), *revision, record.control_plane()});
    }
    if (response->next_page_token().empty()) return records;
    request.set_page_token(response->next_page_token());
  }
  return absl::FailedPreconditionError(
      absl::StrCat("more than ", kMaxPages, " pages of records to re-apply"));
}

RecordAnchor::RecordAnchor(storage::GrantStore& store, ControlPlaneLog log)
    : store_(store), log_(std::move(log)) {}

absl::Status RecordAnchor::Check() {
  // A replica sharing the database may commit the next revision between the two reads: read
  // again when the log holds it, a few times.
  for (int attempt = 0; attempt < 3; ++attempt) {
    absl::StatusOr<int64_t> revision = store_.CurrentRevision();
    if (!revision.ok()) {
      {
        absl::MutexLock lock(&mu_);
        if (state_ != AnchorState::kBehind) {
          state_ = AnchorState::kUnchecked;
          reason_ =
              absl::StrCat("the store's revision cannot be read: ", revision.status().message());
        }
      }
      return Serving();
    }
    absl::StatusOr<std::optional<LoggedRecord>> next = log_.FindRevision(*revision + 1);
    if (!next.ok()) {
      {
        absl::MutexLock lock(&mu_);
        if (state_ != AnchorState::kBehind) {
          state_ = AnchorState::kUnchecked;
          reason_ = std::string(next.status().message());
        }
      }
      return Serving();
    }
    if (!next->has_value()) {
      absl::MutexLock lock(&mu_);
      state_ = AnchorState::kServing;
      reason_.clear();
      store_revision_ = *revision;
      first_beyond_.reset();
      return absl::OkStatus();
    }
    absl::StatusOr<int64_t> again = store_.CurrentRevision();
    if (again.ok() && *again > *revision) continue;
    // The store announced that revision and the log holds nothing after it: its records were
    // written and the process stopped before the commit (a crash), not a restore. The revision
    // is taken again by the next change.
    absl::StatusOr<int64_t> announced = store_.AnnouncedRevision();
    if (announced.ok() && *announced >= *revision + 1) {
      absl::StatusOr<std::optional<LoggedRecord>> after = log_.FindRevision(*revision + 2);
      if (after.ok() && !after->has_value()) {
        absl::MutexLock lock(&mu_);
        state_ = AnchorState::kServing;
        reason_.clear();
        store_revision_ = *revision;
        first_beyond_.reset();
        uncommitted_revision_ = *revision + 1;
        return absl::OkStatus();
      }
    }
    absl::MutexLock lock(&mu_);
    state_ = AnchorState::kBehind;
    store_revision_ = *revision;
    first_beyond_ = **next;
    reason_ = absl::StrCat(
        "the grant store is behind the audit log: the store is at revision ", *revision,
        ", the log already holds revision ", *revision + 1, " (record ", (*next)->sequence,
        "); a restored or rolled-back store serves nothing until an operator runs "
        "`sharedosctl grants accept-restore --reason=...`");
    break;
  }
  return Serving();
}

absl::Status RecordAnchor::Serving() const {
  absl::MutexLock lock(&mu_);
  if (state_ == AnchorState::kServing) return absl::OkStatus();
  return absl::UnavailableError(absl::StrCat(capability::kAuthorityUnavailable, ": ", reason_));
}

AnchorState RecordAnchor::state() const {
  absl::MutexLock lock(&mu_);
  return state_;
}

std::optional<LoggedRecord> RecordAnchor::first_beyond() const {
  absl::MutexLock lock(&mu_);
  return first_beyond_;
}

std::optional<int64_t> RecordAnchor::uncommitted_revision() const {
  absl::MutexLock lock(&mu_);
  return uncommitted_revision_;
}

int64_t RecordAnchor::store_revision() const {
  absl::MutexLock lock(&mu_);
  return store_revision_;
}

void RecordAnchor::MarkAccepted() {
  absl::MutexLock lock(&mu_);
  state_ = AnchorState::kServing;
  reason_.clear();
  first_beyond_.reset();
}

}  // namespace sharedos::grantstore::core
