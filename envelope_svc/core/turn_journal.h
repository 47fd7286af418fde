// The envelope's journal of open turns (ADR 0009): one SQLite row per turn that is running, put
// when the turn is admitted and removed once its turn.ended is in the audit outbox, so that a
// restart after a crash ends every turn the crash left open (TurnEngine::RecoverInterrupted).
// A row holds only what turn.ended and GetTurn need — ids, the context, the runtime, the lease
// id, the start instant and the id the turn's turn.ended is written under — and, once an MCP
// turn asked for a human, the latch (its instant, the reason's hash and length, the id of the
// escalation.requested a recovery writes, the authorities described to the turn and the one its
// ask named); never arguments, results, payloads, the reason's text or secrets. Each envelope has
// its own file. Thread-safe.

#ifndef SHAREDOS_ENVELOPE_SVC_CORE_TURN_JOURNAL_H_
#define SHAREDOS_ENVELOPE_SVC_CORE_TURN_JOURNAL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/sqlite/database.h"
#include "sharedos/envelope/v1/envelope.pb.h"
#include "sharedos/protocol/v1/context.pb.h"
#include "sharedos/protocol/v1/grant.pb.h"

namespace sharedos::envelope::core {

class TurnJournal {
 public:
  // The most described authorities a latch keeps (Turn::kMaxDescribed, semantics §10).
  static constexpr size_t kMaxLatchDescribed = 64;
  // One open turn as journaled.
  struct Entry {
    std::string turn_id;
    std::string execution_id;
    v1::Runtime runtime = v1::RUNTIME_DRIVER;
    // The admitted context (now = the admission instant).
    protocol::v1::AccessContext context;
    std::string lease_id;
    absl::Time started_at;
    // The id of the turn's turn.ended (minted when the turn opened; audit_svc deduplicates on it).
    std::string ended_event_id;
    // Set once recovery began ending the turn: the instant its turn.ended carries, so a crash
    // during recovery writes the same record again (a duplicate, not a second record).
    std::optional<absl::Time> interrupted_at;
    // Set once the turn's MCP escalation latch engaged (seed ADR 0018; schema 2). Never the
    // harness's reason text: only its SHA-256 and length, so that a recovered escalation can be
    // matched with the harness's transcript by whoever holds it.
    struct Latch {
      // When the harness asked (the recovered escalation's requested_at).
      absl::Time asked_at;
      // Lowercase hex SHA-256 of the reason the ask was answered with, and its length in bytes.
      std::string reason_sha256;
      int64_t reason_length = 0;
      // The id the recovered escalation.requested is written under (minted at the latch).
      std::string requested_event_id;
      // The authorities the kernel had described to the turn when it asked (Turn::described:
      // at most kMaxDescribed, oldest first; schema 3), and the capreq- id of the one the ask
      // named (empty: none), so that a recovered escalation names it as a live ending does.
      std::vector<protocol::v1::CapabilityRequest> described;
      std::string requirement_id;
    };
    std::optional<Latch> latch;
  };

  // Opens (or creates) the journal at `path`. With `fsync` (the default, the audit outbox's
  // "full") puts and marks are fsynced; without (its "normal") they survive a crash of the
  // process, not a power loss. Removals are never fsynced (a removed row that comes back after a
  // power loss ends its turn again under the same turn.ended id, which audit_svc never stores
  // twice). Errors: UNAVAILABLE (the file cannot be opened or its schema applied).
  static absl::StatusOr<std::unique_ptr<TurnJournal>> Open(const std::string& path,
                                                           bool fsync = true);

  // Journals an open turn. Errors: UNAVAILABLE (not written); INVALID_ARGUMENT (empty turn id or
  // event id).
  absl::Status Put(const Entry& entry) ABSL_LOCKS_EXCLUDED(mu_);
  // The turn has ended and its turn.ended is in the outbox. Removing an absent row is OK.
  absl::Status Remove(const std::string& turn_id) ABSL_LOCKS_EXCLUDED(mu_);
  // The turn's escalation latch engaged: recorded once (a latch already recorded is kept, an
  // absent row is OK — the turn has ended), fsynced like Put. Errors: UNAVAILABLE (not written);
  // INVALID_ARGUMENT (empty turn id or event id, more than kMaxLatchDescribed described).
  absl::Status MarkLatched(const std::string& turn_id, const Entry::Latch& latch)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Recovery fixes the instant it ends `turn_id` at, once (an instant already set is kept).
  // Answers the instant in force.
  absl::StatusOr<absl::Time> MarkInterrupted(const std::string& turn_id, absl::Time at)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Every journaled turn, by turn id. Errors: UNAVAILABLE; DATA_LOSS (a row that cannot be read).
  absl::StatusOr<std::vector<Entry>> List() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  TurnJournal(std::unique_ptr<common::sqlite::Database> db,
              std::unique_ptr<common::sqlite::Database> remover)
      : db_(std::move(db)), remover_(std::move(remover)) {}

  mutable absl::Mutex mu_;
  // synchronous=FULL: Put, MarkLatched, MarkInterrupted, List.
  const std::unique_ptr<common::sqlite::Database> db_ ABSL_GUARDED_BY(mu_);
  // synchronous=NORMAL: Remove.
  const std::unique_ptr<common::sqlite::Database> remover_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sharedos::envelope::core

#endif  // SHAREDOS_ENVELOPE_SVC_CORE_TURN_JOURNAL_H_
