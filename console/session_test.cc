#include "console/session.h"

#include <set>
#include <string>
#include <vector>

#include "common/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::console {
namespace {

using ::testing::Eq;
using ::testing::Ne;

common::server::Principal Alice() {
  common::server::Principal principal;
  principal.name = "cred-alice";
  principal.address = "human:user-alice";
  principal.role = common::server::Role::kReviewer;
  principal.scope.namespaces = {"world-demo"};
  return principal;
}

TEST(SessionStoreTest, CreatedSessionIsFoundWithItsSecretAndPrincipal) {
  common::SimulatedClock clock(absl::FromUnixSeconds(1000));
  SessionStore store(clock, absl::Minutes(30), 8);
  absl::StatusOr<Session> created = store.Create("sos_secret", Alice());
  ASSERT_TRUE(created.ok()) << created.status();
  std::optional<Session> found = store.Find(created->id);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->secret, "sos_secret");
  EXPECT_EQ(found->principal.address, "human:user-alice");
  EXPECT_EQ(found->csrf, created->csrf);
  EXPECT_EQ(found->expires_at, absl::FromUnixSeconds(1000) + absl::Minutes(30));
}

// Issue 34 (observation 6): one principal holds at most its share of the sessions (its oldest
// goes), so it can never take them all; others still sign in.
TEST(SessionStoreTest, SessionsAreBoundedPerPrincipal) {
  common::SimulatedClock clock(absl::FromUnixSeconds(1000));
  SessionStore store(clock, absl::Minutes(30), /*max_sessions=*/8, /*max_per_principal=*/2);
  std::vector<std::string> ids;
  for (int i = 0; i < 100; ++i) {
    clock.AdvanceTime(absl::Seconds(1));
    absl::StatusOr<Session> session = store.Create("s", Alice());
    ASSERT_TRUE(session.ok()) << session.status();
    ids.push_back(session->id);
  }
  EXPECT_EQ(store.size(), 2u);
  EXPECT_FALSE(store.Find(ids[97]).has_value());
  EXPECT_TRUE(store.Find(ids[98]).has_value());
  EXPECT_TRUE(store.Find(ids[99]).has_value());
  common::server::Principal bob = Alice();
  bob.name = "cred-bob";
  EXPECT_TRUE(store.Create("b", bob).ok());
}

TEST(SessionStoreTest, IdsAndCsrfTokensAreDistinct256BitTokens) {
  common::SimulatedClock clock;
  SessionStore store(clock, absl::Minutes(30), 64);
  std::set<std::string> seen;
  for (int i = 0; i < 32; ++i) {
    absl::StatusOr<Session> session = store.Create("s", Alice());
    ASSERT_TRUE(session.ok());
    EXPECT_EQ(session->id.size(), 43u);  // 32 bytes, base64url without padding
    EXPECT_THAT(session->csrf, Ne(session->id));
    EXPECT_TRUE(seen.insert(session->id).second);
    EXPECT_TRUE(seen.insert(session->csrf).second);
  }
}

TEST(SessionStoreTest, SessionExpiresAtItsTtl) {
  common::SimulatedClock clock(absl::FromUnixSeconds(1000));
  SessionStore store(clock, absl::Minutes(30), 8);
  absl::StatusOr<Session> session = store.Create("s", Alice());
  ASSERT_TRUE(session.ok());
  clock.AdvanceTime(absl::Minutes(30) - absl::Seconds(1));
  EXPECT_TRUE(store.Find(session->id).has_value());
  clock.AdvanceTime(absl::Seconds(1));
  EXPECT_FALSE(store.Find(session->id).has_value());
  EXPECT_THAT(store.size(), Eq(0u));
}

TEST(SessionStoreTest, UnknownAndRemovedIdsAreNotFound) {
  common::SimulatedClock clock;
  SessionStore store(clock, absl::Minutes(30), 8);
  absl::StatusOr<Session> session = store.Create("s", Alice());
  ASSERT_TRUE(session.ok());
  EXPECT_FALSE(store.Find("not-a-session").has_value());
  EXPECT_FALSE(store.Find("").has_value());
  store.Remove(session->id);
  EXPECT_FALSE(store.Find(session->id).has_value());
}

TEST(SessionStoreTest, AtMostMaxSessionsLiveButExpiredOnesMakeRoom) {
  common::SimulatedClock clock;
  SessionStore store(clock, absl::Minutes(30), 2);
  ASSERT_TRUE(store.Create("a", Alice()).ok());
  ASSERT_TRUE(store.Create("b", Alice()).ok());
  absl::StatusOr<Session> third = store.Create("c", Alice());
  EXPECT_EQ(third.status().code(), absl::StatusCode::kResourceExhausted);
  clock.AdvanceTime(absl::Minutes(31));
  EXPECT_TRUE(store.Create("c", Alice()).ok());
  EXPECT_THAT(store.size(), Eq(1u));
}

TEST(TokensEqualTest, EqualOnlyForTheSameNonEmptyToken) {
  EXPECT_TRUE(TokensEqual("abc", "abc"));
  EXPECT_FALSE(TokensEqual("abc", "abd"));
  EXPECT_FALSE(TokensEqual("abc", "ab"));
  EXPECT_FALSE(TokensEqual("", ""));
  EXPECT_FALSE(TokensEqual("abc", ""));
}

}  // namespace
}  // namespace sharedos::console
