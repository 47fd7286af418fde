#include "common/server/long_poll_limiter.h"

#include <optional>
#include <utility>
#include <vector>

#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::common::server {
namespace {

using ::sharedos::common::StatusIs;
using ::testing::HasSubstr;

TEST(LongPollLimiterTest, BoundsEachPrincipalAndTheTotalAndReleasesOnDestruction) {
  LongPollLimiter limiter(LongPollLimiter::Options{/*max_per_principal=*/2, /*max_total=*/3});
  std::vector<LongPollLimiter::Slot> held;
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<LongPollLimiter::Slot> slot = limiter.Acquire("host-bob", "Envelope.WatchTurn");
    ASSERT_TRUE(slot.ok()) << slot.status();
    held.push_back(*std::move(slot));
  }
  EXPECT_THAT(limiter.Acquire("host-bob", "Envelope.WatchTurn").status(),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       HasSubstr("credential \"host-bob\" in Envelope.WatchTurn: 2 of 2 (quota "
                                 "max_long_polls_per_principal; --max_long_polls_per_principal")));
  // Another principal still gets one, up to the total.
  absl::StatusOr<LongPollLimiter::Slot> alice = limiter.Acquire("host-alice", "x");
  ASSERT_TRUE(alice.ok());
  EXPECT_THAT(limiter.Acquire("host-carol", "x").status(),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("--max_long_polls")));
  held.clear();
  EXPECT_EQ(limiter.held("host-bob"), 0u);
  EXPECT_EQ(limiter.held(), 1u);
  EXPECT_TRUE(limiter.Acquire("host-bob", "x").ok());
}

}  // namespace
}  // namespace sharedos::common::server
