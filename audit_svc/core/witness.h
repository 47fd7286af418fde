// The receiving side of checkpoints shipped off a host (docs/adr/0023): an audit_svc started with
// --witness_public_key pins one or more signers' Ed25519 public keys and accepts their signed
// checkpoints (POSTed by another log's --checkpoint_witness). A checkpoint is taken only when it
// is well formed, signed by a pinned key, and not older than or inconsistent with the last one
// held for that key; each one taken is a control-plane record of this witness's own log
// (checkpoint.witnessed, written by service:audit, its metadata the checkpoint's fields and
// nothing else), so this log's chain and its own signed checkpoints protect the list, which is
// append-only. HTTP-agnostic: the endpoint (audit_svc/server/witness_endpoint.h) maps the
// errors to answers. Thread-safe.
#ifndef SHAREDOS_AUDIT_SVC_CORE_WITNESS_H_
#define SHAREDOS_AUDIT_SVC_CORE_WITNESS_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "audit_svc/core/audit_log.h"
#include "audit_svc/core/checkpoint.h"
#include "common/metrics/sinks.h"
#include "common/time/clock.h"
#include "sharedos/audit/v1/audit.pb.h"

namespace sharedos::audit::core {

// The largest body a witness reads (a checkpoint's JSON line is about 300 bytes).
inline constexpr size_t kMaxWitnessBodyBytes = 16 * 1024;
// The purpose of a witnessed record.
inline constexpr char kWitnessPurpose[] = "sharedos.checkpoint-witness";

// "witness-<key id>": the trace id of every record witnessing that signer's checkpoints (how
// the records of one signer are queried).
std::string WitnessTraceId(absl::string_view key_id);

// The checkpoint a checkpoint.witnessed record holds (written by service:audit); nullopt for any
// other record or one whose metadata is not a checkpoint's.
std::optional<v1::SignedCheckpoint> WitnessedCheckpointOf(const v1::AuditRecord& record);

class Witness {
 public:
  // What Receive did with an acceptable checkpoint.
  struct Receipt {
    // False when the witness already held this very head (same sequence and hash): nothing new
    // was recorded.
    bool recorded = false;
    // The record of the witness's log that holds it (0 when not recorded).
    int64_t record_sequence = 0;
  };

  // `keys`: the pinned signers (public keys; at least one, no key id twice). Reads from `log`
  // the last checkpoint held for each. Errors: INVALID_ARGUMENT "--witness_public_key: …";
  // UNAVAILABLE (the log cannot be read).
  static absl::StatusOr<std::unique_ptr<Witness>> Create(
      AuditLog& log, std::vector<std::unique_ptr<CheckpointKey>> keys, const common::Clock& clock,
      common::metrics::Metrics* metrics = nullptr);

  // Takes one POSTed body: a signed checkpoint's JSON line (CheckpointJson), at most
  // kMaxWitnessBodyBytes. Errors: INVALID_ARGUMENT naming the field (not a JSON object, an
  // unknown field, a malformed field, a key id not pinned, a signature that does not verify);
  // ABORTED (a sequence lower than the last held for its key, or the same sequence with another
  // head hash: a rollback or a rewrite of the signer's log — also logged as the error line
  // audit.witness.conflict); UNAVAILABLE (this witness's log cannot be written).
  absl::StatusOr<Receipt> Receive(absl::string_view body) ABSL_LOCKS_EXCLUDED(mu_);

  // The key ids pinned, sorted.
  std::vector<std::string> key_ids() const;
  // The last checkpoint held for `key_id` (nullopt: none, or not pinned).
  std::optional<v1::SignedCheckpoint> Last(const std::string& key_id) const
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  Witness(AuditLog& log, std::vector<std::unique_ptr<CheckpointKey>> keys,
          const common::Clock& clock, common::metrics::Metrics* metrics);
  absl::StatusOr<v1::SignedCheckpoint> Parse(absl::string_view body) const;
  absl::StatusOr<int64_t> Record(const v1::SignedCheckpoint& checkpoint)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  AuditLog& log_;
  const common::Clock& clock_;
  common::metrics::WitnessMetrics metrics_;
  // key id → key.
  std::map<std::string, std::unique_ptr<CheckpointKey>> keys_;

  mutable absl::Mutex mu_;
  // key id → the last checkpoint held (the compare and the record are one step under mu_).
  std::map<std::string, v1::SignedCheckpoint> last_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sharedos::audit::core

#endif  // SHAREDOS_AUDIT_SVC_CORE_WITNESS_H_
