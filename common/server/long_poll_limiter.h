// A bound on the long-polls one service holds at once (issue 34): calls that wait for news —
// MessageRoutes.Receive, Envelope.WatchTurn, AuditLog.Tail — each pin one of the server's threads
// while they wait, so one principal may hold at most `max_per_principal` of them and the service
// at most `max_total` (below the server's thread bound, ServerOptions::max_threads: unary calls
// always find a thread). Acquire before waiting; the slot is released when the Slot goes.
// Thread-safe.

#ifndef SHAREDOS_COMMON_SERVER_LONG_POLL_LIMITER_H_
#define SHAREDOS_COMMON_SERVER_LONG_POLL_LIMITER_H_

#include <cstddef>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace sharedos::common::server {

class LongPollLimiter {
 public:
  struct Options {
    size_t max_per_principal = 8;
    size_t max_total = 64;
  };

  // A held long-poll; releases it when destroyed. Movable.
  class Slot {
   public:
    Slot(Slot&& other) noexcept
        : limiter_(other.limiter_), principal_(std::move(other.principal_)) {
      other.limiter_ = nullptr;
    }
    Slot& operator=(Slot&&) = delete;
    Slot(const Slot&) = delete;
    ~Slot();

   private:
    friend class LongPollLimiter;
    Slot(LongPollLimiter* limiter, std::string principal)
        : limiter_(limiter), principal_(std::move(principal)) {}
    LongPollLimiter* limiter_;
    std::string principal_;
  };

  explicit LongPollLimiter(Options options) : options_(options) {}
  // With the process's defaults (SetDefaults; Options() until then).
  LongPollLimiter() : LongPollLimiter(Defaults()) {}

  // The options a default-constructed limiter takes: set once by a main from its flags
  // (capacity_flags.h), before the services are built.
  static void SetDefaults(Options options);
  static Options Defaults();

  // A slot for one long-poll of `principal` (a credential's name) in `method`.
  // Errors: RESOURCE_EXHAUSTED naming the quota reached and the flag that raises it
  // ("concurrent long-polls of credential \"x\" in <method>: 8 of 8 (quota
  // max_long_polls_per_principal; --max_long_polls_per_principal raises it)", or the service's
  // total, --max_long_polls).
  absl::StatusOr<Slot> Acquire(absl::string_view principal, absl::string_view method)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Long-polls held now, by `principal` and in total.
  size_t held(absl::string_view principal) const ABSL_LOCKS_EXCLUDED(mu_);
  size_t held() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void Release(const std::string& principal) ABSL_LOCKS_EXCLUDED(mu_);

  const Options options_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, size_t> by_principal_ ABSL_GUARDED_BY(mu_);
  size_t total_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace sharedos::common::server

#endif  // SHAREDOS_COMMON_SERVER_LONG_POLL_LIMITER_H_
