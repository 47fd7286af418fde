#include "common/time/clock.h"

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace sharedos::common {
namespace {

// The wall clock, stateless and therefore thread-safe.
class RealClockImpl final : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
};

}  // namespace

Clock& RealClock() {
  static Clock* const clock = new RealClockImpl();
  return *clock;
}

absl::Time SimulatedClock::Now() const {
  absl::MutexLock lock(&mu_);
  const absl::Time result = now_;
  now_ += step_;
  return result;
}

void SimulatedClock::SetTime(absl::Time time) {
  absl::MutexLock lock(&mu_);
  now_ = time;
}

void SimulatedClock::AdvanceTime(absl::Duration delta) {
  absl::MutexLock lock(&mu_);
  now_ += delta;
}

void SimulatedClock::SetStep(absl::Duration step) {
  absl::MutexLock lock(&mu_);
  step_ = step;
}

}  // namespace sharedos::common
