// Signed checkpoints: the audit log's head (sequence, head hash, time) signed with an Ed25519 key
// that the database does not hold, exported outside it, and the check that a log still extends
// every checkpoint exported earlier. Whoever can rewrite the database can recompute every hash
// and the stored head, but cannot sign a checkpoint for the rewritten history
// (docs/adr/0010-audit-head-anchored-outside-the-database.md). Storage-agnostic: it reads the
// log only through core::AuditLog, so SQLite and PostgreSQL logs are checked alike.
#ifndef SHAREDOS_AUDIT_SVC_CORE_CHECKPOINT_H_
#define SHAREDOS_AUDIT_SVC_CORE_CHECKPOINT_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "audit_svc/core/audit_log.h"
#include "common/time/clock.h"
#include "sharedos/audit/v1/audit.pb.h"

namespace sharedos::audit::core {

// Most checkpoints one Verify may check against.
inline constexpr int kMaxCheckpointsPerVerify = 10000;
// Largest key file read (a PEM Ed25519 key is about 120 bytes).
inline constexpr size_t kMaxCheckpointKeyFileBytes = 64 * 1024;

// The text a checkpoint's signature covers (see SignedCheckpoint in audit.proto); the signature
// field itself is not part of it.
std::string CheckpointSigningText(const v1::SignedCheckpoint& checkpoint);

// An Ed25519 key: a private key (signs and verifies) or a public key (verifies only).
// Immutable once made; thread-safe.
class CheckpointKey {
 public:
  // Reads a PEM private key (PKCS#8, as `openssl genpkey -algorithm ed25519` writes it) from a
  // file. Errors: INVALID_ARGUMENT naming `flag` (unreadable, larger than 64 KiB, not PEM, not
  // Ed25519). The message never holds the file's content.
  static absl::StatusOr<std::unique_ptr<CheckpointKey>> ReadPrivateKeyFile(const std::string& path,
                                                                           absl::string_view flag);
  // Parses a PEM public key (`openssl pkey -pubout`). Errors: INVALID_ARGUMENT naming `field`.
  static absl::StatusOr<std::unique_ptr<CheckpointKey>> ParsePublicKeyPem(absl::string_view pem,
                                                                          absl::string_view field);
  ~CheckpointKey();
  CheckpointKey(const CheckpointKey&) = delete;
  CheckpointKey& operator=(const CheckpointKey&) = delete;

  // The first 16 hex digits of SHA-256 over the raw public key.
  const std::string& key_id() const { return key_id_; }
  // The public half, PEM.
  const std::string& public_key_pem() const { return public_key_pem_; }
  bool can_sign() const { return can_sign_; }

  // Fills key_id and signature of `checkpoint` (sequence, head_hash and at set by the caller).
  // Errors: FAILED_PRECONDITION (a public key), INTERNAL (the signing call failed).
  absl::Status Sign(v1::SignedCheckpoint& checkpoint) const;
  // Empty when `checkpoint` carries this key's id and a signature over its fields that verifies;
  // otherwise why not (operator text).
  std::string CheckSignature(const v1::SignedCheckpoint& checkpoint) const;

 private:
  struct Pkey;
  CheckpointKey(Pkey* pkey, bool can_sign);

  Pkey* const pkey_;
  const bool can_sign_;
  std::string key_id_;
  std::string public_key_pem_;
};

// Makes and exports checkpoints of one log: on demand (CheckpointNow) and, with an interval,
// from a thread of its own whenever the head has moved since the last one. Each is appended to
// the export file (one JSON line, the proto3 JSON of SignedCheckpoint, fsynced) before it is
// answered, and handed to Tail streams through Latest/WaitForCheckpointAfter. Thread-safe.
class Checkpointer {
 public:
  struct Options {
    // Where checkpoints are appended (JSON lines); empty: not written to a file.
    std::string export_file;
    // Zero: only on demand.
    absl::Duration interval = absl::ZeroDuration();
    // The interval thread's failures are reported as "<binary_name>: ..." on stderr.
    std::string binary_name = "audit_svc";
  };

  // Errors: INVALID_ARGUMENT (a key that cannot sign; a negative interval);
  // UNAVAILABLE (the export file cannot be opened for appending).
  static absl::StatusOr<std::unique_ptr<Checkpointer>> Create(AuditLog& log,
                                                              std::unique_ptr<CheckpointKey> key,
                                                              const common::Clock& clock,
                                                              Options options);
  // Stops the interval thread.
  ~Checkpointer();

  // Signs the current head and exports it. Errors: UNAVAILABLE (the log's storage, or the
  // export file, cannot be written or read; nothing is answered then).
  absl::StatusOr<v1::SignedCheckpoint> CheckpointNow() ABSL_LOCKS_EXCLUDED(mu_);

  const CheckpointKey& key() const { return *key_; }

  // Checkpoints kept for Tail streams that have not yet delivered them.
  static constexpr int kRecentCheckpoints = 64;

  // For Tail: how many checkpoints were made.
  int64_t Generation() const ABSL_LOCKS_EXCLUDED(mu_);
  // For Tail: the checkpoints made after the first `generation` (at most the last
  // kRecentCheckpoints of them), in order; advances `generation` to Generation().
  std::vector<v1::SignedCheckpoint> CheckpointsAfter(int64_t& generation) const
      ABSL_LOCKS_EXCLUDED(mu_);
  // Blocks until Generation() passes `generation` or `timeout` elapses; returns the last
  // checkpoint made and its generation (0 and an empty message when none).
  std::pair<int64_t, v1::SignedCheckpoint> WaitForCheckpointAfter(int64_t generation,
                                                                  absl::Duration timeout)
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  Checkpointer(AuditLog& log, std::unique_ptr<CheckpointKey> key, const common::Clock& clock,
               Options options);
  void IntervalLoop() ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status Export(const v1::SignedCheckpoint& checkpoint) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  AuditLog& log_;
  const std::unique_ptr<CheckpointKey> key_;
  const common::Clock& clock_;
  const Options options_;

  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  int64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
  v1::SignedCheckpoint latest_ ABSL_GUARDED_BY(mu_);
  // The last kRecentCheckpoints made, oldest first (the newest is generation_).
  std::deque<v1::SignedCheckpoint> recent_ ABSL_GUARDED_BY(mu_);
  std::thread interval_thread_;
};

// Verify with VerifyRequest.checkpoints: the whole chain (AuditLog::Verify), then every
// checkpoint's signature under `key` and the record at its sequence. A checkpoint that does not
// verify, or that the log no longer extends, makes ok false with `detail` naming it (and
// first_bad_sequence the record, when one is at fault). Without checkpoints, AuditLog::Verify.
// `server_key` is the key this audit_svc signs with (null: none), used when the request carries
// no public key.
// Errors: INVALID_ARGUMENT (more than kMaxCheckpointsPerVerify; a range with checkpoints; a
// malformed checkpoint or public key, naming the field); FAILED_PRECONDITION (checkpoints with
// no key to check them under); those of AuditLog::Verify.
absl::StatusOr<v1::VerifyResponse> VerifyWithCheckpoints(AuditLog& log,
                                                         const v1::VerifyRequest& request,
                                                         const CheckpointKey* server_key);

}  // namespace sharedos::audit::core

#endif  // SHAREDOS_AUDIT_SVC_CORE_CHECKPOINT_H_
