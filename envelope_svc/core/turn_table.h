// The turns an envelope holds (semantics §4; TurnEngine's table): running turns and ended ones
// kept for their retention, by turn id and by execution (namespace + execution id, used once
// while held), with the deadlines of running turns and the instants ended turns are forgotten.
//
// Bounded so that no tenant starves another (issue 34, docs/reliability.md): open turns (reserved
// or running) per namespace and per host credential; turns that ended at admission are retained
// in a small FIFO of their own (the oldest forgotten first); and when the table is full, the
// ended turn closest to its forgetting goes first — only open turns can refuse an OpenTurn.

#ifndef SHAREDOS_ENVELOPE_SVC_CORE_TURN_TABLE_H_
#define SHAREDOS_ENVELOPE_SVC_CORE_TURN_TABLE_H_

#include <cstddef>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "capability/reason_codes.h"
#include "common/metrics/sinks.h"
#include "common/server/auth.h"
#include "common/time/clock.h"
#include "envelope_svc/core/turn.h"
#include "sharedos/protocol/v1/context.pb.h"

namespace sharedos::envelope::core {

// Whether a host scope covers a context: its namespace, its owner and its authority
// (common::server::HostCovers, the access table's host rule).
bool ScopeCovers(const common::server::HostScope& scope,
                 const protocol::v1::AccessContext& context);

// A request's turn_id, checked before anything else reads it. Errors: INVALID_ARGUMENT (empty,
// longer than the protocol's 256, or not UTF-8; the message never echoes the id).
absl::Status CheckTurnId(const std::string& turn_id);

// The index of held turns. Thread-safe: one mutex guards the index and is never held while a
// turn's own mutex is, nor across a call out of the envelope.
class TurnTable {
 public:
  struct Options {
    // Turns held at once (open and retained). Retained turns give way to new ones (oldest first);
    // open turns beyond it are RESOURCE_EXHAUSTED naming --max_turns.
    size_t max_turns = 100000;
    // How long an ended turn stays findable.
    absl::Duration ended_turn_retention = absl::Minutes(15);
    // Turn metrics (common/metrics/sinks.h); null: none. Borrowed.
    common::metrics::Metrics* metrics = nullptr;
    // Open turns (reserved or running) in one namespace, and opened by one host credential
    // (Turn::host); beyond, RESOURCE_EXHAUSTED naming the quota and its flag.
    size_t max_open_turns_per_namespace = 1000;
    size_t max_open_turns_per_host = 1000;
    // Turns that ended at admission (denied, failed before running) retained for GetTurn, at
    // most this many (the oldest forgotten first), each at most ended_turn_retention.
    size_t max_admission_ended = 1024;
  };

  explicit TurnTable(Options options)
      : options_(options), metrics_(options.metrics, capability::kTurnBudgetCodes) {}
  TurnTable(const TurnTable&) = delete;
  TurnTable& operator=(const TurnTable&) = delete;

  // Claims `turn`'s execution before the turn is opened; it stays claimed until the turn is
  // forgotten. The turn counts as open in its namespace and for its host (Turn::host) until it
  // is published ended or retired.
  // Errors: RESOURCE_EXHAUSTED naming the quota and the flag that raises it (open turns in the
  // namespace: --max_open_turns_per_namespace; of the host credential:
  // --max_open_turns_per_host; open turns filling the table: --max_turns); FAILED_PRECONDITION
  // (a held turn uses the execution id).
  absl::Status Reserve(const Turn& turn) ABSL_LOCKS_EXCLUDED(mu_);

  // Publishes a reserved turn that is running: findable, its deadline watched.
  void PublishRunning(std::shared_ptr<Turn> turn) ABSL_LOCKS_EXCLUDED(mu_);
  // Publishes a reserved turn that ended while it was opened: findable until `ended_at` plus
  // the retention.
  void PublishEnded(std::shared_ptr<Turn> turn, absl::Time ended_at) ABSL_LOCKS_EXCLUDED(mu_);

  // A running turn ended at `ended_at`: its deadline is no longer watched and it is retained
  // until `ended_at` plus the retention. A turn not published running is left as it is.
  // Returns whether the turn was running.
  bool Retire(const Turn& turn, absl::Time ended_at) ABSL_LOCKS_EXCLUDED(mu_);

  // The held turn `turn_id`, or nullptr.
  std::shared_ptr<Turn> Lookup(const std::string& turn_id) const ABSL_LOCKS_EXCLUDED(mu_);
  // The held turn `turn_id` when `scope` covers its context.
  // Errors: NOT_FOUND; PERMISSION_DENIED (outside `scope`).
  absl::StatusOr<std::shared_ptr<Turn>> Find(const std::string& turn_id,
                                             const common::server::HostScope& scope) const
      ABSL_LOCKS_EXCLUDED(mu_);

  // Forgets the ended turns whose retention has passed at `now` (their executions are free
  // again) and answers the running turns whose deadline has passed, by deadline.
  std::vector<std::shared_ptr<Turn>> Sweep(absl::Time now) ABSL_LOCKS_EXCLUDED(mu_);

  // Turns held (running and retained), and running ones.
  size_t held() const ABSL_LOCKS_EXCLUDED(mu_);
  size_t running() const ABSL_LOCKS_EXCLUDED(mu_);
  // Waits until no turn is running or `timeout` of `clock` has passed; returns how many still
  // run.
  size_t AwaitNoneRunning(const common::Clock& clock, absl::Duration timeout) const
      ABSL_LOCKS_EXCLUDED(mu_);
  // Open turns (reserved or running) of a namespace, and of a host credential.
  size_t open_in_namespace(const std::string& namespace_id) const ABSL_LOCKS_EXCLUDED(mu_);
  size_t open_of_host(const std::string& host) const ABSL_LOCKS_EXCLUDED(mu_);

  // The envelope's turn metrics (no-ops without Options::metrics).
  common::metrics::TurnMetrics& metrics() { return metrics_; }

 private:
  // The turn is open no more (published ended, or retired): its namespace's and host's counts.
  void CloseLocked(const Turn& turn) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Forgets a held turn that has ended (its execution free again). False when it is not held.
  bool ForgetLocked(const std::string& turn_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Forgets the retained turn closest to its forgetting. False when none is retained.
  bool EvictOneLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  common::metrics::TurnMetrics metrics_;

  mutable absl::Mutex mu_;
  // turn id → turn (running and retained).
  absl::flat_hash_map<std::string, std::shared_ptr<Turn>> turns_ ABSL_GUARDED_BY(mu_);
  // namespace id + '\0' + execution id → turn id, for the turns reserved or held.
  absl::flat_hash_map<std::string, std::string> by_execution_ ABSL_GUARDED_BY(mu_);
  // The ids of the turns published running that have not been retired.
  absl::flat_hash_set<std::string> running_ ABSL_GUARDED_BY(mu_);
  // deadline → turn id, for running turns.
  std::multimap<absl::Time, std::string> deadlines_ ABSL_GUARDED_BY(mu_);
  // forget-at → turn id, for turns that ended running.
  std::multimap<absl::Time, std::string> retention_ ABSL_GUARDED_BY(mu_);
  // (forget-at, turn id) of turns that ended at admission, oldest first (a FIFO: one retention).
  std::deque<std::pair<absl::Time, std::string>> admission_ended_ ABSL_GUARDED_BY(mu_);
  // Open turns (reserved or running) per namespace and per host credential; no zero entries.
  absl::flat_hash_map<std::string, size_t> open_by_namespace_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, size_t> open_by_host_ ABSL_GUARDED_BY(mu_);
  // The ids of reserved turns not yet published (open).
  absl::flat_hash_set<std::string> reserved_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sharedos::envelope::core

#endif  // SHAREDOS_ENVELOPE_SVC_CORE_TURN_TABLE_H_
