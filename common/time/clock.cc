#include "common/time/clock.h"

#include <algorithm>
#include <iterator>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace sharedos::common {
namespace {

// The wall clock, stateless and therefore thread-safe.
class RealClockImpl final : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }

  bool AwaitWithTimeout(absl::Mutex* mu, const absl::Condition& condition,
                        absl::Duration timeout) const override ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return mu->AwaitWithTimeout(condition, timeout);
  }

  void SleepFor(absl::Duration duration) const override { absl::SleepFor(duration); }
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

bool SimulatedClock::AwaitWithTimeout(absl::Mutex* mu, const absl::Condition& condition,
                                      absl::Duration timeout) const {
  Waiter waiter{mu, false};
  std::multimap<absl::Time, Waiter*>::iterator registered;
  {
    absl::MutexLock lock(&mu_);
    const absl::Time deadline = now_ + timeout;
    waiter.reached = now_ >= deadline;
    registered = waiters_.emplace(deadline, &waiter);
  }
  // Reads the caller's state and `waiter.reached`, both guarded by `*mu`.
  auto done = [&condition, &waiter]() { return waiter.reached || condition.Eval(); };
  mu->Await(absl::Condition(&done));
  // Leave without holding `*mu`: a Kick() in progress may be waiting for it, and
  // must not touch `waiter` once this returns.
  mu->Unlock();
  {
    absl::MutexLock kick_lock(&kick_mu_);
    absl::MutexLock lock(&mu_);
    waiters_.erase(registered);
  }
  mu->Lock();
  return condition.Eval();
}

void SimulatedClock::SleepFor(absl::Duration duration) const {
  Waiter waiter{nullptr, false};
  absl::MutexLock lock(&mu_);
  const absl::Time deadline = now_ + duration;
  auto registered = waiters_.emplace(deadline, &waiter);
  auto reached = [this, deadline]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return now_ >= deadline; };
  mu_.Await(absl::Condition(&reached));
  waiters_.erase(registered);
}

void SimulatedClock::Kick() {
  absl::MutexLock kick_lock(&kick_mu_);
  std::vector<std::pair<absl::Mutex*, Waiter*>> reached;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = waiters_.begin(); it != waiters_.end() && it->first <= now_; ++it) {
      if (it->second->mu != nullptr) reached.emplace_back(it->second->mu, it->second);
    }
  }
  std::sort(reached.begin(), reached.end());
  for (size_t i = 0; i < reached.size();) {
    absl::Mutex* mu = reached[i].first;
    mu->Lock();
    for (; i < reached.size() && reached[i].first == mu; ++i) reached[i].second->reached = true;
    mu->Unlock();
  }
}

void SimulatedClock::SetTime(absl::Time time) {
  {
    absl::MutexLock lock(&mu_);
    now_ = time;
  }
  Kick();
}

void SimulatedClock::AdvanceTime(absl::Duration delta) {
  {
    absl::MutexLock lock(&mu_);
    now_ += delta;
  }
  Kick();
}

void SimulatedClock::SetStep(absl::Duration step) {
  absl::MutexLock lock(&mu_);
  step_ = step;
}

int SimulatedClock::PendingWaitersLocked() const {
  return static_cast<int>(std::distance(waiters_.upper_bound(now_), waiters_.end()));
}

int SimulatedClock::PendingWaiters() const {
  absl::MutexLock lock(&mu_);
  return PendingWaitersLocked();
}

void SimulatedClock::AwaitWaiters(int count) const {
  absl::MutexLock lock(&mu_);
  auto enough = [this, count]()
                    ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return PendingWaitersLocked() >= count; };
  mu_.Await(absl::Condition(&enough));
}

}  // namespace sharedos::common
