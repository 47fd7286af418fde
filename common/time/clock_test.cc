#include "common/time/clock.h"

#include <thread>
#include <vector>

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

}  // namespace
}  // namespace sharedos::common
