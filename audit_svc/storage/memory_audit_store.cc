#include "audit_svc/storage/memory_audit_store.h"

#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"
#include "audit_svc/storage/chain_verifier.h"
#include "capability/address.h"
#include "common/status/status_macros.h"
#include "google/protobuf/util/time_util.h"

namespace sharedos::audit::storage {
namespace {

using ::google::protobuf::util::TimeUtil;
using ::sharedos::audit::v1::AuditFilter;
using ::sharedos::audit::v1::AuditRecord;

// The filter's constraints on a record's indexed columns (an absent or empty field does not
// constrain; fields combine with AND), as the SQLite store's WHERE clause has them.
bool Matches(const AuditFilter& filter, const IndexedColumns& columns) {
  if (!filter.namespace_id().empty() && columns.namespace_id != filter.namespace_id()) {
    return false;
  }
  if (!filter.trace_id().empty() && columns.trace_id != filter.trace_id()) return false;
  if (!filter.execution_id().empty() && columns.execution_id != filter.execution_id()) {
    return false;
  }
  if (std::optional<int> type = TypeColumnFilter(filter); type && columns.type != *type) {
    return false;
  }
  if (filter.has_outcome() && columns.outcome != filter.outcome()) return false;
  if (!filter.reason().empty() && columns.reason != filter.reason()) return false;
  if (filter.has_source() && columns.source != std::optional<int>(filter.source())) return false;
  if (filter.has_actor() && columns.actor != capability::AddressKey(filter.actor())) return false;
  if (filter.has_from() && columns.at_micros < TimeUtil::TimestampToMicroseconds(filter.from())) {
    return false;
  }
  if (filter.has_to() && columns.at_micros >= TimeUtil::TimestampToMicroseconds(filter.to())) {
    return false;
  }
  return true;
}

absl::StatusOr<AuditRecord> ToRecord(int64_t sequence,
                                     const MemoryAuditStore::StoredRecord& stored) {
  AuditRecord record;
  record.set_sequence(sequence);
  RETURN_IF_ERROR(ParseRecordJson(stored.event_json, record));
  record.set_prev_hash(stored.prev_hash);
  record.set_hash(stored.hash);
  *record.mutable_recorded_at() = TimeUtil::MicrosecondsToTimestamp(stored.recorded_at_micros);
  return record;
}

}  // namespace

absl::StatusOr<AppendBatchResult> MemoryAuditStore::Append(
    const std::vector<std::vector<PendingEvent>>& submissions, absl::Time recorded_at) {
  absl::MutexLock lock(&mu_);
  const int64_t recorded_at_micros = absl::ToUnixMicros(recorded_at);
  AppendBatchResult result;
  result.submissions.reserve(submissions.size());
  for (const std::vector<PendingEvent>& submission : submissions) {
    const Head head_before = head_;
    SubmissionOutcome outcome;
    outcome.events.reserve(submission.size());
    for (size_t i = 0; i < submission.size(); ++i) {
      const PendingEvent& pending = submission[i];
      auto existing = by_id_.find(pending.id());
      if (existing != by_id_.end()) {
        // The same content is a duplicate, other content a conflict.
        if (records_.at(existing->second).event_json == pending.canonical_json) {
          outcome.events.push_back({EventOutcome::Kind::kDuplicate, existing->second});
          continue;
        }
        outcome.accepted = false;
        outcome.conflict_index = static_cast<int>(i);
        outcome.events.clear();
        break;
      }
      StoredRecord record;
      record.event_id = pending.id();
      record.columns = pending.columns;
      record.event_json = pending.canonical_json;
      record.prev_hash = head_.hash;
      record.hash = ChainHash(head_.hash, pending.canonical_json);
      record.recorded_at_micros = recorded_at_micros;
      head_.sequence += 1;
      head_.hash = record.hash;
      by_id_[record.event_id] = head_.sequence;
      records_.emplace(head_.sequence, std::move(record));
      outcome.events.push_back({EventOutcome::Kind::kAppended, head_.sequence});
    }
    if (!outcome.accepted) {
      // Nothing of a rejected submission stays: undo what it appended before the conflict.
      while (head_.sequence > head_before.sequence) {
        auto last = records_.find(head_.sequence);
        by_id_.erase(last->second.event_id);
        records_.erase(last);
        --head_.sequence;
      }
      head_ = head_before;
    }
    result.submissions.push_back(std::move(outcome));
  }
  result.head = head_;
  return result;
}

absl::StatusOr<std::vector<AuditRecord>> MemoryAuditStore::Query(const AuditFilter& filter,
                                                                 int64_t after_sequence,
                                                                 int limit) {
  absl::MutexLock lock(&mu_);
  std::vector<AuditRecord> records;
  // A negative limit does not bound the page (as SQLite's LIMIT).
  for (auto it = records_.upper_bound(after_sequence);
       it != records_.end() && (limit < 0 || records.size() < static_cast<size_t>(limit)); ++it) {
    if (!Matches(filter, it->second.columns)) continue;
    ASSIGN_OR_RETURN(AuditRecord record, ToRecord(it->first, it->second));
    records.push_back(std::move(record));
  }
  return records;
}

absl::StatusOr<std::vector<AuditRecord>> MemoryAuditStore::QueryNewestFirst(
    const AuditFilter& filter, int64_t before_sequence, int limit) {
  absl::MutexLock lock(&mu_);
  std::vector<AuditRecord> records;
  for (auto it = std::make_reverse_iterator(records_.lower_bound(before_sequence));
       it != records_.rend() && (limit < 0 || records.size() < static_cast<size_t>(limit)); ++it) {
    if (!Matches(filter, it->second.columns)) continue;
    ASSIGN_OR_RETURN(AuditRecord record, ToRecord(it->first, it->second));
    records.push_back(std::move(record));
  }
  return records;
}

absl::StatusOr<Head> MemoryAuditStore::GetHead() {
  absl::MutexLock lock(&mu_);
  return head_;
}

absl::StatusOr<VerifyResult> MemoryAuditStore::Verify(std::optional<int64_t> from,
                                                      std::optional<int64_t> to) {
  absl::MutexLock lock(&mu_);
  ChainVerifier verifier(head_, from, to);
  if (verifier.link_sequence() > 0) {
    auto before = records_.find(verifier.link_sequence());
    verifier.Link(before == records_.end() ? std::nullopt
                                           : std::optional<absl::string_view>(before->second.hash));
  }
  for (auto it = records_.lower_bound(verifier.first());
       verifier.ok() && it != records_.end() && it->first <= verifier.last(); ++it) {
    const auto& [sequence, record] = *it;
    StoredChainRow row;
    row.sequence = sequence;
    row.event_id = record.event_id;
    row.event_json = record.event_json;
    row.prev_hash = record.prev_hash;
    row.hash = record.hash;
    row.columns = record.columns;
    verifier.Check(row);
  }
  auto beyond = records_.upper_bound(head_.sequence);
  return verifier.Finish(beyond == records_.end() ? std::nullopt
                                                  : std::optional<int64_t>(beyond->first));
}

void MemoryAuditStore::TamperForTesting(
    absl::FunctionRef<void(std::map<int64_t, StoredRecord>&)> edit) {
  absl::MutexLock lock(&mu_);
  edit(records_);
  by_id_.clear();
  for (const auto& [sequence, record] : records_) by_id_[record.event_id] = sequence;
}

}  // namespace sharedos::audit::storage
