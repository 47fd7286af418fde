#include "common/time/clock.h"

#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace sharedos::common {
namespace {

TEST(RealClockTest, IsTheProcessWideWallClock) {
  Clock& clock = RealClock();
  EXPECT_EQ(&clock, &RealClock());
  const absl::Time before = absl::Now();
  const absl::Time now = clock.Now();
  const absl::Time after = absl::Now();
  EXPECT_LE(before, now);
  EXPECT_LE(now, after);
}

TEST(SimulatedClockTest, StartsAtTheEpochByDefault) {
  SimulatedClock clock;
  EXPECT_EQ(clock.Now(), absl::UnixEpoch());
  EXPECT_EQ(clock.Now(), absl::UnixEpoch());
}

TEST(SimulatedClockTest, SetAndAdvance) {
  const absl::Time start = absl::FromUnixSeconds(1700000000);
  SimulatedClock clock(start);
  EXPECT_EQ(clock.Now(), start);
  clock.AdvanceTime(absl::Milliseconds(1500));
  EXPECT_EQ(clock.Now(), start + absl::Milliseconds(1500));
  clock.AdvanceTime(absl::Seconds(-2));
  EXPECT_EQ(clock.Now(), start - absl::Milliseconds(500));
  clock.SetTime(absl::FromUnixSeconds(5));
  EXPECT_EQ(clock.Now(), absl::FromUnixSeconds(5));
}

TEST(SimulatedClockTest, AutoStepReturnsThenAdvances) {
  const absl::Time start = absl::FromUnixSeconds(1000);
  SimulatedClock clock(start, absl::Seconds(1));
  EXPECT_EQ(clock.Now(), start);
  EXPECT_EQ(clock.Now(), start + absl::Seconds(1));
  clock.AdvanceTime(absl::Seconds(10));
  EXPECT_EQ(clock.Now(), start + absl::Seconds(12));
  clock.SetStep(absl::ZeroDuration());
  EXPECT_EQ(clock.Now(), start + absl::Seconds(13));
  EXPECT_EQ(clock.Now(), start + absl::Seconds(13));
}

TEST(SimulatedClockTest, UsableThroughTheInterface) {
  SimulatedClock simulated(absl::FromUnixSeconds(42));
  const Clock& clock = simulated;
  EXPECT_EQ(clock.Now(), absl::FromUnixSeconds(42));
}

TEST(SimulatedClockTest, ConcurrentStepsAreNeverLost) {
  constexpr int kThreads = 4;
  constexpr int kCallsPerThread = 1000;
  SimulatedClock clock(absl::UnixEpoch(), absl::Seconds(1));
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&clock] {
      for (int j = 0; j < kCallsPerThread; ++j) clock.Now();
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(clock.Now(), absl::UnixEpoch() + absl::Seconds(kThreads * kCallsPerThread));
}

// A background loop's wait: `stopping` guarded by `mu`, waited on through a clock.
class Loop {
 public:
  explicit Loop(const Clock& clock) : clock_(clock) {}

  // Starts one wait of `timeout`; Join() returns whether it saw the stop.
  void Start(absl::Duration timeout) {
    thread_ = std::thread([this, timeout] {
      absl::MutexLock lock(&mu_);
      stopped_ = clock_.AwaitWithTimeout(&mu_, absl::Condition(&stopping_), timeout);
      returned_ = true;
    });
  }
  void Stop() {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  bool returned() {
    absl::MutexLock lock(&mu_);
    return returned_;
  }
  bool Join() {
    thread_.join();
    absl::MutexLock lock(&mu_);
    return stopped_;
  }

 private:
  const Clock& clock_;
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  bool returned_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

TEST(SimulatedClockTest, AWaiterWakesWhenTheTimePassesItsDeadlineAndNotBefore) {
  SimulatedClock clock;
  Loop loop(clock);
  loop.Start(absl::Seconds(10));
  clock.AwaitWaiters(1);
  clock.AdvanceTime(absl::Seconds(9) + absl::Milliseconds(999));
  // Still waiting: its deadline is after the current time, and its mutex released
  // (so that its condition was re-evaluated) still leaves it waiting.
  EXPECT_EQ(clock.PendingWaiters(), 1);
  EXPECT_FALSE(loop.returned());
  clock.AdvanceTime(absl::Milliseconds(1));
  EXPECT_FALSE(loop.Join());  // timed out, not stopped
  EXPECT_EQ(clock.PendingWaiters(), 0);
}

TEST(SimulatedClockTest, SetTimeWakesAWaiterToo) {
  SimulatedClock clock;
  Loop loop(clock);
  loop.Start(absl::Minutes(1));
  clock.AwaitWaiters(1);
  clock.SetTime(absl::UnixEpoch() + absl::Hours(1));
  EXPECT_FALSE(loop.Join());
}

TEST(SimulatedClockTest, AWaiterWakesOnItsStopWithoutTheTimeMoving) {
  SimulatedClock clock;
  Loop loop(clock);
  loop.Start(absl::InfiniteDuration());
  clock.AwaitWaiters(1);
  loop.Stop();
  EXPECT_TRUE(loop.Join());
  EXPECT_EQ(clock.Now(), absl::UnixEpoch());
}

TEST(SimulatedClockTest, AConditionAlreadyTrueReturnsAtOnce) {
  SimulatedClock clock;
  Loop loop(clock);
  loop.Stop();
  loop.Start(absl::InfiniteDuration());
  EXPECT_TRUE(loop.Join());
}

TEST(SimulatedClockTest, WaitersOnOneMutexWakeEachAtItsOwnDeadline) {
  SimulatedClock clock;
  absl::Mutex mu;
  bool never = false;
  std::vector<std::thread> threads;
  std::vector<int> woken;  // guarded by mu
  for (int seconds : {1, 2}) {
    threads.emplace_back([&, seconds] {
      absl::MutexLock lock(&mu);
      clock.AwaitWithTimeout(&mu, absl::Condition(&never), absl::Seconds(seconds));
      woken.push_back(seconds);
    });
  }
  clock.AwaitWaiters(2);
  clock.AdvanceTime(absl::Seconds(1));
  clock.AwaitWaiters(1);  // the 2 s waiter still waits
  {
    absl::MutexLock lock(&mu);
    auto first_woken = [&woken] { return woken.size() == 1; };
    mu.Await(absl::Condition(&first_woken));
    EXPECT_EQ(woken, std::vector<int>({1}));
  }
  clock.AdvanceTime(absl::Seconds(1));
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(woken, std::vector<int>({1, 2}));
}

TEST(SimulatedClockTest, SleepForReturnsOnceTheTimeHasPassed) {
  SimulatedClock clock;
  std::thread sleeper([&clock] { clock.SleepFor(absl::Seconds(5)); });
  clock.AwaitWaiters(1);
  clock.AdvanceTime(absl::Seconds(4));
  EXPECT_EQ(clock.PendingWaiters(), 1);
  clock.AdvanceTime(absl::Seconds(1));
  sleeper.join();
  EXPECT_EQ(clock.PendingWaiters(), 0);
}

TEST(RealClockTest, AwaitWithTimeoutReturnsTheConditionOnRealTime) {
  absl::Mutex mu;
  bool flag = false;
  absl::MutexLock lock(&mu);
  EXPECT_FALSE(RealClock().AwaitWithTimeout(&mu, absl::Condition(&flag), absl::Milliseconds(1)));
  flag = true;
  EXPECT_TRUE(RealClock().AwaitWithTimeout(&mu, absl::Condition(&flag), absl::Hours(1)));
}

}  // namespace
}  // namespace sharedos::common
