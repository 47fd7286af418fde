// Injected time. Core code never calls absl::Now(): it takes a `Clock&`, which
// `main` wires to RealClock() and tests to a SimulatedClock (so tests never
// sleep). Background loops wait on the clock too (AwaitWithTimeout, SleepFor), so
// a test drives them by advancing a SimulatedClock. Abseil 20220623 has no
// absl::Clock interface; this keeps the upstream shape.

#ifndef SHAREDOS_COMMON_TIME_CLOCK_H_
#define SHAREDOS_COMMON_TIME_CLOCK_H_

#include <map>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace sharedos::common {

// Source of the current time. Implementations must be thread-safe.
class Clock {
 public:
  virtual ~Clock() = default;

  // Returns the current time.
  virtual absl::Time Now() const = 0;

  // Waits, with `*mu` held by the caller, until `condition` holds or `timeout` of
  // this clock's time has passed; returns whether `condition` holds. Like
  // absl::Mutex::AwaitWithTimeout, `*mu` is released while waiting and held on
  // return, and `condition` is re-evaluated whenever `*mu` is released.
  virtual bool AwaitWithTimeout(absl::Mutex* mu, const absl::Condition& condition,
                                absl::Duration timeout) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) = 0;

  // Blocks until `duration` of this clock's time has passed.
  virtual void SleepFor(absl::Duration duration) const = 0;
};

// Returns the process-wide real clock (absl::Now()). Never destroyed;
// thread-safe.
Clock& RealClock();

// A manually driven clock for tests and the conformance world. Thread-safe.
// With a non-zero `step`, every Now() returns the current time and then
// advances it by `step` (the conformance world moves 1 s per operation).
class SimulatedClock : public Clock {
 public:
  // Starts at the Unix epoch, no auto-step.
  SimulatedClock() : SimulatedClock(absl::UnixEpoch()) {}
  explicit SimulatedClock(absl::Time start, absl::Duration step = absl::ZeroDuration())
      : now_(start), step_(step) {}

  SimulatedClock(const SimulatedClock&) = delete;
  SimulatedClock& operator=(const SimulatedClock&) = delete;

  absl::Time Now() const override ABSL_LOCKS_EXCLUDED(mu_);

  // Waits until `condition` holds or the simulated time reaches the deadline
  // (Now() + `timeout`, read once on entry). Only SetTime and AdvanceTime move
  // the time a waiter sees; the auto-step of Now() does not wake waiters.
  bool AwaitWithTimeout(absl::Mutex* mu, const absl::Condition& condition,
                        absl::Duration timeout) const override ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu)
      ABSL_LOCKS_EXCLUDED(mu_, kick_mu_);

  // Blocks until the simulated time reaches Now() + `duration`.
  void SleepFor(absl::Duration duration) const override ABSL_LOCKS_EXCLUDED(mu_);

  // Sets the current time (may move backwards) and wakes the waiters whose
  // deadline it reaches.
  void SetTime(absl::Time time) ABSL_LOCKS_EXCLUDED(mu_, kick_mu_);

  // Moves the current time by `delta` (may be negative) and wakes the waiters
  // whose deadline it reaches.
  void AdvanceTime(absl::Duration delta) ABSL_LOCKS_EXCLUDED(mu_, kick_mu_);

  // Changes the auto-step applied after each Now(); zero disables it.
  void SetStep(absl::Duration step) ABSL_LOCKS_EXCLUDED(mu_);

  // Blocks (in real time) until at least `count` waiters (AwaitWithTimeout or
  // SleepFor) wait for a deadline after the current time: a test calls it before
  // AdvanceTime to know that a background loop has reached its wait.
  void AwaitWaiters(int count) const ABSL_LOCKS_EXCLUDED(mu_);

  // How many waiters wait for a deadline after the current time.
  int PendingWaiters() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // One AwaitWithTimeout (`mu` set) or SleepFor (`mu` null), on the waiter's stack.
  struct Waiter {
    absl::Mutex* mu;
    // Set, under `*mu`, once the time has reached the waiter's deadline: the
    // waiter's condition reads only this and its caller's state.
    bool reached;
  };

  int PendingWaitersLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Marks, under each one's mutex, the AwaitWithTimeout waiters whose deadline the
  // time has reached; releasing that mutex makes absl re-evaluate their conditions.
  void Kick() ABSL_LOCKS_EXCLUDED(mu_, kick_mu_);

  // Held while waiters' mutexes are kicked and while a waiter leaves, so that a
  // mutex is never kicked after its waiter has returned (it may be destroyed).
  // Order: kick_mu_ before a waiter's mutex; a waiter's mutex before mu_.
  mutable absl::Mutex kick_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  mutable absl::Mutex mu_;
  // Mutable: auto-step advances the time from the const Now().
  mutable absl::Time now_ ABSL_GUARDED_BY(mu_);
  absl::Duration step_ ABSL_GUARDED_BY(mu_);
  // Every waiter, by deadline.
  mutable std::multimap<absl::Time, Waiter*> waiters_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sharedos::common

#endif  // SHAREDOS_COMMON_TIME_CLOCK_H_
