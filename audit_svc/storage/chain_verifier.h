// The one check of the audit log's hash chain (AuditStore::Verify), over whatever a backend reads:
// each backend only reads its rows — the head, the hash of the record before the range, the
// records of the range in sequence order, the first record beyond the head — and hands them to a
// ChainVerifier, which decides. The rules, in the order they are checked:
//   - the range ends at or before the stored head;
//   - sequences are contiguous from the range's first to its last ("record missing");
//   - each record's prev_hash is the hash of the record before it (genesis for record 1);
//   - each record's hash is ChainHash(prev, its stored canonical JSON);
//   - the stored JSON still parses, and its id and indexed columns are the stored ones;
//   - a range ending at the head ends on the stored head hash;
//   - no record lies beyond the stored head.
// The first broken rule ends the walk; VerifyResult names its sequence and what broke.
// Not thread-safe: one verifier per Verify call.
#ifndef SHAREDOS_AUDIT_SVC_STORAGE_CHAIN_VERIFIER_H_
#define SHAREDOS_AUDIT_SVC_STORAGE_CHAIN_VERIFIER_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "audit_svc/storage/audit_store.h"
#include "audit_svc/storage/event_codec.h"

namespace sharedos::audit::storage {

// One stored record as a backend read it.
struct StoredChainRow {
  int64_t sequence = 0;
  absl::string_view event_id;
  absl::string_view event_json;  // the canonical JSON the hash covers
  absl::string_view prev_hash;
  absl::string_view hash;
  IndexedColumns columns;  // as stored beside the JSON
};

class ChainVerifier {
 public:
  // Verifies [from, to] (1 and the head when absent) against the stored `head`.
  ChainVerifier(const Head& head, std::optional<int64_t> from, std::optional<int64_t> to);

  int64_t first() const { return first_; }
  int64_t last() const { return last_; }
  // Whether no rule has been broken so far; once false, every further call is a no-op.
  bool ok() const { return result_.ok; }
  // The sequence of the record before the range whose hash the range links to; 0 when the range
  // starts at 1 (genesis) or the range itself is already refused (beyond the head).
  int64_t link_sequence() const { return ok() && first_ > 1 ? first_ - 1 : 0; }

  // The stored hash of record link_sequence(), nullopt when it is missing.
  bool Link(std::optional<absl::string_view> hash_before);
  // The next record of the range, in sequence order. False at the first broken rule.
  bool Check(const StoredChainRow& row);
  // After the last row: `first_beyond_head` is the smallest stored sequence above the head
  // (nullopt when none). Returns the verdict.
  VerifyResult Finish(std::optional<int64_t> first_beyond_head);

  // Marks the record `sequence` broken for a backend-specific reason (e.g. a lookup index that
  // disagrees with its record). Returns false.
  bool Fail(int64_t sequence, std::string detail);

 private:
  const Head head_;
  int64_t first_ = 1;
  int64_t last_ = 0;
  int64_t expected_ = 1;
  std::string prev_;
  VerifyResult result_;
};

}  // namespace sharedos::audit::storage

#endif  // SHAREDOS_AUDIT_SVC_STORAGE_CHAIN_VERIFIER_H_
