// Injected time. Core code never calls absl::Now(): it takes a `Clock&`, which
// `main` wires to RealClock() and tests to a SimulatedClock (so tests never
// sleep). Abseil 20220623 has no absl::Clock interface; this keeps the upstream
// shape.

#ifndef SHAREDOS_COMMON_TIME_CLOCK_H_
#define SHAREDOS_COMMON_TIME_CLOCK_H_

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

  // Sets the current time (may move backwards).
  void SetTime(absl::Time time) ABSL_LOCKS_EXCLUDED(mu_);

  // Moves the current time by `delta` (may be negative).
  void AdvanceTime(absl::Duration delta) ABSL_LOCKS_EXCLUDED(mu_);

  // Changes the auto-step applied after each Now(); zero disables it.
  void SetStep(absl::Duration step) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  mutable absl::Mutex mu_;
  // Mutable: auto-step advances the time from the const Now().
  mutable absl::Time now_ ABSL_GUARDED_BY(mu_);
  absl::Duration step_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sharedos::common

#endif  // SHAREDOS_COMMON_TIME_CLOCK_H_
