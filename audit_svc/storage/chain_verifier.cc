#include "audit_svc/storage/chain_verifier.h"

#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace sharedos::audit::storage {

ChainVerifier::ChainVerifier(const Head& head, std::optional<int64_t> from,
                             std::optional<int64_t> to)
    : head_(head),
      first_(from.value_or(1)),
      last_(to.value_or(head.sequence)),
      expected_(first_),
      prev_(kGenesisHash) {
  result_.head_hash = head.hash;
  if (last_ > head_.sequence) {
    Fail(head_.sequence + 1,
         absl::StrCat("range ends at ", last_, " beyond the stored head ", head_.sequence));
  }
}

bool ChainVerifier::Fail(int64_t sequence, std::string detail) {
  if (!result_.ok) return false;
  result_.ok = false;
  result_.first_bad_sequence = sequence;
  result_.detail = std::move(detail);
  return false;
}

bool ChainVerifier::Link(std::optional<absl::string_view> hash_before) {
  if (link_sequence() == 0) return ok();
  if (!hash_before.has_value()) return Fail(first_ - 1, "record missing");
  prev_ = std::string(*hash_before);
  return true;
}

bool ChainVerifier::Check(const StoredChainRow& row) {
  if (!ok()) return false;
  if (row.sequence != expected_) return Fail(expected_, "record missing");
  if (row.prev_hash != prev_) {
    return Fail(row.sequence, "prev_hash does not link to the record before");
  }
  std::string recomputed = ChainHash(prev_, row.event_json);
  if (row.hash != recomputed) return Fail(row.sequence, "hash does not match the event");
  absl::StatusOr<StoredKeys> event = StoredKeysFromJson(row.event_json);
  if (!event.ok()) return Fail(row.sequence, "event no longer parses");
  if (event->id != row.event_id || !(event->columns == row.columns)) {
    return Fail(row.sequence, "indexed columns do not match the event");
  }
  prev_ = std::move(recomputed);
  ++result_.checked;
  ++expected_;
  return true;
}

VerifyResult ChainVerifier::Finish(std::optional<int64_t> first_beyond_head) {
  if (ok() && expected_ <= last_) Fail(expected_, "record missing");
  if (ok() && last_ == head_.sequence && head_.sequence > 0 && prev_ != head_.hash) {
    Fail(head_.sequence, "stored head hash does not match the chain");
  }
  // Records beyond the stored head were added behind the chain's back.
  if (ok() && first_beyond_head.has_value()) {
    Fail(*first_beyond_head, "record beyond the stored head");
  }
  return result_;
}

}  // namespace sharedos::audit::storage
