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
#include <functional>
#include <memory>
#include <optional>
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

// The interval at which checkpoints are signed (when the head has moved) unless
// --checkpoint_interval says otherwise: the default length of the window in which records can
// still be rewritten consistently (docs/reliability.md).
inline constexpr absl::Duration kDefaultCheckpointInterval = absl::Seconds(10);

// Each checkpoint made is also written as one line of the process log (common/logging): event
// "audit.checkpoint", the checkpoint's JSON line (CheckpointJson) in field "checkpoint", beside
// its sequence and key id. The log pipeline that ships the process log carries it off the host.
inline constexpr char kCheckpointLogEvent[] = "audit.checkpoint";
inline constexpr char kCheckpointLogField[] = "checkpoint";
// Longest log line read back as a checkpoint (one is about 500 bytes).
inline constexpr size_t kMaxCheckpointLogLineBytes = 16 * 1024;

// Without --checkpoint_key_file, a SQLite log's key is kept in a directory beside its data
// directory (never inside it): "<data directory>.keys/checkpoint.key", minted on first start,
// its public half beside it as checkpoint.pub.pem.
inline constexpr char kDefaultCheckpointKeyDirSuffix[] = ".keys";
inline constexpr char kCheckpointKeyFileName[] = "checkpoint.key";
inline constexpr char kCheckpointPublicKeyFileName[] = "checkpoint.pub.pem";

// The checkpoint as one line of proto3 JSON without whitespace (and without a newline): the line
// of --checkpoint_file, what `sharedosctl audit checkpoint` prints, the log line's "checkpoint".
std::string CheckpointJson(const v1::SignedCheckpoint& checkpoint);

// One line of an exported process log: the checkpoint it carries when it is an audit.checkpoint
// line, nullopt when it is another line (any line that does not hold "audit.checkpoint" in
// quotes, or a JSON object whose event is another). Text before the first '{' (a timestamp a log
// collector prefixed) is skipped. Errors: INVALID_ARGUMENT (a line naming "audit.checkpoint"
// that is longer than kMaxCheckpointLogLineBytes, not a JSON object, or whose "checkpoint" field
// is not a signed checkpoint's JSON).
absl::StatusOr<std::optional<v1::SignedCheckpoint>> ParseCheckpointLogLine(absl::string_view line);

// The audit.checkpoint line of `checkpoint` as a JSON object of its own (event, sequence, key_id
// and the checkpoint's JSON line as "checkpoint"): what ParseCheckpointLogLine reads back, for
// lines written elsewhere than the process log (a witness's export).
std::string CheckpointLogLine(const v1::SignedCheckpoint& checkpoint);

// A checkpoint's fields as Verify and a witness take them: sequence not negative, head_hash 64
// lowercase hex digits, key_id at most 256 bytes, at a valid timestamp, signature at most 1024
// bytes. Errors: INVALID_ARGUMENT "<path>.<field>: …".
absl::Status ValidateSignedCheckpoint(const v1::SignedCheckpoint& checkpoint,
                                      absl::string_view path);

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

// The default checkpoint key of a SQLite log whose data directory is `data_dir`.
struct DefaultCheckpointKey {
  std::unique_ptr<CheckpointKey> key;
  // <data_dir>.keys/checkpoint.key and checkpoint.pub.pem.
  std::string key_file;
  std::string public_key_file;
  // True when this call minted the key (first start).
  bool minted = false;
};

// "<data_dir>.keys" (data_dir made absolute and normal, without a trailing separator).
std::string DefaultCheckpointKeyDir(const std::string& data_dir);

// Reads the default key, minting it first when absent: the directory is created owner-only
// (0700), the key written whole (a new Ed25519 key, PEM PKCS#8, 0600) and linked into place, so
// an existing key is never replaced, not even by a concurrent start. The public half is (re)written
// beside it as checkpoint.pub.pem. Errors: FAILED_PRECONDITION naming the path (the directory
// cannot be created, is not a directory, not owned by this user or open to group or others; the
// key file is not a regular file, not owned by this user, readable by group or others,
// unreadable or not an Ed25519 private key; the public key cannot be written). The message never
// holds the key.
absl::StatusOr<DefaultCheckpointKey> LoadOrMintDefaultCheckpointKey(const std::string& data_dir);

// Makes and exports checkpoints of one log: on demand (CheckpointNow) and, with an interval,
// from a thread of its own whenever the head has moved since the last one. Each is appended to
// the export file (one JSON line, the proto3 JSON of SignedCheckpoint, fsynced) before it is
// answered, written as an audit.checkpoint line of the process log (kCheckpointLogEvent), and
// handed to Tail streams through Latest/WaitForCheckpointAfter. Thread-safe.
class Checkpointer {
 public:
  struct Options {
    // Where checkpoints are appended (JSON lines); empty: not written to a file.
    std::string export_file;
    // Zero: only on demand.
    absl::Duration interval = absl::ZeroDuration();
    // The interval thread's failures are reported as "<binary_name>: ..." on stderr.
    std::string binary_name = "audit_svc";
    // Called with each checkpoint once it is exported (a witness's sender queues it); must
    // return at once. Empty: none.
    std::function<void(const v1::SignedCheckpoint&)> on_signed = nullptr;
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
